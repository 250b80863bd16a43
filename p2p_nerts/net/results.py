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
bounded in size and time, on both sides.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import struct
from collections.abc import Awaitable, Callable
from typing import TypeVar

import msgpack
from zeroconf import DNSQuestionType, ServiceInfo, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from ..protocol.identity import Identity
from ..records.record import MAX_RECORD
from ..store import Store, StoreError
from .interfaces import Interfaces, advertised_addresses, bind_addresses, listen_addresses

__all__ = ["LISTEN", "MAX_RECORDS", "OWN", "RESULTS_SERVICE", "ResultsServer", "collect",
           "event_records", "fetch", "serving_results"]

_log = logging.getLogger(__name__)

RESULTS_SERVICE = "_nerts-results._tcp.local."
VERSION = 1
MAX_RECORDS = 64
"""Records one answer carries: an evening's games at one player's tables."""
LISTEN = 2.0
"""Seconds a standings view looks for players serving results, by default."""
_MAX_REQUEST = 256
_TIMEOUT = 10.0  # seconds for a whole exchange, either side
_MAX_CLIENTS = 8
_MAX_SERVERS = 64
_HEADER = struct.Struct(">I")
T = TypeVar("T")

Source = Callable[[float], list[bytes]]
"""The records of the games that ended since a time (newest first)."""


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
        try:
            if self._busy.locked():
                return  # enough askers at once: this one asks again later
            async with self._busy, asyncio.timeout(_TIMEOUT):
                since = _request(await _read_frame(reader, _MAX_REQUEST))
                for data in self._source(since)[:MAX_RECORDS]:
                    writer.write(_HEADER.pack(len(data)) + data)
                    await writer.drain()
                writer.write(_HEADER.pack(0))
                await writer.drain()
        except (OSError, TimeoutError, ValueError, asyncio.IncompleteReadError) as exc:
            _log.info("a results request failed: %s", exc)
        except StoreError as exc:
            _log.warning("cannot serve game records: %s", exc)
        except Exception:  # noqa: BLE001 - nothing from the network may stop the server
            _log.exception("serving results failed")
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


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


async def fetch(host: str, port: int, since: float) -> list[bytes]:
    """The records ``host:port`` serves for games ended since ``since``; raises OSError,
    TimeoutError or ValueError when it cannot be asked or answers wrongly."""
    async with asyncio.timeout(_TIMEOUT):
        reader, writer = await asyncio.open_connection(host, port)
        try:
            request: bytes = msgpack.packb({"v": VERSION, "since": since})
            writer.write(_HEADER.pack(len(request)) + request)
            await writer.drain()
            records: list[bytes] = []
            while (data := await _read_frame(reader, MAX_RECORD)) and len(records) < MAX_RECORDS:
                records.append(data)
            return records
        except asyncio.IncompleteReadError:
            raise ValueError("the answer was cut short") from None
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def collect(interfaces: Interfaces, since: float, listen: float = LISTEN,
                  enough: int | None = None,
                  missed: list[tuple[str, str]] | None = None) -> list[tuple[str, bytes]]:
    """Browse for results services, then ask each: ``(where, record)`` for every record.

    Browses ``listen`` seconds, or until ``enough`` services are found. A service
    that could not be asked is added to ``missed`` as ``(where, why)``.
    """
    found: dict[str, tuple[str, int]] = {}
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
                    found[name] = (addresses[0], info.port)

        def on_change(zeroconf: Zeroconf, service_type: str, name: str,
                      state_change: ServiceStateChange) -> None:
            if state_change is not ServiceStateChange.Removed:
                task = asyncio.get_running_loop().create_task(resolve(name))
                pending.add(task)
                task.add_done_callback(pending.discard)

        browser = AsyncServiceBrowser(zc, RESULTS_SERVICE, handlers=[on_change],
                                      question_type=DNSQuestionType.QM)
        stack.push_async_callback(browser.async_cancel)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(listen):
                while enough is None or len(found) < enough:
                    await asyncio.sleep(0.05)
        if pending and (enough is None or len(found) < enough):
            await asyncio.wait(pending, timeout=3.0)
    answers = await asyncio.gather(*(fetch(h, p, since) for h, p in found.values()),
                                   return_exceptions=True)
    out: list[tuple[str, bytes]] = []
    for (host, port), answer in zip(found.values(), answers, strict=True):
        if isinstance(answer, BaseException):
            _log.warning("could not ask %s:%d for results: %s", host, port, answer)
            if missed is not None:
                missed.append((f"{host}:{port}", _why(answer)))
            continue
        out += [(f"{host}:{port}", data) for data in answer]
    return out


OWN = "this computer"
"""Where this player's own records come from, in standings."""


async def event_records(interfaces: Interfaces, since: float, listen: float,
                        own: Source, missed: list[tuple[str, str]] | None = None
                        ) -> list[tuple[str, bytes]]:
    """What a standings view counts, ``nerts event``'s and the lobby's alike: the records
    the LAN's players serve (:func:`collect`) and this player's own (``own``), which
    count even where multicast is blocked (a game heard twice counts once).
    ``missed`` gets ``(where, why)`` for each player heard of but not asked."""
    found = await collect(interfaces, since, listen, missed=missed)
    return found + [(OWN, data) for data in own(since)]


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


async def _read_frame(reader: asyncio.StreamReader, limit: int) -> bytes:
    (length,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
    if length > limit:
        raise ValueError(f"a frame of {length} bytes, more than the {limit} allowed")
    return await reader.readexactly(length)
