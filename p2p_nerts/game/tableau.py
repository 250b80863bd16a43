"""One player's tableau: Nerts pile, four work piles, stock and waste.

Every move is a method that validates first and changes nothing when it raises
:class:`IllegalMove`. Every successful move is appended to :attr:`Tableau.log`
as a tuple of ints; that log is what the audit replays against the revealed
deck (see :func:`replay`), so the tableau is the single definition of which
moves are legal, for players, bots and auditors alike.

Piles are lists with their playable end last: the Nerts top, the waste top and
a work pile's exposed card are ``pile[-1]``; the stock's next card is
``stock[-1]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from .cards import (
    ACE,
    JOKER_RANK,
    KING,
    STACK_BASES,
    SUIT_COLOR,
    card_name,
    face_name,
    make_face,
)

#: Sources of a card, also used on the wire (``src`` of a foundation play).
NERTS: Final = 0
WASTE: Final = 1
WORK0: Final = 2
WORK_PILES: Final = 4
NERTS_SIZE: Final = 13
SOURCES: Final = range(WORK0 + WORK_PILES)

# Move-log opcodes: the first int of every log entry.
OP_TURN: Final = 1
OP_FOUND: Final = 2
OP_WORK: Final = 3
OP_SLIDE: Final = 4
OP_ROTATE: Final = 5
OP_SETTLE: Final = 6
OP_NERTS: Final = 7
#: ``landed`` of a settle entry for a play that stayed on its foundation.
STAYED: Final = -1
ROTATE_ALONE: Final = 0
ROTATE_ALL: Final = 1


class IllegalMove(Exception):
    """A move the rules forbid; raised before anything changes."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def source_name(src: int) -> str:
    if src == NERTS:
        return "Nerts pile"
    if src == WASTE:
        return "waste"
    return f"work pile {src - WORK0 + 1}"


@dataclass(frozen=True, slots=True)
class Target:
    """Where a card can go: a foundation pile (``pile``) or a work pile (``work``)."""

    src: int
    pile: int | None = None
    declared: int = 0
    work: int | None = None
    index: int = -1
    slide: bool = False
    #: A work-pile move's declarations: the face each joker it covers stands for
    #: from then on (none: the first suit of the colour the run gives it).
    covers: tuple[int, ...] = ()


