"""Intake: what comes in, before it is acted on. A frame's envelope checks;
whose entries are heard at all (strangers are not); whether an author's next
entry can be acted on now; and the resends, both ways.

Pure functions over the round and the phase, and two small classes owning
what they keep (the chains, keys once placed and watchers; resend budgets and
times, which ``Places`` keeps for the chains it keeps).
The facade delivers in sequence and holds what must wait; what is to be
done with an entry they refuse comes back as effects (``_effects``) for it
to apply, and it sends what they say.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Final

from ..authors import MAX_HELD, MAX_HELD_BYTES, AuthorLog
from ..budget import TokenBucket
from ..envelope import LINK_MAGIC, Entry, EnvelopeError, open_entry, open_link_entry
from ..messages import Head, MsgType, Payload, Resend, parse_payload
from ..proof import ForkProof
from ._base import (
    BETWEEN_ROUND_TYPES,
    EPHEMERAL,
    IN_ROUND,
    LAMPORT_PROBLEMS,
    LINK_TYPES,
    MAX_AUTHORS,
    MAX_LAMPORT_JUMP,
    NEEDS_DEAL,
    RESEND_BURST,
    RESEND_BYTES,
    RESEND_GRACE,
    RESEND_INTERVAL,
    ROUND_TYPES,
    Phase,
)
from ._state import RoundState

#: Read for every entry delivered, as a Final constant: on Python 3.11 a member
#: read off its enum class goes through the metaclass.
_RESULT: Final = MsgType.RESULT
_GOODBYE: Final = MsgType.GOODBYE
_ACK: Final = MsgType.ACK
_RESEND: Final = MsgType.RESEND
#: Refusals of an entry that an honest author signs too, only too late (a dropped
#: seat's, one for a round we have closed, one past a proven fork): not flagged.
TOO_LATE = frozenset({"dropped", "late", "void"})


class Arrival(Enum):
    """What becomes of an entry from an author who may be heard (:meth:`Places.arrival`)."""

    SEQUENCED = "sequenced"  # offered to its author's chain, delivered in sequence
    ACK = "ack"  # journaled (finality depends on acks), then acted on at once
    EPHEMERAL = "ephemeral"  # acted on at once, journaled nowhere
    ASK_AGAIN = "ask_again"  # host: a newcomer's ACK; its JOIN may have been lost: fetch it


#: The verdicts, as Final constants (read for every entry: see _RESULT).
SEQUENCED: Final = Arrival.SEQUENCED
ACK: Final = Arrival.ACK
EPHEMERAL_NOW: Final = Arrival.EPHEMERAL
ASK_AGAIN: Final = Arrival.ASK_AGAIN


@dataclass(frozen=True, slots=True)
class Stop:
    """An author's next held entry cannot be delivered: refuse it (``reason``) and
    deliver nothing more of its author now. ``flag``: what its author is flagged
    for; None for a broken chain, where another branch of it is asked for
    instead (a second entry under that number is the proof)."""

    reason: str
    flag: str | None


def open_frame(raw: bytes, via: bytes | None, table_id: bytes,
               clock: int) -> tuple[Entry, Payload]:
    """Check a frame's envelope and decode it, or raise ``EnvelopeError``.

    ``via`` is the key of the authenticated link it came on (None when
    unknown): a link entry (unsigned) is taken only of a link type, from its
    author, on its own link. ``clock``: my Lamport time.
    """
    if raw[:len(LINK_MAGIC)] == LINK_MAGIC:
        if via is None:
            raise EnvelopeError("unlinked")  # nobody vouches for an unsigned entry
        entry = open_link_entry(raw, via)
        if entry.type not in LINK_TYPES:
            raise EnvelopeError("unsigned_type")
    else:
        entry = open_entry(raw)
    if entry.table_id != table_id:
        raise EnvelopeError("wrong_table")
    if entry.lamport > clock + MAX_LAMPORT_JUMP:
        raise EnvelopeError("lamport_jump")  # would run every clock out of range
    return entry, parse_payload(entry.type, entry.payload)


class Places:
    """Whose chains the table keeps, and who is heard: the author logs (at most
    MAX_AUTHORS of them), when each author was last heard, keys heard as players
    beyond those holding a place now, and the watchers; what is asked and
    answered of those chains (``resends``), forgotten with a chain.

    ``max_held`` bounds the entries each chain holds early, and their bytes: at
    a table, what a peer may make us keep; reading a whole record, the record
    itself, all of it at hand (its later rounds wait there for the earlier ones
    to close).
    """

    def __init__(self, max_held: tuple[int, int] = (MAX_HELD, MAX_HELD_BYTES)) -> None:
        self.max_held = max_held
        #: Every author's chain, by key (the facade and its sub-machines read it).
        self.authors: dict[bytes, AuthorLog] = {}
        #: When each author was last heard (by the time passed in).
        self.last_heard: dict[bytes, float] = {}
        self.placed: set[bytes] = set()  # keys heard from while they had a place
        #: Keys without a place that asked for the table's entries (a RESEND): the
        #: spectators a front end may admit (``Admission.admits_spectator``);
        #: only keys whose chain is kept, forgotten with it (:meth:`watch`).
        self.watchers: set[bytes] = set()
        self.resends = Resends()

    def begin_log(self, key: bytes, holds_place: Callable[[bytes], bool]) -> AuthorLog | None:
        """A chain begun for ``key`` (not known yet), forgetting another key to make
        room for it; no chain (None) when the table keeps MAX_AUTHORS and every one
        of them has a place.

        Keys come and go over a night (players leave, a flood of strangers
        says HELLO); only those with a place matter to the game, and the
        longest-silent other one goes. A forgotten key that comes back starts
        again from its first entry, which it resends.
        """
        if len(self.authors) >= MAX_AUTHORS:
            forgotten = stranger_to_forget(self.authors, holds_place, self.last_heard)
            if forgotten is None:
                return None
            self.forget(forgotten)
        log = self.authors[key] = AuthorLog(key, max_held=self.max_held[0],
                                            max_held_bytes=self.max_held[1])
        return log

    def forget(self, key: bytes) -> None:
        """``key`` forgotten to make room, with all that is kept by it: its chain,
        when it was heard, its watching and what it asked and was answered
        (``Resends.forget``). So what a table keeps by key is bounded by the
        chains it keeps (MAX_AUTHORS), however many keys a stranger signs with."""
        del self.authors[key]
        self.last_heard.pop(key, None)
        self.watchers.discard(key)
        self.resends.forget(key)

    def watch(self, key: bytes) -> None:
        """``key``, without a place, asked for the table's entries (a RESEND): a
        watcher while its chain is kept (:meth:`forget`)."""
        if key in self.authors:
            self.watchers.add(key)

    def forget_before(self, floors: Mapping[bytes, int]) -> None:
        """Forget each author's entries before its floor (a finished round every
        seat holds: ``Pruning.begin``)."""
        for author, upto in floors.items():
            self.authors[author].prune(upto)

    def claim(self, author: bytes, seq: int, holds_place: Callable[[bytes], bool]) -> None:
        """Someone holds ``author``'s entries up to ``seq``: note it on its chain,
        begun if new (``holds_place``: as :meth:`begin_log`), so that what we lack
        is asked for; nothing when there is no room."""
        log = self.chain(author, holds_place)
        if log is not None:
            log.note_claim(seq)

    def take_heads(self, heads: Iterable[Head], holds_place: Callable[[bytes], bool]) -> None:
        """Hold every author's chain as far as these heads (a snapshot's), each chain
        begun if new (as :meth:`claim`)."""
        for head in heads:
            log = self.chain(head.author, holds_place)
            if log is not None:
                log.take_up(head.seq, head.lamport, head.id)

    def chain(self, key: bytes, holds_place: Callable[[bytes], bool]) -> AuthorLog | None:
        """``key``'s chain, begun if new (:meth:`begin_log`); None: no room."""
        log = self.authors.get(key)
        return log if log is not None else self.begin_log(key, holds_place)

    def hear(self, key: bytes, now: float) -> None:
        """``key`` was heard from at ``now`` (silence counts from here)."""
        self.last_heard[key] = now

    def heard_all(self, keys: Iterable[bytes], now: float) -> None:
        """A round with these keys begins: each is heard from now on, so that a
        seat is given the whole drop time before it counts as silent."""
        heard = self.last_heard
        for key in keys:
            heard[key] = max(heard.get(key, now), now)

    def admit(self, keys: Iterable[bytes]) -> None:
        """Hear these keys as players though no place of theirs is known yet."""
        self.placed.update(keys)

    def player(self, key: bytes, holds: bool) -> bool:
        """Whether ``key`` (``holds``: it has a place now) is a player the table keeps
        talking to: it holds a place, or held one."""
        return holds or key in self.placed

    def arrival(self, entry: Entry, *, placed: bool, me: bytes, my_seq: int, is_host: bool,
                seated: frozenset[bytes]) -> Arrival:
        """What becomes of ``entry`` (``placed``: its author has a place now; ``my_seq``:
        the last number I signed), or ``EnvelopeError``: my own entry come back (a
        reflection; only a seat whose journal was behind takes entries of its own
        from the table), or a stranger's (checked, and dropped: see
        ``has_place``)."""
        kind = entry.type
        author = entry.author
        if author == me:
            if entry.seq <= my_seq or kind in EPHEMERAL:
                raise EnvelopeError("own_entry")
        else:
            if placed:
                self.placed.add(author)
            elif not self.heard_of(entry, is_host=is_host, seated=seated):
                raise EnvelopeError("stranger")
            if is_host and not placed and kind == _ACK and author not in self.placed:
                return ASK_AGAIN
        if kind in EPHEMERAL:
            return ACK if kind == _ACK else EPHEMERAL_NOW
        return SEQUENCED

    def heard_of(self, entry: Entry, *, is_host: bool, seated: frozenset[bytes]) -> bool:
        """Whether a key without a place may still be heard: it had one (a seat given
        up, a player catching up to ask back in), or it asks the host for one
        (its HELLO, asking where its own chain ends before it signs more; its
        JOIN; and the ACKs that tell the host a JOIN was lost on the way); and
        anyone's RESEND, asking for entries (a newcomer's lobby, a spectator's
        table), which makes it a watcher.
        Anything else from a key that never had a place is a stranger's."""
        if entry.author in self.placed:
            return True
        if entry.type == _RESEND:
            # Someone watching asks for entries: answered within the budget the
            # askers without a place share (``Resends``), and only where its
            # link is admitted at all; a watcher once it is answered (``watch``).
            return True
        if not is_host:
            # A guest that knows no seats yet (just sat down, or back without its
            # journal) cannot tell players from strangers before the host's
            # ROSTER; its links come from the host's list of the seated.
            return not seated
        return entry.type in (MsgType.HELLO, MsgType.JOIN, MsgType.ACK)


