"""Finding tables on the LAN with mDNS/DNS-SD (python-zeroconf, asyncio API).

A table is a ``_nerts._tcp.local.`` service: the SRV/A records say where to
connect, the TXT record says what the lobby shows (name, seats, variant...).
There is no server, so this is the only way players meet; it must be quick on
a LAN and must never trust what it hears: a TXT record from the network is
validated field by field and a bad one is logged and ignored.

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
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import ipaddress
import logging
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Self

from zeroconf import (
    DNSQuestionType,
    NonUniqueNameException,
    ServiceInfo,
    ServiceNameAlreadyRegistered,
    ServiceStateChange,
    Zeroconf,
    current_time_millis,
)
from zeroconf._dns import DNSQuestion, DNSText
from zeroconf._protocol.outgoing import DNSOutgoing
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from p2p_nerts.net.interfaces import Interfaces, advertised_addresses

__all__ = [
    "MAX_HOST_CHARS",
    "MAX_NAME_CHARS",
    "MAX_SEATS",
    "MAX_TABLES",
    "MAX_VARIANT_CHARS",
    "SERVICE_TYPE",
    "TABLE_STATES",
    "AdError",
    "AdvertiseError",
    "AmbiguousTableError",
    "DiscoveryError",
    "QuietMdnsErrors",
    "TableAd",
    "TableAdvertiser",
    "TableBrowser",
    "TableChange",
    "TableEvent",
    "TableNotFoundError",
    "decode_txt",
    "describe_table",
    "encode_txt",
    "find_table",
    "matching",
    "random_suffix",
]

_log = logging.getLogger(__name__)

SERVICE_TYPE = "_nerts._tcp.local."
MAX_NAME_CHARS = 32
MAX_VARIANT_CHARS = 48
MAX_HOST_CHARS = 24
"""A player's name (``identity.MAX_NAME_LEN``): the host's, shown beside its table."""
TABLE_STATES = ("lobby", "playing", "break", "over")
"""What a table is doing: seating players before its first deal, playing a round,
between two rounds, or done (its game is over)."""
MAX_SEATS = 16
MAX_TABLES = 128
"""More tables than any LAN party has; beyond it a flood of fake ads is ignored."""
_MAX_ADDRESSES = 8
_MAX_INSTANCE_BYTES = 63  # DNS label limit
_RECORD_TTL = 120
"""Seconds. The RFC's 75-minute default would keep a crashed table in lobbies
for an hour; two minutes bounds that at the cost of a refresh query per table
every ~90 s."""
_FIND_SETTLE = 0.6  # s: how long to listen for a second match (resolution is slower under load)
"""Seconds ``find_table`` keeps listening after a first match, so that two
tables with the same name are reported as ambiguous instead of picked at random."""

_DIGITS = re.compile(r"[0-9]{1,5}")
_LONG_DIGITS = re.compile(r"[0-9]{1,12}")
_FINGERPRINT = re.compile(r"[0-9a-f]{16,64}")
_SUFFIX = re.compile(r"[0-9a-z]{1,8}")

# RFC 1035 wire constants for the hand-built start-up queries.
_FLAGS_QUERY = 0x0000
_TYPE_PTR = 12
_TYPE_TXT = 16
_CLASS_IN = 1


class DiscoveryError(Exception):
    """Base of the errors a caller of discovery may want to show a player."""


class AdError(DiscoveryError, ValueError):
    """A table advertisement (ours or one from the network) is invalid."""


class AdvertiseError(DiscoveryError):
    """The table could not be published under any instance name."""


class TableNotFoundError(DiscoveryError, LookupError):
    """No table matched within the timeout."""


class AmbiguousTableError(DiscoveryError, LookupError):
    """Several tables matched; ``candidates`` lets the UI ask which one."""

    def __init__(self, message: str, candidates: Sequence[TableAd]) -> None:
        super().__init__(message)
        self.candidates = tuple(candidates)


@dataclass(frozen=True, slots=True)
class TableAd:
    """What a table tells the LAN about itself; always valid once constructed.

    ``fingerprint`` is the host's identity-key fingerprint (lowercase hex), so
    a joiner can check the key it meets in the handshake. ``addresses`` may be
    empty only on an ad given to ``TableAdvertiser``, which fills it in;
    ``instance`` is the unique DNS-SD instance label, empty until published.
    ``host`` is the host player's name and ``fingerprint`` its key: together
    they tell apart two tables of one name. ``state`` is one of
    ``TABLE_STATES``; between rounds ``next_deal`` is when the host deals again
    (Unix time, s; None when a person deals). ``revision`` counts the host's
    updates (see the module docstring).
    """

    name: str
    fingerprint: str
    protocol_version: int
    seats_taken: int
    seats_total: int
    variant: str
    needs_code: bool
    port: int
    addresses: tuple[str, ...] = ()
    instance: str = ""
    host: str = ""
    state: str = "lobby"
    next_deal: int | None = None
    revision: int = 0

    def __post_init__(self) -> None:
        _check_text("name", self.name, MAX_NAME_CHARS, allow_empty=False)
        _check_text("host", self.host, MAX_HOST_CHARS, allow_empty=True)
        if self.state not in TABLE_STATES:
            raise AdError(f"state must be one of {', '.join(TABLE_STATES)}")
        if self.next_deal is not None:
            _check_int("next_deal", self.next_deal, 0, 10**12 - 1)
        _check_int("revision", self.revision, 0, 10**12 - 1)
        _check_text("variant", self.variant, MAX_VARIANT_CHARS, allow_empty=True)
        if not isinstance(self.fingerprint, str) or not _FINGERPRINT.fullmatch(self.fingerprint):
            raise AdError("fingerprint must be 16-64 lowercase hex digits")
        _check_int("protocol_version", self.protocol_version, 1, 65535)
        _check_int("seats_total", self.seats_total, 1, MAX_SEATS)
        _check_int("seats_taken", self.seats_taken, 0, self.seats_total)
        if not isinstance(self.needs_code, bool):
            raise AdError("needs_code must be a bool")
        _check_int("port", self.port, 1, 65535)
        if not isinstance(self.addresses, tuple) or len(self.addresses) > _MAX_ADDRESSES:
            raise AdError(f"addresses must be a tuple of at most {_MAX_ADDRESSES}")
        for address in self.addresses:
            try:
                ipaddress.ip_address(address)
            except ValueError:
                raise AdError(f"address {address!r} is not an IP address") from None
        if self.instance:
            _check_text("instance", self.instance, _MAX_INSTANCE_BYTES, allow_empty=False)
            if len(self.instance.encode()) > _MAX_INSTANCE_BYTES:
                raise AdError(f"instance is longer than {_MAX_INSTANCE_BYTES} bytes")


def _check_text(field: str, value: object, max_chars: int, *, allow_empty: bool) -> None:
    """Text shown in a terminal: bounded, no control/format characters, no edge spaces."""
    if not isinstance(value, str):
        raise AdError(f"{field} must be text")
    if not value and not allow_empty:
        raise AdError(f"{field} must not be empty")
    if len(value) > max_chars:
        raise AdError(f"{field} is longer than {max_chars} characters")
    if not value.isprintable() or value != value.strip():
        raise AdError(f"{field} {value!r} has control characters or edge spaces")


def _check_int(field: str, value: object, low: int, high: int) -> None:
    if type(value) is not int or not low <= value <= high:
        raise AdError(f"{field} must be an integer in {low}..{high}, got {value!r}")


def encode_txt(ad: TableAd) -> dict[str, str]:
    """The TXT properties for ``ad``; keys are short because TXT space is scarce."""
    return {
        "v": str(ad.protocol_version),
        "n": ad.name,
        "fp": ad.fingerprint,
        "st": str(ad.seats_taken),
        "sn": str(ad.seats_total),
        "var": ad.variant,
        "code": "1" if ad.needs_code else "0",
        "h": ad.host,
        "ph": ad.state,
        "r": str(ad.revision),
        **({} if ad.next_deal is None else {"nt": str(ad.next_deal)}),
    }


def decode_txt(
    properties: Mapping[bytes, bytes | None],
    *,
    instance: str,
    addresses: Sequence[str],
    port: int | None,
) -> TableAd:
    """Build a ``TableAd`` from untrusted TXT properties, or raise ``AdError`` saying why.

    Unknown keys are ignored so later versions can add fields; the host's
    name, state, next deal and revision are optional (an older host sends none).
    """

    def text(key: str) -> str:
        raw = properties.get(key.encode())
        if raw is None:
            raise AdError(f"TXT key {key!r} is missing or has no value")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise AdError(f"TXT key {key!r} is not UTF-8") from None

    def number(key: str, digits: re.Pattern[str] = _DIGITS) -> int:
        value = text(key)
        if not digits.fullmatch(value):
            raise AdError(f"TXT key {key!r} is not a small decimal number: {value!r}")
        return int(value)

    def optional(key: str) -> bool:
        return properties.get(key.encode()) is not None

    code = text("code")
    if code not in ("0", "1"):
        raise AdError(f"TXT key 'code' must be 0 or 1, got {code!r}")
    if not addresses:
        raise AdError("no address records")
    if port is None:
        raise AdError("no port")
    return TableAd(
        name=text("n"),
        fingerprint=text("fp"),
        protocol_version=number("v"),
        seats_taken=number("st"),
        seats_total=number("sn"),
        variant=text("var"),
        needs_code=code == "1",
        port=port,
        addresses=tuple(addresses[:_MAX_ADDRESSES]),
        instance=instance,
        host=text("h") if optional("h") else "",
        state=text("ph") if optional("ph") else "lobby",
        next_deal=number("nt", _LONG_DIGITS) if optional("nt") else None,
        revision=number("r", _LONG_DIGITS) if optional("r") else 0,
    )


def _txt_properties(rdata: bytes) -> dict[bytes, bytes | None]:
    """A TXT record's strings (RFC 6763 §6: length-prefixed ``key=value``) as properties;
    the first of a repeated key counts, as the RFC says."""
    properties: dict[bytes, bytes | None] = {}
    at = 0
    while at < len(rdata):
        length = rdata[at]
        item = rdata[at + 1:at + 1 + length]
        at += 1 + length
        key, eq, value = item.partition(b"=")
        if key and key not in properties:
            properties[key] = value if eq else None
    return properties


def _revision(properties: Mapping[bytes, bytes | None]) -> int:
    raw = properties.get(b"r")
    return int(raw) if raw is not None and raw.isdigit() and len(raw) <= 12 else -1


def random_suffix() -> str:
    """A short tag that makes the instance name unique on the LAN."""
    return secrets.token_hex(2)


def _instance_label(name: str, suffix: str) -> str:
    """``"Ana's table #3f2a"``, cut to the 63-byte DNS label limit on a character boundary."""
    tag = f" #{suffix}"
    budget = _MAX_INSTANCE_BYTES - len(tag.encode())
    head = name.encode()[:budget].decode("utf-8", errors="ignore").rstrip()
    return head + tag


def _instance_from_service_name(name: str) -> str:
    if not name.lower().endswith("." + SERVICE_TYPE):
        raise AdError(f"{name!r} is not a {SERVICE_TYPE} instance")
    return name[: -len(SERVICE_TYPE) - 1]


def _service_info(ad: TableAd, server: str) -> ServiceInfo:
    return ServiceInfo(
        SERVICE_TYPE,
        f"{ad.instance}.{SERVICE_TYPE}",
        port=ad.port,
        properties=encode_txt(ad),
        server=server,
        host_ttl=_RECORD_TTL,
        other_ttl=_RECORD_TTL,
        parsed_addresses=list(ad.addresses),
    )


class _Keep:
    """``TableAdvertiser.update``'s default for ``next_deal``: leave it as it is."""


