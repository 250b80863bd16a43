"""What one round holds, the only code that changes it, and the pure helpers
that read it.

A new :class:`RoundState` per round. The sub-machines read it freely; it
changes only in its own methods, named for what happened to the round, which
they call.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Final, final

from ...game.deadlock import AllStuck, StuckRule
from ...game.foundations import Fate, FoundationLog, Play, PlayKey, before
from ...game.scoring import SeatRound
from ...game.tableau import Tableau
from ...game.variants import Variants
from ..messages import (
    AckMark,
    Audit,
    Commit,
    Drop,
    Go,
    MsgType,
    Payload,
    Result,
    Seat,
    Summary,
    View,
)
from ..proof import ForkProof

# Read as a Final constant: on Python 3.11 a member read off its enum class goes
# through the metaclass.
_PLAY: Final = MsgType.PLAY


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
    #: How many of ``ordered`` are not plays (a stuck vote, a Nerts call, a fork's
    #: proof, an agreed drop, an audit, a summary): what the table decides at
    #: their turns waits for every play ordered before them (``_heartbeats``).
    unplayed: int = 0
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
    #: Seats that said GOODBYE in this round: seat → that entry's seq...
    left: dict[int, int] = field(default_factory=dict)
    #: ...and its Lamport time: it leaves the voting there (``drops.tally``).
    left_at: dict[int, int] = field(default_factory=dict)
    #: Of those, the seats that sit this round out only (their GOODBYE's reason is
    #: SIT_OUT): back from a restart behind the table, they play the next.
    sitting_out: set[int] = field(default_factory=set)
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
    #: ``seat_of``'s dict, and the ``keys`` it was built from.
    _seats: dict[bytes, int] = field(default_factory=dict, init=False, repr=False,
                                     compare=False)
    _seats_for: tuple[bytes, ...] = field(default=(), init=False, repr=False, compare=False)

    @property
    def rotations(self) -> int:
        """All-stuck rotations so far this round."""
        return self.stuck_rule.rotations

    # ----------------------------------------------------------------------
    # How a round changes: only in these methods, each named for what
    # happened, called by the modules that decide it. (Its tableau, foundation
    # log and stuck rule are the rules engine's, changed by their own methods:
    # here where a field of the round changes with them.)

    # --- its entries taken in (``rounds.take``), in the total order's heap
    def took_play(self, seat: int, play: Play, item: Ordered) -> None:
        """``seat``'s PLAY (``item``) entered the foundation log, pending its turn."""
        plays = self.plays_by_seat.get(seat)
        if plays is None:  # (not setdefault: it builds an empty list for every play)
            plays = self.plays_by_seat[seat] = []
        plays.append(play)
        self.play_seq[play.key] = item.seq
        self.log.add(play)
        heapq.heappush(self.ordered, item)

    def await_turn(self, item: Ordered) -> None:
        """``item``, not a play, waits for its turn in the total order."""
        heapq.heappush(self.ordered, item)
        self.unplayed += 1

    def take_turn(self) -> Ordered:
        """The first entry in the total order, whose turn has come (``Finality``)."""
        item = heapq.heappop(self.ordered)
        if self.unplayed and item.kind != _PLAY:
            self.unplayed -= 1
        return item

    def committed(self, seat: int, commit: Commit) -> None:
        self.commits[seat] = commit

    def revealed(self, seat: int, share: bytes) -> None:
        self.reveals[seat] = share

    def go_given(self, go: Go, seq: int) -> None:
        """The host's GO (its entry ``seq``), to look at."""
        self.go_pending, self.go_seq = go, seq

    def nerts_said(self, seat: int, item: Ordered) -> None:
        """``seat`` called Nerts (``item``): noted for its audit, and ordered."""
        self.calls_by_seat.setdefault(seat, []).append((item.seq, item.lamport))
        self.await_turn(item)

    def stuck_said(self, seat: int, on: bool, item: Ordered) -> None:
        """``seat``'s stuck vote (``item``): one cast noted for its audit, my seat's
        kept as my vote (here, not as I vote: a restore replays it), and ordered."""
        if on:
            self.votes_by_seat.setdefault(seat, []).append((item.seq, item.lamport))
        if seat == self.me:
            self.my_vote, self.my_vote_at = on, item.lamport
        self.await_turn(item)

    def drop_said(self, lamport: int, voter: int, victim: int, upto: int, seq: int) -> None:
        """A DROP vote, queued for its count in (Lamport, voter) order (``drops.tally``)."""
        heapq.heappush(self.drop_queue, (lamport, voter, victim, upto, seq))

    def closing_said(self, seat: int, item: Ordered, *, audit: bool) -> None:
        """``seat``'s AUDIT (or SUMMARY) in, numbered ``item.seq``; it counts at its turn."""
        (self.audit_seq if audit else self.summary_seq)[seat] = item.seq
        self.await_turn(item)

    def result_signed(self, seat: int, result: Result) -> None:
        self.signed_results[seat] = result

    # --- my deal (``rounds.commit``, ``shuffle``)
    def keep_secrets(self, deck_secret: bytes, share: bytes) -> None:
        self.deck_secret, self.share = deck_secret, share

    def dealt(self, joint: bytes, tab: Tableau | None) -> None:
        """The round's joint value fixed, and my tableau dealt from it (None: I deal
        none, and keep the one I have)."""
        self.joint = joint
        if tab is not None:
            self.tab = tab

    def counting_down(self, play_from: float) -> None:
        """The GO checked out: play starts at ``play_from``."""
        self.play_from = play_from

    def play_started(self) -> None:
        self.started = True

    # --- my own moves (``Moves``, ``Recovery``)
    def called_nerts(self) -> None:
        self.i_called = True

    def journaled_to(self, moves: int) -> None:
        """The journal holds my tableau's first ``moves`` moves."""
        self.journaled = moves

    # --- the stuck rule (``rounds.stuck_final``, ``_order``)
    def stuck_changed(self, seat: int, on: bool) -> None:
        self.stuck[seat] = on

    def card_stayed(self) -> None:
        """A play stayed at its turn: the stuck rule counts it."""
        self.stuck_rule.card_played()

    def all_stuck(self) -> AllStuck:
        """Every live seat is stuck: what the stuck rule says (``StuckRule.all_stuck``)."""
        return self.stuck_rule.all_stuck()

    def rotated(self, key: PlayKey | None) -> None:
        """Every live seat stuck, at ``key`` in the total order: the votes start over
        (mine, if cast before it), and my tableau rotates."""
        self.stuck = [False] * len(self.keys)
        if key is None or self.my_vote_at <= key[0]:
            self.my_vote = False  # a rotation ends every vote taken before it
        tab = self.tab
        if tab is not None and len(tab.stock) + len(tab.waste) >= 2:
            tab.rotate(alone=False)

    # --- its end and close (``closing``, ``Steps.turn``)
    def nerts_at(self, at: PlayKey) -> None:
        """The Nerts call that ends the round, at its turn ``at``."""
        self.call = at

    def ended(self, how: str, cutoff: PlayKey | None, now: float) -> None:
        """The round ends (``how``) at ``cutoff`` in the total order, if given: nothing
        ordered after it counts. My plays still in the air settle as the log says
        (one it does not hold yet settles at its turn, as it comes)."""
        self.end, self.ended_at = how, now
        log = self.log
        if cutoff is not None:
            log.set_cutoff(cutoff)
        tab = self.tab
        if tab is not None:
            for key in sorted(tab.in_flight):
                if key in log:
                    tab.settle(key, stayed=log.fate(key) is Fate.STAY)

    def flag(self, seat: int, reason: str) -> bool:
        """Flag ``seat`` for ``reason``, once: whether it is the first."""
        if seat in self.flagged:
            return False
        self.flagged[seat] = reason
        return True

    def audit_counted(self, seat: int, audit: Audit) -> None:
        self.audits[seat] = audit

    def summary_counted(self, seat: int, summary: Summary) -> None:
        self.summaries[seat] = summary

    def reckoned(self, results: tuple[SeatRound, ...], verdicts: tuple[str, ...]) -> None:
        self.results, self.verdicts = results, verdicts

    def unreckoned(self) -> None:
        """A result reckoned before a drop was agreed, taken back: it scores again."""
        self.results, self.verdicts = (), ()

    # --- drops and forks (``drops``, ``forks``)
    def drop_vote_done(self) -> None:
        """The first DROP vote queued is counted, or counts for nothing."""
        heapq.heappop(self.drop_queue)

    def drop_vote_counted(self, victim: int, voter: int, upto: int) -> None:
        """``voter``'s vote on ``victim`` to cut at ``upto``; 0 withdraws it."""
        votes = self.drop_votes.setdefault(victim, {})
        if upto == 0:
            votes.pop(voter, None)
        else:
            votes[voter] = upto

    def drop_agreed(self, victim: int, cut: int) -> None:
        """``victim`` is agreed dropped, counting up to ``cut``: it leaves the live
        seats at its turn (:meth:`left_live`)."""
        self.dropping[victim] = cut

    def i_vote_out(self, seat: int) -> None:
        self.my_drop_votes.add(seat)

    def i_take_vote_back(self, seat: int) -> None:
        self.my_drop_votes.discard(seat)

    def said_goodbye(self, seat: int, seq: int, lamport: int, *, sits_out: bool) -> None:
        """``seat`` said GOODBYE in its entry ``seq``, at ``lamport`` (the first such
        counts), for this round only if it ``sits_out``."""
        if seat not in self.left:
            self.left[seat], self.left_at[seat] = seq, lamport
            if sits_out:
                self.sitting_out.add(seat)

    def left_live(self, victim: int, now: float) -> None:
        """``victim`` leaves the live seats; if the round had ended, the others may
        only now see it end."""
        self.live.discard(victim)
        if self.ended_at is not None:
            self.ended_at = now

    def forget_after(self, victim: int, cut: int) -> bool:
        """Take out what ``victim`` sent past ``cut`` (its plays, its entries in the
        order, an audit counted); whether a play or audit a result may have
        counted went."""
        late = [key for key, seq in self.play_seq.items() if key[1] == victim and seq > cut]
        for key in late:
            self.take_out(key)
        self.ordered = [o for o in self.ordered
                        if o.seat != victim or o.seq <= cut or isinstance(o.payload, Drop)]
        heapq.heapify(self.ordered)
        self.unplayed = sum(o.kind != _PLAY for o in self.ordered)
        # Counted only where its turn came before the cut was agreed (the dropped
        # seat itself, say): everyone scores the seat as dropped.
        audit_late = (self.audit_seq.get(victim, 0) > cut
                      and self.audits.pop(victim, None) is not None)
        return bool(late) or audit_late

    def take_out(self, key: PlayKey) -> None:
        """A play past its author's agreed cut out of the round: out of the log, and its
        card its owner's again (mine: back to my tableau, however it had settled)."""
        self.log.remove(key)
        del self.play_seq[key]
        self.plays_by_seat[key[1]] = [p for p in self.plays_by_seat.get(key[1], [])
                                      if p.key != key]
        tab = self.tab
        if key[1] == self.me and tab is not None:
            if key in tab.in_flight:
                tab.settle(key, stayed=False)
            else:  # it had looked settled here: the vote that cut it came after
                tab.take_back(key)

    def fork_proven(self, seat: int, proof: ForkProof) -> None:
        """The lowest proof held that ``seat`` forked its chain."""
        self.forks[seat] = proof

    def convicted(self, seat: int, cut: int) -> None:
        """``seat``'s FORK had its turn: flagged, and dropped at ``cut``."""
        self.flagged[seat] = "equivocation"
        self.dropping[seat] = cut

    # --- what the seats say they hold, and see (``liveness``)
    def acked(self, seat: int, heard: tuple[int, int]) -> None:
        """``seat``'s ACK at (Lamport, seq) ``heard``, unless a later one is kept."""
        kept = self.acks.get(seat)
        if kept is None or heard > kept:
            self.acks[seat] = heard

    def marks_wait(self, seat: int, seq: int, marks: dict[int, AckMark]) -> None:
        """``seat``'s marks (its ACK numbered ``seq``) wait for what it sent before:
        the furthest mark of each author, with the latest such ACK's number."""
        old_seq, waiting = self.early_marks.get(seat, (0, {}))
        for author, mark in marks.items():
            if author not in waiting or mark.seq > waiting[author].seq:
                waiting[author] = mark
        self.early_marks[seat] = (max(seq, old_seq), waiting)

    def marks_arrived(self, seat: int) -> None:
        """What ``seat``'s early marks waited for is here: they are counted now."""
        del self.early_marks[seat]

    def mark_counted(self, seat: int, author: int, seq: int) -> None:
        """``seat`` holds ``author``'s entries up to ``seq``, the very ones we hold."""
        held = self.marks.setdefault(seat, {})
        if seq > held.get(author, -1):  # (kept at its highest; a seq is never negative)
            held[author] = seq

    def mark_waits(self, author: int, seat: int, mark: AckMark) -> None:
        """``seat``'s mark names an entry of ``author`` we do not hold yet."""
        self.pending_marks.setdefault(author, {})[seat] = mark

    def mark_checked(self, author: int, seat: int) -> None:
        """``seat``'s waiting mark on ``author`` was checked, now we hold its entry."""
        waiting = self.pending_marks[author]
        del waiting[seat]
        if not waiting:
            del self.pending_marks[author]

    def view_taken(self, seat: int, view: View, lamport: int) -> None:
        self.views[seat], self.view_lamport[seat] = view, lamport

    def view_sent(self, mark: tuple[int, int], now: float) -> None:
        """My view of the tableau as it stood at ``mark`` went out at ``now``."""
        self.view_mark, self.view_sent_at = mark, now

    def views_unsent(self) -> None:
        """Nobody draws the tableaux: the last view sent is forgotten."""
        self.view_mark = (-1, -1)

    def dropped(self, seat: int) -> bool:
        """Whether ``seat`` is out of the round: gone from the live seats, or agreed
        dropped (it takes effect later, at its place in the total order)."""
        return seat not in self.live or seat in self.dropping

    def seat_of(self, key: bytes) -> int | None:
        """``key``'s seat in this round (None: it has none). Read for every mark of
        every ACK received, so from a dict built once from ``keys`` (again if
        ``keys`` is replaced), each key at its first seat as ``keys.index`` finds it."""
        keys = self.keys
        if self._seats_for is not keys:
            seats: dict[bytes, int] = {}
            for seat, k in enumerate(keys):
                seats.setdefault(k, seat)
            self._seats, self._seats_for = seats, keys
        return self._seats.get(key)



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

