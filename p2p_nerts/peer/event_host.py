"""The organiser's machine at an event: its journal, its server, its ad, its games.

:class:`Organiser` holds the event's book (``event.book``), and journals
everything the book takes before anyone hears of it (``event.journal``), so
``nerts event open --resume`` after a crash brings back every registration,
seating and result. It serves the event to players over TCP
(``event_wire``): a player's signed registration comes in, and every entry
and game record goes out to everyone connected, as the book takes it. It
advertises the event on mDNS (``net.discovery``'s event service) so that
lobbies show it.

The organiser draws each game's seating among the registered players who
are connected when it is asked (:meth:`Organiser.start_game`), signs it, and
ends a game (a ``Finished`` entry) once every table of it has a record, or
when the next game is started without a table's. A record comes from the
players, whenever they are connected: a game played while the organiser was
down counts as soon as a player of it comes back.

Bounds: a connection has ``HELLO_TIME`` seconds to say hello, at most
``MAX_CONNECTIONS`` are open, a player's frame is at most one record, and
records are checked one at a time (each is a game's replay).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..event.book import EventBook
from ..event.entries import (
    MAX_PLAYERS,
    EventError,
    Finished,
    Opened,
    Registered,
    Seated,
    code_check,
    decode,
    encode,
    organiser_secret,
    seed_chain,
)
from ..event.journal import EventJournal
from ..lines import counted
from ..net.discovery import EventAd, EventAdvertiser
from ..net.interfaces import Interfaces, bind_addresses
from ..protocol.identity import Identity, fingerprint_of, verify
from ..records.record import MAX_RECORD
from .event_watch import watch_game
from .event_wire import (
    HELLO_TIME,
    MAX_HELLO,
    NONCE_LEN,
    WireError,
    hello,
    presence,
    read_body,
    read_frame,
    read_length,
    write_frame,
)
from .node import fingerprint_hex

__all__ = ["MAX_CONNECTIONS", "EventSettings", "Organiser", "OrganiserDesk"]

_log = logging.getLogger(__name__)

MAX_CONNECTIONS = MAX_PLAYERS + 64
"""Connections open at once: every player, and a few followers."""
_QUEUE = 4096
"""Frames waiting to go to one connection; past it the connection is closed (the
player comes back and asks from where it was)."""
_EVENT_ID_LEN = 16
_RECORDS_READ = 4
DESERTED_AFTER = 60.0
"""Seconds past a game's turn-up time after which a table never seen, with no result,
is taken for one that never opened (none of its seats came to open it)."""


@dataclass(frozen=True, slots=True)
class EventSettings:
    """How ``nerts event open`` opens a new event."""

    name: str
    games: int = 3
    table_size: int = 4
    target: int = 100
    code: str | None = None
    turn_up: int = 120
    """Seconds a seated player has to sit at their table before it deals without them."""


@dataclass(eq=False)
class _Connection:
    writer: asyncio.StreamWriter
    nonce: bytes = b""
    #: The player whose registration came on this connection, and, once it has
    #: proven it holds that key here (``event_wire.presence``), the player connected.
    claimed: bytes | None = None
    player: bytes | None = None
    queue: asyncio.Queue[dict[str, object] | None] = field(
        default_factory=lambda: asyncio.Queue(_QUEUE))


class Organiser:
    """One event, run from this machine (see the module's docstring)."""

    def __init__(self, identity: Identity, journal: EventJournal, book: EventBook) -> None:
        self.identity = identity
        #: Where the port it served on is noted: it comes back on it after a crash,
        #: where the players keep dialing.
        self._port_file = journal.path.with_name(journal.path.name + ".port")
        self.book = book
        self._journal = journal
        self._connections: set[_Connection] = set()
        self._servers: list[asyncio.Server] = []
        self._advertiser: EventAdvertiser | None = None
        self._listeners: list[Callable[[], None]] = []
        self._checking = asyncio.Lock()  # records are replayed one at a time
        #: Records are read and checked a few at a time: however many players hand
        #: theirs in at once, the records held in memory stay few.
        self._reading = asyncio.Semaphore(_RECORDS_READ)
        self._tasks: set[asyncio.Task[None]] = set()
        self._interfaces: Interfaces | None = None
        #: When the game under way was seated (or this organiser came back), by the
        #: monotonic clock: for :meth:`deserted`.
        self._seated_at: float | None = time.monotonic() if book.games else None
        #: When each table was first seen over with no result (monotonic clock).
        self._over_at: dict[tuple[int, str], float] = {}
        self.port = 0

    # ------------------------------------------------------------ opening
    @classmethod
    def open(cls, identity: Identity, path: Path, settings: EventSettings, *,
             resume: bool) -> Organiser:
        """Open a new event journaled at ``path`` (refused if one is there), or with
        ``resume`` the one journaled there. EventError (one line) otherwise."""
        if not resume and path.exists() and path.stat().st_size > 0:
            raise EventError(f"an event is journaled at {path} already: "
                             "nerts event open --resume goes on with it")
        if resume and not path.exists():
            raise EventError(f"no event is journaled at {path} to resume")
        journal = EventJournal.open(path)
        try:
            book = journal.replay(settings.code)
            if book.opened is None:
                if resume:
                    raise EventError(f"the event journal {path} holds no event")
                event_id = os.urandom(_EVENT_ID_LEN)
                # Every game's seed is committed to now, before anyone registers.
                commit = _seeds(identity, event_id, settings.games)[0]
                opened = Opened(event_id, settings.name, identity.public_key, settings.games,
                                settings.table_size, settings.target,
                                None if settings.code is None
                                else code_check(event_id, settings.code),
                                settings.turn_up, int(time.time()), seed_commit=commit)
                raw = encode(opened, identity)
                book.apply(raw)
                journal.append(raw)
            elif book.opened.organiser != identity.public_key:
                raise EventError(f"the event journaled at {path} was opened by another key")
            elif book.opened.code_check is not None and (
                    settings.code is None
                    or code_check(book.opened.event_id, settings.code) != book.opened.code_check):
                raise EventError("this event has a code: resume it with the same --code")
        except BaseException:
            journal.close()
            raise
        return cls(identity, journal, book)

    @property
    def opened(self) -> Opened:
        assert self.book.opened is not None  # open() made sure
        return self.book.opened

    async def start(self, interfaces: Interfaces | None, *, bind: str = "127.0.0.1",
                    port: int = 0) -> None:
        """Serve the event on ``bind`` (one address or several, comma-separated; ""
        every interface), on ``port`` (0: the one it served on before, else any),
        and with ``interfaces`` advertise it there."""
        asked = port
        if not asked:
            with contextlib.suppress(OSError, ValueError):
                port = int(self._port_file.read_text(encoding="ascii"))
        try:
            await self._listen(bind, port if 0 < port < 65536 else 0)
        except OSError:
            if asked or not port:
                raise
            await self._listen(bind, 0)  # the old port is taken: the ad says the new one
        with contextlib.suppress(OSError):
            self._port_file.write_text(str(self.port), encoding="ascii")
        self._interfaces = interfaces
        self._watch_tables()  # back after a crash: the game under way goes on
        if interfaces is not None:
            self._advertiser = EventAdvertiser(EventAd(
                self.opened.name[:48], fingerprint_hex(self.identity.public_key),
                self.opened.code_check is not None, len(self.book.games), self.opened.games,
                self.port), interfaces)
            await self._advertiser.start()

    async def _listen(self, bind: str, port: int) -> None:
        self.port = port
        for address in bind_addresses(bind):
            try:
                server = await asyncio.start_server(self._serve, address, self.port,
                                                    limit=MAX_RECORD + 1024)
            except OSError:
                for started in self._servers:
                    started.close()
                self._servers = []
                raise
            self._servers.append(server)
            self.port = int(server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._advertiser is not None:
            with contextlib.suppress(Exception):
                await self._advertiser.close()
        for server in self._servers:
            server.close()
        for c in list(self._connections):
            c.writer.close()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._journal.close()

    # ------------------------------------------------------------ what the screen reads
    def subscribe(self, listener: Callable[[], None]) -> None:
        """``listener()`` after every change (a registration, a connection, a record)."""
        self._listeners.append(listener)

    @property
    def registered(self) -> list[Registered]:
        return list(self.book.registrations.values())

    @property
    def connected(self) -> frozenset[bytes]:
        """The registered players connected now."""
        return frozenset(c.player for c in self._connections if c.player is not None)

    @property
    def game(self) -> int:
        """The last game seated (0: none yet)."""
        return len(self.book.games)

    def unplayed(self) -> list[str]:
        """The current game's tables without a result yet."""
        if not self.game:
            return []
        done = self.book.results()
        return [t.letter for t in self.book.games[self.game].seated.tables
                if (self.game, t.letter) not in done]

    def deserted(self) -> list[str]:
        """The current game's tables that never opened, or never dealt, or whose game
        has been over a while (`DESERTED_AFTER`) without one that counts (too few of
        a table came for a stand-in's game to count): no result, nothing seen of them
        being played (where this machine watches the tables), the turn-up time long
        over since the seating (or since this organiser came back). A headless
        organiser ends a game that waits only for those (a person decides at the
        screen: ``F``)."""
        if not self.game or self.book.games[self.game].finished or self._seated_at is None:
            return []
        if time.monotonic() - self._seated_at < self.opened.turn_up_s + DESERTED_AFTER:
            return []
        live = self.book.games[self.game].live
        now = time.monotonic()
        deserted = []
        for letter in self.unplayed():
            state = live[letter].state if letter in live else "waiting"
            if state == "over":  # its record may be on its way: a while to come in
                over = self._over_at.setdefault((self.game, letter), now)
                if now - over >= DESERTED_AFTER:
                    deserted.append(letter)
            elif state == "waiting":
                deserted.append(letter)
        return deserted

    def end_game(self) -> None:
        """End the current game as it stands: tables without a result count for nothing."""
        if self.game and not self.book.games[self.game].finished:
            self._take(encode(Finished(self.opened.event_id, self.game), self.identity))

    # ------------------------------------------------------------ the organiser's keys
    def start_game(self, *, force: bool = False) -> Seated:
        """Draw, sign and send the next game's seating, among the registered players
        connected now. While tables of the current game have no result, only with
        ``force`` (the game is then ended without them). EventError (one line)
        when it cannot be."""
        if self.game >= self.opened.games:
            raise EventError(f"all {self.opened.games} games are seated")
        present = self.connected
        if len(present) < 2:
            raise EventError("a game needs two registered players connected at least")
        left = self.unplayed()
        if left and not self.book.games[self.game].finished:
            if not force:
                raise EventError(f"game {self.game} is still being played at table(s) "
                                 f"{', '.join(left)}")
            self.end_game()
        opened = self.opened
        seed = (_seeds(self.identity, opened.event_id, opened.games)[self.game + 1]
                if opened.seed_commit is not None else os.urandom(32))
        seated = self.book.next_seating(present, seed)
        self._take(encode(seated, self.identity))
        self._seated_at = time.monotonic()
        if self._advertiser is not None:
            self._spawn(self._advertiser.update(game=self.game))
        self._watch_tables()
        return seated

    def _watch_tables(self) -> None:
        """With mDNS, watch each table of the game under way (``event_watch``)."""
        if self._interfaces is None or not self.game or self.book.games[self.game].finished:
            return
        for watching in watch_game(self.identity, self.book, self.game, self._interfaces,
                                   self._changed):
            self._spawn(watching)

    # ------------------------------------------------------------ internals
    def _take(self, raw: bytes) -> bool:
        """Apply an entry; journal it, then send it to everyone. False: held already."""
        if self.book.apply(raw) is None:
            return False
        self._journal.append(raw)
        self._send_all({"e": raw})
        return True

    async def _record(self, data: bytes) -> None:
        """A game record from a player: checked, journaled, sent on."""
        async with self._checking:
            held = len(self.book.records)
            checked = await asyncio.to_thread(self.book.check_record, data)  # the slow half
            took = self.book.take_record(checked)
            if len(self.book.records) == held:
                return
            self._journal.append(data)
            self._send_all({"r": data})
            if took:
                self._maybe_finished()
        self._changed()

    def _maybe_finished(self) -> None:
        """Every table of the current game has its result: the game is over."""
        if self.game and not self.book.games[self.game].finished and not self.unplayed():
            self.end_game()

    def _send_all(self, frame: dict[str, object]) -> None:
        for c in list(self._connections):
            try:
                c.queue.put_nowait(frame)
            except asyncio.QueueFull:
                _log.info("a follower fell too far behind: closing its connection")
                c.writer.close()
        self._changed()

    def _changed(self) -> None:
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:  # noqa: BLE001 - a screen's failure must not stop the event
                _log.exception("an event listener failed")

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._connections) >= MAX_CONNECTIONS:
            writer.close()
            return
        c = _Connection(writer)
        self._connections.add(c)
        sender: asyncio.Task[None] | None = None
        try:
            async with asyncio.timeout(HELLO_TIME):
                reg, entries_held, records_held = hello(await read_frame(reader, MAX_HELLO))
            if reg is not None:
                problem = self._register(reg)
                if problem is not None:
                    write_frame(writer, {"v": 1, "error": problem})
                    await writer.drain()
                    return
                c.claimed = decode(reg).author
            c.nonce = os.urandom(NONCE_LEN)
            write_frame(writer, {"v": 1, "ok": True, "nonce": c.nonce})
            # The records first: a seating drawn from standings is checked against them.
            for record in self.book.records[records_held:]:
                c.queue.put_nowait({"r": record})
            for entry in self.book.entries[entries_held:]:
                c.queue.put_nowait({"e": entry})
            self._changed()
            sender = asyncio.ensure_future(self._send(c))
            while True:
                length = await read_length(reader, MAX_RECORD + 64)
                if length <= MAX_HELLO:
                    await self._heard(c, await read_body(reader, length))
                    continue
                async with self._reading:  # a record: read and checked a few at a time
                    await self._heard(c, await read_body(reader, length))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except (OSError, TimeoutError, WireError, EventError, asyncio.QueueFull) as exc:
            _log.info("an event connection ended: %s", exc or type(exc).__name__)
        except Exception:  # noqa: BLE001 - nothing from the network may stop the event
            _log.exception("an event connection failed")
        finally:
            self._connections.discard(c)
            if sender is not None:
                sender.cancel()
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            if c.player is not None:
                self._changed()

    async def _heard(self, c: _Connection, frame: dict[str, object]) -> None:
        """A frame from a player: a game record, or its registration."""
        sent, registration, here = frame.get("r"), frame.get("reg"), frame.get("here")
        if isinstance(sent, bytes):
            await self._record(sent)
        elif isinstance(registration, bytes) and c.claimed is None:
            problem = self._register(registration)
            if problem is not None:
                c.queue.put_nowait({"error": problem})
            else:
                c.claimed = decode(registration).author
        elif isinstance(here, bytes) and c.claimed is not None and c.player is None:
            if not verify(c.claimed, here, presence(self.opened.event_id, c.nonce)):
                raise WireError("a presence not signed by the player it claims")
            c.player = c.claimed
            self._changed()
        else:
            raise WireError("a malformed frame")

    async def _send(self, c: _Connection) -> None:
        with contextlib.suppress(OSError, ConnectionError):
            while (frame := await c.queue.get()) is not None:
                write_frame(c.writer, frame)
                await c.writer.drain()

    def _register(self, reg: bytes) -> str | None:
        """A player's registration (or their copy of it, again): None once the book
        holds it, else why it is refused (one line)."""
        try:
            signed = decode(reg)
            if not isinstance(signed.entry, Registered):
                return "that is not a registration"
            if signed.entry.player in self.book.registrations:
                return None if reg in self.book.entries else (
                    "you registered already, under another name")
            self._take(reg)
        except EventError as exc:
            return str(exc)
        return None


def _seeds(identity: Identity, event_id: bytes, games: int) -> list[bytes]:
    """The organiser's seed chain for its event: the commitment, then each game's seed
    (``entries.seed_chain``), from its own key, so a resumed organiser has it again."""
    return seed_chain(organiser_secret(identity, event_id), games)


class OrganiserDesk:
    """The organiser's screen's view of its event (``lan.EventDesk``)."""

    def __init__(self, organiser: Organiser) -> None:
        self._o = organiser

    @property
    def title(self) -> str:
        o = self._o
        return f"{o.opened.name} · game {o.game} of {o.opened.games} · port {o.port}"

    def players(self) -> list[tuple[str, str, bool]]:
        connected = self._o.connected
        return [(r.name, fingerprint_of(r.player), r.player in connected)
                for r in sorted(self._o.registered, key=lambda r: r.name.casefold())]

    def tables(self) -> list[str]:
        """The tables of the game under way, as the wall shows them: a finished
        table's scores are its record's totals, a playing one's what is seen of it."""
        book = self._o.book
        game = self._o.game
        if not game:
            return []
        lines = []
        for table in book.wall()["tables"]:
            state, number = table["state"], table["round"]
            if state == "over":
                doing = "over: its record is in"
            elif state == "waiting":
                doing = "waiting for its players"
            else:
                doing = f"{state}, round {number}" if number else state
            who = ", ".join(p["name"] if state == "waiting" else f"{p['name']} {p['score']}"
                            for p in table["players"])
            lines.append(f"table {table['table']}: {who} · {doing}")
        if book.games[game].finished:
            lines.append(f"game {game} is over")
        return lines

    def start_game(self, *, force: bool = False) -> str:
        try:
            seated = self._o.start_game(force=force)
        except EventError as exc:
            raise ValueError(str(exc)) from None
        return (f"game {seated.game} seated: {counted(len(seated.tables), 'table')}, "
                f"{counted(len(seated.players), 'player')}")

    def subscribe(self, changed: Callable[[], None]) -> None:
        self._o.subscribe(changed)
