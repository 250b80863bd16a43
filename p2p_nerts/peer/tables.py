"""Finding and sitting at LAN tables: shared by ``nerts join`` and the network lobby.

Both read a ``HOST:PORT`` the same way (:func:`parse_target`) and try a found
table's addresses the same way (:func:`join_found`). :class:`LanTables` is the
lobby's view of the LAN (``lan.Network``), built from ``net``'s own parts and
errors, so that the UI needs none of them.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ..game.variants import Variants
from ..lan import TableListing
from ..net.channel import normalize_code
from ..net.discovery import MAX_NAME_CHARS, DiscoveryError, TableAd, TableBrowser, table_label
from ..net.interfaces import Interfaces, listen_addresses
from ..net.link import LinkError, Refused
from ..net.wire import NET_VERSION, WireError, parse_address
from ..protocol.identity import Identity
from ..records.standings import Standings
from ..session import Session
from ..store import Store, StoreError
from .headless import drive_partner, table_bot
from .node import Endpoint, NetSession, TableConfig
from .results import LISTEN, event_records

__all__ = ["LanTables", "join_found", "parse_target"]

T = TypeVar("T")
_HOSTNAME_PORT = re.compile(r"([A-Za-z0-9][A-Za-z0-9.-]*):([0-9]+)")
_IP_PORT = re.compile(r"\[([0-9A-Fa-f:.]+)\]:([0-9]+)")  # [::1]:99999


def parse_target(target: str | None) -> tuple[str, int] | None:
    """``HOST:PORT`` (an IP or a host name) → address; anything else names a table.

    Raises ValueError for a ``HOST:PORT`` whose port is out of range: the
    player meant an address, and looking for a table called ``ana:99999``
    would only end, after the search timeout, in "no such table".
    """
    if target is None:
        return None
    try:
        return parse_address(target)
    except WireError:
        pass
    match = _HOSTNAME_PORT.fullmatch(target) or _IP_PORT.fullmatch(target)
    if match is None:
        return None
    if not 0 < int(match[2]) < 65536:
        raise ValueError(f"{target!r}: a port must be 1..65535")
    return match[1], int(match[2])


async def join_found(identity: Identity, ad: TableAd, config: TableConfig, endpoint: Endpoint,
                     store: Store | None = None, *, watch: bool = False) -> NetSession:
    """Join (or, with ``watch``, watch) a table found by mDNS, trying its addresses in turn.

    A host may advertise addresses this peer cannot reach (another subnet, a
    VPN), so an unreachable address moves on to the next. A ``Refused`` (a
    full table, a wrong code) comes from the host itself: another of its
    addresses would say the same, so it ends the search at once.
    """
    failure: LinkError | OSError | None = None
    for ip in ad.addresses:
        try:
            if watch:
                return await NetSession.watch(identity, (ip, ad.port), config, endpoint,
                                              fingerprint=ad.fingerprint)
            return await NetSession.join(identity, (ip, ad.port), config, endpoint,
                                         fingerprint=ad.fingerprint, store=store)
        except Refused:
            raise
        except (LinkError, OSError) as exc:
            failure = exc
    raise failure or LinkError(f"table {ad.name} has no address")


class LanTables:
    """The lobby's view of the LAN (``lan.Network``), built on ``net``.

    Every failure becomes a ``ConnectionError`` with the line ``net`` wrote
    for the player, so no ``net`` error type reaches the UI.
    """

    def __init__(self, identity: Identity, interfaces: Interfaces, *,
                 endpoint: Endpoint | None = None, store: Store | None = None,
                 partner: str | None = None) -> None:
        """``partner``: the skill of a computer player who plays the player's
        tableau with them at share-a-deck tables (the settings' ``partner``)."""
        self._identity = identity
        self._interfaces = interfaces
        self._endpoint = endpoint or Endpoint(listen_addresses("", interfaces))
        self._store = store
        self._partner = partner
        self._partners: set[asyncio.Task[None]] = set()  # held: the loop keeps weak references
        self._browser: TableBrowser | None = None

    @property
    def version(self) -> int:
        return NET_VERSION

    @property
    def max_name(self) -> int:
        return MAX_NAME_CHARS

    @property
    def tables(self) -> list[TableAd]:
        return self._browser.tables if self._browser is not None else []

    async def browse(self, changed: Callable[[], None]) -> None:
        self._browser = TableBrowser(self._interfaces, on_event=lambda _event: changed())
        await _player_error(self._browser.start())

    def address(self, text: str) -> tuple[str, int]:
        address = parse_target(text)
        if address is None:
            raise ValueError(f"{text!r} is not HOST:PORT (for example 192.168.1.20:40123)")
        return address

    def check_code(self, text: str) -> None:
        normalize_code(text)

    def label(self, table: TableListing) -> str:
        return table_label(table, self.tables)

    async def join(self, table: TableListing, code: str | None, *,
                   wait: bool = False) -> Session:
        ad = next((t for t in self.tables if t.instance == table.instance), None)
        if ad is None:
            raise ConnectionError(f"{table.name} is gone from the network")
        config = TableConfig(code=code, wait_for_seat=wait)
        return self._seated(await _player_error(join_found(
            self._identity, ad, config, self._endpoint, store=self._store)))

    async def watch(self, table: TableListing, code: str | None) -> Session:
        ad = next((t for t in self.tables if t.instance == table.instance), None)
        if ad is None:
            raise ConnectionError(f"{table.name} is gone from the network")
        return await _player_error(join_found(self._identity, ad, TableConfig(code=code),
                                              self._endpoint, watch=True))

    async def join_address(self, address: tuple[str, int], code: str | None) -> Session:
        return self._seated(await _player_error(NetSession.join(
            self._identity, address, TableConfig(code=code), self._endpoint, store=self._store)))

    async def host(self, name: str, variants: Variants, code: str | None, *,
                   countdown: float, drop_after: float) -> Session:
        config = TableConfig(variants=variants, code=code, countdown=countdown,
                             drop_after=drop_after)
        return self._seated(await _player_error(NetSession.host(
            self._identity, config, self._endpoint,
            table_name=name, interfaces=self._interfaces, store=self._store)))

    async def results(self, since: float) -> Standings:
        """The lobby's standings (``ui.pages.Results``), found and verified as
        ``nerts event`` finds them."""
        own = self._store.records_since if self._store is not None else lambda _since: []
        try:
            return await event_records(self._interfaces, since, LISTEN, own)
        except StoreError as exc:
            raise ConnectionError(str(exc)) from None
        except OSError as exc:  # mDNS could not start on these interfaces
            raise ConnectionError(f"network error: {exc.strerror or exc}") from None

    async def close(self) -> None:
        if self._browser is not None:
            await self._browser.close()

    def _seated(self, session: NetSession) -> NetSession:
        """The session, with the player's computer partner beside them until it closes."""
        if self._partner is not None:
            task = asyncio.ensure_future(drive_partner(session, table_bot(self._partner),
                                                       time.monotonic))
            self._partners.add(task)
            task.add_done_callback(self._partners.discard)
        return session


#: ``net``'s lines about a missing or unneeded code name the command line's
#: flag; in the lobby the code is a field of the join form.
_FLAG_WORDS = (("use --code", "type it in the code field"),
               ("join without --code", "leave the code field empty"),
               (" (--wait waits for a free seat)", ""))


async def _player_error(opening: Awaitable[T]) -> T:
    """Await ``opening``; whatever ``net`` raises comes out as a ConnectionError for the
    player, in the lobby's words."""
    try:
        return await opening
    except Refused as exc:
        line = str(exc)
        for flag, field in _FLAG_WORDS:
            line = line.replace(flag, field)
        raise ConnectionError(line) from None
    except (DiscoveryError, LinkError) as exc:
        raise ConnectionError(str(exc)) from None
    except OSError as exc:
        raise ConnectionError(f"network error: {exc.strerror or exc}") from None
