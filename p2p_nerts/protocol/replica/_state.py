"""What one round holds, and the pure helpers that read it.

A new :class:`RoundState` per round; the facade and the sub-machines read and
change it, and nothing else keeps round state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, final

from ...game.deadlock import StuckRule
from ...game.foundations import FoundationLog, Play, PlayKey, before
from ...game.scoring import SeatRound
from ...game.tableau import Tableau
from ...game.variants import Variants
from ..messages import AckMark, Audit, Commit, Drop, Go, Payload, Result, Seat, Summary, View
from ..proof import ForkProof


@final
class Ordered:
    """A round entry acted on in total order once final (``foundations.order``).

    A value written out rather than a dataclass: one is built for every play
    received, and compiled code builds a class with its own ``__init__``
    natively (a dataclass's generated one stays interpreted, and costs more
    compiled than pure).
    """

    __slots__ = ("kind", "lamport", "payload", "seat", "seq")

    def __init__(self, lamport: int, seat: int, kind: int, payload: Payload, seq: int) -> None:
        self.lamport: Final = lamport
        self.seat: Final = seat
        self.kind: Final = kind
        self.payload: Final = payload
        self.seq: Final = seq

    def _fields(self) -> tuple[int, int, int, Payload, int]:
        return (self.lamport, self.seat, self.kind, self.payload, self.seq)

    def __lt__(self, other: Ordered) -> bool:
        return before((self.lamport, self.seat), (other.lamport, other.seat))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ordered) and self._fields() == other._fields()

    def __repr__(self) -> str:
        return (f"Ordered(lamport={self.lamport}, seat={self.seat}, kind={self.kind}, "
                f"payload={self.payload!r}, seq={self.seq})")


@dataclass(slots=True)
class RoundState:
    """Everything about one round; a new one per round."""

    number: int
    keys: tuple[bytes, ...]
    names: tuple[str, ...]
    variants: Variants
    me: int | None
    live: set[int]
    log: FoundationLog
    deck_secret: bytes = b""
    share: bytes = b""
    commits: dict[int, Commit] = field(default_factory=dict)
    reveals: dict[int, bytes] = field(default_factory=dict)
    joint: bytes | None = None
    go_pending: Go | None = None
    go_seq: int | None = None  # the host's GO: only a drop whose cut keeps it may drop the host
    play_from: float | None = None
    started: bool = False
    tab: Tableau | None = None
    plays_by_seat: dict[int, list[Play]] = field(default_factory=dict)
    ordered: list[Ordered] = field(default_factory=list)
    acks: dict[int, tuple[int, int]] = field(default_factory=dict)  # seat → (lamport, seq)
    #: What each seat says it holds: seat → {author seat → highest seq held}, counted
    #: only where its mark names the very entry we hold (same chain head).
    marks: dict[int, dict[int, int]] = field(default_factory=dict)
    #: Marks from an ACK whose sender's earlier entries have not all arrived:
    #: seat → (the ACK's seq, its marks). They count once those entries are
    #: here, so that a DROP vote sent before the ACK is never missed (see
    #: ``_order``, ``final``).
    early_marks: dict[int, tuple[int, dict[int, AckMark]]] = field(default_factory=dict)
    #: Marks naming entries we do not hold yet: author seat → {seat → its mark}.
    pending_marks: dict[int, dict[int, AckMark]] = field(default_factory=dict)
    #: Seats proven to have forked their chain: seat → the lowest proof held.
    forks: dict[int, ForkProof] = field(default_factory=dict)
    stuck: list[bool] = field(default_factory=list)
    #: My seat's stuck vote as last sent, and its Lamport time: whoever plays the
    #: seat (under share-a-deck, two players at one tableau) sees it, and takes
    #: it back on moving a card.
    my_vote: bool = False
    my_vote_at: int = 0
    #: Rotations and the cards that stayed up since the last: the deadlock rule.
    stuck_rule: StuckRule = field(default_factory=StuckRule)
    call: PlayKey | None = None
    end: str | None = None
    #: When this peer saw the round end, or a drop take effect since: audits
    #: (and summaries) are due from then on.
    ended_at: float | None = None
    #: AUDITs and SUMMARYs counted, each at its turn in the total order; the seq
    #: of each as it came in (held, whether or not its turn has come).
    audits: dict[int, Audit] = field(default_factory=dict)
    audit_seq: dict[int, int] = field(default_factory=dict)
    summaries: dict[int, Summary] = field(default_factory=dict)
    summary_seq: dict[int, int] = field(default_factory=dict)
    results: tuple[SeatRound, ...] = ()
    verdicts: tuple[str, ...] = ()
    drop_votes: dict[int, dict[int, int]] = field(default_factory=dict)
    #: DROP entries waiting for their turn: (Lamport, voter, victim, upto, seq),
    #: tallied in that order, so every peer sees the same votes agree (or not)
    #: at the same point.
    drop_queue: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    #: Agreed drops, seat → its last seq that counts. The seat leaves ``live``
    #: later, where the vote that agreed stands in the total order (``drops.leave``).
    dropping: dict[int, int] = field(default_factory=dict)
    begun: float = 0.0  # when this peer began the round: silence counts from here
    #: Seats that said GOODBYE in this round: seat → that entry's seq.
    left: dict[int, int] = field(default_factory=dict)
    my_drop_votes: set[int] = field(default_factory=set)
    views: dict[int, View] = field(default_factory=dict)
    view_lamport: dict[int, int] = field(default_factory=dict)
    view_sent_at: float = -1.0
    view_mark: tuple[int, int] = (-1, -1)
    flagged: dict[int, str] = field(default_factory=dict)
    i_called: bool = False
    journaled: int = 0  # how much of tab.log the journal has seen
    #: Each seat's Nerts calls: (seq, Lamport time), for its audit.
    calls_by_seat: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    #: Each seat's stuck votes cast (``on``): (seq, Lamport time), for its audit.
    votes_by_seat: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    play_seq: dict[PlayKey, int] = field(default_factory=dict)  # play → its entry's seq
    #: In a game's last round: each seat's signed final result (records keep them).
    signed_results: dict[int, Result] = field(default_factory=dict)

    @property
    def rotations(self) -> int:
        """All-stuck rotations so far this round."""
        return self.stuck_rule.rotations

    def dropped(self, seat: int) -> bool:
        """Whether ``seat`` is out of the round: gone from the live seats, or agreed
        dropped (it takes effect later, at its place in the total order)."""
        return seat not in self.live or seat in self.dropping

    def seat_of(self, key: bytes) -> int | None:
        try:
            return self.keys.index(key)
        except ValueError:
            return None



def past_cut(rs: RoundState, seat: int, seq: int) -> bool:
    """Whether ``seat``'s entry ``seq`` is past the seat's agreed drop cut."""
    return seq > rs.dropping.get(seat, seq)


def void(rs: RoundState, item: Ordered) -> bool:
    """An entry past its author's agreed drop cut: it never counts."""
    return not isinstance(item.payload, Drop) and past_cut(rs, item.seat, item.seq)


def round_numbered(number: int, rs: RoundState | None,
                   prev_rs: RoundState | None) -> RoundState | None:
    """Round ``number``'s state, if it is ``rs`` (the current round) or ``prev_rs``
    (the one before): one call can close a round and deal the next, and the end
    of the first is read after."""
    for state in (rs, prev_rs):
        if state is not None and state.number == number:
            return state
    return None


def index_of(seats: tuple[Seat, ...], key: bytes) -> int | None:
    for i, seat in enumerate(seats):
        if seat.key == key:
            return i
    return None

