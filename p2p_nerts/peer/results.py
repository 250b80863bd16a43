"""Serving and collecting game records on the LAN, for event standings.

Every ``nerts`` that holds a player's store (the lobby and the tables opened
from it, ``nerts host``, ``join`` and ``watch`` with a screen or headless,
``nerts bot``) serves, for as long as it runs (:func:`serving_results`), the
records of the games kept there that ended since the time a view asks for,
and advertises that on mDNS as a ``_nerts-results._tcp.local.`` service (TXT:
the player's key fingerprint and this protocol's version). A standings view
browses for those services, asks each for the records since a time, and
verifies every record before counting it (``records.standings``), so what it
hears proves itself: nothing here needs trusting.

The exchange, over one TCP connection: the asker sends one frame (4-byte
big-endian length, then a msgpack map ``{"v": 1, "since": seconds since the
epoch}``); the server answers with one frame per record (at most
``MAX_RECORDS``, newest first) and an empty frame, then closes. Every read is
bounded in size and time, on both sides. A server is open to anyone on the
LAN, so a stranger's connections cost it little and block no one: a request
must come soon after connecting, connections are limited per address and in
all, and one that has not asked makes room for a newer one rather than
keeping it out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import struct
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import msgpack
from zeroconf import DNSQuestionType, ServiceInfo, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from ..net.discovery import TableAd, TableBrowser, table_label
from ..net.interfaces import Interfaces, advertised_addresses, bind_addresses, listen_addresses
from ..protocol.identity import Identity
from ..records.record import MAX_RECORD
from ..records.standings import OWN, Standings, Tally
from ..store import Store, StoreError

__all__ = ["LISTEN", "MAX_RECORDS", "OWN", "RESULTS_SERVICE", "Budget", "ResultsServer", "Seen",
           "TooLarge", "ask", "browse", "event_records", "look", "serving_results", "tallied",
           "unfetched"]

_log = logging.getLogger(__name__)

RESULTS_SERVICE = "_nerts-results._tcp.local."
VERSION = 1
MAX_RECORDS = 64
"""Records one answer carries: an evening's games at one player's tables."""
LISTEN = 2.0
"""Seconds a standings view looks for players serving results, by default."""
_MAX_REQUEST = 256
_TIMEOUT = 10.0  # seconds for a whole exchange, either side
_REQUEST_TIME = 3.0  # seconds an asker has to send its request once connected
_MAX_CLIENTS = 8  # answers written at once
#: Connections open at once, from one address and from all: past either, the
#: oldest that has not yet asked makes room (an honest asker asks at once).
_PER_ADDRESS = 4
_MAX_OPEN = 64
#: Answers written to one address at once (its other asks wait their turn): an asker
#: that reads slowly, or not at all, holds at most this many of the :data:`_MAX_CLIENTS`.
_ANSWERS_PER_ADDRESS = 2
_MAX_SERVERS = 64
#: Servers a standings view asks at once: each connection buffers what its server
#: sends ahead of being read, a few hundred KiB.
_ASKED_AT_ONCE = 16
_HEADER = struct.Struct(">I")
_FINGERPRINT = re.compile(r"[0-9a-f]{16,64}")
T = TypeVar("T")

Source = Callable[[float], list[bytes]]
"""The records of the games that ended since a time (newest first)."""


@dataclass(slots=True)
class _Turn:
    """An address's answers: how many may be written at once, and who holds or waits."""

    answers: asyncio.Semaphore
    users: int = 0


