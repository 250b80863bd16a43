"""The table replica: one peer's copy of a table, as a pure state machine.

Bytes from the wire and local commands go in, with the current time passed
in; bytes to send and events for the user come out. No sockets, no clock
reads, no threads (h11's shape), so every distributed property can be tested
in memory by wiring replicas together. ``Replica`` is the facade over the
package's sub-machines: it carries out what they decide at the I/O edge, the
only place that signs, delivers to itself, journals, emits events and sets
the phase. The life of a round and the module map are in
``docs/PROTOCOL.md`` ("Replica state machine").
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any, assert_never

from ...game.scoring import Match
from ...game.variants import Variants
from .. import events as ev
from .. import messages as msg
from ..authors import MAX_HELD, MAX_HELD_BYTES, Equivocation
from ..clock import LamportClock
from ..envelope import Entry, EnvelopeError
from ..identity import Identity
from ..journal import Record, boot_record, written_in
from . import _catchup as catchup
from . import _commands as cmd
from . import _drops as drops
from . import _effects as fx
from . import _heartbeats as heartbeats
from . import _intake as intake
from . import _liveness as liveness
from . import _lobby as lobby
from . import _recovery as recovery
from . import _shuffle as shuffle
from ._base import (
    BETWEEN_ROUNDS,
    COUNTDOWN,
    DEAL_WITH,
    DROP_AFTER,
    DUE_HAIR,
    IN_ROUND,
    RESUME_POLL,
    Outbound,
    Phase,
    Send,
    rules_of,
)
from ._delivery import Delivery, Outcome
from ._ephemera import Ephemera
from ._forks import Forks
from ._game import Game
from ._heartbeats import Heartbeats
from ._order import Finality
from ._outbox import Outbox
from ._recovery import Recovery
from ._seating import Seating
from ._state import RoundState
from ._steps import Steps
from ._view import TableView

if TYPE_CHECKING:
    from _typeshed import IdentityFunction

try:  # comes with mypy, which compiles this module (scripts/compile_engine.py)
    from mypy_extensions import mypyc_attr
except ImportError:  # not compiled, then: the decorator would only say how to compile
    def mypyc_attr(*attrs: str, **kwattrs: object) -> IdentityFunction:
        return lambda cls: cls


#: Compiled, it stays open to subclasses in Python: the hostile replicas of the
#: tests override its methods, and compiled code calls their overrides.
@mypyc_attr(allow_interpreted_subclasses=True)
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
        max_held: tuple[int, int] = (MAX_HELD, MAX_HELD_BYTES),
        players: Iterable[bytes] = (),
        seat_only: Collection[bytes] | None = None,
        deal_by: float | None = None,
        deal_with: int = DEAL_WITH,
        boot: bytes | None = None,
    ) -> None:
        self.me = identity
        self.table_id = table_id
        self.host_key = host_key
        self.is_host = identity.public_key == host_key
        self.seating = Seating(identity.public_key, host_key, variants=variants or Variants(),
                               countdown=countdown, drop_after=drop_after, auto_start=auto_start,
                               auto_next=auto_next, max_seats=max_seats,
                               seat_only=seat_only, deal_by=deal_by, deal_with=deal_with)
        self.clock = LamportClock()
        self._outbox = Outbox(identity, table_id, self.clock)
        self._places = intake.Places(max_held)  # early entries held per author, and bytes
        # Heard as players though no place of theirs is known yet: the authors of
        # a game record that a seat-less replica reads from its start (their
        # JOINs come before the ROSTER that seats them).
        self._places.admit(players)
        #: The author logs and when each was last heard, kept by ``Places``.
        self.authors = self._places.authors
        self.last_heard = self._places.last_heard
        #: The game as it stands (its phase, round, match and totals), which its
        #: owner changes; and the time of the call under way (``Live``).
        self.game = Game()
        self.now = 0.0
        self.rejected: Counter[str] = Counter()
        #: A spectator's replica: it checks and follows every entry but signs
        #: nothing the table waits for (it never asks for a seat, never acks).
        self.watching = False
        #: Whether any peer draws the tableaux (the shell says, as they link): if
        #: none does, no VIEW is built (see ``liveness.view_due``).
        self.drawn = True
        self._out = Outbound()
        if boot is not None:  # the machine's, when the shell can tell: the journal names it
            self._out.journal.append(boot_record(boot))  # first (``journal.written_in``)
        #: A command ran since the last tick: the next is due at once (``next_due``).
        self._commanded = False
        self._beats = Heartbeats()
        self._recovery = Recovery()
        self._forks = Forks()
        self._order = Finality(self.authors, self.clock, lambda: self._recovery.resume is not None)
        self._pruning = catchup.Pruning()  # finished rounds forgotten, and the snapshot
        self._steps = Steps(table_id, identity.public_key, is_host=self.is_host, rng=rng,
                            seating=self.seating, forks=self._forks, recovery=self._recovery,
                            pruning=self._pruning, places=self._places, outbox=self._outbox,
                            order=self._order, game=self.game, live=self,
                            apply=self._apply, drain=self._drain_all)
        self._ephemera = Ephemera(identity.public_key, host_key, is_host=self.is_host,
                                  clock=self.clock, places=self._places, seating=self.seating,
                                  forks=self._forks, recovery=self._recovery,
                                  pruning=self._pruning, beats=self._beats, steps=self._steps,
                                  signed=self._signed)
        self._moves = cmd.Moves(identity.name, host_key, self.clock, self._recovery)
        self._delivery = Delivery(table_id, identity.public_key, host_key, game=self.game,
                                  live=self, clock=self.clock, outbox=self._outbox,
                                  places=self._places, seating=self.seating, forks=self._forks,
                                  recovery=self._recovery, order=self._order, beats=self._beats,
                                  ephemera=self._ephemera, steps=self._steps,
                                  carry=self._settle)

    @classmethod
    def restore(cls, identity: Identity, table_id: bytes, host_key: bytes,
                records: Iterable[Record], now: float, **options: Any) -> Replica:
        """Rebuild a replica from its journal after a crash: same round, same tableau.

        Replays the journal through the same code paths as live play, with
        signing and sending switched off: where live play signed an entry,
        the replay takes that entry from the journal and delivers it on the
        spot, in the middle of whatever it was doing, exactly as it was then.
        With ``boot`` (the machine's, as for a new replica), a journal written
        in another boot may have lost its last batch: the seat then hears every
        peer before it signs again (``resume.py``).
        """
        me = identity.public_key
        records = recovery.unsent_cut(list(records), me)
        r = cls(identity, table_id, host_key, **options)
        r.now = now
        start = r._recovery.load(records, me)
        if start is not None:
            r._steps.take_up(start, rules_of(start.settings))
        for rec in records:
            replayed = r._recovery.replay(rec, r.rs, me, r._outbox.seq)
            if isinstance(replayed, Entry):
                payload = msg.parse_payload(replayed.type, replayed.payload)
                r._delivery.own(replayed, payload)
            elif replayed is not None:
                r._receive_one(*replayed)
            r._delivery.advance()
        boot: bytes | None = options.get("boot")
        said = r._recovery.replayed(
            r.rs, r.phase, table=(*r.seating.seated, host_key), me=me, now=now,
            seq=r._outbox.seq,
            rebooted=None if boot is None or written_in(records, boot) else boot)
        r._out = Outbound()
        r._apply(said)
        return r

    # =================================================================== API
    def handle(self, command: cmd.Command, now: float) -> Outbound:
        """A local command at ``now``: what it produced.

        Raises :class:`CommandError` (or ``IllegalMove`` for a card that does
        not go there) when the table's state does not allow it; then nothing
        changed.
        """
        self.now = now
        self._apply_own()
        match command:
            case cmd.Open() if self.is_host:  # the host seats itself: the lobby's
                effects = lobby.seat_host(self._table, self.me.name)
            case cmd.Open():
                effects = self._moves.open(self._outbox.seq, now)
            case cmd.Move() | cmd.Turn() | cmd.RotateAlone() | cmd.VoteStuck() | cmd.CallNerts():
                effects = self._moves.decide(command, self.rs, self.phase, watching=self.watching,
                                             drawn=self.drawn, now=now)
            case _:
                decided = lobby.command(self._table, command, watching=self.watching)
                if isinstance(decided, lobby.Left):  # a seat lost: the lists, then its ROSTER
                    self._steps.lobbied(decided)
                    effects = []
                else:
                    effects = decided
        self._apply(effects)
        self._commanded = True
        return self._flush()

    def apply_own(self, now: float) -> Outbound:
        """Deliver to myself the play that :meth:`handle` just returned signed.

        The shell calls it right after sending what ``handle`` returned; had it
        not, the next call into the replica would do it first. It also takes in
        what the command made deliverable, as the tick a command makes due does
        (``_commanded``), so no tick is due for it: a bot's every move otherwise
        woke its shell once more for a tick that nearly always did nothing.
        """
        self.now = now
        self._apply_own()
        self._resumed()
        self._delivery.advance()
        self._commanded = False
        return self._flush()

    def _apply_own(self) -> None:
        signed = self._outbox.take_unapplied()
        if signed is not None:
            self._delivery.own(*signed)

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
        self._apply_own()
        owed = self._beats.owed
        owed.clear()
        for raw, via in frames:
            self._receive_one(raw, via)
            # After each frame, as Replica.restore does after each journal
            # record: when my own plays settle, against my next moves and the
            # rotations, must not depend on how frames happened to be batched.
            self._delivery.advance()
        self._resumed()
        for author in sorted(owed) if not self.watching else ():
            # My ACK straight to each (Ephemera.ack): it changes nothing of the table,
            # so nothing more can become final.
            self._sign(self._ephemera.ack(self.rs, self.prev_rs, author, now), to=author)
        return self._flush()

    def _receive_one(self, raw: bytes, via: bytes | None) -> None:
        try:
            entry, payload = intake.open_frame(raw, via, self.table_id, self.clock.time)
            self._delivery.accept(entry, payload)
        # One name for each exception: compiled, a name has one type in a function.
        except EnvelopeError as bad:
            self._reject(bad.reason)
        except Equivocation as fork:
            self._reject("equivocation")
            self._steps.conflicted(fork.known, fork.entry, via)
        except Exception as exc:  # noqa: BLE001 - nothing from the wire may crash a peer
            self._reject(f"internal_error:{type(exc).__name__}")

    def tick(self, now: float) -> Outbound:
        """Time passes: heartbeats, views, countdowns, resends, silent peers."""
        self.now = now
        self._commanded = False
        self._apply_own()
        rs = self.rs
        if self.is_host and self.phase in BETWEEN_ROUNDS:
            self._apply(self.seating.auto_deal(self._table, now))
        if self._outbox.seq:  # in every phase: it is how a lost entry is noticed
            self._apply(self._ephemera.beat(self.rs, self.prev_rs, now, self._beat_every()))
        if rs is not None and self.phase in IN_ROUND:
            self._apply(shuffle.start_due(rs, now))
            if (view := liveness.view_due(rs, now, drawn=self.drawn)) is not None:
                self._send(view)
            # Vote out the seats silent (or withholding the round's end) to me;
            # take the vote back from one heard again.
            self._apply(drops.silent_votes(rs, self.last_heard, now, self.seating.drop_after,
                                           self.authors))
        self._apply(self._delivery.missing())
        self._resumed()
        self._delivery.advance()
        return self._flush()

    def next_due(self) -> float:
        """When this replica next needs :meth:`tick` (aioquic's ``get_timer``), on the
        clock its shell passes in: no later than the first time a tick would do
        anything, ``now`` (or before) if one would now, inf if only a call can
        (a frame, a command). A tick before it does nothing; reading it changes
        nothing. Each owner says its own: the host's deal, my heartbeat, the
        round's start, my view, my votes on silent seats, my asks for gaps."""
        now, rs, phase = self.now, self.rs, self.phase
        if self._outbox.unapplied is not None or self._commanded:
            return now  # what a command made deliverable is taken in by the next tick
        first = self._places.resends.next_due(
            now, self.me.public_key if self._recovery.resume is None else None,
            self.authors, self._forks.proven)
        if self._recovery.resume is not None:
            first = min(first, now + RESUME_POLL)  # how far the table holds my chain
        if self.is_host and phase in BETWEEN_ROUNDS:
            first = min(first, self.seating.next_auto_deal(self._table, now))
        if self._outbox.seq:
            first = min(first, self._beats.next_due(self._beat_every()))
        if rs is not None and phase in IN_ROUND:
            if rs.play_from is not None and not rs.started:
                first = min(first, rs.play_from)
            first = min(first, liveness.next_view(rs, drawn=self.drawn),
                        drops.next_vote(rs, self.last_heard, now, self.seating.drop_after))
        # A hair past the bound: each owner's test is "since + interval <= now" or
        # a strict ">" (silence), and at the bound itself rounding can say no.
        return first if first <= now else first + DUE_HAIR

    def _beat_every(self) -> float:
        """How often my marks are due to each peer now (``heartbeats.every``)."""
        return heartbeats.every(self.phase, self.rs, self.seating.drop_after)

    # -------------------------------------------------------------- reading
    @property
    def phase(self) -> Phase:
        """The table's phase (``Game``'s)."""
        return self.game.phase

    @property
    def rs(self) -> RoundState | None:
        """The round under way, or last played (``Game``'s)."""
        return self.game.rs

    @property
    def prev_rs(self) -> RoundState | None:
        """The round before ``rs`` (``Game``'s)."""
        return self.game.prev_rs

    @property
    def match(self) -> Match | None:
        """The game's match (``Game``'s)."""
        return self.game.match

    @property
    def game_goes_on(self) -> bool:
        """A round of the game was dealt and the game is not over: what ``--resume``
        goes on with."""
        return self.game.rs is not None and self.game.phase is not Phase.OVER

    @property
    def totals(self) -> dict[bytes, int]:
        """Running totals by player key (``Game``'s)."""
        return self.game.totals

    def view(self) -> TableView:
        """This table as a front end reads it: read-only (see ``_view``)."""
        return TableView(self, seating=self.seating, outbox=self._outbox, places=self._places,
                         forks=self._forks)

    # ============================================================ internals
    def _flush(self) -> Outbound:
        out, self._out = self._out, Outbound()
        return out

    def _event(self, event: ev.Event) -> None:
        self._out.events.append(event)

    def _apply(self, effects: Iterable[Outcome]) -> None:
        """Carry out what a sub-machine decided (:meth:`_settle`), in its order; what
        fails in carrying one out is raised here, and nothing after it is done."""
        for effect in effects:
            self._settle(effect)

    def _settle(self, effect: Outcome) -> None:
        """Carry out one effect at the I/O edge: the one place that does."""
        match effect:
            case ev.PlayAdded() | ev.PlayFinal():  # a received play's path: first
                self._out.events.append(effect)
            case Record():  # write-ahead: journaled before the sends go out
                self._record(effect)
            case fx.Sign(payload=payload, to=to, round_no=round_no, expect_lamport=lamport,
                         unapplied=unapplied):
                if unapplied:  # sent now, applied to myself on the next call (apply_own)
                    self._outbox.hold(self._sign(payload, round_no=round_no, to=to,
                                                 expect_lamport=lamport))
                else:
                    self._send(payload, round_no=round_no, to=to, expect_lamport=lamport)
            case fx.Emit(event=event):
                self._event(event)
            case fx.SetPhase(phase=phase):
                self.game.enter(phase)
            case fx.Reject(reason=reason):
                self._reject(reason)
            case fx.Counted(reason=reason):
                self.rejected[reason] += 1
            case fx.Resent(asker=asker, frames=frames):
                self._out.sends += [Send(frame, asker) for frame in frames]
            case fx.SignAck(ack=ack, to=to, besides=besides):
                self._sign(ack, to=to, besides=besides)  # ephemeral: nothing to deliver
            case _:
                assert_never(effect)

    def _drain_all(self) -> None:
        """Deliver what every author has held back: what may be delivered just changed
        (a round begun, the deal that plays which overtook the last REVEAL wait
        for, a round closed that the host's next ROSTER waited for)."""
        for chain in list(self.authors.values()):
            self._delivery.drain(chain)

    def _reject(self, reason: str) -> None:
        self.rejected[reason] += 1
        self._event(ev.Rejected(reason))

    def blocked(self) -> str | None:
        """Why my moves are refused right now (``Moves.blocked``), or None if I may move."""
        return self._moves.blocked(self.rs, self.phase, self.watching)

    def _send(self, payload: msg.Payload, *, round_no: int | None = None, to: bytes | None = None,
              expect_lamport: int | None = None) -> None:
        """Sign and queue one of my entries; sequenced ones are delivered to myself too."""
        signed = self._sign(payload, round_no=round_no, to=to, expect_lamport=expect_lamport)
        if signed is not None:
            self._delivery.own(*signed)

    def _sign(self, payload: msg.Payload, *, round_no: int | None = None, to: bytes | None = None,
              expect_lamport: int | None = None,
              besides: frozenset[bytes] = frozenset()) -> tuple[Entry, msg.Payload] | None:
        """Sign and queue one of my entries (``Outbox.sign``); what to deliver to
        myself is returned, for ``Delivery.own``."""
        return self._outbox.sign(self._out, payload, self.rs, self.authors.get(self.me.public_key),
                                 self._recovery, round_no=round_no, to=to,
                                 expect_lamport=expect_lamport, besides=besides)

    def _signed(self, payload: msg.Payload | None, to: bytes) -> bytes | None:
        """An ephemeral entry of mine signed for ``to`` and handed back rather than
        queued (None: no payload, or nothing signed now): a RESEND's answer sends
        the host's snapshot only within the asker's budget (``Ephemera.answer``)."""
        sends = self._out.sends
        queued = len(sends)
        if payload is not None:
            self._send(payload, to=to)
        return sends.pop().data if len(sends) > queued else None

    def _record(self, record: Record) -> None:
        if not self._recovery.restoring:
            self._out.journal.append(record)

    # -------------------------------------------------------------- resuming
    def _resumed(self) -> None:
        """Sign again once the table has told us where our chain ends
        (``Recovery.going_on``), and stop catching up once the table is heard out."""
        if self.rs is not None:
            self._recovery.heard_out(self.rs, self.authors)
        plan = self._recovery.going_on(self.now, self.authors.get(self.me.public_key),
                                       self.rs, self.phase)
        if plan is None:
            return
        began = self.rs
        self._apply(plan.said())
        done: set[tuple[int, msg.Payload]] = set()
        for d in plan.deferred:
            if recovery.due(d, began, self.rs, done):
                self._send(d.payload, round_no=d.round_no, to=d.to)

    # ---------------------------------------------------------------- lobby
    @property
    def _table(self) -> lobby.Table:
        """The table as the lobby reads it, now (``Steps.table``)."""
        return self._steps.table(self.rs, self.phase)

    @property
    def table(self) -> lobby.Table:
        """The table as the lobby reads it, now: what a view counts the seats from."""
        return self._table


__all__ = ["Replica"]
