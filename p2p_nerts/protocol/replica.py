"""The table replica: one peer's copy of a table, as a pure state machine.

Bytes from the wire and local commands go in, with the current time passed
in; bytes to send and events for the user come out. No sockets, no clock
reads, no threads (h11's shape), so every distributed property can be tested
in memory by wiring replicas together.

Life of a round (``docs/PROTOCOL.md`` has the full state machine):

1. The host sends SETTINGS and a ROSTER whose entry round is the next round
   number: that fixes the seats (in the host's order; seat = index).
2. Every seat sends COMMIT (hashes of a deck secret and a joint share); once
   all commitments are in, every seat sends REVEAL (its joint share). The
   joint value fixes every deck; the host sends GO with its hash.
3. Play. A seat's own foundation play applies at once (pending) and goes out
   as PLAY; peers ACK at once with their Lamport time. A play is *final* when
   every other live seat has been heard at a Lamport time at or past it:
   nothing ordered before it can still arrive. STUCK votes and NERTS calls are
   acted on in (Lamport, seat) order once final, identically everywhere.
4. After the call (or a deadlock) every seat sends AUDIT (deck secret and move
   log); every peer replays every seat, scores, and sends SUMMARY (foundation
   hash and scores). Agreeing summaries close the round.
"""

from __future__ import annotations

import heapq
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..game.cards import ACE, JOKER_RANK, KING, is_valid_card
from ..game.foundations import Fate, FoundationLog, Play, PlayKey, before
from ..game.moves import perform
from ..game.scoring import Match, SeatRound, round_score, team_names
from ..game.tableau import (
    NERTS,
    NERTS_SIZE,
    OP_FOUND,
    OP_NERTS,
    OP_ROTATE,
    OP_SLIDE,
    OP_TURN,
    OP_WORK,
    ROTATE_ALL,
    SOURCES,
    WASTE,
    Tableau,
    Target,
    apply_move,
)
from ..game.variants import VariantError, Variants
from . import events as ev
from .audit import audit_seat
from .authors import AuthorLog, Equivocation
from .clock import LamportClock
from .envelope import LINK_MAGIC, MAGIC, Entry, EnvelopeError, open_entry, open_link_entry
from .fairness import SECRET_LEN, commitment, deal_for, joint_value
from .identity import PUBLIC_KEY_LEN, Identity, fingerprint_of
from .journal import Kind, Record, move_record, secrets_record, unpack
from .messages import (
    COUNTDOWN_MS,
    DROP_AFTER_MS,
    MAX_COUNTDOWN_MS,
    MAX_DROP_AFTER_MS,
    MIN_DROP_AFTER_MS,
    Ack,
    AckMark,
    Audit,
    Commit,
    Drop,
    Go,
    Goodbye,
    Join,
    Leave,
    MsgType,
    Nerts,
    Payload,
    Ready,
    Refuse,
    Resend,
    Reveal,
    Roster,
    Seat,
    Settings,
    Stuck,
    Summary,
    Verdict,
    View,
    link_message,
    parse_payload,
    seal_message,
)
from .messages import Play as PlayMsg

COUNTDOWN = COUNTDOWN_MS / 1000  # seconds between GO and the first move (default)
HEARTBEAT = 0.5  # an ACK at least this often while a round runs
VIEW_INTERVAL = 0.1  # public tableau view at most this often
DROP_AFTER = DROP_AFTER_MS / 1000  # a seat silent this long is voted out (default)
RESEND_INTERVAL = 0.3  # do not ask again for the same gap sooner
SIT_DOWN_WAIT = 30.0
"""Seconds past its break a host with ``auto_next`` waits at most for a
newcomer seated as the round closed to catch up (it replays the table first)."""
MAX_AUTHORS = 64  # distinct keys a table tracks (bounds memory against floods)
#: An honest peer is never this far ahead of us (a whole night of play is a few
#: hundred thousand entries); a larger jump is an attack on everyone's clock.
MAX_LAMPORT_JUMP = 1 << 24

#: Types that take no sequence number: they may be lost, repeated or replayed harmlessly.
EPHEMERAL = frozenset({MsgType.ACK, MsgType.VIEW, MsgType.HELLO, MsgType.RESEND})
#: Ephemeral types sent unsigned, as link entries: they are never forwarded, so the
#: authenticated link they come on says who sent them (a verify costs ~90 µs,
#: and every play draws an ACK from each peer). A link entry of another type,
#: or one that names an author other than the link's peer, is rejected.
LINK_TYPES = frozenset({MsgType.ACK, MsgType.VIEW})
#: Types that belong to one round and must name it.
ROUND_TYPES = frozenset({
    MsgType.COMMIT, MsgType.REVEAL, MsgType.GO, MsgType.PLAY, MsgType.STUCK, MsgType.NERTS,
    MsgType.AUDIT, MsgType.SUMMARY, MsgType.VERDICT, MsgType.DROP,
})

#: Move-log operations that are the player's own decisions (journaled for recovery).
_DECISIONS = frozenset({OP_TURN, OP_FOUND, OP_WORK, OP_SLIDE, OP_ROTATE, OP_NERTS})
#: Round entries that only make sense once every deck is dealt.
_NEEDS_DEAL = frozenset({MsgType.PLAY, MsgType.STUCK, MsgType.NERTS})
_LAMPORT_PROBLEMS = {
    "lamport_not_increasing": "Lamport time went backwards",
    "back_dated": "dated an entry before its own acknowledgement",
}


class Phase(Enum):
    LOBBY = "lobby"
    SHUFFLE = "shuffle"  # commitments and reveals
    PLAYING = "playing"
    SCORING = "scoring"  # audits and summaries
    BETWEEN = "between"  # round over, game not
    OVER = "over"


class CommandError(Exception):
    """A local command that the table's state does not allow now (nothing changed)."""


@dataclass(frozen=True, slots=True)
class Send:
    """Bytes for the transport: to one peer key, or to every peer when ``to`` is None."""

    data: bytes
    to: bytes | None = None


@dataclass(slots=True)
class Outbound:
    """What one call into the replica produced."""

    sends: list[Send] = field(default_factory=list)
    events: list[ev.Event] = field(default_factory=list)
    #: Write these to stable storage *before* sending ``sends`` (write-ahead).
    journal: list[Record] = field(default_factory=list)

    def extend(self, later: Outbound) -> None:
        """Append what a later call produced: all three parts, in order.

        (A caller that kept only the frames and events of a second command
        once lost its journal records, and with them crash recovery.)
        """
        self.sends += later.sends
        self.events += later.events
        self.journal += later.journal


@dataclass(slots=True)
class _Ordered:
    """A round entry acted on in total order once final (``foundations.order``)."""

    lamport: int
    seat: int
    kind: int
    payload: Payload
    seq: int

    def __lt__(self, other: _Ordered) -> bool:
        return before((self.lamport, self.seat), (other.lamport, other.seat))


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
    ordered: list[_Ordered] = field(default_factory=list)
    acks: dict[int, tuple[int, int]] = field(default_factory=dict)  # seat → (lamport, seq)
    #: What each seat says it holds: seat → {author seat → highest seq held}.
    marks: dict[int, dict[int, int]] = field(default_factory=dict)
    stuck: list[bool] = field(default_factory=list)
    #: My seat's stuck vote as last sent, and its Lamport time: whoever plays the
    #: seat (under share-a-deck, two players at one tableau) sees it, and takes
    #: it back on moving a card.
    my_vote: bool = False
    my_vote_at: int = 0
    rotations: int = 0
    stays_since_rotation: int = 0
    call: PlayKey | None = None
    end: str | None = None
    audits: dict[int, Audit] = field(default_factory=dict)
    audit_seq: dict[int, int] = field(default_factory=dict)  # seat → its AUDIT's seq
    summaries: dict[int, Summary] = field(default_factory=dict)
    results: tuple[SeatRound, ...] = ()
    verdicts: tuple[str, ...] = ()
    drop_votes: dict[int, dict[int, int]] = field(default_factory=dict)
    #: DROP entries waiting for their turn: (Lamport, voter, victim, upto), tallied
    #: in that order, so every peer sees the same votes agree (or not) at the same point.
    drop_queue: list[tuple[int, int, int, int]] = field(default_factory=list)
    dropping: dict[int, int] = field(default_factory=dict)  # seat → agreed last seq
    begun: float = 0.0  # when this peer began the round: silence counts from here
    left: set[int] = field(default_factory=set)  # seats that said GOODBYE in this round
    my_drop_votes: set[int] = field(default_factory=set)
    views: dict[int, View] = field(default_factory=dict)
    view_lamport: dict[int, int] = field(default_factory=dict)
    view_sent_at: float = -1.0
    view_mark: tuple[int, int] = (-1, -1)
    flagged: dict[int, str] = field(default_factory=dict)
    i_called: bool = False
    journaled: int = 0  # how much of tab.log the journal has seen
    calls_by_seat: dict[int, list[int]] = field(default_factory=dict)
    play_seq: dict[PlayKey, int] = field(default_factory=dict)  # play → its entry's seq

    def seat_of(self, key: bytes) -> int | None:
        try:
            return self.keys.index(key)
        except ValueError:
            return None


