"""The shared foundations as an ordered log of plays.

The foundation state is a pure function of the *set* of plays: each pile folds
its plays in :func:`order` (Lamport time, then a tie-break drawn alike on every
peer), so every peer holding the same plays computes the same piles, fates and
hash whatever order they arrived in. A pile is named by the card that started
it (an ace, or a joker declared an ace), so a play names its target without
depending on anyone's local view.

Plays usually arrive in order and are applied in O(1); a late play re-folds
only its own pile (at most a few dozen plays), never the whole log.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from enum import IntEnum
from typing import Any, Final, final

from .cards import ACE, KING

PlayKey = tuple[int, int]  # (lamport, seat): names a play, and the Nerts call
Order = tuple[int, int, int]  # (lamport, draw, seat): sorts plays, see order()
_MASK: Final = (1 << 64) - 1
_STATE_DOMAIN: Final = b"p2p-nerts/v1/foundations\x00"


def order(key: PlayKey) -> Order:
    """Where ``key`` stands in the round's total order: Lamport time, then a draw.

    Why not ``(lamport, seat)``: equal Lamport times are "impossible to tell",
    and a fixed seat order would hand the lower seat every tie it settles (a
    strict tie on a foundation, a play against a Nerts call at the same time,
    two calls at once) against every other seat, for the whole game. A turn
    that moves on with the time (``(seat - lamport) % seats``) makes every seat
    first equally often but still lets a seat beat the next one in almost
    every tie. Here each Lamport time orders the seats by a fixed hash of
    (time, seat), SplitMix64's finaliser, so between any two seats each tie
    is a fair coin that every peer tosses alike. The finaliser is a bijection
    of 64-bit numbers, so at one time no two seats draw alike; the seat comes
    last only so that the order is plainly total.
    """
    lamport, seat = key
    x = (lamport << 16 | seat) & _MASK
    x = (x ^ x >> 30) * 0xBF58476D1CE4E5B9 & _MASK
    x = (x ^ x >> 27) * 0x94D049BB133111EB & _MASK
    return (lamport, x ^ x >> 31, seat)


def before(a: PlayKey, b: PlayKey) -> bool:
    """Whether ``a`` comes before ``b`` in :func:`order`; only a tie needs the draw
    (a play is compared on every peer each time it arrives)."""
    return a[0] < b[0] or (a[0] == b[0] and order(a) < order(b))


class Fate(IntEnum):
    """What the log decided for a play (final only once the play is final)."""

    STAY = 0
    BOUNCE = 1
    CUT = 2  # ordered after the Nerts call: never counts


# The fates, as Final constants for the fold (one per play per view): on Python
# 3.11 a member read off its enum class goes through the metaclass's __getattr__.
_STAY: Final = Fate.STAY
_BOUNCE: Final = Fate.BOUNCE
_CUT: Final = Fate.CUT


@final
class Play:
    """One card sent to a foundation: the unit of the replicated log.

    An immutable value (Final attributes, equal and hashed by value, printed
    like a dataclass), written out rather than a frozen dataclass: the author
    of every play builds one, and compiled code builds a class with its own
    ``__init__`` natively (a dataclass's generated one stays interpreted).
    """

    __slots__ = ("author", "card", "declared", "face", "key", "lamport", "pile", "src")

    def __init__(self, lamport: int, author: int, card: int, pile: int, src: int,
                 declared: int = 0) -> None:
        self.lamport: Final = lamport
        self.author: Final = author
        self.card: Final = card
        self.pile: Final = pile
        self.src: Final = src
        self.declared: Final = declared
        #: Its name in the log, and the face it shows (its own, or what its owner
        #: declared for a joker): read by every view, so computed once.
        self.key: Final[PlayKey] = (lamport, author)
        self.face: Final = card & 63 if card & 15 else declared

    def _fields(self) -> tuple[int, int, int, int, int, int]:
        return (self.lamport, self.author, self.card, self.pile, self.src, self.declared)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Play) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (f"Play(lamport={self.lamport}, author={self.author}, card={self.card}, "
                f"pile={self.pile}, src={self.src}, declared={self.declared})")

    def __copy__(self) -> Play:
        return self  # a value: any copy of it is itself

    def __deepcopy__(self, memo: dict[int, object]) -> Play:
        return self


class Pile:
    """One foundation pile: its plays in order and what they fold to.

    A plain class, not a dataclass: every view starts each pile of the round,
    and compiled code builds a class with its own ``__init__`` natively.
    """

    __slots__ = ("pile_id", "plays", "stays", "suit", "top_lamport", "top_rank", "wants")

    def __init__(self, pile_id: int) -> None:
        self.pile_id = pile_id
        self.plays: list[Play] = []
        self.stays: list[Play] = []
        self.suit = -1
        self.top_rank = 0
        self.top_lamport = -1
        #: The face this pile takes next, or None (not started here, or complete):
        #: kept by the fold with its top, as every play each view adds reads it.
        self.wants: int | None = None

    @property
    def complete(self) -> bool:
        return self.top_rank == KING


class FoundationLog:
    """All foundation piles of one round, as one peer knows them."""

    def __init__(self, *, strict_ties: bool = False) -> None:
        self.strict_ties = strict_ties
        self.piles: dict[int, Pile] = {}
        self.cutoff: PlayKey | None = None
        self._fate: dict[PlayKey, Fate] = {}
        self._plays: dict[PlayKey, Play] = {}
        #: face → ids of the piles that take it next, lowest first (no empty lists).
        self._wanting: dict[int, list[int]] = {}

    # ----------------------------------------------------------------- queries
    def __len__(self) -> int:
        return len(self._plays)

    def __contains__(self, key: object) -> bool:
        return key in self._plays

    def fate(self, key: PlayKey) -> Fate:
        return self._fate[key]

    def play(self, key: PlayKey) -> Play:
        return self._plays[key]

    def outcome(self, key: PlayKey) -> tuple[Fate, Play]:
        """The fate of the play under ``key``, and the play: what its turn tells."""
        held: Any = key  # (one tuple for both lookups, compiled: see add)
        return self._fate[held], self._plays[held]

    def plays(self) -> Iterator[Play]:
        return iter(self._plays.values())

    def pile_for(self, face: int) -> int | None:
        """The lowest-numbered pile that takes ``face`` now (None for aces: they start one)."""
        piles = self._wanting.get(face)
        return piles[0] if piles else None

    def wanted_faces(self) -> Iterator[int]:
        return iter(self._wanting)

    @property
    def wanting(self) -> Mapping[int, list[int]]:
        """Face → the piles that take it next, lowest first (read only): whether a
        card could go up at all is one look-up here, where a bot looks at most cards."""
        return self._wanting

    def first_over(self, key: PlayKey) -> Play | None:
        """For a bounced play: the play that took its place ("Ana was first")."""
        play = self._plays[key]
        pile = self.piles.get(play.pile)
        if pile is None:
            return None
        rank = play.face & 15
        same = [p for p in pile.stays if p.face & 15 == rank]
        return same[0] if same else (pile.stays[-1] if pile.stays else None)

    def cards_of(self, seat: int) -> int:
        """How many of ``seat``'s own cards stay on the foundations (+1 each)."""
        return sum(1 for pile in self.piles.values() for p in pile.stays
                   if p.card >> 6 == seat)  # (owner_of, written out: once a card a seat)

    def staying_cards(self) -> Iterator[int]:
        for pile in self.piles.values():
            for p in pile.stays:
                yield p.card

    def completed(self) -> int:
        return sum(1 for pile in self.piles.values() if pile.complete)

    def state(self) -> bytes:
        """The canonical foundation state, what :meth:`state_hash` covers: piles by
        id, each with its staying cards in order (two views agree when these do)."""
        out: list[int] = []  # bytes: a pile's id (2, big-endian) and its count, then
        for pile_id in sorted(self.piles):  # each card (2) and the face it shows
            stays = self.piles[pile_id].stays
            if stays:
                out += (pile_id >> 8, pile_id & 255, len(stays))
                for p in stays:
                    out += (p.card >> 8, p.card & 255, p.face)
        return bytes(out)

    def state_hash(self) -> bytes:
        """SHA-256 of the canonical foundation state (:meth:`state`)."""
        return hashlib.sha256(_STATE_DOMAIN + self.state()).digest()

    # ----------------------------------------------------------------- changes
    def add(self, play: Play) -> list[Play]:
        """Insert a play; return every play whose fate this changed (the new one first).

        Adding a play whose key is already known is a no-op (a duplicate
        delivery) and returns [].
        """
        # Held as one object: compiled, a PlayKey variable is two machine ints,
        # made into a new tuple for each dict it is looked up in or stored under.
        key: Any = play.key
        if key in self._plays:
            return []
        self._plays[key] = play
        pile = self.piles.get(play.pile)
        if pile is None:
            pile = self.piles[play.pile] = Pile(play.pile)
        plays = pile.plays
        # In order, the usual case (a later Lamport time needs no draw to tell).
        if not plays or plays[-1].lamport < play.lamport or before(plays[-1].key, key):
            plays.append(play)
            wanted = pile.wants
            fate = self._step(pile, play)
            self._fate[key] = fate
            if fate is _STAY:  # (only a play that stays changes what the pile wants)
                self._rewant(pile, wanted)
            return [play]
        bisect.insort(pile.plays, play, key=lambda p: order(p.key))
        return [play, *self._refold(pile, changed_besides=key)]

    def remove(self, key: PlayKey) -> list[Play]:
        """Take a play out of the log (its author's entries past an agreed drop cut).

        Returns the other plays whose fate this changed; the removed play's card
        belongs to its owner again.
        """
        play = self._plays.pop(key)
        del self._fate[key]
        pile = self.piles[play.pile]
        pile.plays.remove(play)
        return self._refold(pile)

    def set_cutoff(self, key: PlayKey) -> list[Play]:
        """Only plays ordered before ``key`` (the Nerts call) count; return changed plays."""
        # Fates of plays ordered before both the old and the new cut-off stay as
        # they are: only piles holding a later play need folding again.
        low = key if self.cutoff is None or before(key, self.cutoff) else self.cutoff
        self.cutoff = key
        changed: list[Play] = []
        for pile in self.piles.values():
            if pile.plays and before(low, pile.plays[-1].key):
                changed += self._refold(pile)
        return changed

    def _refold(self, pile: Pile, changed_besides: PlayKey | None = None) -> list[Play]:
        wanted = pile.wants
        pile.stays = []
        pile.suit, pile.top_rank, pile.top_lamport, pile.wants = -1, 0, -1, None
        changed = []
        for play in pile.plays:
            fate = self._step(pile, play)
            if self._fate.get(play.key) != fate:
                self._fate[play.key] = fate
                if play.key != changed_besides:
                    changed.append(play)
        self._rewant(pile, wanted)
        return changed

    def _step(self, pile: Pile, play: Play) -> Fate:
        """Fold one play onto a pile (plays arrive here in :func:`order`)."""
        if self.cutoff is not None and before(self.cutoff, play.key):
            return _CUT
        face = play.face
        rank, suit = face & 15, face >> 4
        if play.card == pile.pile_id:
            ok = rank == ACE and pile.top_rank == 0
        elif pile.top_rank == 0 or suit != pile.suit:
            ok = False
        elif rank == pile.top_rank + 1:
            ok = True
        else:
            ok = (rank == pile.top_rank and play.lamport == pile.top_lamport
                  and not self.strict_ties)
        if not ok:
            return _BOUNCE
        pile.suit, pile.top_rank, pile.top_lamport = suit, rank, play.lamport
        pile.wants = None if rank == KING else suit << 4 | (rank + 1)
        pile.stays.append(play)
        return _STAY

    def _rewant(self, pile: Pile, wanted: int | None) -> None:
        """``pile`` took ``wanted`` next before it changed, and takes ``pile.wants`` now:
        move it in ``_wanting`` from the one face to the other (one call a play that stays)."""
        face = pile.wants
        if face == wanted:
            return
        if wanted is not None:
            piles = self._wanting[wanted]
            if len(piles) == 1:
                del self._wanting[wanted]
            else:
                piles.remove(pile.pile_id)
        if face is not None:
            taking = self._wanting.get(face)
            if taking is None:
                self._wanting[face] = [pile.pile_id]
            else:
                bisect.insort(taking, pile.pile_id)


def fold(plays: Iterable[Play], *, strict_ties: bool = False,
         cutoff: PlayKey | None = None) -> FoundationLog:
    """A fresh log from a set of plays, in any order (for checks and audits)."""
    log = FoundationLog(strict_ties=strict_ties)
    for play in plays:
        log.add(play)
    if cutoff is not None:
        log.set_cutoff(cutoff)
    return log