class Tableau:
    """The cards of one seat that are not (finally) on the foundations."""

    __slots__ = ("bound", "forfeited", "in_flight", "jokers", "log", "nerts", "owner", "stock",
                 "stock_turn", "waste", "work")

    def __init__(self, owner: int, deck: Sequence[int], *, stock_turn: int = 3,
                 jokers: bool = False) -> None:
        """Deal ``deck`` (first card dealt first): 13 to Nerts, 4 work piles, rest stock.

        The 13th card dealt is the Nerts top; the stock's first card to turn is
        the first card after the work piles.
        """
        self.owner = owner
        self.stock_turn = stock_turn
        self.jokers = jokers
        self.nerts: list[int] = list(deck[:NERTS_SIZE])
        self.work: list[list[int]] = [[c] for c in deck[NERTS_SIZE:NERTS_SIZE + WORK_PILES]]
        self.stock: list[int] = list(reversed(deck[NERTS_SIZE + WORK_PILES:]))
        self.waste: list[int] = []
        #: Fixed jokers: joker → the face it stands for. A joker is fixed once a
        #: card lies on it on a work pile, and stays so, wherever it goes, until
        #: it stays on a foundation (a bounced one comes back fixed).
        self.bound: dict[int, int] = {}
        #: Cards sent to a foundation whose fate is not final: play key → (card, source).
        self.in_flight: dict[tuple[int, int], tuple[int, int]] = {}
        self.log: list[tuple[int, ...]] = []
        #: Plays of ours the table holds that this tableau never made: play key → card.
        self.forfeited: dict[tuple[int, int], int] = {}

    # ----------------------------------------------------------------- reading
    def top(self, src: int) -> int | None:
        """The playable card of a source, or None when it is empty."""
        # The Nerts pile and the waste without _pile's call: the bots ask for
        # their tops several times an action.
        pile = self.nerts if src == NERTS else self.waste if src == WASTE else self._pile(src)
        return pile[-1] if pile else None

    def cards(self) -> Iterator[int]:
        """Every card this tableau holds, in flight included (for accounting)."""
        yield from self.nerts
        for pile in self.work:
            yield from pile
        yield from self.stock
        yield from self.waste
        for card, _src in self.in_flight.values():
            yield card

    def can_call_nerts(self) -> bool:
        """Empty Nerts pile, and no Nerts card still in the air that might bounce back."""
        return not self.nerts and all(src != NERTS for _, src in self.in_flight.values())

    def effective(self, card: int) -> tuple[int, int] | None:
        """(rank, colour) a card stands for on a work pile; None for a free joker."""
        if card & 15 == JOKER_RANK:
            face = self.bound.get(card)
            return None if face is None else (face & 15, SUIT_COLOR[face >> 4])
        return card & 15, SUIT_COLOR[(card >> 4) & 3]

    # ----------------------------------------------------------------- moves
    def turn(self) -> None:
        """Turn up to ``stock_turn`` cards onto the waste, or turn the waste over."""
        stock = self.stock
        if stock:
            # The next stock_turn cards (fewer at the end), each turned onto the
            # last: one slice, not a pop and an append each (a bot's every other step).
            turned = stock[-self.stock_turn:]
            del stock[-self.stock_turn:]
            turned.reverse()
            self.waste.extend(turned)
        elif self.waste:
            self.waste.reverse()
            self.stock, self.waste = self.waste, []
        else:
            raise IllegalMove("stock and waste are both empty")
        self.log.append((OP_TURN,))

    def launch(self, src: int, key: tuple[int, int], pile: int, declared: int = 0) -> int:
        """Take the playable card of ``src`` towards foundation ``pile``; it is in flight.

        The foundation log decides whether it stays; the tableau only checks
        that the card is playable here and that a joker's declaration fits.
        Returns the card.
        """
        source = self._pile(src)  # (held: top's call, and a second _pile, saved)
        if not source:
            raise IllegalMove(f"your {source_name(src)} is empty")
        card = source[-1]
        if key in self.in_flight:
            raise IllegalMove("a play with this time is already in the air")
        face = self._foundation_face(card, src, declared)
        if (face & 15 == ACE) != (pile == card):
            raise IllegalMove("an ace starts a new foundation; other cards go on one")
        source.pop()
        self.in_flight[key] = (card, src)
        self.log.append((OP_FOUND, src, card, key[0], pile, declared))
        return card

    def move_to_work(self, src: int, dst: int, index: int = -1,
                     covers: Sequence[int] = ()) -> None:
        """Move a card (or, from a work pile, the run from ``index`` up) onto work pile ``dst``.

        ``covers``: what each joker the move covers is declared to be (see :meth:`_settle`).
        """
        if not 0 <= dst < WORK_PILES:
            raise IllegalMove("there are four work piles")
        if src == WORK0 + dst:
            raise IllegalMove("a run is already on that pile")
        run = self._run(src, index)
        source = self._pile(src)
        start = len(source) - len(run) if src >= WORK0 else -1
        target = self.work[dst]
        if target:
            self._check_stack(target, run)
        new_target = target + run
        if self.jokers or covers:
            self._settle(new_target, covers)
        del source[-len(run):]
        target.extend(run)
        self.log.append((OP_WORK, src, dst, start, *covers) if covers
                        else (OP_WORK, src, dst, start))

    def slide_under(self, src: int, dst: int, covers: Sequence[int] = ()) -> None:
        """Slide the playable card of ``src`` under work pile ``dst`` (needs an empty pile);
        ``covers`` as for :meth:`move_to_work`."""
        if not 0 <= dst < WORK_PILES or not self.work[dst]:
            raise IllegalMove("slide a card under a work pile that has cards")
        if src == WORK0 + dst:
            raise IllegalMove("a card cannot slide under its own pile")
        if all(self.work):
            raise IllegalMove("sliding under needs an empty work pile")
        card = self.top(src)
        if card is None:
            raise IllegalMove(f"your {source_name(src)} is empty")
        pile = self.work[dst]
        self._check_stack([card], pile)
        new_pile = [card, *pile]
        if self.jokers or covers:
            self._settle(new_pile, covers)
        self._pile(src).pop()
        pile.insert(0, card)
        self.log.append((OP_SLIDE, src, dst, *covers) if covers else (OP_SLIDE, src, dst))

    def rotate(self, *, alone: bool) -> None:
        """A stuck player's stock rotation.

        Everyone stuck (``alone`` False): the waste goes back under the stock,
        then the top stock card goes to the bottom; the cards keep the order in
        which they would have been turned. Stuck alone (the lone-rotate
        variant): only the top stock card goes to the bottom, the waste stays
        as it is. The table checks the variant and that the player is stuck.
        """
        if alone:
            if len(self.stock) < 2:
                raise IllegalMove("not enough stock cards to rotate: turn the waste over first")
            self.stock.insert(0, self.stock.pop())
        else:
            sequence = [*reversed(self.stock), *self.waste]
            if len(sequence) < 2:
                raise IllegalMove("not enough stock and waste cards to rotate")
            sequence.append(sequence.pop(0))
            self.stock = sequence[::-1]
            self.waste = []
        self.log.append((OP_ROTATE, ROTATE_ALONE if alone else ROTATE_ALL))

    def settle(self, key: tuple[int, int], stayed: bool) -> int | None:
        """A play of ours became final: forget it, or take a bounced card back.

        A bounced card goes back on top of its pile when that is still legal,
        else on top of the waste. Returns the source it landed on (None if it
        stayed). Never loses or duplicates a card.
        """
        card, src = self.in_flight.pop(key)
        if stayed:
            self.bound.pop(card, None)  # a joker on a foundation is free of its work pile
            self.log.append((OP_SETTLE, card, key[0], STAYED))
            return None
        landed = src
        if src >= WORK0:
            pile = self.work[src - WORK0]
            if pile and not self.fits(card, pile):
                landed = WASTE
            elif pile and self.jokers:
                self._settle([*pile, card])  # a free joker it lands on is now fixed
        self._pile(landed).append(card)
        self.log.append((OP_SETTLE, card, key[0], landed))
        return landed

    def forfeit(self, key: tuple[int, int], card: int) -> bool:
        """A play of ours that stayed, which this tableau never made, takes its card.

        Back from a journal that lost its last moves, a seat learns its own
        plays from the table; the card of one that stayed is on the
        foundations, and would be here too. It leaves whichever pile holds it
        (the seat sits the round out: what it no longer has of its moves, it
        cannot replay). False when no pile holds it.
        """
        for pile in (self.nerts, self.waste, self.stock, *self.work):
            if card in pile:
                pile.remove(card)
                self.forfeited[key] = card
                return True
        return False

    def take_back(self, key: tuple[int, int]) -> int | None:
        """A play of ours that had stayed is undone after all: the card comes back as
        a bounce would. Returns where it landed, or None if no play of ours under
        ``key`` had stayed (it is in the air still, or came back already).

        Our seat was dropped from the round with a cut before this play, so on
        every replica the play never happened, though it had looked settled
        here (its fate was fixed by the plays before it, and the vote that
        cut it was ordered after it).
        """
        card = self.forfeited.pop(key, None)
        if card is not None:  # (it comes back on top of the waste)
            self.in_flight[key] = (card, WASTE)
            return self.settle(key, stayed=False)
        settled = next((m for m in reversed(self.log)
                        if m[0] == OP_SETTLE and m[2] == key[0]), None)  # its last word
        launched = next((m for m in reversed(self.log)
                         if m[0] == OP_FOUND and m[3] == key[0]), None)
        if settled is None or settled[3] != STAYED or launched is None:
            return None
        self.in_flight[key] = (settled[1], launched[1])
        return self.settle(key, stayed=False)

    def record_nerts_call(self, lamport: int) -> None:
        if not self.can_call_nerts():
            raise IllegalMove(
                "call Nerts only with an empty Nerts pile and none of its cards in the air"
            )
        self.log.append((OP_NERTS, lamport))

    # ----------------------------------------------------------------- helpers
    def _pile(self, src: int) -> list[int]:
        if src == NERTS:
            return self.nerts
        if src == WASTE:
            return self.waste
        if WORK0 <= src < WORK0 + WORK_PILES:
            return self.work[src - WORK0]
        raise IllegalMove(f"no such pile: {src}")

    def _run(self, src: int, index: int) -> list[int]:
        pile = self._pile(src)
        if not pile:
            raise IllegalMove(f"your {source_name(src)} is empty")
        if src < WORK0:
            if index != -1:
                raise IllegalMove("only the top card of the Nerts pile or waste can move")
            return pile[-1:]
        if not -len(pile) <= index < len(pile):
            raise IllegalMove("no card there")
        return pile[index:]

    def fits(self, card: int, pile: list[int]) -> bool:
        """Whether ``card`` may lie on ``pile`` now (jokers included)."""
        try:
            self._check_stack(pile, [card])
            if self.jokers:
                self._settle([*pile, card], dry=True)
        except IllegalMove:
            return False
        return True

    def _check_stack(self, lower: list[int], upper: list[int]) -> None:
        """The run ``upper`` may lie on ``lower`` (both bottom-first); jokers checked by settle."""
        if lower[-1] & 63 in STACK_BASES[upper[0] & 63]:
            return  # (two plain cards that stack: effective's answer, looked up)
        below = self.effective(lower[-1])
        above = self.effective(upper[0])
        if below is None or above is None:
            return
        if above[0] != below[0] - 1 or above[1] == below[1]:
            raise IllegalMove(
                f"{card_name(upper[0])} does not go on {card_name(lower[-1])}: "
                "one rank lower and the other colour"
            )

    def _settle(self, pile: list[int], covers: Sequence[int] = (), *,
                dry: bool = False) -> None:
        """Check a would-be work pile with jokers; fix every joker that has a card on it.

        A joker is fixed once a card lies on it: the run gives its rank and
        colour, and its owner declares its suit (``covers``, one face for each
        joker covered here; the first suit of the colour, ♠ or ♥, for one not
        declared), so that it is one whole card from then on. A declaration
        that no joker covered here can be is an illegal move.
        """
        fixes = self.fixes(pile)
        if covers:
            fixes = _declared(fixes, covers)
        if not dry:
            self.bound.update(fixes)

    def fixes(self, pile: list[int]) -> list[tuple[int, int]]:
        """The jokers a would-be work pile fixes, each with the face it takes unless
        declared otherwise; IllegalMove when the pile is no run.

        A valid pile descends by one rank with alternating colours, so one
        known card fixes what every position stands for; a joker on top stays free.
        """
        known = next(
            ((i, eff) for i, c in enumerate(pile) if (eff := self.effective(c)) is not None),
            None,
        )
        if known is None:
            if len(pile) > KING:
                raise IllegalMove("a run has at most thirteen cards")
            return []
        k, (rank_k, color_k) = known
        fixes: list[tuple[int, int]] = []
        for i, card in enumerate(pile):
            want = (rank_k + k - i, color_k ^ ((k - i) & 1))
            if not ACE <= want[0] <= KING:
                raise IllegalMove("a run goes from king down to ace")
            eff = self.effective(card)
            if eff is None:
                if i < len(pile) - 1:
                    fixes.append((card, make_face(SUIT_COLOR.index(want[1]), want[0])))
            elif eff != want:
                raise IllegalMove(f"{card_name(card)} does not fit in that run")
        return fixes

    def _foundation_face(self, card: int, src: int, declared: int) -> int:
        """The face a card shows on a foundation; jokers need a fitting declaration."""
        if card & 15 != JOKER_RANK:
            if declared not in (0, card & 63):
                raise IllegalMove("only a joker is declared")
            return card & 63
        rank = declared & 15
        if not ACE <= rank <= KING or declared >> 6:
            raise IllegalMove("declare the joker's rank and suit before it goes up")
        fixed = self.bound.get(card)
        if fixed is not None and declared != fixed:
            raise IllegalMove(f"this joker is fixed as {face_name(fixed)}; "
                              f"it cannot be {face_name(declared)}")
        return declared


