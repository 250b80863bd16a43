"""The network shell of a seat: bytes in -> replica -> journal -> send, then events out.

:class:`NetShell` is the imperative shell around the pure replica: bytes
from the mesh go into ``replica.receive_batch`` (all that arrived in one turn
of the event loop together), the replica is ticked when it says it needs
time (``next_due``), and whatever comes out is journaled (with a
:class:`~p2p_nerts.store.Store`, before anything is sent) and sent at once
(``Send(to=None)`` to every connected peer, ``Send(to=key)`` to that peer if
connected, else dropped -- the replica's ACK and RESEND machinery recovers it).
The listeners hear the events last, once the batch is out (:meth:`NetShell._route`).

The policies beside the routing are small objects the shell owns, tells of
each link that comes up or goes and each event, and asks: who may keep a
link (:class:`~p2p_nerts.peer.admission.Admission`), the mDNS ad
(:class:`~p2p_nerts.peer.announce.TableAnnouncer`), asking for a seat again
(:class:`~p2p_nerts.peer.seatback.SeatBack`), a spectator's asking to watch
(:class:`~p2p_nerts.peer.spectator.Spectator`) and the game's record for the
history (:class:`~p2p_nerts.peer.keeping.GameKeeping`). Those that act do
so through :meth:`NetShell._command`, one routed batch at a time.
How a seat comes to be -- hosting, joining, watching, resuming -- is
:class:`~p2p_nerts.peer.node.NetSession`'s, built on this class.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator

from ..net.mesh import Mesh
from ..net.wire import Info
from ..protocol import events as ev
from ..protocol.botdriver import BotDriver
from ..protocol.identity import Identity
from ..protocol.journal import Record
from ..protocol.replica import (
    Command,
    LeaveTable,
    Outbound,
    Phase,
    Replica,
    Send,
    TableView,
    compacts,
)
from ..session import Listener
from ..store import Store
from .admission import Admission
from .alarm import Alarm
from .announce import TableAnnouncer
from .config import TableConfig
from .journaling import HeldWrites
from .keeping import GameKeeping
from .seatback import SeatBack
from .spectator import Spectator

__all__ = ["NetShell"]

_log = logging.getLogger(__name__)

_MAX_BACKLOG = 10_000


def _give_way() -> None:
    """Let another process that is ready to run have this CPU first (at once if none is).

    Several peers on one machine (a loopback table, the lab, the benchmark: 8
    peers on 2 cores) all wake for each play, and each one's share of the CPU
    delays the next. A peer gives way where what it has left is its own
    bookkeeping: the author once its frames are out (before its listeners), a
    receiver once its listeners have the play. Those still waiting to see the
    play then see it first.
    Alone on a machine, it is one system call (none on Windows, which has no
    ``sched_yield``).
    """
    if sys.platform != "win32":
        os.sched_yield()


class NetShell:
    """The routing core of one seat at a networked table (see the module's docstring).

    :class:`~p2p_nerts.peer.node.NetSession` builds one (``host``, ``join``,
    ``watch``, ``resume``); then ``await run()`` keeps it alive until :meth:`close`,
    after which ``run`` says goodbye and returns.
    """

    def __init__(self, identity: Identity, config: TableConfig, *, is_host: bool,
                 store: Store | None = None, keep_entries: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._identity = identity
        self._config = config
        self._clock = clock
        self._replica: Replica | None = None
        #: Its view, kept (a view is live): the mesh asks it about every link it sends to.
        self._kept_view: TableView | None = None
        #: Who may keep a link and hear the table (the mesh asks it of each link).
        self._door = Admission(lambda: self._mesh.links, self._command,
                               lambda: self._closed.is_set(), clock)
        self._mesh = Mesh(identity, self._info, is_host=is_host, code=config.code,
                          on_frames=self._on_frames, on_link=self._on_link,
                          admitted=self._door.admitted, player=self._door.plays_here,
                          limits=config.limits,
                          name_of=lambda key: self._door.name_of(key, self.table_name))
        self._listeners: list[Listener] = []
        # Peers may talk before anyone subscribes (a host advertising, a seat
        # resuming): keep those events for the first listener.
        self._backlog: list[ev.Event] = []
        #: Events routed and not yet told (:meth:`_hand_out`), and whether they are being told.
        self._events: deque[ev.Event] = deque()
        self._handing_out = False
        #: The store, and the writes to it held until a batch is flushed (before it is sent).
        self._disk = HeldWrites(store)
        #: The game, for the history (and its entries, with ``keep_entries``).
        self._keeping = GameKeeping(self._disk.write, keep_entries=keep_entries)
        self._closed = asyncio.Event()
        #: The ticks run() keeps going, as the replica needs them.
        self._alarm = Alarm(self._tick, lambda: self.replica.next_due(), clock)
        self._failure: Exception | None = None  # what stopped the ticks, raised by run()
        self._announcer = TableAnnouncer(clock)  # a host's, on mDNS: started by the factories
        #: Asking for a seat again: our seat back, or one come free at a full table.
        self._seat = SeatBack(self._command, lambda: self._closed.is_set(),
                              wait_for_seat=config.wait_for_seat, clock=clock)
        self._spectator = Spectator(self._command, self.close)  # the policy while watching
        self.table_name = ""
        self.port = 0  # the port we listen on
        #: Whether other seats may fall silent on their own: not where every seat
        #: runs in this process (``nerts solo --loopback``), as at an in-process table.
        self.networked = True
        #: A spectator's session (:meth:`watch`): it never sits down.
        self.watching = False
        self._advertised_port = 0
        #: Where players join the table, "host:port", when this seat hosts it.
        self.address: str | None = None

    # ------------------------------------------------------------ Session
    @property
    def entries(self) -> list[Record] | None:
        """The signed entries this seat journaled, where :meth:`host` was told to keep
        them (``keep_entries``; ``GameKeeping.entries``); else None."""
        return self._keeping.entries

    @property
    def replica(self) -> Replica:
        assert self._replica is not None  # the factories set it
        return self._replica

    @property
    def view(self) -> TableView:
        """The replica's view (``Replica.view``), the one kept for it."""
        assert self._kept_view is not None  # the factories set it, with the replica
        return self._kept_view

    @property
    def connected(self) -> frozenset[bytes]:
        """Keys of the peers we have a link to right now."""
        return frozenset(self._mesh.links)

    @property
    def host_reachable(self) -> bool:
        """True for the host itself, and for a guest while its link to the host is up."""
        r = self.replica
        return r.is_host or r.host_key in self._mesh.links

    def act(self, command: Command) -> None:
        self._route(self.replica.handle(command, self._clock()), own=True)
        self._hand_out()
        self._apply_own()
        self._arm()

    def step_bot(self, driver: BotDriver) -> None:
        """Give a bot at this seat its turn: the commands it sends are this seat's."""
        self._route(driver.step(self._clock()), own=True)
        self._hand_out()
        self._apply_own()
        self._arm()

    def _apply_own(self) -> None:
        """My play went out as soon as it was signed; now I apply it myself (the
        other peers start checking it meanwhile)."""
        self._route(self.replica.apply_own(self._clock()), own=True)
        self._hand_out()

    def _command(self, command: Command) -> None:
        """Run a command of the shell's own, or its policies' (asking for a seat, turning
        a link away, leaving): not the player's, so nothing for :meth:`act` to apply."""
        self._route(self.replica.handle(command, self._clock()))
        self._hand_out()

    def subscribe(self, listener: Listener) -> None:
        """Hear every event from now on; the first listener also hears the backlog."""
        self._listeners.append(listener)
        backlog, self._backlog = self._backlog, []
        for event in backlog:
            self._tell(listener, event)

    async def run(self) -> None:
        """Tick the replica when it says it needs it, and run the shell's own checks
        (see :mod:`~p2p_nerts.peer.alarm`), until :meth:`close`; then say goodbye."""
        self._alarm.start()
        try:
            await self._closed.wait()
        finally:
            self._alarm.stop()
            await self._shutdown()
        if self._failure is not None:
            raise self._failure

    def _tick(self) -> None:
        try:
            r = self.replica
            # Told at each tick, as it is the tick that sends a view: a peer
            # that starts drawing gets one at the next.
            r.drawn = self._mesh.draws()
            self._route(r.tick(self._clock()))
            self._hand_out()
            if r.is_host:
                self._mesh.close_silent(self._door.must_be_heard(), r.seating.drop_after)
            self._seat.check()
            self._announcer.check()
        except Exception as exc:  # noqa: BLE001 - run() raises it, as a loop would have
            self._failure = exc
            self._closed.set()
            return
        self._arm()

    def _arm(self) -> None:
        """Sleep until the replica next needs a tick or the shell's checks are due."""
        if self._replica is not None and not self._closed.is_set():
            self._alarm.arm()

    def close(self) -> None:
        self._closed.set()

    async def wait_closed(self) -> None:
        """Until :meth:`close` (or a failure that ends :meth:`run`)."""
        await self._closed.wait()

    # ------------------------------------------------------------ internals
    def _use(self, replica: Replica) -> None:
        """Play through ``replica``."""
        self._replica = replica
        self._kept_view = replica.view()
        self._door.use(replica, self._kept_view)
        self._seat.use(replica, self._kept_view)

    def _info(self) -> Info:
        return self._door.info(self._identity.name, self.table_name, self._advertised_port,
                               self._config)

    def _route(self, out: Outbound, *, own: bool = False) -> None:
        """Journal, then send, then hand the events out: all frames in one write per peer.

        Nothing leaves the process before the journal holds what it follows
        from (write-ahead: what we acknowledged or signed survives a crash of
        the process), and what this seat made itself is on the disk once it
        has left: one ``fsync`` for the batch (group commit), just after its
        frames where the journal names the machine's boot (a power cut in
        between makes a restored seat wait longer for the peers' word:
        ``protocol/resume.py``), else before them. Once our
        ``own`` frames are out, the seat gives way (:func:`_give_way`): the
        other peers start on our play while our listeners hear of it. The
        listeners hear last: the events wait for
        :meth:`_hand_out`, which every caller calls once this returns, so a
        listener that acts routes its own batch after this one has left, never
        from inside this one. An empty output (most ticks, most ACKs heard) has
        nothing to route.
        """
        if not (out.sends or out.events or out.journal):
            return
        if journal := out.journal:
            self._keeping.journaled(journal)
            self._disk.journal(self.replica.table_id, journal, self._identity.public_key)
        if compacts(out.events) and self._disk.store is not None:  # a break: nothing waits
            table_id = self.replica.table_id
            self._disk.hold(lambda store: store.compact(table_id))
        # A batch that sends and tells nothing (most ACKs heard) leaves its records
        # held for the next one that does (``HeldWrites.flush``).
        self._disk.flush(quiet=not (out.sends or out.events))
        if out.sends:
            self._mesh.send_all(self._frames(out.sends))
            if own:
                _give_way()
        self._disk.sync()
        self._events += out.events

    def _hand_out(self) -> None:
        """Tell the listeners every event routed so far, in order, one event at a time.

        One loop hands them out: the events of a listener that acts join the
        queue behind those still to be told (its frames are out already; its own
        call to this returns at once), so every listener hears every event in the
        order the replica made them.
        """
        if self._handing_out:
            return
        self._handing_out = True
        try:
            while self._events:
                told = self._react(self._events.popleft())
                if told is None:
                    continue
                if not self._listeners and len(self._backlog) < _MAX_BACKLOG:
                    self._backlog.append(told)
                for listener in self._listeners:
                    self._tell(listener, told)
        finally:
            self._handing_out = False

    def _frames(self, sends: list[Send]) -> Iterator[tuple[bytes, bytes | None]]:
        """``(entry, to)`` for the mesh, in order: a VIEW for everyone goes to each
        peer that draws the tableaux, and to no other; a heartbeat to each peer
        but those it leaves out (``Send.besides``)."""
        viewers: list[bytes] | None = None
        for send in sends:
            if send.to is not None or not (send.shown or send.besides):
                yield send.data, send.to
            elif send.shown:
                if viewers is None:
                    viewers = self._mesh.viewers()
                for key in viewers:
                    yield send.data, key
            else:
                for key in self._mesh.hearers():
                    if key not in send.besides:
                        yield send.data, key

    @staticmethod
    def _tell(listener: Listener, event: ev.Event) -> None:
        try:
            listener(event)
        except Exception:  # noqa: BLE001 - one bad listener must not stop the table
            _log.exception("event listener failed on %s", event)

    def _react(self, event: ev.Event) -> ev.Event | None:
        """The policies hear ``event`` before the listeners; return what the listeners
        hear of it (None: nothing: see ``SeatBack.heard``). A host tells the mesh
        (its peers frames) and the ad of the seats as they change."""
        self._door.heard(event)
        self._keeping.heard(event, self.replica, self._disk.store, self.table_name)
        told: ev.Event | None = event
        if self.watching:
            self._spectator.heard(event)
        else:
            _, told = self._seat.heard(event)
        if isinstance(event, ev.RosterChanged) and self._mesh.is_host:
            self._mesh.set_seated(self.view.seated)
            self._announcer.changed()
        return told

    def _on_frames(self, key: bytes, entries: list[bytes]) -> None:
        """The entries of one read from ``key``'s link, handled at once.

        One batch, one ACK for all of it (at 8 peers every play draws an ACK
        from each of the others), and no turn of the event loop between the
        read and the replica: a peer woken by a play is on the critical path
        of every other peer sharing its CPU.
        """
        r, view = self._replica, self._kept_view
        if r is None or view is None:
            return
        watcher = view.watcher(key)
        out = r.receive_batch([(entry, key) for entry in entries], self._clock())
        self._route(out)
        self._hand_out()
        if any(not isinstance(e, ev.Rejected) for e in out.events):
            _give_way()  # shown: the rest is bookkeeping (not for a flood's rejects)
        if r.phase is Phase.OVER:
            # The others' signed results come after the end.
            self._keeping.when_signed(r, self._disk.store, self.table_name)
        link = self._mesh.links.get(key)
        if r.is_host and not watcher and view.watcher(key) and link is not None:
            # Just admitted as a spectator: where the seats listen, so that it
            # links to each (the list went out before it asked).
            self._mesh.announce_to(link)
        self._arm()  # what came in may be due sooner

    @property
    def waiting_for_seat(self) -> bool:
        """Whether we wait at a full table for a seat to come free (``wait_for_seat``)."""
        return self._seat.waiting_for_seat

    def _on_link(self, key: bytes, up: bool) -> None:
        """A link came up or went: the door hears of it, then, once there is a replica,
        the seat's patience or, watching, the spectator's policy."""
        self._door.link_changed(key, up)
        if self._replica is not None:
            (self._spectator if self.watching else self._seat).link_changed(key, up)

    async def _shutdown(self) -> None:
        self._disk.flush()  # what quiet batches left held
        await self._keeping.on_leaving(self._replica, self._disk.store, self.table_name)
        if self.replica.phase is not Phase.OVER and not self.watching:
            # After the game there is nothing to leave, and a GOODBYE then would
            # only start drop votes for a round that is over.
            self._command(LeaveTable())
        await self._announcer.close()
        await self._mesh.close()
