"""An event (an evening's tournament) on the LAN: its mDNS service, and finding it.

An event is a ``_nerts-event._tcp.local.`` service of its own, not a table: a
lobby that knows nothing of events never shows it as a table it cannot join.
Its SRV/A records say where the organiser's event server listens; its TXT
record says what a lobby shows (the event's name, the organiser's key
fingerprint, whether it needs a code, the game it is at and how many it has).
As for a table's, every field heard is checked (:func:`decode_event_txt`), and
a bad ad is ignored. What the ad says is only a pointer: the event's own
signed entries, from its server, say what the event is.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from zeroconf import DNSQuestionType, ServiceInfo, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from ..interfaces import Interfaces, advertised_addresses
from ._ad import _FINGERPRINT, _MAX_ADDRESSES, AdError, TableNotFoundError, txt_text

__all__ = ["EVENT_SERVICE", "EventAd", "EventAdvertiser", "EventBrowser", "decode_event_txt",
           "encode_event_txt", "find_event", "look_for_events"]

EVENT_SERVICE = "_nerts-event._tcp.local."
EVENT_VERSION = 1
MAX_EVENT_NAME = 48
MAX_EVENTS = 32
"""Events one LAN shows at most: beyond it a flood of fake ads is ignored."""
_PREFIX = re.compile(r"[0-9a-f]{1,64}")
_RECORD_TTL = 120  # as a table's: a crashed organiser's ad goes within two minutes


@dataclass(frozen=True, slots=True)
class EventAd:
    """What an event tells the LAN: always valid once constructed (see the module)."""

    name: str
    fingerprint: str
    needs_code: bool
    game: int
    games: int
    port: int
    addresses: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not 0 < len(self.name) <= MAX_EVENT_NAME or not self.name.isprintable():
            raise AdError("an event's name must be 1..48 printable characters")
        if not _FINGERPRINT.fullmatch(self.fingerprint):
            raise AdError("an event's fingerprint must be 16..64 lowercase hex digits")
        if not 0 <= self.game <= self.games <= 99:
            raise AdError("an event's games must be 0 <= game <= games <= 99")
        if not 0 < self.port < 65536:
            raise AdError("an event's port must be 1..65535")
        if len(self.addresses) > _MAX_ADDRESSES:
            raise AdError("an event ad with too many addresses")

    @property
    def instance(self) -> str:
        """Unique on the LAN, as a lobby keeps its place (no table's starts so)."""
        return f"event {self.fingerprint} {self.name}"

    @property
    def label(self) -> str:
        """``Friday cup@22d7``: as ``nerts event join`` takes it (:func:`find_event`)."""
        return f"{self.name}@{self.fingerprint[:4]}"


def encode_event_txt(ad: EventAd) -> dict[str, str]:
    return {"v": str(EVENT_VERSION), "name": ad.name, "fp": ad.fingerprint,
            "code": "1" if ad.needs_code else "0", "game": str(ad.game),
            "games": str(ad.games)}


def decode_event_txt(txt: Mapping[bytes, bytes | None], port: int,
                     addresses: tuple[str, ...]) -> EventAd:
    """An event's ad from its TXT record as heard; AdError (one line) on anything wrong."""
    def field(key: str) -> str:
        return txt_text(txt, key)

    if field("v") != str(EVENT_VERSION):
        raise AdError("an event ad of another version")
    code = field("code")
    game, games = field("game"), field("games")
    if code not in ("0", "1") or not (game.isdigit() and games.isdigit()) or len(
            game) > 2 or len(games) > 2:
        raise AdError("an event ad with a malformed field")
    return EventAd(field("name"), field("fp"), code == "1", int(game), int(games), port,
                   addresses[:_MAX_ADDRESSES])


class EventAdvertiser:
    """Publishes one event on ``interfaces`` while it runs; :meth:`update` as it moves on."""

    def __init__(self, ad: EventAd, interfaces: Interfaces) -> None:
        self._ad = ad
        self._interfaces = interfaces
        self._aiozc: AsyncZeroconf | None = None
        self._info: ServiceInfo | None = None
        self._suffix = secrets.token_hex(3)

    def _service_info(self) -> ServiceInfo:
        ad = self._ad
        label = f"nerts-event-{ad.fingerprint[:12]}-{self._suffix}"
        return ServiceInfo(EVENT_SERVICE, f"{label}.{EVENT_SERVICE}", port=ad.port,
                           properties=encode_event_txt(ad), server=f"{label}.local.",
                           host_ttl=_RECORD_TTL, other_ttl=_RECORD_TTL,
                           parsed_addresses=advertised_addresses(self._interfaces))

    async def start(self) -> None:
        self._aiozc = AsyncZeroconf(interfaces=self._interfaces)
        self._info = self._service_info()
        await (await self._aiozc.async_register_service(self._info))

    async def update(self, *, game: int) -> None:
        if self._aiozc is None or game == self._ad.game:
            return
        self._ad = EventAd(self._ad.name, self._ad.fingerprint, self._ad.needs_code, game,
                           self._ad.games, self._ad.port)
        self._info = self._service_info()
        await (await self._aiozc.async_update_service(self._info))

    async def close(self) -> None:
        if self._aiozc is None:
            return
        if self._info is not None:
            with contextlib.suppress(Exception):
                await (await self._aiozc.async_unregister_service(self._info))
        await self._aiozc.async_close()
        self._aiozc = None


class EventBrowser:
    """The events on ``interfaces``, kept up to date while open (bad ads left out);
    ``changed()`` after each one that appears, changes or goes."""

    def __init__(self, interfaces: Interfaces,
                 changed: Callable[[], None] = lambda: None) -> None:
        self._interfaces = interfaces
        self._changed = changed
        self._found: dict[str, EventAd] = {}
        self._pending: set[asyncio.Task[None]] = set()
        self._aiozc: AsyncZeroconf | None = None
        self._browser: AsyncServiceBrowser | None = None

    @property
    def events(self) -> list[EventAd]:
        return sorted(self._found.values(), key=lambda e: (e.name.casefold(), e.fingerprint))

    async def start(self) -> None:
        self._aiozc = AsyncZeroconf(interfaces=self._interfaces)
        self._browser = AsyncServiceBrowser(self._aiozc.zeroconf, EVENT_SERVICE,
                                            handlers=[self._on_change],
                                            question_type=DNSQuestionType.QM)

    async def settle(self, timeout: float = 3.0) -> None:
        """Until the events heard are resolved (at most ``timeout`` s)."""
        if self._pending:
            await asyncio.wait(self._pending, timeout=timeout)

    async def close(self) -> None:
        for task in self._pending:
            task.cancel()
        if self._browser is not None:
            await self._browser.async_cancel()
        if self._aiozc is not None:
            await self._aiozc.async_close()
        self._browser = self._aiozc = None

    def _on_change(self, zeroconf: Zeroconf, service_type: str, name: str,
                   state_change: ServiceStateChange) -> None:
        if state_change is ServiceStateChange.Removed:
            if self._found.pop(name, None) is not None:
                self._changed()
            return
        task = asyncio.get_running_loop().create_task(self._resolve(zeroconf, name))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _resolve(self, zeroconf: Zeroconf, name: str) -> None:
        info = AsyncServiceInfo(EVENT_SERVICE, name)
        if not await info.async_request(zeroconf, 3000, question_type=DNSQuestionType.QM):
            return
        if not info.port or (name not in self._found and len(self._found) >= MAX_EVENTS):
            return
        try:
            ad = decode_event_txt(info.properties, info.port,
                                  tuple(info.parsed_scoped_addresses()))
        except AdError:
            return  # a bad ad is no event
        if self._found.get(name) != ad:
            self._found[name] = ad
            self._changed()


async def look_for_events(interfaces: Interfaces, listen: float) -> list[EventAd]:
    """The events heard on ``interfaces`` in ``listen`` seconds (bad ads left out)."""
    browser = EventBrowser(interfaces)
    await browser.start()
    try:
        await asyncio.sleep(listen)
        await browser.settle()
        return browser.events
    finally:
        await browser.close()


def _matching(events: list[EventAd], name: str) -> list[EventAd]:
    """The events ``name`` means: ``NAME@FINGERPRINT`` as a table's label, or the exact
    name, or those whose name starts with it (case does not matter)."""
    head, at, tail = name.rpartition("@")
    prefix = tail.replace("-", "").casefold()
    if at and _PREFIX.fullmatch(prefix):
        events = [e for e in events if e.fingerprint.startswith(prefix)]
        name = head
    wanted = name.strip().casefold()
    exact = [e for e in events if e.name.casefold() == wanted]
    return exact or [e for e in events if e.name.casefold().startswith(wanted)]


async def find_event(name: str, interfaces: Interfaces, listen: float) -> EventAd:
    """The one event ``name`` means, heard within ``listen`` seconds; TableNotFoundError
    (a ``DiscoveryError``, one line) when none or several do."""
    seen = await look_for_events(interfaces, listen)
    found = _matching(seen, name)
    if len(found) == 1:
        return found[0]
    if found:
        raise TableNotFoundError(f"several events match {name!r}: "
                                 f"{', '.join(e.label for e in found)}; name one as NAME@FP")
    heard = f"; events heard: {', '.join(e.label for e in seen)}" if seen else ""
    raise TableNotFoundError(f"found no event named {name!r} in {listen:g} s{heard}")