class ResultsServer:
    """Serves ``source``'s records on ``bind`` and advertises them.

    ``bind`` is one address or several, comma-separated, all on one ephemeral
    port; "" is every IPv4 interface (:func:`~.interfaces.bind_addresses`).
    """

    def __init__(self, source: Source, fingerprint: str, *, bind: str = "") -> None:
        self._source = source
        self._fingerprint = fingerprint.replace("-", "")
        self._bind = bind
        self._servers: list[asyncio.Server] = []
        self._aiozc: AsyncZeroconf | None = None
        self._info: ServiceInfo | None = None
        self._busy = asyncio.Semaphore(_MAX_CLIENTS)
        #: Every connection open, by its writer: its address, and whether it has asked.
        self._open: dict[asyncio.StreamWriter, tuple[str, bool]] = {}
        self._turns: dict[str, _Turn] = {}  # by address, while it has answers to write
        self.port = 0

    async def start(self, interfaces: Interfaces | None) -> None:
        """Listen; with ``interfaces``, advertise on mDNS there too."""
        for address in bind_addresses(self._bind):
            server = await asyncio.start_server(self._serve, address, self.port)
            self._servers.append(server)
            self.port = int(server.sockets[0].getsockname()[1])  # the others take the same
        if interfaces is None:
            return
        self._aiozc = AsyncZeroconf(interfaces=interfaces)
        suffix = secrets.token_hex(3)
        self._info = ServiceInfo(
            RESULTS_SERVICE, f"nerts-{self._fingerprint[:12]}-{suffix}.{RESULTS_SERVICE}",
            port=self.port, properties={"fp": self._fingerprint, "v": str(VERSION)},
            server=f"nerts-results-{self._fingerprint[:12]}-{suffix}.local.",
            parsed_addresses=advertised_addresses(interfaces))
        await (await self._aiozc.async_register_service(self._info))

    async def close(self) -> None:
        if self._aiozc is not None:
            if self._info is not None:
                with contextlib.suppress(Exception):
                    await (await self._aiozc.async_unregister_service(self._info))
            await self._aiozc.async_close()
            self._aiozc = None
        servers, self._servers = self._servers, []
        for server in servers:
            server.close()
            await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        address = str(writer.get_extra_info("peername", ("?",))[0])
        try:
            if not self._admit(address, writer):
                return  # this address's connections all asking: it asks again later
            async with asyncio.timeout(_TIMEOUT):
                async with asyncio.timeout(_REQUEST_TIME):
                    since = _request(await _read_frame(reader, _MAX_REQUEST))
                if writer not in self._open:
                    return  # closed to make room as its request came
                self._open[writer] = (address, True)  # asked: no longer idle, never evicted
                async with self._turn(address), self._busy:
                    kept = [data for data in self._source(since) if len(data) <= MAX_RECORD]
                    for data in kept[:MAX_RECORDS]:  # a larger one no asker would read
                        writer.write(_HEADER.pack(len(data)) + data)
                        await writer.drain()
                    writer.write(_HEADER.pack(0))
                    await writer.drain()
        except (OSError, TimeoutError, ValueError, asyncio.IncompleteReadError) as exc:
            _log.info("a results request failed: %s", exc or type(exc).__name__)
        except StoreError as exc:
            _log.warning("cannot serve game records: %s", exc)
        except Exception:  # noqa: BLE001 - nothing from the network may stop the server
            _log.exception("serving results failed")
        finally:
            self._open.pop(writer, None)
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    @contextlib.asynccontextmanager
    async def _turn(self, address: str) -> AsyncIterator[None]:
        """One of the :data:`_ANSWERS_PER_ADDRESS` answers ``address`` may have written
        at once, waited for; kept only while some connection of it holds or waits."""
        turn = self._turns.get(address)
        if turn is None:
            turn = self._turns[address] = _Turn(asyncio.Semaphore(_ANSWERS_PER_ADDRESS))
        turn.users += 1
        try:
            async with turn.answers:
                yield
        finally:
            turn.users -= 1
            if not turn.users:
                del self._turns[address]

    def _admit(self, address: str, writer: asyncio.StreamWriter) -> bool:
        """Room for a connection from ``address``: past :data:`_PER_ADDRESS` of its own or
        :data:`_MAX_OPEN` in all, the oldest connection (of this address, or of any) that
        has not asked yet is closed to make it. Connections that idle never keep an asker
        out, and one address can close only its own."""
        mine = [w for w, (a, _asked) in self._open.items() if a == address]
        full = len(mine) >= _PER_ADDRESS or len(self._open) >= _MAX_OPEN
        if full:
            among = mine if len(mine) >= _PER_ADDRESS else list(self._open)
            idle = next((w for w in among if not self._open[w][1]), None)  # the oldest
            if idle is None:
                return False
            del self._open[idle]
            idle.transport.abort()  # its read ends at once, and its handler with it
        self._open[writer] = (address, False)
        return True


