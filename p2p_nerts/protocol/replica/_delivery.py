"""Delivery: an entry taken in, delivered in its author's sequence to the round
or the lobby, and the round's entries acted on once the total order reaches
them.

Each call carries out what it decides as it goes (``carry``, the facade's),
so a decision further down reads the table as the ones before it left it: an
entry that begins a round changes whether the next one held from its author
can be delivered. What an entry makes due next is taken at once, by a direct
call into ``Steps``. What is found invalid as it is carried out (a cheat
flagged, a GO on another deal) raises ``EnvelopeError`` up to here, where the
entry it came from is refused and delivery goes on with the next.

On the path every received play takes, what is carried out is the record to
journal and the play's event themselves (``PlayAdded``, and ``PlayFinal`` once
the order reaches it): nothing is allocated around them. ``Delivery`` keeps
no state of its own, only the owners it reads and changes (the chains, the
seating, my clock and outbox, the order, the heartbeats), as ``Ephemera``
does, and reads the table's round and phase as they stand (``Game``) and the
time of the call (``Live``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from .. import events as ev
from ..authors import AuthorLog
from ..clock import LamportClock
from ..envelope import Entry, EnvelopeError
from ..journal import Kind, Record
from ..messages import MsgType, Payload, parse_payload
from . import _heartbeats as heartbeats
from . import _intake as intake
from . import _liveness as liveness
from . import _rounds as rounds
from ._base import ORDERED_TYPES, ROUND_TYPES
from ._effects import Counted, Effect, Sign
from ._ephemera import Ephemera
from ._forks import Forks
from ._game import Game
from ._heartbeats import Heartbeats
from ._order import Finality, play_turn
from ._outbox import Outbox
from ._recovery import Recovery
from ._seating import Seating
from ._steps import Live, Steps

# Read for every play, as a Final constant: on Python 3.11 a member read off its
# enum class goes through the metaclass.
_PLAY: Final = MsgType.PLAY

#: Ordered entries other than a play: one in may make everyone due my marks at
#: once (``heartbeats.at_once``, ``Heartbeats.soon``).
_SAID: Final = ORDERED_TYPES - {MsgType.PLAY}

#: What delivering carries out: effects, and on a play's path its events themselves.
Outcome = Effect | ev.PlayAdded | ev.PlayFinal


class Delivery:
    """Where one table's replica takes in an entry and delivers it: the parts of the
    table that never change (its id, the host's key and mine) and the owners it
    reads and changes."""

    def __init__(self, table_id: bytes, me: bytes, host_key: bytes, *, game: Game, live: Live,
                 clock: LamportClock, outbox: Outbox, places: intake.Places, seating: Seating,
                 forks: Forks, recovery: Recovery, order: Finality, beats: Heartbeats,
                 ephemera: Ephemera, steps: Steps, carry: Callable[[Outcome], None]) -> None:
        self.table_id = table_id
        self.me = me
        self.host_key = host_key
        self.is_host = me == host_key
        self.game = game
        self.live = live
        self.clock = clock
        self.outbox = outbox
        self.places = places
        self.seating = seating
        self.forks = forks
        self.recovery = recovery
        self.order = order
        self.beats = beats
        self.ephemera = ephemera
        self.steps = steps
        self.carry = carry

    def holds_place(self, key: bytes) -> bool:
        """Whether ``key`` has a place at this table now (``Seating.holds_place``)."""
        return self.seating.holds_place(key, self.game.rs)

    def chain(self, key: bytes) -> AuthorLog | None:
        """``key``'s chain, begun if new (``Places.chain``); None: no room."""
        return self.places.chain(key, self.holds_place)

    # ------------------------------------------------------------ arriving
    def accept(self, entry: Entry, payload: Payload) -> None:
        """An entry opened from the wire: acted on at once if it takes no number
        (``Ephemera``), else journaled and delivered in its author's sequence."""
        author, rs, recovery = entry.author, self.game.rs, self.recovery
        placed = self.seating.holds_place(author, rs)  # (my own key always is)
        if placed and recovery.catching_up:
            recovery.hear(author)  # (the live seats it waits for have a place)
        arrival = self.places.arrival(entry, placed=placed, me=self.me, my_seq=self.outbox.seq,
                                      is_host=self.is_host, seated=self.seating.seated)
        if arrival is not intake.SEQUENCED:
            if arrival is intake.ASK_AGAIN:
                self.places.claim(author, entry.seq, self.holds_place)
                return
            if arrival is intake.ACK:
                self.carry(Record(Kind.ENTRY, entry.raw) if entry.signed
                           else Record(Kind.LINK, author + entry.raw))
            said = self.ephemera.take(entry, payload, self.chain(author), self.game.rs,
                                      self.live.now)
            if said:  # (an ACK, nearly always: it says nothing more to carry out)
                self.steps.apply(said)
            return
        log = self.chain(author)
        if log is None:
            raise EnvelopeError("too_many_authors")
        if intake.offer(log, entry, player=self.places.player(author, placed)) == "duplicate":
            self.carry(Counted("duplicate"))
            return
        self.carry(Record(Kind.ENTRY, entry.raw))
        self.drain(log, (entry, payload))

    def own(self, entry: Entry, payload: Payload) -> None:
        """An entry of mine, delivered to myself: signed here, or from the journal
        being replayed (unless delivered already)."""
        log = self.chain(self.me)
        assert log is not None
        if log.offer(entry) != "duplicate":
            self.deliver(entry, payload, log)

    def drain(self, log: AuthorLog,
              parsed: tuple[Entry, Payload] | None = None) -> None:
        """Deliver this author's held entries in sequence while they are deliverable.

        ``parsed`` is the entry just accepted and its payload, parsed already
        (to judge it before journaling): the common case, one entry that is
        next in its author's sequence, does not parse it twice.
        """
        game = self.game
        while log.held and (entry := intake.next_held(log, game.rs, game.phase)) is not None:
            if isinstance(entry, intake.Stop):
                self.steps.stopped(log, entry)
                break
            payload = (parsed[1] if parsed is not None and parsed[0] is entry
                       else parse_payload(entry.type, entry.payload))
            try:
                self.deliver(entry, payload, log)
            except EnvelopeError as exc:
                self.steps.refused(entry.author, exc.reason)
        rs = game.rs
        if (rs is not None and (rs.early_marks or rs.pending_marks)
                and (leads := liveness.drained(rs, log, self.places.authors))):
            self.steps.apply(self.forks.follow(rs, leads, self.live.now))
        if asks := self.missing():
            self.steps.apply(asks)

    def deliver(self, entry: Entry, payload: Payload, log: AuthorLog) -> None:
        """``entry``, next in ``log``, delivered: to the round, or to the lobby."""
        log.mark_delivered(entry)
        if entry.author == self.me:
            # Signed here, or (back from a journal that was behind) fetched from the table.
            self.outbox.took(entry)
        else:
            liveness.observe(self.clock, entry, self.seating.seated)
            self.places.hear(entry.author, self.live.now)
        if entry.type in ROUND_TYPES:
            self.round_entry(entry, payload)
        else:
            self.steps.lobby_entry(entry, payload)

    def missing(self) -> list[Sign]:
        """My RESENDs for the gaps in the chains, each once it is due (``Resends.gaps``;
        my own chain's only once I know where it ends)."""
        mine = self.me if self.recovery.resume is None else None
        return [Sign(ask) for ask in self.places.resends.gaps(self.places.authors, self.live.now,
                                                              mine, self.forks.proven)]

    # ---------------------------------------------------------------- round
    def round_entry(self, entry: Entry, payload: Payload) -> None:
        """A round entry delivered: taken into the round (``rounds.take``), and what it
        makes due (``Steps.after``)."""
        rs = self.game.rs
        assert rs is not None
        seat = rounds.seat_for(rs, entry)
        if rs.drop_queue:
            # This entry may be what makes a vote ordered before it due (its
            # author's time has moved on): count those first, so that whatever
            # this entry completes (the last AUDIT, say) is judged with the same
            # live seats everywhere.
            self.steps.count_votes(rs, before=(entry.lamport, seat))
        step = rounds.take(rs, seat, entry, payload, table_id=self.table_id,
                           host_key=self.host_key)
        if isinstance(step, rounds.Added):  # the common case: its event is what comes out
            self.carry(step)
            if not step.mine:
                # At once and straight to its author, whose play is then final
                # about one round trip later; and to the authors of the plays
                # it lands before on its pile (Heartbeats.owe). Everyone else
                # learns how far I am from my heartbeats, so a play costs N-1
                # acks, not (N-1)^2 (and at a busy table these acks are most
                # of the heartbeats).
                self.beats.owe(rs, step.play)
                if heartbeats.decides(rs, step.play):
                    self.beats.soon()
            return
        if entry.type in _SAID and heartbeats.at_once(rs, entry.type):
            # Its turn comes once every live seat holds it, and what the table
            # decides waits for it (a rotation, the round's end, a drop, a
            # score): say how far I hold at the next tick, to everyone, not at
            # the next heartbeat.
            self.beats.soon()
        if step is not rounds.Look.NOTHING:
            self.steps.after(rs, step)

    def advance(self) -> None:
        """Act on round entries that became final, in (Lamport, seat) order
        (``Finality.next_turn``: each turn done before the next is looked at)."""
        rs = self.game.rs
        if rs is None:
            return
        if rs.drop_queue:
            self.steps.count_votes(rs)
        order, steps = self.order, self.steps
        while (item := order.next_turn(rs)) is not None:
            if item.kind != _PLAY:
                steps.turn(rs, item)
            elif (told := play_turn(rs, item)) is not None:
                self.carry(told)
        for settled in order.settle_early(rs):
            self.carry(settled)