class TableAdvertiser:
    """Publishes one table on the LAN for as long as it is open.

    Give it an ``AsyncZeroconf`` to share one mDNS stack with a browser in the
    same process; otherwise it opens its own on ``interfaces`` and closes it.
    ``suffix`` is injectable so name-collision handling can be tested.
    """

    def __init__(
        self,
        ad: TableAd,
        interfaces: Interfaces,
        *,
        aiozc: AsyncZeroconf | None = None,
        suffix: Callable[[], str] = random_suffix,
        attempts: int = 5,
    ) -> None:
        self._ad = ad
        self._interfaces = interfaces
        self._aiozc = aiozc
        self._owns_zeroconf = aiozc is None
        self._suffix = suffix
        self._attempts = attempts
        self._info: ServiceInfo | None = None
        self._broadcast: asyncio.Future[Any] | None = None

    @property
    def ad(self) -> TableAd:
        """The ad as currently published (instance and addresses filled in)."""
        return self._ad

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

    async def start(self) -> TableAd:
        """Probe for a free instance name, register, and start announcing.

        Takes about a second with RFC 6762 timings (three probes); raises
        ``AdvertiseError`` if every name tried was taken.
        """
        if self._info is not None:
            raise RuntimeError("TableAdvertiser already started")
        if self._aiozc is None:
            self._aiozc = AsyncZeroconf(interfaces=self._interfaces)
        addresses = self._ad.addresses or tuple(advertised_addresses(self._interfaces))
        try:
            for _ in range(self._attempts):
                suffix = self._suffix()
                if not _SUFFIX.fullmatch(suffix):
                    raise ValueError(f"instance suffix {suffix!r} must be 1-8 of [0-9a-z]")
                ad = replace(
                    self._ad, instance=_instance_label(self._ad.name, suffix), addresses=addresses
                )
                server = f"nerts-{ad.fingerprint[:12]}-{suffix}.local."
                info = _service_info(ad, server)
                try:
                    announce = await self._aiozc.async_register_service(info)
                except (NonUniqueNameException, ServiceNameAlreadyRegistered):
                    _log.info("table instance name %r is taken; trying another", ad.instance)
                    continue
                self._broadcast = asyncio.ensure_future(announce)
                self._info, self._ad = info, ad
                return ad
        except BaseException:
            await self._close_zeroconf()
            raise
        await self._close_zeroconf()
        raise AdvertiseError(f"no free instance name for table {self._ad.name!r}")

    async def update(
        self,
        *,
        seats_taken: int | None = None,
        seats_total: int | None = None,
        variant: str | None = None,
        needs_code: bool | None = None,
        state: str | None = None,
        next_deal: int | type[_Keep] | None = _Keep,
    ) -> TableAd:
        """Change what the lobby shows (seats, state) and re-announce the TXT record
        under the next revision. ``next_deal`` is kept unless given (None clears it)."""
        if self._info is None or self._aiozc is None:
            raise RuntimeError("TableAdvertiser.update() before start()")
        old = self._ad
        new = replace(
            old,
            seats_taken=old.seats_taken if seats_taken is None else seats_taken,
            seats_total=old.seats_total if seats_total is None else seats_total,
            variant=old.variant if variant is None else variant,
            needs_code=old.needs_code if needs_code is None else needs_code,
            state=old.state if state is None else state,
            next_deal=old.next_deal if not isinstance(next_deal, int | None) else next_deal,
        )
        if new == old:
            return old
        new = replace(new, revision=old.revision + 1)
        assert self._info.server is not None  # always set by _service_info
        info = _service_info(new, self._info.server)
        # A pending announcement would re-send the old TXT after the new one.
        self._cancel_broadcast()
        self._broadcast = asyncio.ensure_future(await self._aiozc.async_update_service(info))
        self._info, self._ad = info, new
        return new

    async def close(self) -> None:
        """Send goodbyes (lobbies drop the table at once) and release mDNS."""
        info, self._info = self._info, None
        if info is not None and self._aiozc is not None:
            self._cancel_broadcast()
            goodbye = await self._aiozc.async_unregister_service(info)
            await goodbye
        await self._close_zeroconf()

    def _cancel_broadcast(self) -> None:
        if self._broadcast is not None:
            self._broadcast.cancel()
            self._broadcast = None

    async def _close_zeroconf(self) -> None:
        if self._owns_zeroconf and self._aiozc is not None:
            aiozc, self._aiozc = self._aiozc, None
            await aiozc.async_close()


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
    ) -> None:
        self._interfaces = interfaces
        self._aiozc = aiozc
        self._owns_zeroconf = aiozc is None
        self._on_event = on_event
        self._resolve_timeout_ms = resolve_timeout * 1000
        self._browser: AsyncServiceBrowser | None = None
        self._tables: dict[str, TableAd] = {}  # by lower-cased service name
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
        tasks = list(self._resolving.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tables.clear()
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
            self._remove(key)
            return
        if key not in self._tables and len(self._tables) + len(self._resolving) >= MAX_TABLES:
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
            self._remove(key)
            return
        self._rejected.pop(key, None)
        old = self._tables.get(key)
        if old == ad or (old is not None and ad.revision < old.revision):
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


def matching(tables: Sequence[TableAd], name: str | None) -> list[TableAd]:
    """The tables ``name`` means, as a player types it: all of them for None; else its
    exact instance name, else the tables of exactly that name, else those whose
    name starts with it, else those whose name has it anywhere (case does not
    matter). The first of these that finds any decides."""
    if name is None:
        return list(tables)
    wanted = name.casefold()
    names = [(t, t.name.casefold()) for t in tables]
    for tier in (
        [t for t in tables if t.instance.casefold() == wanted],
        [t for t, n in names if n == wanted],
        [t for t, n in names if n.startswith(wanted)],
        [t for t, n in names if wanted in n],
    ):
        if tier:
            return tier
    return []


def describe_table(table: TableAd) -> str:
    """``'Red' (Ana 0123-4567)``: a table as a line of text tells it from a namesake."""
    fingerprint = f"{table.fingerprint[:4]}-{table.fingerprint[4:8]}"
    host = f"{table.host} {fingerprint}" if table.host else fingerprint
    return f"{table.name!r} ({host})"


async def find_table(name: str | None, interfaces: Interfaces, timeout: float = 3.0) -> TableAd:
    """Find the table for ``nerts join [TABLE]``: see :func:`matching` for what matches.

    Raises ``TableNotFoundError`` when nothing matches within ``timeout``
    seconds (saying which tables were seen, or, when no mDNS answer came at
    all, to join by address) and ``AmbiguousTableError`` when several tables
    match. Unless the exact instance name was given, it listens a further
    0.6 s after the first match to notice a second one. A socket that mDNS
    cannot use (multicast blocked) is a ``DiscoveryError``.
    """
    what = "table" if name is None else f"table named {name!r}"
    try:
        async with TableBrowser(interfaces) as browser:
            try:
                found = await browser.wait_for(lambda ts: bool(matching(ts, name)), timeout)
            except TimeoutError:
                raise _not_found(f"found no {what} on the network in {timeout:g} s",
                                 browser.tables) from None
            exact = [t for t in matching(found, name) if name is not None
                     and t.instance.casefold() == name.casefold()]
            if exact:
                return exact[0]
            await asyncio.sleep(_FIND_SETTLE)
            await browser.settle(timeout)  # a second table seen but not resolved yet counts
            seen = browser.tables
    except OSError as exc:
        raise DiscoveryError(f"cannot use mDNS here ({exc.strerror or exc}): {_BY_ADDRESS}"
                             ) from None
    candidates = matching(seen, name)
    if not candidates:
        raise _not_found(f"the {what} went away while looking", seen)
    if len(candidates) > 1:
        listing = ", ".join(describe_table(t) for t in candidates)
        raise AmbiguousTableError(
            f"several tables match {name!r}: {listing}; name one of them (or its host's "
            "HOST:PORT)" if name is not None else
            f"several tables are open: {listing}; name one of them", candidates)
    return candidates[0]


_BY_ADDRESS = "join by the host's address instead: nerts join HOST:PORT"


def _not_found(line: str, seen: Sequence[TableAd]) -> TableNotFoundError:
    """No match: the tables there are, or (nothing answered at all) the way round mDNS."""
    if not seen:
        return TableNotFoundError(
            f"{line}; no table answered at all (is multicast blocked on this network?): "
            f"{_BY_ADDRESS}")
    return TableNotFoundError(
        f"{line}; tables seen: {', '.join(describe_table(t) for t in seen)}")


class QuietMdnsErrors(logging.Filter):
    """python-zeroconf logs a socket error (multicast blocked: ``PermissionError``) as a
    warning with its traceback. This filter, on the ``zeroconf`` logger, turns the
    first into one line saying what to do, and keeps the rest out of the log."""

    def __init__(self) -> None:
        super().__init__()
        self._said = False

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if not isinstance(error, OSError):
            return True
        if self._said or record.levelno < logging.WARNING:
            return False
        self._said = True
        record.msg = (f"mDNS cannot use the network ({error.strerror or error}): tables may "
                      f"not be found or seen; {_BY_ADDRESS}")
        record.args = ()
        record.exc_info = record.exc_text = None
        return True