class Replica:
    """One peer's replica of one table."""

    def __init__(
        self,
        identity: Identity,
        table_id: bytes,
        host_key: bytes,
        *,
        variants: Variants | None = None,
        rng: Callable[[int], bytes] = os.urandom,
        countdown: float = COUNTDOWN,
        drop_after: float = DROP_AFTER,
        auto_start: int | None = None,
        auto_next: float | None = None,
        max_seats: int = 8,
    ) -> None:
        self.me = identity
        self.table_id = table_id
        self.host_key = host_key
        self.is_host = identity.public_key == host_key
        self.variants = variants or Variants()
        self.rng = rng
        #: The table's clocks, in seconds. A host announces these in its SETTINGS;
        #: every replica, the host's too, then plays by the SETTINGS it delivers.
        problem = clocks_problem(countdown, drop_after)
        if problem is not None:
            raise ValueError(problem)
        self.countdown = countdown
        self.drop_after = drop_after
        self.auto_start = auto_start
        self.auto_next = auto_next
        self.max_seats = max_seats
        self.clock = LamportClock()
        self.seq = 0
        self.authors: dict[bytes, AuthorLog] = {}
        self.last_heard: dict[bytes, float] = {}
        self.seats = ()
        self.ready: dict[bytes, bool] = {}
        #: Host: players who asked for a seat while a round ran (key → name).
        self.waiting: dict[bytes, str] = {}
        self.phase = Phase.LOBBY
        self.rs: RoundState | None = None
        #: The round before ``rs``: one call can close a round and begin the
        #: next, and whoever reads its end (a summary, a score screen) reads it after.
        self.prev_rs: RoundState | None = None
        self.match: Match | None = None
        #: Running totals by player key, so they survive seats changing between rounds.
        self.totals: dict[bytes, int] = {}
        self.rejected: Counter[str] = Counter()
        self.next_round_at: float | None = None
        #: Host: seats given to newcomers between rounds, each with the seq of
        #: the ROSTER that seated them, until their ACKs show they have it (they
        #: replay the table's entries first): the break waits for them.
        self.sitting_down: dict[bytes, int] = {}
        #: A spectator's replica: it checks and follows every entry but signs
        #: nothing the table waits for (it never asks for a seat, never acks).
        self.watching = False
        #: Set by a transport that can send at once: my play's frames (with the
        #: journal records before them) go here the moment the play is signed,
        #: and the rest of the call's output is returned as usual. The other
        #: peers start checking the play while I apply it myself: about 60 µs
        #: sooner on a peer just woken to play (one cold pass through my own
        #: delivery). Unset, everything is returned together. A caller that
        #: holds the output of an earlier call while it makes a play hands that
        #: output here first, or the play would overtake it.
        self.send_early: Callable[[Outbound], None] | None = None
        self._out = Outbound()
        self._asked: dict[bytes, float] = {}
        self._last_ack = -1.0
        self._ack_to: set[bytes] = set()  # authors of plays received in this batch
        self._restoring = False
        self._catching_up = False  # restored: hear every live peer, fill every gap
        self._heard: set[bytes] = set()
        self._secrets: dict[int, tuple[bytes, bytes]] = {}
        self._signed: dict[int, Entry] = {}  # restoring: my journaled entries by seq
        self.now = 0.0

    @property
    def seats(self) -> tuple[Seat, ...]:
        """Who sits at the table (the host's last ROSTER): seat index = position."""
        return self._seats

    @seats.setter
    def seats(self, seats: tuple[Seat, ...]) -> None:
        self._seats = seats
        #: Their keys, looked up for every entry that arrives.
        self.seated = frozenset(s.key for s in seats)

    @classmethod
    def restore(cls, identity: Identity, table_id: bytes, host_key: bytes,
                records: Iterable[Record], now: float, **options: Any) -> Replica:
        """Rebuild a replica from its journal after a crash: same round, same tableau.

        Replays the journal through the same code paths as live play, with
        signing and sending switched off: where live play signed an entry,
        the replay takes that entry from the journal and delivers it on the
        spot, in the middle of whatever it was doing, exactly as it was then.
        """
        records = list(records)
        r = cls(identity, table_id, host_key, **options)
        r.now = now
        r._restoring = True
        for rec in records:
            if rec.kind is Kind.SECRETS:
                round_no, deck, share = unpack(rec)
                assert isinstance(round_no, int)
                assert isinstance(deck, bytes) and isinstance(share, bytes)
                r._secrets[round_no] = (deck, share)
            elif rec.kind is Kind.ENTRY and _author_of(rec.data) == identity.public_key:
                entry = open_entry(rec.data)
                r._signed[entry.seq] = entry
        for rec in records:
            if rec.kind is Kind.ENTRY:
                r._replay_entry(rec.data)
            elif rec.kind is Kind.LINK:
                r._receive_one(rec.data[PUBLIC_KEY_LEN:], rec.data[:PUBLIC_KEY_LEN])
            elif rec.kind is Kind.MOVE:
                r._redo(unpack(rec))
            r._advance()
        r._restoring = False
        r._signed = {}
        r._catching_up = True
        rs = r.rs
        if rs is not None:
            if rs.tab is not None:
                rs.journaled = len(rs.tab.log)
            if r.phase is Phase.PLAYING and rs.play_from is not None:
                rs.started = True
        r._out = Outbound()
        return r

    def _replay_entry(self, raw: bytes) -> None:
        if _author_of(raw) != self.me.public_key:
            self._receive_one(raw, None)
            return
        # My entries are journaled in sequence: this one is either the next,
        # or was delivered already where live play signed it (see _send).
        signed = self._signed.get(self.seq + 1)
        if signed is not None and signed.raw == raw:
            self._replay_own(signed)

    def _replay_own(self, entry: Entry) -> None:
        log = self._author(entry.author)
        assert log is not None
        if log.offer(entry) == "duplicate":
            return
        self.seq = max(self.seq, entry.seq)
        self.clock.time = max(self.clock.time, entry.lamport)
        self._deliver(entry, parse_payload(entry.type, entry.payload), log)

    def _redo(self, fields: list[object]) -> None:
        round_no, *move = fields
        rs = self.rs
        if rs is None or rs.tab is None or rs.number != round_no:
            raise ValueError("journal move for a round that is not being played")
        ints = [int(x) for x in move]  # type: ignore[call-overload]
        apply_move(rs.tab, ints)
        if ints[0] == OP_NERTS:
            rs.i_called = True

    # =================================================================== API
    def open(self, now: float) -> Outbound:
        """Join the table: the host seats itself, a guest asks for a seat."""
        self.now = now
        if self.is_host:
            self._send(_settings_of(self.variants, self.countdown, self.drop_after))
            self._seat(self.me.public_key, self.me.name)
        else:
            self._send(Join(self.me.name, None))
        return self._flush()

    def receive(self, raw: bytes, now: float, via: bytes | None = None) -> Outbound:
        """Bytes from the wire. Anything wrong is counted and reported, never raised.

        ``via`` is the key of the authenticated link the frame came on (None
        when unknown): link entries (unsigned) are taken only from their author,
        on its own link.
        """
        return self.receive_batch(((raw, via),), now)

    def receive_batch(self, frames: Iterable[tuple[bytes, bytes | None]],
                      now: float) -> Outbound:
        """Several ``(raw, via)`` frames that arrived together: one acknowledgement
        covers them all."""
        self.now = now
        self._ack_to.clear()
        for raw, via in frames:
            self._receive_one(raw, via)
            # After each frame, as Replica.restore does after each journal
            # record: when my own plays settle, against my next moves and the
            # rotations, must not depend on how frames happened to be batched.
            self._advance()
        for author in sorted(self._ack_to) if not self.watching else ():
            self._ack(to=author)  # changes no state: nothing more can become final
        return self._flush()

    def _receive_one(self, raw: bytes, via: bytes | None) -> None:
        try:
            if raw[:len(LINK_MAGIC)] == LINK_MAGIC:
                if via is None:
                    raise EnvelopeError("unlinked")  # nobody vouches for an unsigned entry
                entry = open_link_entry(raw, via)
                if entry.type not in LINK_TYPES:
                    raise EnvelopeError("unsigned_type")
            else:
                entry = open_entry(raw)
            if entry.table_id != self.table_id:
                raise EnvelopeError("wrong_table")
            if entry.lamport > self.clock.time + MAX_LAMPORT_JUMP:
                raise EnvelopeError("lamport_jump")  # would run every clock out of range
            payload = parse_payload(entry.type, entry.payload)
            if self._catching_up and not self._restoring:
                self._heard.add(entry.author)
            self._accept(entry, payload)
        except EnvelopeError as exc:
            self._reject(exc.reason)
        except Equivocation as exc:
            self._reject("equivocation")
            self._flag_key(entry.author, str(exc))
        except Exception as exc:  # noqa: BLE001 - nothing from the wire may crash a peer
            self._reject(f"internal_error:{type(exc).__name__}")

    def tick(self, now: float) -> Outbound:
        """Time passes: heartbeats, views, countdowns, resends, silent peers."""
        self.now = now
        rs = self.rs
        if self.is_host and self.phase in (Phase.LOBBY, Phase.BETWEEN):
            self._maybe_auto_start()
        if self.seq and now - self._last_ack >= HEARTBEAT:
            self._ack()  # in every phase: it is how a lost entry is noticed
        if rs is not None and self.phase in (Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING):
            if (rs.play_from is not None and not rs.started and now >= rs.play_from):
                rs.started = True
                self._event(ev.RoundStarted(rs.number))
            self._send_view(rs)
            self._check_silent(rs)
        self._ask_missing()
        self._advance()
        return self._flush()

    # ------------------------------------------------------------- commands
    def start_round(self, now: float) -> Outbound:
        """Host: fix the roster and start the next round."""
        self.now = now
        if not self.is_host:
            raise CommandError("only the host starts a round")
        if self.phase not in (Phase.LOBBY, Phase.BETWEEN):
            raise CommandError("a round is already under way")
        if not self.seats:
            raise CommandError("nobody is seated")
        try:
            self.variants.check_players(len(self.seats))
        except VariantError as exc:
            raise CommandError(str(exc)) from None
        number = self.rs.number + 1 if self.rs else 1
        self._send(_settings_of(self.variants, self.countdown, self.drop_after))
        self._send(Roster(self.seats), round_no=number)
        return self._flush()

    def change_settings(self, variants: Variants, now: float, *,
                        countdown: float | None = None,
                        drop_after: float | None = None) -> Outbound:
        """Host: new rules (and clocks, if given) for the next round, for every seat."""
        self.now = now
        if not self.is_host:
            raise CommandError("only the host changes the settings")
        if self.phase not in (Phase.LOBBY, Phase.BETWEEN):
            raise CommandError("settings change between rounds")
        countdown = self.countdown if countdown is None else countdown
        drop_after = self.drop_after if drop_after is None else drop_after
        problem = clocks_problem(countdown, drop_after)
        if problem is not None:
            raise CommandError(problem)
        self._send(_settings_of(variants, countdown, drop_after))
        return self._flush()

    def arrange_seats(self, order: Sequence[bytes], now: float) -> Outbound:
        """Host: the seated players in a new order, for the next round.

        The order is who partners whom under "pairs" (seats 2k and 2k+1). It
        gives no seat an edge in ties of Lamport time: those are drawn
        (``foundations.order``).
        """
        self.now = now
        if not self.is_host:
            raise CommandError("only the host arranges the seats")
        if self.phase not in (Phase.LOBBY, Phase.BETWEEN):
            raise CommandError("seats are arranged between rounds")
        by_key = {s.key: s for s in self.seats}
        if len(order) != len(by_key) or set(order) != by_key.keys():
            raise CommandError("every seated player needs exactly one seat")
        if tuple(order) != tuple(by_key):
            self._send(Roster(tuple(by_key[key] for key in order)))
        return self._flush()

    def set_ready(self, on: bool, now: float) -> Outbound:
        self.now = now
        if self.watching:
            raise CommandError("you are watching this table: a spectator has no seat")
        self._send(Ready(on))
        return self._flush()

    def move(self, target: Target, now: float) -> Outbound:
        """Play a card on my tableau: to a work pile, or to a foundation (sent as PLAY)."""
        self.now = now
        rs, tab = self._playing()
        if target.pile is None:
            perform(tab, target)
            self._journal_moves(rs, tab)
            return self._flush()
        lamport = self.clock.time + 1
        key = (lamport, rs.me if rs.me is not None else 0)
        card = perform(tab, target, key)
        assert card is not None
        self._journal_moves(rs, tab)
        signed = self._sign(PlayMsg(card, target.pile, target.src, target.declared,
                                    len(tab.log) - 1), expect_lamport=lamport)
        # The view rides with the play (one write, one wake-up of each peer)
        # rather than waking every peer again at the next tick.
        self._send_view(rs)
        if signed is not None:
            if self.send_early is not None:
                self.send_early(self._flush())
            self._deliver_own(*signed)
        return self._flush()

    def turn(self, now: float) -> Outbound:
        self.now = now
        rs, tab = self._playing()
        tab.turn()
        self._journal_moves(rs, tab)
        return self._flush()

    def rotate_alone(self, now: float) -> Outbound:
        """The lone-stuck variant: top stock card to the bottom."""
        self.now = now
        rs, tab = self._playing()
        if not rs.variants.lone_rotate:
            raise CommandError("this table plays without the lone rotation")
        tab.rotate(alone=True)
        self._journal_moves(rs, tab)
        return self._flush()

    def vote_stuck(self, on: bool, now: float) -> Outbound:
        self.now = now
        rs, _tab = self._playing()
        assert rs.me is not None
        self._send(Stuck(on, len(rs.log)))
        return self._flush()

    def call_nerts(self, now: float) -> Outbound:
        self.now = now
        rs, tab = self._playing()
        lamport = self.clock.time + 1
        tab.record_nerts_call(lamport)
        rs.i_called = True
        self._journal_moves(rs, tab)
        self._send(Nerts(), expect_lamport=lamport)
        return self._flush()

    def leave(self, now: float, reason: str = "left the table") -> Outbound:
        self.now = now
        if self.phase in (Phase.LOBBY, Phase.BETWEEN, Phase.OVER):
            self._send(Leave())
        self._send(Goodbye(reason[:200]))
        return self._flush()

    def seat_lost(self, key: bytes, now: float) -> Outbound:
        """Host: ``key``'s connection went while no round is under way. Its seat is
        given up, so that the table counts only those still there; a player who
        comes back (a crash, a cut cable) asks again and sits down at once."""
        self.now = now
        if self.is_host and self.phase in (Phase.LOBBY, Phase.BETWEEN):
            self.waiting.pop(key, None)
            self._unseat(key)
        return self._flush()

    def turn_away(self, key: bytes, reason: str, now: float) -> Outbound:
        """Host: tell ``key``, which holds no seat, that the table will not keep it."""
        self.now = now
        if self.is_host and key not in self.seated:
            self._send(Refuse(key, reason[:200]))
        return self._flush()

    # -------------------------------------------------------------- reading
    @property
    def my_seat(self) -> int | None:
        return self.rs.me if self.rs else _index(self.seats, self.me.public_key)

    def round_state(self, number: int) -> RoundState | None:
        """Round ``number``'s state, if it is the current or the previous round."""
        for rs in (self.rs, self.prev_rs):
            if rs is not None and rs.number == number:
                return rs
        return None

    @property
    def tableau(self) -> Tableau | None:
        return self.rs.tab if self.rs else None

    @property
    def foundations(self) -> FoundationLog | None:
        return self.rs.log if self.rs else None

    @property
    def voted(self) -> bool:
        """Whether my seat's stuck vote is on (cast by me, or by my partner at a
        shared tableau)."""
        return self.rs is not None and self.rs.my_vote

    def can_move(self) -> bool:
        return self.blocked() is None

    def _behind(self, rs: RoundState) -> bool:
        """After a restart: not every live peer heard from yet, or entries still missing."""
        if not self._catching_up:
            return False
        peers = {rs.keys[s] for s in rs.live if s != rs.me}
        if peers <= self._heard and all(
                self.authors[k].missing() is None for k in peers if k in self.authors):
            self._catching_up = False
        return self._catching_up

    # ============================================================ internals
    def _flush(self) -> Outbound:
        out, self._out = self._out, Outbound()
        return out

    def _event(self, event: ev.Event) -> None:
        self._out.events.append(event)

    def _reject(self, reason: str) -> None:
        self.rejected[reason] += 1
        self._event(ev.Rejected(reason))

    def blocked(self) -> str | None:
        """Why my moves are refused right now (for a UI to say), or None if I may move."""
        rs = self.rs
        if self.watching:
            return "you are watching this table: a spectator does not play"
        if rs is None or rs.tab is None or self.phase is not Phase.PLAYING:
            return "no round is being played"
        if not rs.started:
            return "wait for the countdown"
        if rs.end is not None:
            return "the round is over"
        if rs.i_called:
            return "you called Nerts: the round is ending"
        if rs.me not in rs.live:
            return "you were dropped from this round; you play again next round"
        if self._behind(rs):
            return "catching up with the table"
        return None

    def _playing(self) -> tuple[RoundState, Tableau]:
        reason = self.blocked()
        if reason is not None:
            raise CommandError(reason)
        rs = self.rs
        assert rs is not None and rs.tab is not None
        return rs, rs.tab

    def _send(self, payload: Payload, *, round_no: int | None = None, to: bytes | None = None,
              expect_lamport: int | None = None) -> None:
        """Sign and queue one of my entries; sequenced ones are delivered to myself too."""
        signed = self._sign(payload, round_no=round_no, to=to, expect_lamport=expect_lamport)
        if signed is not None:
            self._deliver_own(*signed)

    def _sign(self, payload: Payload, *, round_no: int | None = None, to: bytes | None = None,
              expect_lamport: int | None = None) -> tuple[Entry, Payload] | None:
        """Sign and queue one of my entries; a sequenced one is returned, for
        :meth:`_deliver_own` (None when there is nothing to deliver)."""
        rs = self.rs
        if (payload.TYPE in ROUND_TYPES and rs is not None and rs.me is not None
                and rs.me not in rs.live):
            return None  # dropped from this round: nothing of ours counts in it any more
        if self._restoring:
            # The journal holds what we signed here before the crash (if we got
            # this far): deliver it now, where live play delivered it.
            signed = self._signed.get(self.seq + 1)
            if payload.TYPE not in EPHEMERAL and signed is not None and signed.type == payload.TYPE:
                self._replay_own(signed)
            return None
        number = round_no if round_no is not None else (self.rs.number if self.rs else 0)
        if payload.TYPE in EPHEMERAL:
            # An ephemeral entry carries my latest sequence number: peers learn from
            # it what I have sent, and ask again for anything lost.
            seq, lamport = max(self.seq, 1), max(self.clock.time, 1)
            if payload.TYPE in LINK_TYPES:
                raw = link_message(self.me.public_key, payload, table_id=self.table_id,
                                   round=number, seq=seq, lamport=lamport)
            else:
                raw = seal_message(self.me, payload, table_id=self.table_id, round=number,
                                   seq=seq, lamport=lamport).raw
            self._out.sends.append(Send(raw, to))
            return None
        self.seq += 1
        lamport = self.clock.tick()
        if expect_lamport is not None and lamport != expect_lamport:
            raise AssertionError("Lamport time moved under a local play")
        entry = seal_message(self.me, payload, table_id=self.table_id, round=number,
                             seq=self.seq, lamport=lamport)
        self._record(Record(Kind.ENTRY, entry.raw))
        self._out.sends.append(Send(entry.raw, to))
        return entry, payload

    def _deliver_own(self, entry: Entry, payload: Payload) -> None:
        log = self._author(self.me.public_key)
        assert log is not None
        log.offer(entry)
        self._deliver(entry, payload, log)

    def _record(self, record: Record) -> None:
        if not self._restoring:
            self._out.journal.append(record)

    def _journal_moves(self, rs: RoundState, tab: Tableau) -> None:
        """Journal my new decisions on the tableau (settles and agreed rotations replay)."""
        for move in tab.log[rs.journaled:]:
            if move[0] in _DECISIONS and move != (OP_ROTATE, ROTATE_ALL):
                self._record(move_record(rs.number, move))
        rs.journaled = len(tab.log)

    def _author(self, key: bytes) -> AuthorLog | None:
        log = self.authors.get(key)
        if log is None:
            if len(self.authors) >= MAX_AUTHORS and not self._evict_stranger():
                return None
            log = self.authors[key] = AuthorLog(key)
        return log

    def _evict_stranger(self) -> bool:
        """Make room by forgetting the longest-silent key that holds no seat.

        Keys come and go over a night (players leave, a flood of strangers
        says HELLO); only the seated matter to the game. A forgotten key
        that comes back starts again from its first entry, which it resends.
        """
        keep = {*self.seated, self.host_key, self.me.public_key}
        if self.rs is not None:
            keep.update(self.rs.keys)
        keep.update(self.waiting)
        strangers = [k for k in self.authors if k not in keep]
        if not strangers:
            return False
        oldest = min(strangers, key=lambda k: self.last_heard.get(k, -1e18))
        del self.authors[oldest]
        self.last_heard.pop(oldest, None)
        self._asked.pop(oldest, None)
        return True

    # -------------------------------------------------------------- arrival
    def _accept(self, entry: Entry, payload: Payload) -> None:
        if entry.author == self.me.public_key:
            raise EnvelopeError("own_entry")  # a reflection: we never need our own back
        if entry.type in EPHEMERAL:
            if entry.type == MsgType.ACK:  # finality depends on acks
                self._record(Record(Kind.ENTRY, entry.raw) if entry.signed
                             else Record(Kind.LINK, entry.author + entry.raw))
            self._ephemeral(entry, payload)
            return
        log = self._author(entry.author)
        if log is None:
            raise EnvelopeError("too_many_authors")
        verdict = log.offer(entry)
        if verdict == "duplicate":
            self.rejected["duplicate"] += 1
            return
        self._record(Record(Kind.ENTRY, entry.raw))
        if verdict == "next":
            log.held[entry.seq] = entry
        self._drain(log, (entry, payload))

    def _drain(self, log: AuthorLog, parsed: tuple[Entry, Payload] | None = None) -> None:
        """Deliver this author's held entries in sequence while they are deliverable.

        ``parsed`` is the entry just accepted and its payload, parsed already
        (to judge it before journaling): the common case, one entry that is
        next in its author's sequence, does not parse it twice.
        """
        while (entry := log.held.get(log.delivered + 1)) is not None:
            if not self._deliverable(entry):
                break
            del log.held[entry.seq]
            problem = log.lamport_problem(entry)
            if problem is not None:
                self._reject(problem)
                self._flag_key(entry.author, _LAMPORT_PROBLEMS[problem])
                break
            payload = (parsed[1] if parsed is not None and parsed[0] is entry
                       else parse_payload(entry.type, entry.payload))
            try:
                self._deliver(entry, payload, log)
            except EnvelopeError as exc:
                # A signed entry that breaks the rules takes its sequence slot (so
                # the author's later entries are not blocked) and changes nothing
                # else; honest peers never sign one, so its author is flagged. A
                # dropped seat's entries, and any for a round we have closed,
                # are honest: only too late.
                self._reject(exc.reason)
                if exc.reason not in ("dropped", "late"):
                    self._flag_key(entry.author, f"sent an invalid entry ({exc.reason})")
        rs = self.rs
        if rs is not None and rs.dropping and rs.seat_of(log.key) in rs.dropping:
            # The votes may have agreed before we held the seat's entries up to
            # the cut; now that more of them are here, the drop may complete.
            self._finish_drops(rs)
        elif rs is not None and log.key == self.host_key and (host := rs.seat_of(log.key)) in (
                rs.drop_votes.keys() & rs.live):
            self._maybe_drop(rs, host)  # whether its GO is within the cut may be known now
        self._ask_missing()

    def _drain_all(self) -> None:
        """Deliver what every author has held back: what may be delivered just changed."""
        for log in list(self.authors.values()):
            self._drain(log)

    def _deliverable(self, entry: Entry) -> bool:
        """Whether an author's next entry can be acted on now, or must wait.

        Round entries wait for their round; play entries also wait for the
        deal (an honest PLAY can overtake a slow peer's REVEAL). Everything
        else goes on, so a bad entry is judged, not left blocking its author.
        """
        rs = self.rs
        if entry.type in (MsgType.ROSTER, MsgType.SETTINGS):
            # The host sends these once it has closed a round; a peer still
            # closing it takes them after (they set up the next round).
            return self.phase not in (Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING)
        if entry.type not in ROUND_TYPES:
            return True
        if rs is None or entry.round > rs.number:
            return False
        if entry.round == rs.number and entry.type in _NEEDS_DEAL:
            return rs.joint is not None
        return True

    def _deliver(self, entry: Entry, payload: Payload, log: AuthorLog) -> None:
        mine = entry.author == self.me.public_key
        log.mark_delivered(entry)
        if not mine:
            self._observe(entry)
            self.last_heard[entry.author] = self.now
        if entry.type in ROUND_TYPES:
            self._round_entry(entry, payload)
            return
        match payload:
            case Join(name=name):
                if self.is_host:
                    self._host_join(entry.author, name)
            case Leave():
                self.waiting.pop(entry.author, None)
                if self.is_host and self.phase in (Phase.LOBBY, Phase.BETWEEN):
                    self._unseat(entry.author)
            case Roster(seats=seats):
                self._roster(entry, seats)
            case Settings():
                self._settings(entry, payload)
            case Ready(on=on):
                self.ready[entry.author] = on
                self._event(ev.ReadyChanged(tuple(self.ready.get(s.key, False)
                                                  for s in self.seats)))
            case Refuse(who=who, reason=reason):
                if entry.author == self.host_key and who == self.me.public_key:
                    self._event(ev.Refused(reason))
            case Goodbye(reason=reason):
                self._goodbye(entry.author, reason)
            case _:
                raise EnvelopeError("unexpected_type")

    def _observe(self, entry: Entry) -> None:
        """Only seated players' times order the table: a stranger cannot move my clock."""
        if entry.author in self.seated:
            self.clock.observe(entry.lamport)

    def _ephemeral(self, entry: Entry, payload: Payload) -> None:
        log = self._author(entry.author)
        if log is None:
            raise EnvelopeError("too_many_authors")
        self.last_heard[entry.author] = self.now
        if entry.type != MsgType.RESEND or log.delivered or log.held:
            # An ephemeral entry carries its author's latest seq, at least 1. A
            # spectator, who signs nothing, sends RESENDs only: its seq 1 would have
            # every peer ask, forever, for an entry that never was.
            log.note_claim(entry.seq)
        rs = self.rs
        seat = rs.seat_of(entry.author) if rs else None
        match payload:
            case Ack(upto=upto):
                # Only what the journal holds moves my clock: a restart replays
                # it, and must come back at least as late as every ACK I sent.
                self._observe(entry)
                log.vouch(entry.seq, entry.lamport)
                seated = self.seated
                for mark in upto if entry.author in seated else ():
                    # A seated author we never heard from directly (no link to
                    # it): learning what it sent lets us ask others for it. Only
                    # a seated peer's word counts: a stranger could otherwise
                    # send us asking for entries that never were.
                    other = (self._author(mark.author) if mark.author in seated
                             else self.authors.get(mark.author))
                    if other is not None:
                        other.note_claim(mark.seq)
                if rs is not None and seat is not None:
                    held = rs.marks.setdefault(seat, {})
                    for mark in upto:
                        author = rs.seat_of(mark.author)
                        if author is not None:
                            held[author] = max(held.get(author, 0), mark.seq)
                if rs is not None and seat is not None and entry.round == rs.number:
                    rs.acks[seat] = (entry.lamport, entry.seq)
                if entry.author in self.sitting_down and any(
                        m.author == self.me.public_key
                        and m.seq >= self.sitting_down[entry.author] for m in upto):
                    del self.sitting_down[entry.author]  # it holds its seat: deal it in
            case View():
                if (rs is not None and seat is not None and entry.round == rs.number
                        and entry.lamport >= rs.view_lamport.get(seat, 0)):
                    rs.views[seat] = payload
                    rs.view_lamport[seat] = entry.lamport
            case Resend(author=author, from_seq=lo, to_seq=hi):
                self._answer_resend(entry.author, author, lo, hi)
            case _:
                pass  # HELLO: liveness only

    def _answer_resend(self, asker: bytes, author: bytes, lo: int, hi: int) -> None:
        log = self.authors.get(author)
        if log is None:
            return
        for seq in range(lo, min(hi, lo + 1023) + 1):
            frame = log.entries.get(seq)
            if frame is not None:
                self._out.sends.append(Send(frame, asker))

    def _ask_missing(self) -> None:
        for key, log in self.authors.items():
            gap = log.missing()
            if gap is None or key == self.me.public_key:
                continue
            if self.now - self._asked.get(key, -1e9) < RESEND_INTERVAL:
                continue
            self._asked[key] = self.now
            self._send(Resend(key, gap[0], min(gap[1], gap[0] + 1023)))

    # ---------------------------------------------------------------- lobby
    def _host_join(self, key: bytes, name: str) -> None:
        seated = key in self.seated
        rs = self.rs
        if self.phase in (Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING):
            seat = rs.seat_of(key) if rs is not None else None
            if seat is not None and rs is not None and seat in rs.live:
                return  # a returning seat catches up through resends
            if key in self.waiting:
                return
            if not seated and len(self.seats) + len(self.waiting) >= self.max_seats:
                self._send(Refuse(key, "the table is full"))
                return
            # Dropped from this round, or given up after an earlier one: the
            # player never chose to leave. It sits down as this round closes,
            # so it cannot miss the short break before the next deal.
            self.waiting[key] = name
            self._event(ev.Notice(f"{name} sits down when this round ends"))
        elif seated:
            self._send(Roster(self.seats))  # a rejoin: tell them again
        elif self.phase is Phase.OVER:
            self._send(Refuse(key, "the game is over"))
        elif len(self.seats) >= self.max_seats:
            self._send(Refuse(key, "the table is full"))
        else:
            self._seat(key, name)

    def _seat(self, key: bytes, name: str) -> None:
        """Host: a newcomer sits after everyone else, so the partners chosen stay together."""
        self._send(Roster((*self.seats, Seat(key, name))))

    def _unseat(self, key: bytes) -> None:
        """Host: give a guest's seat up (the host's own seat is the table itself)."""
        if key != self.host_key and key in self.seated:
            self._send(Roster(tuple(s for s in self.seats if s.key != key)))

    def _maybe_auto_start(self) -> None:
        if self.phase is Phase.LOBBY and self.auto_start and len(self.seats) >= self.auto_start:
            self._auto_start()
        elif (self.phase is Phase.BETWEEN and self.next_round_at is not None
              and self.now >= self.next_round_at
              and (not self.sitting_down.keys() & self.seated
                   or self.now >= self.next_round_at + SIT_DOWN_WAIT)):
            self.next_round_at = None
            self._auto_start()

    def _auto_start(self) -> None:
        # start_round flushes (it is a command); keep its frames, events and journal
        # records in this call's output rather than dropping them.
        try:
            out = self.start_round(self.now)
        except CommandError as exc:
            self.auto_start = self.auto_next = None  # say it once, then wait for a person
            self._event(ev.Notice(f"cannot deal automatically: {exc}"))
            return
        self._out.extend(out)

    def _roster(self, entry: Entry, seats: tuple[Seat, ...]) -> None:
        if entry.author != self.host_key:
            raise EnvelopeError("not_host")
        number = self.rs.number if self.rs else 0
        if entry.round == number + 1:
            self.seats = seats
            self._begin_round(entry.round)
        elif entry.round == number and self.phase in (Phase.LOBBY, Phase.BETWEEN, Phase.OVER):
            self.seats = seats
        else:
            raise EnvelopeError("wrong_round")
        self._event(ev.RosterChanged(tuple(s.name for s in seats),
                                     tuple(fingerprint_of(s.key) for s in seats),
                                     _index(seats, self.me.public_key)))

    def _settings(self, entry: Entry, payload: Payload) -> None:
        assert isinstance(payload, Settings)
        if entry.author != self.host_key:
            raise EnvelopeError("not_host")
        if self.phase not in (Phase.LOBBY, Phase.BETWEEN):
            raise EnvelopeError("settings_mid_round")
        try:
            self.variants = Variants(
                stock_turn=payload.stock_turn, strict_ties=payload.strict_ties,
                lone_rotate=payload.lone_rotate, penalty=payload.penalty,
                target=payload.target, teams=payload.teams,  # type: ignore[arg-type]
                jokers=payload.jokers,
            )
        except VariantError:
            raise EnvelopeError("bad_field:settings") from None
        # The host's clocks, whatever this peer was started with: nobody may start
        # early, and every peer counts a seat silent after the same time.
        self.countdown = payload.countdown_ms / 1000
        self.drop_after = payload.drop_after_ms / 1000
        self._event(ev.SettingsChanged(
            f"{self.variants.summary()}; {self.countdown:g} s countdown, "
            f"silent seats dropped after {self.drop_after:g} s"))

    def _goodbye(self, key: bytes, reason: str) -> None:
        rs = self.rs
        self.waiting.pop(key, None)
        if self.is_host and self.phase in (Phase.LOBBY, Phase.BETWEEN):
            self._unseat(key)
        seat = rs.seat_of(key) if rs else None
        if rs is None or seat is None:
            return
        self._event(ev.Notice(f"{rs.names[seat]} left: {reason}"))
        if seat in rs.live and self.phase in (Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING):
            rs.left.add(seat)
            if seat != rs.me:
                self._vote_drop(rs, seat)
            self._maybe_drop(rs, seat)

    # ---------------------------------------------------------------- round
    def _begin_round(self, number: int) -> None:
        self.sitting_down.clear()
        keys = tuple(s.key for s in self.seats)
        me = _index(self.seats, self.me.public_key)
        rs = RoundState(
            number=number, keys=keys, names=tuple(s.name for s in self.seats),
            variants=self.variants, me=me, live=set(range(len(keys))),
            log=FoundationLog(strict_ties=self.variants.strict_ties),
            stuck=[False] * len(keys),
        )
        if self.phase is Phase.OVER:
            self.totals = {}  # a new game
        rounds = self.match.rounds if self.match is not None and self.totals else 0
        self.match = Match.new(self.variants, len(keys))
        self.match.totals = [self.totals.get(k, 0) for k in keys]
        self.match.rounds = rounds
        rs.begun = self.now
        self.prev_rs, self.rs = self.rs, rs
        self.phase = Phase.SHUFFLE
        for key in keys:
            self.last_heard.setdefault(key, self.now)
            self.last_heard[key] = max(self.last_heard[key], self.now)
        if me is not None:
            known = self._secrets.pop(number, None)
            if known is None:
                known = (self.rng(SECRET_LEN), self.rng(SECRET_LEN))
                self._record(secrets_record(number, *known))
            rs.deck_secret, rs.share = known
            self._send(Commit(commitment(rs.deck_secret), commitment(rs.share)))
        # Round entries that arrived early can now be delivered.
        self._drain_all()

    def _round_entry(self, entry: Entry, payload: Payload) -> None:
        rs = self.rs
        if rs is not None and entry.round < rs.number:
            # A vote or verdict sent while its author still waited on the round
            # we have closed (or a dropped seat's): honest, only too late.
            raise EnvelopeError("late")
        if rs is None or entry.round != rs.number:
            raise EnvelopeError("wrong_round")
        seat = rs.seat_of(entry.author)
        if seat is None:
            raise EnvelopeError("not_seated")
        if rs.drop_queue:
            # This entry may be what makes a vote due (its author's time has
            # moved on): count it first, so that whatever this entry completes
            # (the last AUDIT, say) is judged with the same live seats everywhere.
            self._tally_drops(rs)
        if seat in rs.dropping and entry.seq > rs.dropping[seat]:
            raise EnvelopeError("dropped")
        match payload:
            case Commit():
                if seat in rs.commits:
                    raise EnvelopeError("second_commit")
                rs.commits[seat] = payload
                self._maybe_reveal(rs)
            case Reveal(share=share):
                commit = rs.commits.get(seat)
                if commit is None or commitment(share) != commit.share:
                    self._flag(rs, seat, "revealed a share it had not committed to")
                    raise EnvelopeError("bad_reveal")
                rs.reveals[seat] = share
                self._maybe_deal(rs)
            case Go():
                if entry.author != self.host_key:
                    raise EnvelopeError("not_host")
                rs.go_pending = payload
                rs.go_seq = entry.seq
                self._maybe_go(rs)
            case PlayMsg():
                self._play_entry(rs, seat, entry, payload)
            case Nerts() | Stuck():
                if isinstance(payload, Nerts):
                    rs.calls_by_seat.setdefault(seat, []).append(entry.lamport)
                elif seat == rs.me:  # here, not in vote_stuck: a restore replays it
                    rs.my_vote, rs.my_vote_at = payload.on, entry.lamport
                heapq.heappush(rs.ordered,
                               _Ordered(entry.lamport, seat, entry.type, payload, entry.seq))
            case Drop(who=who, upto=upto):
                victim = rs.seat_of(who)
                if victim is None or victim == seat:
                    raise EnvelopeError("bad_field:who")
                heapq.heappush(rs.drop_queue, (entry.lamport, seat, victim, upto))
                self._tally_drops(rs)
            case Audit():
                rs.audits[seat] = payload
                rs.audit_seq[seat] = entry.seq
                self._maybe_score(rs)
            case Summary():
                rs.summaries[seat] = payload
                self._maybe_close(rs)
            case Verdict(seat=accused, ok=ok, reason=reason):
                if not ok and accused < len(rs.keys) and rs.verdicts and not rs.verdicts[accused]:
                    self._event(ev.Notice(
                        f"{rs.names[seat]} flags {rs.names[accused]} ({reason}); we did not"))
            case _:
                raise EnvelopeError("unexpected_type")

    def _maybe_reveal(self, rs: RoundState) -> None:
        if rs.me is not None and rs.live <= rs.commits.keys() and rs.me not in rs.reveals:
            self._send(Reveal(rs.share))

    def _maybe_deal(self, rs: RoundState) -> None:
        if rs.joint is not None or not rs.live <= rs.reveals.keys():
            return
        joint = self._live_joint(rs)
        self._deal(rs, joint)
        if self.is_host:
            self._send(Go(joint))
        self._maybe_go(rs)
        # Plays that overtook the last REVEAL wait for the deal; if nothing else
        # comes from their authors (a peer catching up, whose resends are all
        # in), only this wakes them.
        self._drain_all()

    def _maybe_go(self, rs: RoundState) -> None:
        if rs.go_pending is None or rs.joint is None or rs.play_from is not None:
            return
        if rs.go_pending.joint != rs.joint and not self._joint_of_live(rs):
            if self._catching_up or rs.drop_queue or any(
                    votes for seat, votes in rs.drop_votes.items() if seat in rs.live):
                # Back from a crash or a split: a seat (maybe ours) may have been
                # dropped in this shuffle and the host dealt from the others'
                # shares, while we have not heard every vote yet (the host's
                # came before its GO, the others' may come after);
                # _finish_drops looks again.
                return
            self._event(ev.Notice("the host dealt from another joint value; round void"))
            raise EnvelopeError("go_mismatch")
        rs.play_from = self.now + self.countdown
        self.phase = Phase.PLAYING
        self._event(ev.RoundStarting(rs.number, self.countdown))
        if self.countdown <= 0:
            rs.started = True
            self._event(ev.RoundStarted(rs.number))

    def _play_entry(self, rs: RoundState, seat: int, entry: Entry, msg: PlayMsg) -> None:
        v = rs.variants
        card, pile, decl = msg.card, msg.pile, msg.decl
        if card >> 6 != seat or not is_valid_card(card, seats=len(rs.keys), jokers=v.jokers):
            raise EnvelopeError("bad_field:card")
        if msg.src not in SOURCES:
            raise EnvelopeError("bad_field:src")
        is_joker = card & 15 == JOKER_RANK
        if is_joker:
            if not ACE <= decl & 15 <= KING:
                raise EnvelopeError("bad_field:decl")
        elif decl != 0:
            raise EnvelopeError("bad_field:decl")
        face = decl if is_joker else card & 63
        starts = face & 15 == ACE
        if starts != (pile == card) or not is_valid_card(pile, seats=len(rs.keys),
                                                         jokers=v.jokers):
            raise EnvelopeError("bad_field:pile")
        play = Play(entry.lamport, seat, card, pile, msg.src, decl)
        rs.plays_by_seat.setdefault(seat, []).append(play)
        rs.play_seq[play.key] = entry.seq
        rs.log.add(play)
        mine = seat == rs.me
        self._event(ev.PlayAdded(play, mine))
        heapq.heappush(rs.ordered, _Ordered(entry.lamport, seat, entry.type, msg, entry.seq))
        if not mine:
            # At once and straight to its author, whose play is then final about
            # one round trip later. Everyone else learns how far I am from my
            # heartbeats, so a play costs N-1 acks, not (N-1)^2.
            self._ack_to.add(rs.keys[seat])

    def _ack(self, to: bytes | None = None) -> None:
        """Say how far I am: to one author right after its play, else to everyone.

        A heartbeat (to everyone) carries every mark. An ACK straight to an
        author carries only its own: all its play's finality needs from me.
        The author parses one mark on the way there rather than one per seat
        (at 8 peers its plays were final 6 % sooner, 6 alternating games each);
        how far I hold the others it learns from my heartbeats, which is also
        how every peer learns it once nobody plays (stuck votes, a Nerts call).
        """
        if to is not None:
            keys = {to}
        else:
            # The last round's seats too: a peer still catching up on it (back
            # from a crash) needs every live seat's word that it holds each
            # entry, also from seats that have since left; this round's keys
            # alone would never give it that, and it would wait forever.
            keys = set(self.seated)
            for rs in (self.rs, self.prev_rs):
                keys.update(rs.keys if rs is not None else ())
            self._last_ack = self.now
        marks = tuple(sorted(AckMark(k, self.authors[k].delivered) for k in keys
                             if k in self.authors and self.authors[k].delivered))
        self._send(Ack(marks), to=to)

    # ------------------------------------------------------------ total order
    def _known(self, rs: RoundState, seat: int) -> int:
        """The Lamport time up to which everything from ``seat`` is here."""
        if seat == rs.me:
            return self.clock.time
        log = self.authors.get(rs.keys[seat])
        known = log.lamport if log else 0
        ack = rs.acks.get(seat)
        if ack is not None and log is not None and ack[1] <= log.delivered:
            known = max(known, ack[0])
        return known

    def _final(self, rs: RoundState, lamport: int, author: int, seq: int) -> bool:
        """Nothing ordered before ``item`` can still arrive, and no drop can cut it.

        Every other live seat has been heard at a Lamport time at or past it
        (its entries come in order, so nothing earlier from it is missing) *and*
        holds the entry itself (its acks say so): then any vote to drop the
        author names a cut at or past the entry, and the entry counts for good.
        """
        # A dropped seat's entries up to the agreed cut count whoever holds them:
        # no second drop can cut them again.
        cut = rs.dropping.get(author, 0) if author not in rs.live else 0
        return all(self._known(rs, q) >= lamport
                   and (seq <= cut or q == rs.me or rs.marks.get(q, {}).get(author, 0) >= seq)
                   for q in rs.live if q != author)

    def _advance(self) -> None:
        """Act on round entries that became final, in (Lamport, seat) order."""
        rs = self.rs
        if rs is not None and rs.drop_queue:
            self._tally_drops(rs)
        while rs is not None and rs.ordered and self._final(
                rs, rs.ordered[0].lamport, rs.ordered[0].seat, rs.ordered[0].seq):
            item = heapq.heappop(rs.ordered)
            if item.kind == MsgType.PLAY:
                self._play_final(rs, item)
            elif rs.end is not None:
                continue
            elif isinstance(item.payload, Stuck):
                self._stuck_final(rs, item.seat, item.payload.on, (item.lamport, item.seat))
            elif isinstance(item.payload, Nerts):
                rs.call = (item.lamport, item.seat)
                self._event(ev.NertsCalled(item.seat, rs.names[item.seat]))
                self._end_round(rs, "nerts", rs.call)
        if rs is not None:
            self._settle_own_early(rs)

    def _play_final(self, rs: RoundState, item: _Ordered) -> None:
        key = (item.lamport, item.seat)
        if rs.log.fate(key) is Fate.STAY:
            rs.stays_since_rotation += 1
        if item.seat != rs.me:
            self._event(self._final_event(rs, key, mine=False))
        elif rs.tab is not None and key in rs.tab.in_flight:
            self._settle_mine(rs, key)

    def _settle_mine(self, rs: RoundState, key: PlayKey) -> None:
        assert rs.tab is not None
        event = self._final_event(rs, key, mine=True)
        rs.tab.settle(key, stayed=event.fate is Fate.STAY)
        self._event(event)

    def _final_event(self, rs: RoundState, key: PlayKey, *, mine: bool) -> ev.PlayFinal:
        fate, play = rs.log.fate(key), rs.log.play(key)
        first, tie = None, False
        if fate is not Fate.STAY:
            winner = rs.log.first_over(key)
            first = rs.names[winner.author] if winner else None
            if fate is Fate.CUT:
                tie = rs.log.cutoff is not None and rs.log.cutoff[0] == play.lamport
            else:
                tie = (winner is not None and winner.lamport == play.lamport
                       and winner.face & 15 == play.face & 15)
        return ev.PlayFinal(rs.number, play, fate, mine, first, tie,
                            rs.end if fate is Fate.CUT else None)

    def _settle_own_early(self, rs: RoundState) -> None:
        """Settle my plays whose fate is fixed, without waiting for the total order.

        A play's fate depends only on plays ordered before it; once those are
        all here and every live seat holds the play, it is decided, unless a
        Nerts call or stuck vote ordered before it is still waiting (it might
        cut the play). Counting and events for others stay in total order.
        """
        tab = rs.tab
        if tab is None or not tab.in_flight or rs.end is not None:
            return
        barrier = min((o for o in rs.ordered if o.kind != MsgType.PLAY), default=None)
        for key in sorted(tab.in_flight):
            if barrier is not None and before((barrier.lamport, barrier.seat), key):
                break
            seq = rs.play_seq.get(key)
            if seq is not None and self._final(rs, key[0], key[1], seq):
                self._settle_mine(rs, key)

    def _stuck_final(self, rs: RoundState, seat: int, on: bool, key: PlayKey | None) -> None:
        """A stuck vote takes effect; all live seats stuck means rotate, or a deadlock.

        ``key`` is the deciding vote's place in the total order, where a
        deadlock cuts the foundations off; None when a drop decides it (there
        is no vote to cut at, and every peer holds the same plays).
        """
        rs.stuck[seat] = on
        self._event(ev.StuckChanged(tuple(rs.stuck)))
        if not all(rs.stuck[s] for s in rs.live):
            return
        if rs.rotations and not rs.stays_since_rotation:
            self._end_round(rs, "deadlock", key)
            return
        rs.rotations += 1
        rs.stays_since_rotation = 0
        rs.stuck = [False] * len(rs.keys)
        if key is None or rs.my_vote_at <= key[0]:
            rs.my_vote = False  # a rotation ends every vote taken before it
        tab = rs.tab
        if tab is not None and len(tab.stock) + len(tab.waste) >= 2:
            tab.rotate(alone=False)
        self._event(ev.Rotated(rs.rotations))

    # ------------------------------------------------------------ dropping
    def _check_silent(self, rs: RoundState) -> None:
        for seat in sorted(rs.live):
            if seat == rs.me:
                continue
            # Silence counts from the round's start: a seat out of touch during
            # the last round (a split, a crash) gets the whole timeout in this
            # one, rather than votes the moment it begins that are taken back
            # as soon as it is heard.
            heard = max(self.last_heard.get(rs.keys[seat], self.now), rs.begun)
            silent = self.now - heard > self.drop_after
            if silent and seat not in rs.my_drop_votes:
                self._vote_drop(rs, seat)
            elif (not silent and seat in rs.my_drop_votes and seat not in rs.dropping
                  and seat not in rs.left):
                # Back (a split healed) before the others agreed: take the vote
                # back, or it would help drop the seat in some later split.
                rs.my_drop_votes.discard(seat)
                self._send(Drop(rs.keys[seat], 0))

    def _vote_drop(self, rs: RoundState, seat: int) -> None:
        if rs.me is None or seat in rs.my_drop_votes:
            return
        rs.my_drop_votes.add(seat)
        log = self.authors.get(rs.keys[seat])
        # At least 1 (the host held its JOIN to seat it): 0 withdraws a vote.
        self._send(Drop(rs.keys[seat], max(1, log.delivered if log else 0)))

    def _tally_drops(self, rs: RoundState) -> None:
        """Count DROP votes and withdrawals in (Lamport, voter) order, as they become due.

        Counted as they arrived, a vote and its withdrawal (a split healed) from
        one voter, and the others' votes, could meet in a different order on
        each peer: some would see every vote in at once and drop the seat, some
        never. In this order every peer sees the same. A vote is due once every
        live seat but its victim has been heard past it (nothing earlier can
        still come); the victim's word is not needed, it is the silent one.
        """
        queue = rs.drop_queue
        while queue and all(self._known(rs, q) >= queue[0][0]
                            for q in rs.live if q not in (queue[0][1], queue[0][2])):
            _lamport, voter, victim, upto = heapq.heappop(queue)
            votes = rs.drop_votes.setdefault(victim, {})
            if upto == 0:
                votes.pop(voter, None)  # withdrawn: the voter hears the seat again
            else:
                votes[voter] = upto
                self._maybe_drop(rs, victim)

    def _maybe_drop(self, rs: RoundState, victim: int) -> None:
        votes = rs.drop_votes.get(victim, {})
        voters = rs.live - {victim}
        if victim not in rs.live or not voters or not voters <= votes.keys():
            return  # (a seat alone has nobody to drop it)
        if len(rs.live) == 2 and victim == _senior(rs, self.host_key) and victim not in rs.left:
            # Two seats that lose each other cannot tell a crash from a split:
            # were each to drop the other, the table would play on as two. The
            # senior seat (the host's, else the lower) plays on; the other
            # waits for it to come back (or to say it has left).
            return
        cut = max(votes[v] for v in voters)
        if victim == rs.seat_of(self.host_key) and not self._host_dealt_by(rs, cut):
            return
        rs.dropping[victim] = cut
        self._finish_drops(rs)

    def _host_dealt_by(self, rs: RoundState, cut: int) -> bool:
        """Whether the host's GO is among its entries up to ``cut`` (False until we know).

        Only the host says GO, so a round whose host is dropped before it counts
        could never start: the live seats would wait for a GO that can never
        come (the host's is past the cut) or hold one that names the host's
        share. Such a round waits for its host instead, as a table does. Every
        peer judges from the same entries, the host's up to the cut, so all agree;
        until it holds them, a peer asks for them and looks again as they come.
        """
        log = self.authors.get(self.host_key)
        if log is None or log.delivered < cut:
            if log is not None:
                log.note_claim(cut)
            return False
        return rs.go_seq is not None and rs.go_seq <= cut

    def _finish_drops(self, rs: RoundState) -> None:
        """A seat leaves the live set once we hold all its entries up to the agreed cut."""
        for victim, cut in list(rs.dropping.items()):
            log = self.authors.get(rs.keys[victim])
            if victim not in rs.live or (log is not None and log.delivered < cut):
                if log is not None:
                    log.note_claim(cut)
                continue
            rs.live.discard(victim)
            if rs.go_pending is not None and rs.play_from is None and self._joint_of_live(rs):
                self._maybe_go(rs)
            self._forget_after_cut(rs, victim, cut)
            self._event(ev.PeerDropped(victim, rs.names[victim]))
            self._maybe_reveal(rs)
            self._maybe_deal(rs)
            self._maybe_score(rs)
            self._maybe_close(rs)
            if rs.live and all(rs.stuck[s] for s in rs.live) and rs.end is None:
                # Not our own clock as a cut-off: every peer's differs.
                self._stuck_final(rs, min(rs.live), True, None)

    def _joint_of_live(self, rs: RoundState) -> bool:
        """Deal again from the live seats' shares if that is what the host's GO says.

        A peer back from a crash can hold every REVEAL, its own included,
        before the votes that dropped it, and deal from all of them; the host
        dealt from the live seats' shares only. True once the joint matches.
        """
        go = rs.go_pending
        if go is None or rs.joint is None or not rs.live <= rs.reveals.keys():
            return False
        if go.joint == rs.joint:
            return True
        joint = self._live_joint(rs)
        if joint != go.joint:
            return False
        if rs.me in rs.live:
            self._deal(rs, joint)
        else:
            rs.joint = joint
        return True

    def _live_joint(self, rs: RoundState) -> bytes:
        """The joint value of the live seats' revealed shares (all must be in)."""
        return joint_value(self.table_id, rs.number, [rs.reveals[s] for s in sorted(rs.live)])

    def _deal(self, rs: RoundState, joint: bytes) -> None:
        """Fix the round's joint value and deal my tableau from it."""
        rs.joint = joint
        if rs.me is not None:
            deck = deal_for(rs.me, rs.deck_secret, joint, jokers=rs.variants.jokers)
            rs.tab = Tableau(rs.me, deck, stock_turn=rs.variants.stock_turn,
                             jokers=rs.variants.jokers)

    def _forget_after_cut(self, rs: RoundState, victim: int, cut: int) -> None:
        """Undo what a dropped seat sent past the agreed cut, on every replica alike.

        Peers that heard such entries before the agreement take them back out;
        the dropped seat itself gets those cards back. So every replica ends
        with the same log, and no card is lost.
        """
        late = [key for key, seq in rs.play_seq.items() if key[1] == victim and seq > cut]
        for key in late:
            rs.log.remove(key)
            del rs.play_seq[key]
            if victim == rs.me and rs.tab is not None and key in rs.tab.in_flight:
                rs.tab.settle(key, stayed=False)
        if late:
            gone = set(late)
            rs.plays_by_seat[victim] = [p for p in rs.plays_by_seat.get(victim, [])
                                        if p.key not in gone]
        rs.ordered = [o for o in rs.ordered if o.seat != victim or o.seq <= cut]
        heapq.heapify(rs.ordered)
        audit_late = rs.audit_seq.get(victim, 0) > cut
        if audit_late:
            # Only the dropped seat itself, or whoever heard it before the cut
            # was agreed, holds it: everyone scores the seat as dropped.
            del rs.audits[victim]
        if (late or audit_late) and rs.results and rs is self.rs and self.phase is Phase.SCORING:
            self._unscore(rs)

    def _unscore(self, rs: RoundState) -> None:
        """Take back a result reckoned before a drop was agreed (it scores again).

        A seat that was silent while the others scored can come back to their
        audits before their votes to drop it, and score itself with its own
        audit, which the others never had. Nothing is closed before every
        live seat's summary, so taking the result back here is still in time.
        """
        assert self.match is not None
        for r in rs.results:
            if not r.void:
                self.match.totals[r.seat] -= r.score
        self.match.rounds -= 1
        rs.results, rs.verdicts = (), ()

    # -------------------------------------------------------------- ending
    def _end_round(self, rs: RoundState, how: str, cutoff: PlayKey | None) -> None:
        rs.end = how
        if cutoff is not None:
            rs.log.set_cutoff(cutoff)
        tab = rs.tab
        if tab is not None:
            for key in sorted(tab.in_flight):
                tab.settle(key, stayed=rs.log.fate(key) is Fate.STAY)
        self.phase = Phase.SCORING
        if rs.me is not None and tab is not None:
            moves = tuple(tab.log)
            self._send(Audit(rs.deck_secret, moves))
        self._maybe_score(rs)

    def _maybe_score(self, rs: RoundState) -> None:
        if rs.end is None or rs.results or not rs.live <= rs.audits.keys():
            return
        assert rs.joint is not None
        results: list[SeatRound] = []
        verdicts: list[str] = []
        caller = rs.call[1] if rs.call else None
        for seat in range(len(rs.keys)):
            up = rs.log.cards_of(seat)
            audit = rs.audits.get(seat)
            if audit is None:
                # Dropped (only a live seat's missing audit keeps the round open):
                # score only what the agreed log shows, the cards it got up. Its
                # Nerts count is known from no agreed entry, so it is not held
                # against it; the count shown is what the log proves at most.
                from_nerts = sum(1 for p in rs.plays_by_seat.get(seat, [])
                                 if p.src == NERTS and rs.log.fate(p.key) is Fate.STAY)
                results.append(SeatRound(seat, up, NERTS_SIZE - from_nerts, up, False))
                verdicts.append("dropped")
                continue
            res = audit_seat(
                seat, deck_secret=audit.deck_secret, deck_commitment=rs.commits[seat].deck,
                joint=rs.joint, variants=rs.variants, moves=audit.moves,
                plays=rs.plays_by_seat.get(seat, []), log=rs.log,
                calls=rs.calls_by_seat.get(seat, []), rotations=rs.rotations,
            )
            verdicts.append(res.reason)
            if not res.ok:
                self._flag(rs, seat, res.reason)
                if rs.me is not None:
                    self._send(Verdict(seat, False, res.reason[:200]))
            score = round_score(up, res.nerts_left, rs.variants)
            results.append(SeatRound(seat, up, res.nerts_left, score, caller == seat,
                                     void=not res.ok))
        rs.results = tuple(results)
        rs.verdicts = tuple(verdicts)
        assert self.match is not None
        self.match.add_round(rs.results)
        self.totals.update(zip(rs.keys, self.match.totals, strict=True))
        digest = rs.log.state_hash()
        self._event(ev.RoundOver(rs.number, rs.end, rs.results, tuple(self.match.totals),
                                 digest, rs.verdicts, rs.names))
        if rs.me is not None:
            self._send(Summary(digest, tuple(0 if r.void else r.score for r in rs.results)))
        self._maybe_close(rs)

    def _maybe_close(self, rs: RoundState) -> None:
        if not rs.results or self.phase is not Phase.SCORING:
            return
        if not rs.live <= rs.summaries.keys() and rs.me is not None:
            return
        digest = rs.log.state_hash()
        mine = tuple(0 if r.void else r.score for r in rs.results)
        differ = tuple(s for s, m in sorted(rs.summaries.items())
                       if s in rs.live and (m.digest != digest or m.scores != mine))
        if differ:
            # Nothing to fetch: a round entry counts only once every live seat
            # holds it, so the seats scored the same entries, and a different
            # summary is a faulty or lying peer. Say so; there is no repair.
            self._event(ev.Divergence(rs.number, differ))
        else:
            self._event(ev.RoundAgreed(rs.number))
        assert self.match is not None
        winner = self.match.winner()
        if winner is not None:
            self.phase = Phase.OVER
            label = team_names(rs.names, rs.variants)[winner]
            self._event(ev.GameOver(label, tuple(self.match.totals)))
        else:
            self.phase = Phase.BETWEEN
            if self.is_host and self.auto_next is not None:
                self.next_round_at = self.now + self.auto_next
        # The host's SETTINGS and ROSTER for the next round may have waited for
        # this close: deliver whatever was held back.
        self._drain_all()
        if self.is_host:
            self._reseat(rs)

    def _reseat(self, rs: RoundState) -> None:
        """Host, as a round closes: the dropped leave, those waiting sit down.

        A seat dropped this round leaves the table, or every later round
        would wait for it again, unless it has asked back meanwhile; it keeps
        its total either way. One ROSTER says both.
        """
        gone = {rs.keys[s] for s in range(len(rs.keys)) if s not in rs.live} - {self.host_key}
        gone -= self.waiting.keys()
        seats = {s.key: s for s in self.seats if s.key not in gone}
        for key, name in self.waiting.items():
            if key not in seats and len(seats) < self.max_seats:
                seats[key] = Seat(key, name)
        self.waiting.clear()
        if seats.keys() != self.seated:
            newcomers = seats.keys() - set(rs.keys)
            self._send(Roster(tuple(seats.values())))
            self.sitting_down = dict.fromkeys(newcomers, self.seq)

    # -------------------------------------------------------------- misc
    def _send_view(self, rs: RoundState) -> None:
        tab = rs.tab
        if tab is None or rs.end is not None or self.now - rs.view_sent_at < VIEW_INTERVAL:
            return
        mark = (len(tab.log), len(tab.in_flight))
        if mark == rs.view_mark:
            return
        rs.view_mark = mark
        rs.view_sent_at = self.now
        self._send(view_of(tab))

    def _flag(self, rs: RoundState, seat: int, reason: str) -> None:
        if seat not in rs.flagged:
            rs.flagged[seat] = reason
            self._event(ev.Flagged(seat, rs.names[seat], reason))

    def _flag_key(self, key: bytes, reason: str) -> None:
        rs = self.rs
        seat = rs.seat_of(key) if rs else None
        if rs is not None and seat is not None:
            self._flag(rs, seat, reason)