def has_place(key: bytes, *, seated: frozenset[bytes], host_key: bytes, me: bytes,
              waiting: Mapping[bytes, str], rs: RoundState | None) -> bool:
    """Whether ``key`` has a place at this table: a seat, a place in the round, a
    place on the waiting list, or the host's or my own key.

    A key that never had one is a stranger: its entries are checked and
    dropped (its first JOIN to the host excepted: it asks for a place), never
    journaled or kept, and it is answered nothing. Nothing is held early for
    a key without a place.
    """
    return (key in seated or key in (host_key, me) or key in waiting
            or (rs is not None and key in rs.keys))


def stranger_to_forget(keys: Iterable[bytes], holds_place: Callable[[bytes], bool],
                       last_heard: Mapping[bytes, float]) -> bytes | None:
    """The longest-silent key without a place, to forget to make room (None: none)."""
    strangers = [k for k in keys if not holds_place(k)]
    if not strangers:
        return None
    return min(strangers, key=lambda k: last_heard.get(k, -1e18))


def offer(log: AuthorLog, entry: Entry, *, player: bool) -> str:
    """Offer a sequenced entry to its author's chain (``player``: the author is one):
    "next" (held, to deliver now), "held" (early) or "duplicate"; raises
    ``EnvelopeError`` for an early entry of a key that never had a place (kept
    for nothing), ``Equivocation`` for a second entry under one number.

    A player's early entries are held, also before the ROSTER that seats it is
    read (a record read from its start: the ``players`` its replica is built with).
    """
    if not player and entry.seq > log.delivered + 1:
        raise EnvelopeError("stranger")
    verdict = log.offer(entry)
    if verdict == "next":
        log.held[entry.seq] = entry
    return verdict