async def serving_results(store: Store, identity: Identity, interfaces: Interfaces,
                          run: Awaitable[T], *, bind: str = "") -> T:
    """Await ``run`` while serving the records kept in ``store`` to the LAN's standings
    views, on the addresses a seat would listen on (``bind``, else the ``interfaces``':
    :func:`~.interfaces.listen_addresses`), advertised on ``interfaces``.

    Whatever ``run`` is (a lobby, a table with a screen, a headless seat), it
    does not wait for the advertisement, and a player who cannot serve still
    plays: the reason is one line in the log.
    """
    server = ResultsServer(store.records_since, identity.fingerprint,
                           bind=listen_addresses(bind, interfaces))

    async def start() -> None:
        try:
            await server.start(interfaces)
        except OSError as exc:
            _log.warning("cannot serve game records: %s", exc.strerror or exc)
        except Exception:  # noqa: BLE001 - mDNS failing must not stop the player's game
            _log.exception("cannot serve game records")

    starting = asyncio.ensure_future(start())
    try:
        return await run
    finally:
        starting.cancel()
        await asyncio.gather(starting, return_exceptions=True)
        await server.close()


class Budget:
    """Bytes of records read and not yet verified, across every server asked at once:
    a record is read only once there is room for it, so what a standings view holds
    of the network's records is bounded however many servers answer, or what."""

    def __init__(self, size: int) -> None:
        self.size = self.free = size
        self._freed = asyncio.Condition()

    async def take(self, n: int) -> None:
        if n > self.size:
            raise TooLarge(f"a record of {n} bytes, more than the {self.size} held at once")
        async with self._freed:
            await self._freed.wait_for(lambda: self.free >= n)
            self.free -= n

    async def give(self, n: int) -> None:
        async with self._freed:
            self.free += n
            self._freed.notify_all()


Take = Callable[[bytearray], Awaitable[bool]]
"""Hands on a record as it is read (and with it its bytes of the budget, to give back
once they are done with); False: read no more of this answer."""


class TooLarge(ValueError):
    """A server offered a record larger than any game makes: refused before it was read."""


