"""Keeping a live view of the tables on the LAN.

Speed on one host. The first query of a stock browser asks for a unicast
reply (QU). On one host every zeroconf instance binds 127.0.0.1:5353 with
SO_REUSEPORT, so the kernel hands that unicast reply to *one* of the sockets,
chosen by hash: with a few instances around it is often not ours, and the
table shows up only with the next query, ~1.1 s later. ``TableBrowser``
therefore browses with QM (multicast replies reach everyone) and, to skip the
RFC 6762 §5.2 random 20-120 ms start delay, which guards against many hosts
querying on a common trigger (a lobby opened by a person is not one), sends
one QM and one QU query itself right away. Whichever answer lands first wins:
the unicast one when the kernel picks our socket (~1 ms), the multicast one
otherwise.

A lobby that stays open. python-zeroconf tells a browser a TXT record changed
only when the record heard is not in its cache already, and keeps a replaced
unique record that was younger than a second for its whole TTL (RFC 6762
§10.2 flushes only older ones). A seat count going back to a value heard
before (a player joins and leaves, a bot crashes at a full table) was
therefore never reported, and the resolver could read either record from the
cache. So every TXT record carries a revision (``r``) the host counts up:
each update is a record never heard before, and the browser reads the
highest revision among the cached ones, whatever else the cache still holds.

A row lives only as long as its table. A host that closes sends goodbyes and
leaves at once; one that is killed, or whose network goes, sends nothing, and
python-zeroconf raises any PTR TTL it hears to at least 1125 s, so the cache
would keep the table for twenty minutes. The browser therefore dials each
table's advertised port every ``PROBE_EVERY`` s (a connection closed before it
says a word, which the host does not log): a refusal (nobody listens there any
more) takes the row away at once, and a table none of whose dials got through
for ``LIVE_FOR`` s is taken away at the next look, so a row outlives its table
by at most ``LIVE_FOR + PROBE_EVERY`` s. A row shows only once a dial got
through, so a table the cache still holds but nobody hosts never shows, and
one that answers again comes back (within ``2 * LIVE_FOR`` s: a table not
shown is dialed one at a time, see ``_start_probe``). Two ads of one host key and one address
are one table (a host resumed from its journal listens on its old port under
a new instance name): only the one heard last shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from zeroconf import (
    DNSQuestionType,
    ServiceStateChange,
    Zeroconf,
    current_time_millis,
)
from zeroconf._dns import DNSQuestion, DNSText
from zeroconf._protocol.outgoing import DNSOutgoing
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from ..interfaces import Interfaces
from ._ad import (
    MAX_TABLES,
    SERVICE_TYPE,
    AdError,
    TableAd,
    _instance_from_service_name,
    _revision,
    _txt_properties,
    decode_txt,
)

_log = logging.getLogger(__name__)

# RFC 1035 wire constants for the hand-built start-up queries.
_FLAGS_QUERY = 0x0000
_TYPE_PTR = 12
_TYPE_TXT = 16
_CLASS_IN = 1

PROBE_EVERY = 0.5
"""Seconds between two dials of a table's port (see the module docstring)."""
LIVE_FOR = 2.0
"""Seconds a table keeps its row with no dial getting through: long enough for a
dial or two lost to a lossy network, short enough that the row of a table gone
leaves within ``LIVE_FOR + PROBE_EVERY`` s (3 s was the aim)."""
_MAX_DIALS = int(LIVE_FOR / PROBE_EVERY) + 1
"""Dials of one table under way at once, at most."""

Probe = Callable[[TableAd, float], Awaitable[bool | None]]
"""Whether a table answers: True when a connection to it opened, False when every
address refused it (nobody listens), None when none answered within the time."""


async def dial(ad: TableAd, timeout: float) -> bool | None:
    """A TCP connection to each of ``ad``'s addresses at once, closed as soon as it
    opens (see :data:`Probe`); the host takes a connection closed before it said
    anything for what it is, and logs nothing."""
    loop = asyncio.get_running_loop()

    async def one(address: str) -> bool:
        transport, _ = await loop.create_connection(asyncio.Protocol, address, ad.port)
        transport.close()
        return True

    attempts = [asyncio.ensure_future(one(address)) for address in ad.addresses]
    refused = 0
    try:
        async with asyncio.timeout(timeout):
            for attempt in asyncio.as_completed(attempts):
                try:
                    return await attempt
                except ConnectionRefusedError:
                    refused += 1
                except OSError:
                    pass
    except TimeoutError:
        return None
    finally:
        for attempt in attempts:
            attempt.cancel()
        await asyncio.gather(*attempts, return_exceptions=True)
    return False if refused == len(attempts) else None


class TableChange(enum.Enum):
    """What happened to a table in the lobby."""

    ADDED = "added"
    UPDATED = "updated"
    REMOVED = "removed"


@dataclass(frozen=True, slots=True)
class TableEvent:
    """One lobby change; REMOVED carries the last ad seen."""

    change: TableChange
    table: TableAd