def view_of(tab: Tableau) -> View:
    """The public part of a tableau, as another player would see it across the table."""
    return View(
        nerts=len(tab.nerts), top=tab.nerts[-1] if tab.nerts else None,
        work=tuple(tuple(p) for p in tab.work), waste=tab.top(WASTE),
        stock=len(tab.stock),
    )


def clocks_problem(countdown: float, drop_after: float) -> str | None:
    """Why every peer would refuse these clocks in a SETTINGS, or None if it would not."""
    if not 0 <= countdown <= MAX_COUNTDOWN_MS / 1000:  # NaN too
        return f"the countdown must be 0..{MAX_COUNTDOWN_MS / 1000:g} seconds"
    if not MIN_DROP_AFTER_MS / 1000 <= drop_after <= MAX_DROP_AFTER_MS / 1000:
        return (f"a silent seat must be dropped after {MIN_DROP_AFTER_MS / 1000:g}.."
                f"{MAX_DROP_AFTER_MS / 1000:g} seconds")
    return None


def _settings_of(v: Variants, countdown: float, drop_after: float) -> Settings:
    """SETTINGS for these rules and clocks; seconds go as whole milliseconds, so that
    every peer, the host too, plays by the very number on the wire."""
    return Settings(stock_turn=v.stock_turn, strict_ties=v.strict_ties, penalty=v.penalty,
                    target=v.target, jokers=v.jokers, teams=v.teams, lone_rotate=v.lone_rotate,
                    countdown_ms=round(countdown * 1000), drop_after_ms=round(drop_after * 1000))


def _senior(rs: RoundState, host_key: bytes) -> int:
    """The live seat that stays when the last two lose each other: the host's, else the lower."""
    host = rs.seat_of(host_key)
    return host if host is not None and host in rs.live else min(rs.live)


def _author_of(raw: bytes) -> bytes:
    """The author key of a journaled entry, read without checking it again."""
    return raw[len(MAGIC):len(MAGIC) + PUBLIC_KEY_LEN]


def _index(seats: tuple[Seat, ...], key: bytes) -> int | None:
    for i, seat in enumerate(seats):
        if seat.key == key:
            return i
    return None


__all__ = ["CommandError", "Outbound", "Phase", "Replica", "RoundState", "Send", "view_of"]