def next_held(log: AuthorLog, rs: RoundState | None, phase: Phase) -> Entry | Stop | None:
    """The author's next entry, taken out of those held, to deliver now; None when
    it has none that may be delivered yet (:func:`deliverable`).

    One that does not follow our head (another branch of its author's chain
    than ours) or whose Lamport time cannot be honest is taken out all the
    same, and comes back as a :class:`Stop`.
    """
    entry = log.held.get(log.delivered + 1)
    if entry is None or not deliverable(rs, phase, entry):
        return None
    del log.held[entry.seq]
    if not log.follows(entry):
        return Stop("broken_chain", None)
    problem = log.lamport_problem(entry)
    if problem is not None:
        return Stop(problem, LAMPORT_PROBLEMS[problem])
    return entry


class Resends:
    """Resends both ways: what peers ask of us, within a budget of bytes a second
    for each player that asks and one that every asker without a place shares,
    and the gaps we ask to have filled, each author's once it lasted
    RESEND_GRACE and at most every RESEND_INTERVAL.

    The askers without a place share one budget because a stranger signs with
    as many keys as it likes: a budget each would give every fresh key a
    burst of our entries, and keep a bucket for each."""

    def __init__(self) -> None:
        #: By asker: the players' (a place held now or once), forgotten with the
        #: asker's chain (``Places.forget``); under None, the seatless askers'.
        self._budgets: dict[bytes | None, TokenBucket] = {}
        self._asked: dict[bytes, float] = {}  # by author
        self._gaps: dict[bytes, tuple[int, float]] = {}  # by author: its start, since when

    def answer(self, asker: bytes | None, log: AuthorLog | None, lo: int, hi: int, now: float,
               snapshot: bytes | None = None) -> tuple[list[bytes], bool]:
        """The frames to send ``asker`` (None: an asker without a place, on the budget
        they share), of those it asks for and we still hold, and whether its
        budget held some back: a peer asking again and again cannot make us
        send without limit (it asks again for what the budget held back).
        ``snapshot``: the host's, signed for an ask from below what we still
        hold (:meth:`below_floor`), goes first, or nothing does."""
        frames: list[bytes] = []
        if log is None:
            return frames, False
        budget = self._budget(asker)
        if snapshot is not None:
            if not budget.take(now, len(snapshot)):
                return frames, True
            frames.append(snapshot)
        lo = max(lo, log.floor + 1)
        for seq in range(lo, min(hi, lo + 1023) + 1):
            frame = log.entries.get(seq)
            if frame is not None:
                if not budget.take(now, len(frame)):
                    return frames, True
                frames.append(frame)
        return frames, False

    @staticmethod
    def below_floor(log: AuthorLog, lo: int) -> bool:
        """Whether an ask from ``lo`` reaches below what we still hold of the author
        (forgotten rounds): the host's snapshot answers that part first."""
        return lo <= log.floor

    def budgets(self) -> int:
        """How many budgets are kept (the players' that asked, and the shared one)."""
        return len(self._budgets)

    def _budget(self, asker: bytes | None) -> TokenBucket:
        budget = self._budgets.get(asker)
        if budget is None:
            budget = self._budgets[asker] = TokenBucket(RESEND_BYTES, RESEND_BURST)
        return budget

    def gaps(self, authors: dict[bytes, AuthorLog], now: float, mine: bytes | None,
             proven: Mapping[bytes, ForkProof]) -> list[Resend]:
        """What to ask for now: each author's first gap. Not mine (``mine``: my key,
        None while I learn from the table where my chain ends), nor a proven
        equivocator's past its fork (all it signed after is void).

        Asked after every entry delivered, of every author: ``authors`` is a
        dict, not any mapping, so that compiled code walks it in place (a
        mapping's items are an iterator and a tuple each)."""
        asks: list[Resend] = []
        gaps = self._gaps
        for key, log in authors.items():
            if log.claimed <= log.delivered:  # nothing known to be missing (log.missing)
                if gaps:
                    gaps.pop(key, None)
                continue
            gap = log.missing()
            if gap is None or key == mine:
                self._gaps.pop(key, None)
                continue
            start, since = self._gaps.get(key, (gap[0], now))
            if start != gap[0]:
                start, since = gap[0], now
            self._gaps[key] = (start, since)
            if now - since < RESEND_GRACE:
                continue
            proof = proven.get(key)
            if proof is not None and log.delivered >= proof.cut:
                continue
            if now - self._asked.get(key, -1e9) < RESEND_INTERVAL:
                continue
            self._asked[key] = now
            asks.append(Resend(key, gap[0], min(gap[1], gap[0] + 1023)))
        return asks

    def next_due(self, now: float, mine: bytes | None, authors: Mapping[bytes, AuthorLog],
                 proven: Mapping[bytes, ForkProof]) -> float:
        """When :meth:`gaps` next asks for something: a gap is asked for once it has
        lasted RESEND_GRACE, and again every RESEND_INTERVAL; ``now`` for a gap
        it has not seen yet (an ACK named entries we lack), so that it starts
        counting (inf: no gap, or none to ask for)."""
        first = float("inf")
        for key, log in authors.items():
            if log.claimed <= log.delivered or key == mine:
                continue
            gap = log.missing()
            proof = proven.get(key)
            if gap is None or (proof is not None and log.delivered >= proof.cut):
                continue
            seen = self._gaps.get(key)
            if seen is None or seen[0] != gap[0]:
                return now
            first = min(first, max(seen[1] + RESEND_GRACE,
                                   self._asked.get(key, -1e9) + RESEND_INTERVAL))
        return first

    def forget(self, key: bytes) -> None:
        """A key forgotten (to make room): as an author it starts again from its first
        entry, and as an asker from a full budget."""
        self._asked.pop(key, None)
        self._gaps.pop(key, None)
        self._budgets.pop(key, None)


def deliverable(rs: RoundState | None, phase: Phase, entry: Entry) -> bool:
    """Whether an author's next entry can be acted on now, or must wait.

    Round entries wait for their round; play entries also wait for the
    deal (an honest PLAY can overtake a slow peer's REVEAL). Everything
    else goes on, so a bad entry is judged, not left blocking its author.
    """
    kind = entry.type
    if kind in BETWEEN_ROUND_TYPES:
        # The host sends these once it has closed a round; a peer still
        # closing it takes them after (they set up the next round).
        return phase not in IN_ROUND
    if kind not in ROUND_TYPES:
        # A GOODBYE signed in a round not begun here waits for it: it leaves that
        # round, and every peer must see it leave the same one (``drops.goodbye``).
        return kind != _GOODBYE or entry.round <= (rs.number if rs is not None else 0)
    if (kind == _RESULT and rs is not None and entry.round == rs.number
            and phase in IN_ROUND):
        return False  # signed as its author closed the game, which we are still closing
    if rs is None or entry.round > rs.number:
        return False
    if entry.round == rs.number and kind in NEEDS_DEAL:
        return rs.joint is not None
    return True