async def ask(host: str, port: int, since: float, take: Take, budget: Budget) -> None:
    """Ask ``host:port`` for the records of games ended since ``since``, handing each to
    ``take`` as it is read, within ``budget``; raises OSError, TimeoutError or ValueError
    (:class:`TooLarge` for a record larger than any game's) when it cannot be asked or
    answers wrongly. The deadline counts the network's time, not the wait for room."""
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(_TIMEOUT) as deadline:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            request: bytes = msgpack.packb({"v": VERSION, "since": since})
            writer.write(_HEADER.pack(len(request)) + request)
            await writer.drain()
            for _ in range(MAX_RECORDS):
                (length,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
                if length == 0:
                    return
                if length > MAX_RECORD:
                    raise TooLarge(f"a record of {length} bytes, larger than any game's: "
                                   "refused unread")
                left = (deadline.when() or 0.0) - loop.time()
                deadline.reschedule(None)  # waiting for room is not the server's time
                await budget.take(length)
                deadline.reschedule(loop.time() + left)
                try:
                    data = await _read_record(reader, length)
                except BaseException:
                    await budget.give(length)
                    raise
                more = await take(data)
                del data  # it is the taker's now: held here, it would outlast its budget
                if not more:
                    return
        except asyncio.IncompleteReadError:
            raise ValueError("the answer was cut short") from None
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def browse(interfaces: Interfaces, listen: float = LISTEN) -> list[tuple[str, int]]:
    """The results services found on ``interfaces`` (address, port), browsing ``listen``
    seconds."""
    return [(host, port) for host, port, _fp in await _services(interfaces, listen)]


@dataclass(frozen=True, slots=True)
class Seen:
    """What a standings view found on the LAN in its time listening: the results
    services to ask, the key fingerprints of the players who serve them, and the
    tables advertised (whose games a view counts only through some player's results)."""

    servers: list[tuple[str, int]]
    serving: frozenset[str]
    tables: list[TableAd]


async def look(interfaces: Interfaces, listen: float = LISTEN) -> Seen:
    """The results services and the tables on ``interfaces``, browsed side by side for
    the same ``listen`` seconds (``nerts event``)."""
    async with TableBrowser(interfaces) as tables:
        services = await _services(interfaces, listen)
        await tables.settle(3.0)  # a table heard but not resolved yet counts
        seen = tables.tables
    return Seen([(host, port) for host, port, _fp in services],
                frozenset(fp for _host, _port, fp in services if fp), seen)


def unfetched(seen: Seen) -> list[tuple[str, str]]:
    """``(table, why)`` for each table ``seen`` that has dealt (playing, between rounds
    or over) whose host serves no results: its games count only where another of its
    players serves them. The table as ``nerts join`` takes it (``Main table@22d7``).
    A host whose results could not be asked is left to the ask's own report."""
    return [(table_label(t, seen.tables),
             "its host serves no results (it keeps no records, or its results ad was "
             "never heard here)")
            for t in seen.tables if t.state != "lobby" and t.fingerprint not in seen.serving]


async def _services(interfaces: Interfaces, listen: float) -> list[tuple[str, int, str]]:
    """The results services found on ``interfaces`` (address, port, the serving player's
    key fingerprint: "" where its ad does not say), browsing ``listen`` seconds."""
    found: dict[str, tuple[str, int, str]] = {}
    async with contextlib.AsyncExitStack() as stack:
        aiozc = AsyncZeroconf(interfaces=interfaces)
        stack.push_async_callback(aiozc.async_close)
        zc = aiozc.zeroconf
        pending: set[asyncio.Task[None]] = set()

        async def resolve(name: str) -> None:
            info = AsyncServiceInfo(RESULTS_SERVICE, name)
            if await info.async_request(zc, 3000, question_type=DNSQuestionType.QM):
                addresses = info.parsed_scoped_addresses()
                if addresses and info.port and len(found) < _MAX_SERVERS:
                    fp = (info.properties.get(b"fp") or b"").decode("ascii", "replace")
                    found[name] = (addresses[0], info.port, fp if _FINGERPRINT.fullmatch(fp)
                                   else "")

        def on_change(zeroconf: Zeroconf, service_type: str, name: str,
                      state_change: ServiceStateChange) -> None:
            if state_change is not ServiceStateChange.Removed:
                task = asyncio.get_running_loop().create_task(resolve(name))
                pending.add(task)
                task.add_done_callback(pending.discard)

        browser = AsyncServiceBrowser(zc, RESULTS_SERVICE, handlers=[on_change],
                                      question_type=DNSQuestionType.QM)
        stack.push_async_callback(browser.async_cancel)
        await asyncio.sleep(listen)
        if pending:
            await asyncio.wait(pending, timeout=3.0)
    return list(found.values())


async def tallied(servers: Sequence[tuple[str, int]], since: float, own: Source,
                  missed: list[tuple[str, str]] | None = None) -> Standings:
    """The standings of what ``servers`` serve and this player's own records (``own``),
    each record verified as it comes and kept as its summary only: at most
    :data:`MAX_RECORD` bytes of records are held at once, however many servers answer.
    A server that offers bytes that are not a record at all is asked no further; one
    that could not be asked is added to ``missed`` as ``(where, why)``."""
    counting = Tally(since)
    budget = Budget(MAX_RECORD)
    heard: asyncio.Queue[tuple[str, bytearray] | None] = asyncio.Queue()
    junk: set[str] = set()
    turns = asyncio.Semaphore(_ASKED_AT_ONCE)

    async def verifier() -> None:
        while (item := await heard.get()) is not None:
            where, data = item
            del item
            try:
                if not await asyncio.to_thread(counting.add, where, data):
                    junk.add(where)
            except Exception as exc:  # noqa: BLE001 - no record may stop the standings
                _log.error("a record from %s could not be checked: %r", where, exc)
                junk.add(where)
            size = len(data)
            # Emptied before its room is given back: the verifying thread may hold the
            # record a moment longer, and two records at once would be twice the room.
            with contextlib.suppress(BufferError):
                data.clear()
            del data
            await budget.give(size)

    async def asked(host: str, port: int) -> None:
        where = f"{host}:{port}"

        async def take(data: bytearray) -> bool:
            if where in junk:
                await budget.give(len(data))
                return False
            await heard.put((where, data))
            return True

        try:
            async with turns:
                await ask(host, port, since, take, budget)
        except TooLarge as exc:
            counting.refuse(where, str(exc))
        except (OSError, TimeoutError, ValueError) as exc:
            _log.warning("could not ask %s:%d for results: %s", host, port, exc)
            if missed is not None:
                missed.append((where, _why(exc)))

    verifying = asyncio.ensure_future(verifier())
    try:
        await asyncio.gather(*(asked(h, p) for h, p in servers))
        await heard.put(None)
        await verifying
    finally:
        verifying.cancel()
    for data in own(since):
        await asyncio.to_thread(counting.add, OWN, data)
    return counting.standings()


async def event_records(interfaces: Interfaces, since: float, listen: float,
                        own: Source, missed: list[tuple[str, str]] | None = None
                        ) -> Standings:
    """What a standings view counts, ``nerts event``'s and the lobby's alike: the records
    the LAN's players serve (:func:`browse`, :func:`tallied`) and this player's own
    (``own``), which count even where multicast is blocked (a game heard twice counts
    once). ``missed`` gets ``(where, why)`` for each player heard of but not asked."""
    return await tallied(await browse(interfaces, listen), since, own, missed)


def _why(error: BaseException) -> str:
    """A failed ask, in a player's words."""
    if isinstance(error, ConnectionRefusedError):
        return "refused the connection (the player has left?)"
    if isinstance(error, TimeoutError):
        return "did not answer in time"
    if isinstance(error, OSError):
        return f"unreachable ({error.strerror or error})"
    return str(error) or type(error).__name__


def _request(data: bytes) -> float:
    try:
        request = msgpack.unpackb(data, raw=False)
    except (ValueError, TypeError, msgpack.UnpackException):
        raise ValueError("a malformed request") from None
    since = request.get("since") if isinstance(request, dict) else None
    if not isinstance(request, dict) or request.get("v") != VERSION or (
            type(since) not in (int, float)):
        raise ValueError("a malformed request")
    return float(since)  # type: ignore[arg-type]


async def _read_record(reader: asyncio.StreamReader, length: int) -> bytearray:
    """A record's ``length`` bytes, read into one buffer as they come (rather than
    gathered, then copied out whole: twice its size at once)."""
    data = bytearray(length)
    view = memoryview(data)
    got = 0
    while got < length:
        chunk = await reader.read(min(length - got, 1 << 16))
        if not chunk:
            raise ValueError("the answer was cut short")
        view[got:got + len(chunk)] = chunk
        got += len(chunk)
    view.release()
    return data


async def _read_frame(reader: asyncio.StreamReader, limit: int) -> bytes:
    (length,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
    if length > limit:
        raise ValueError(f"a frame of {length} bytes, more than the {limit} allowed")
    return await reader.readexactly(length)