class TableBrowser:
    """Keeps a live view of the tables on the LAN.

    ``tables`` is always current; ``on_event`` (called in the event loop,
    exceptions logged and swallowed) and ``wait_for`` tell you when it changed.
    """

    def __init__(
        self,
        interfaces: Interfaces,
        *,
        aiozc: AsyncZeroconf | None = None,
        on_event: Callable[[TableEvent], None] | None = None,
        resolve_timeout: float = 3.0,
        probe: Probe = dial,
    ) -> None:
        """``probe`` says whether a table answers (injectable for tests)."""
        self._interfaces = interfaces
        self._aiozc = aiozc
        self._owns_zeroconf = aiozc is None
        self._on_event = on_event
        self._resolve_timeout_ms = resolve_timeout * 1000
        self._browser: AsyncServiceBrowser | None = None
        self._probe = probe
        self._heard: dict[str, TableAd] = {}  # resolved ads, by lower-cased service name
        self._order: dict[str, int] = {}  # when each was heard last (a count)
        self._hearing = itertools.count()
        self._answered: dict[str, float] = {}  # when a dial last got through (monotonic)
        self._dialed: dict[str, float] = {}  # when a dial last began (monotonic)
        self._probing: dict[str, set[asyncio.Task[None]]] = {}  # dials under way
        self._watching: asyncio.Task[None] | None = None
        self._tables: dict[str, TableAd] = {}  # those shown: heard, and answering
        self._resolving: dict[str, asyncio.Task[None]] = {}
        self._rejected: dict[str, str] = {}  # reason last logged, to log it once
        self._changed = asyncio.Event()

    @property
    def tables(self) -> list[TableAd]:
        """The tables currently advertised, sorted for display."""
        return sorted(self._tables.values(), key=lambda t: (t.name.casefold(), t.instance))

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Start browsing; see the module docstring for the start-up queries."""
        if self._browser is not None:
            raise RuntimeError("TableBrowser already started")
        if self._aiozc is None:
            self._aiozc = AsyncZeroconf(interfaces=self._interfaces)
        zc = self._aiozc.zeroconf
        await zc.async_wait_for_start()
        self._browser = AsyncServiceBrowser(
            zc, SERVICE_TYPE, handlers=[self._on_state_change], question_type=DNSQuestionType.QM
        )
        for unicast in (False, True):
            question = DNSQuestion(SERVICE_TYPE, _TYPE_PTR, _CLASS_IN)
            question.unicast = unicast
            query = DNSOutgoing(_FLAGS_QUERY, multicast=True)
            query.add_question(question)
            zc.async_send(query)
        self._watching = asyncio.get_running_loop().create_task(self._watch())

    async def wait_for(
        self, predicate: Callable[[list[TableAd]], bool], timeout: float
    ) -> list[TableAd]:
        """Wait until ``predicate(tables)`` holds; raise ``TimeoutError`` after ``timeout`` s."""
        async with asyncio.timeout(timeout):
            while not predicate(tables := self.tables):
                await self._changed.wait()
        return tables

    async def settle(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until every table seen so far has been resolved."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while self._resolving:
                    await asyncio.gather(*self._resolving.values(), return_exceptions=True)

    async def close(self) -> None:
        """Stop browsing and forget every table (no REMOVED events: we stopped looking)."""
        browser, self._browser = self._browser, None
        if browser is not None:
            await browser.async_cancel()
        tasks = [*self._resolving.values(), *(t for ts in self._probing.values() for t in ts)]
        if self._watching is not None:
            tasks.append(self._watching)
            self._watching = None
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tables.clear()
        self._heard.clear()
        if self._owns_zeroconf and self._aiozc is not None:
            aiozc, self._aiozc = self._aiozc, None
            await aiozc.async_close()

    def _on_state_change(
        self,
        zeroconf: Zeroconf,
        service_type: str,
        name: str,
        state_change: ServiceStateChange,
    ) -> None:
        """AsyncServiceBrowser handler; it passes exactly these keyword arguments."""
        key = name.lower()
        pending = self._resolving.pop(key, None)
        if pending is not None:
            pending.cancel()  # its answer is stale now
        if state_change is ServiceStateChange.Removed:
            self._rejected.pop(key, None)
            self._forget(key)
            return
        if key not in self._heard and len(self._heard) + len(self._resolving) >= MAX_TABLES:
            self._reject(key, name, f"more than {MAX_TABLES} tables advertised")
            return
        task = asyncio.get_running_loop().create_task(self._resolve(zeroconf, key, name))
        self._resolving[key] = task
        task.add_done_callback(lambda done: self._resolved(key, done))

    async def _resolve(self, zeroconf: Zeroconf, key: str, name: str) -> None:
        info = AsyncServiceInfo(SERVICE_TYPE, name)
        if not await info.async_request(
            zeroconf, self._resolve_timeout_ms, question_type=DNSQuestionType.QM
        ):
            _log.info("table %r did not answer with its address and TXT record", name)
            return
        try:
            ad = decode_txt(
                self._freshest_txt(zeroconf, name, info.properties),
                instance=_instance_from_service_name(name),
                addresses=info.parsed_scoped_addresses(),
                port=info.port,
            )
        except AdError as exc:
            self._reject(key, name, str(exc))
            self._forget(key)
            return
        self._rejected.pop(key, None)
        old = self._heard.get(key)
        if old == ad or (old is not None and ad.revision < old.revision):
            return
        self._heard[key] = ad
        self._order[key] = next(self._hearing)
        if key in self._tables:
            self._show(key)
        else:
            self._start_probe(key)  # it shows once it answers

    async def _watch(self) -> None:
        """Dial every table heard, every ``PROBE_EVERY`` s, and take away the rows of
        those that stopped answering (see the module docstring)."""
        while True:
            now = time.monotonic()
            for key in list(self._tables):
                if now - self._answered.get(key, 0.0) > LIVE_FOR:
                    self._remove(key)
            for key in self._heard:
                if key in self._tables or now - self._dialed.get(key, -LIVE_FOR) >= LIVE_FOR:
                    self._start_probe(key)
            await asyncio.sleep(PROBE_EVERY)

    def _start_probe(self, key: str) -> None:
        """Dial ``key``'s table once more. A row's dials overlap (each waits up to
        ``LIVE_FOR`` s, through TCP's own resends), so that on a lossy link one lost
        dial is not a row lost: one of the several under way gets through. A table
        not shown is dialed one at a time, every ``LIVE_FOR`` s at most: ads are
        anyone's to send, and must not make every lobby dial their addresses
        twice a second."""
        probing = self._probing.setdefault(key, set())
        if len(probing) >= (_MAX_DIALS if key in self._tables else 1):
            return
        self._dialed[key] = time.monotonic()
        task = asyncio.get_running_loop().create_task(self._check(key, self._heard[key]))
        probing.add(task)
        task.add_done_callback(probing.discard)
        task.add_done_callback(self._probed)

    async def _check(self, key: str, ad: TableAd) -> None:
        answer = await self._probe(ad, LIVE_FOR)
        now = self._heard.get(key)
        if now is None or (now.addresses, now.port) != (ad.addresses, ad.port):
            return  # gone, or moved, meanwhile: the next dial is the new ad's
        if answer:
            self._answered[key] = time.monotonic()
            self._show(key)
        elif answer is False:
            self._remove(key)

    @staticmethod
    def _probed(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            _log.error("dialing a table failed", exc_info=task.exception())

    def _show(self, key: str) -> None:
        """Show the ad heard as ``key``, in place of any other ad of its table (one host
        key at one address) heard before it."""
        ad = self._heard[key]
        if any(self._order[other] > self._order[key] and _same_table(ad, newer)
               for other, newer in self._heard.items()):
            return  # a newer ad of this table is the one to show
        for other, shown in list(self._tables.items()):
            if other != key and _same_table(ad, shown):
                self._remove(other)
        old = self._tables.get(key)
        if old == ad:
            return
        self._tables[key] = ad
        self._emit(TableEvent(TableChange.ADDED if old is None else TableChange.UPDATED, ad))

    @staticmethod
    def _freshest_txt(
        zeroconf: Zeroconf, name: str, resolved: Mapping[bytes, bytes | None]
    ) -> Mapping[bytes, bytes | None]:
        """The TXT properties of the highest revision in the cache (see the module
        docstring); ``resolved`` (the resolver's pick) when none carries one."""
        best, best_revision = resolved, _revision(resolved)
        for record in zeroconf.cache.async_all_by_details(name, _TYPE_TXT, _CLASS_IN):
            if isinstance(record, DNSText) and not record.is_expired(current_time_millis()):
                properties = _txt_properties(record.text)
                if (revision := _revision(properties)) > best_revision:
                    best, best_revision = properties, revision
        return best

    def _resolved(self, key: str, task: asyncio.Task[None]) -> None:
        if self._resolving.get(key) is task:
            del self._resolving[key]
        if not task.cancelled() and task.exception() is not None:
            _log.error("resolving a table failed", exc_info=task.exception())

    def _reject(self, key: str, name: str, reason: str) -> None:
        if len(self._rejected) >= MAX_TABLES:
            self._rejected.clear()  # a flood of bad names must not grow memory; re-logging is fine
        if self._rejected.get(key) != reason:
            self._rejected[key] = reason
            _log.warning("ignoring table ad %r: %s", name, reason)

    def _forget(self, key: str) -> None:
        """The ad is withdrawn (a goodbye, or its records expired): no more dials."""
        self._heard.pop(key, None)
        self._order.pop(key, None)
        self._answered.pop(key, None)
        self._dialed.pop(key, None)
        for dialing in self._probing.pop(key, set()):
            dialing.cancel()
        self._remove(key)

    def _remove(self, key: str) -> None:
        old = self._tables.pop(key, None)
        if old is not None:
            self._emit(TableEvent(TableChange.REMOVED, old))

    def _emit(self, event: TableEvent) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:  # noqa: BLE001 - a UI callback must not stop discovery
                _log.exception("table event callback failed on %s", event)




def _same_table(one: TableAd, other: TableAd) -> bool:
    """Two ads of one table: one host key, dialed at one address and port."""
    return (one.fingerprint == other.fingerprint and one.port == other.port
            and bool(set(one.addresses) & set(other.addresses)))
