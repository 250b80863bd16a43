"""The lobby's view of the events on the LAN (``lan.Events``), built on ``net`` and the
event's link.

:class:`LanEvents` browses for events (``net.discovery``'s event service) and
registers the player for one through an :class:`~.event_seat.EventLink`,
which then follows the event for as long as the lobby runs: each seating
that seats the player is said on the lobby's screen, and
:meth:`EventPlace.sit` takes them to their table (``event_seat.open_table``)
with the screen of any table. Every failure is a ``ConnectionError`` with a
line for the player, so no ``net`` error type reaches the UI.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from ..event.entries import EventError
from ..lan import EventListing
from ..net.discovery import EventAd, EventBrowser
from ..net.interfaces import Interfaces
from ..protocol.identity import Identity
from ..store import Store
from .event_seat import EventLink, open_table
from .node import Endpoint, NetSession
from .tables import _player_error

__all__ = ["REGISTER_TIME", "LanEvents", "LanPlace"]

REGISTER_TIME = 10.0
"""Seconds the lobby waits for the organiser to take a registration."""


class LanPlace:
    """This player's place at one event (``lan.EventPlace``), following it."""

    def __init__(self, link: EventLink, *, interfaces: Interfaces, endpoint: Endpoint,
                 store: Store | None) -> None:
        self._link = link
        self._interfaces = interfaces
        self._endpoint = endpoint
        self._store = store
        self._following = asyncio.ensure_future(link.run())
        self._following.add_done_callback(_quiet)

    @property
    def registered(self) -> bool:
        return self._link.registered

    @property
    def refused(self) -> str | None:
        return self._link.refused

    @property
    def seat_line(self) -> str | None:
        book = self._link.book
        game = len(book.games)
        if not game or book.games[game].finished:
            return None
        seat = self._link.my_seat(game)
        return None if seat is None else seat.line()

    async def sit(self) -> NetSession:
        book = self._link.book
        seat = self._link.my_seat(len(book.games))
        if seat is None or book.games[seat.game].finished:
            raise ConnectionError("the game under way seats you nowhere")
        return await _player_error(open_table(
            self._link.identity, book, seat, interfaces=self._interfaces,
            endpoint=self._endpoint, store=self._store, views=True,
            seated_at=self._link.seated_at(seat.game)))

    def close(self) -> None:
        self._link.close()
        self._following.cancel()

    async def wait_registered(self, timeout: float) -> None:
        """Until the organiser has taken the registration; ConnectionError if it
        refuses it, or says nothing in ``timeout`` seconds."""
        try:
            async with asyncio.timeout(timeout):
                while not self._link.registered:
                    if self._link.refused is not None:
                        raise ConnectionError(self._link.refused)
                    await asyncio.sleep(0.05)
        except TimeoutError:
            raise ConnectionError("the event's organiser did not answer in "
                                  f"{timeout:g} s") from None


def _quiet(task: asyncio.Task[None]) -> None:
    """A link refused ends with the reason, which its place says: nothing to log."""
    if not task.cancelled():
        with contextlib.suppress(EventError):
            task.result()


class LanEvents:
    """The lobby's view of the events on the LAN (``lan.Events``)."""

    def __init__(self, identity: Identity, interfaces: Interfaces, *, endpoint: Endpoint,
                 store: Store | None = None) -> None:
        self._identity = identity
        self._interfaces = interfaces
        self._endpoint = endpoint
        self._store = store
        self._browser: EventBrowser | None = None
        self._places: dict[str, LanPlace] = {}

    @property
    def events(self) -> list[EventAd]:
        return self._browser.events if self._browser is not None else []

    async def browse_events(self, changed: Callable[[], None]) -> None:
        self._browser = EventBrowser(self._interfaces, changed)
        await _player_error(self._browser.start())

    def event_label(self, event: EventListing) -> str:
        return f"{event.name}@{event.fingerprint[:4]}"

    async def register(self, event: EventListing, code: str | None,
                       changed: Callable[[], None]) -> LanPlace:
        ad = next((e for e in self.events if e.instance == event.instance), None)
        if ad is None or not ad.addresses:
            raise ConnectionError(f"{event.name} is gone from the network")
        known = self._places.get(ad.instance)
        if known is not None and known.refused is None:
            return known
        link = EventLink(self._identity, (ad.addresses[0], ad.port), register=True,
                         code=code, store=self._store, changed=changed)
        place = LanPlace(link, interfaces=self._interfaces, endpoint=self._endpoint,
                         store=self._store)
        try:
            await place.wait_registered(REGISTER_TIME)
        except ConnectionError:
            place.close()
            raise
        self._places[ad.instance] = place
        return place

    async def close_events(self) -> None:
        for place in self._places.values():
            place.close()
        self._places.clear()
        if self._browser is not None:
            await self._browser.close()