def _declared(fixes: list[tuple[int, int]], covers: Sequence[int]) -> list[tuple[int, int]]:
    """``fixes`` with the declared faces: each must be one that a joker fixed here may
    be (its rank and colour, either suit of that colour), each joker declared once."""
    chosen = list(fixes)
    used: set[int] = set()
    for face in covers:
        n = next((n for n, (_joker, default) in enumerate(fixes) if n not in used
                  and 0 <= face < 64 and face & 15 == default & 15
                  and SUIT_COLOR[face >> 4] == SUIT_COLOR[default >> 4]), None)
        if n is None:
            raise IllegalMove(f"no joker covered by this move can be {_face_text(face)}")
        used.add(n)
        chosen[n] = (fixes[n][0], face)
    return chosen


def _face_text(face: int) -> str:
    return face_name(face) if 0 <= face < 64 and ACE <= face & 15 <= KING else f"face {face}"


def replay(owner: int, deck: Sequence[int], moves: Sequence[Sequence[int]], *,
           stock_turn: int = 3, jokers: bool = False) -> Tableau:
    """Re-run a tableau's move log from its dealt deck; raise IllegalMove at the first bad move.

    Foundation plays are replayed as launches; settles must name a card in the
    air. Whether the foundation log really let each play stay or bounce is
    checked by the auditor against the settles recorded here.
    """
    tab = Tableau(owner, deck, stock_turn=stock_turn, jokers=jokers)
    redo(tab, moves)
    return tab


def redo(tab: Tableau, moves: Sequence[Sequence[int]],
         before: Callable[[int, Tableau], None] | None = None) -> None:
    """Apply a move log to a freshly dealt tableau; raise IllegalMove at the first bad move.

    On a bad move the tableau is left as it was just before it, so an auditor
    can still say what that seat really held (its Nerts count at a false call).
    ``before(n, tab)``, if given, looks at the tableau before each move ``n``
    and may find it bad (IllegalMove), as the move itself may: an auditor's
    check of the moment (a rotation alone with a move in hand).
    """
    for n, move in enumerate(moves):
        try:
            if before is not None:
                before(n, tab)
            apply_move(tab, move)
        except (IllegalMove, IndexError, ValueError, KeyError, TypeError) as exc:
            reason = exc.reason if isinstance(exc, IllegalMove) else "malformed move"
            raise IllegalMove(f"move {n + 1} {tuple(move)}: {reason}") from None
    tab.log = [tuple(m) for m in moves]


def apply_move(tab: Tableau, move: Sequence[int]) -> None:
    """Redo one move-log entry on a tableau (audit replays, crash recovery)."""
    op, *args = move
    if op == OP_TURN and not args:
        tab.turn()
    elif op == OP_FOUND and len(args) == 5:
        src, card, lamport, pile, declared = args
        if tab.top(src) != card:
            raise IllegalMove(f"{card_name(card)} was not playable from the {source_name(src)}")
        tab.launch(src, (lamport, tab.owner), pile, declared)
    elif op == OP_WORK and 3 <= len(args) <= 5:
        tab.move_to_work(args[0], args[1], args[2], args[3:])
    elif op == OP_SLIDE and 2 <= len(args) <= 4:
        tab.slide_under(args[0], args[1], args[2:])
    elif op == OP_ROTATE and len(args) == 1 and args[0] in (ROTATE_ALONE, ROTATE_ALL):
        tab.rotate(alone=args[0] == ROTATE_ALONE)
    elif op == OP_SETTLE and len(args) == 3:
        card, lamport, landed = args
        flown = tab.in_flight.get((lamport, tab.owner))
        if flown is None or flown[0] != card:
            raise IllegalMove(f"{card_name(card)} was not in the air")
        stayed = landed == STAYED
        if tab.settle((lamport, tab.owner), stayed=stayed) != (None if stayed else landed):
            raise IllegalMove(f"{card_name(card)} came back to the wrong pile")
    elif op == OP_NERTS and len(args) == 1:
        tab.record_nerts_call(args[0])
    else:
        raise IllegalMove("unknown move")
