"""Watching an event's tables as a spectator, for the live scores a projector shows.

Any machine that holds an event's book (the organiser's, or one that only
follows the event, as the projector's page does) can watch the tables of the
game under way: each is found on mDNS by its name and its host's key, or a
stand-in's (:func:`find_seated`), watched without a seat (every entry checked, as a
spectator checks them), and what the watcher sees -- the table's phase, its
round, the running totals -- goes to the book (``EventBook.follow``) every
second, until the table's record is in or the game is over. It is for show
only: standings count the signed records and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from ..event.book import EventBook
from ..event.entries import EventError
from ..net.discovery import DiscoveryError, TableAd, TableBrowser, TableNotFoundError
from ..net.interfaces import Interfaces, listen_addresses
from ..net.link import LinkError
from ..protocol.identity import Identity
from ..protocol.replica import Phase
from .node import Endpoint, NetSession, TableConfig, fingerprint_hex
from .tables import join_found

__all__ = ["TableWatch", "find_seated", "table_name", "watch_game"]

_log = logging.getLogger(__name__)

LOOK = 1.0
"""Seconds between two looks at a watched table."""
#: What the projector's page calls a table's phase.
_SHOWN = {Phase.LOBBY: "waiting", Phase.SHUFFLE: "playing", Phase.PLAYING: "playing",
          Phase.SCORING: "playing", Phase.BETWEEN: "break", Phase.OVER: "over"}


def table_name(game: int, letter: str) -> str:
    """An event's table, as the lobbies show it."""
    return f"Game {game} · table {letter}"


async def find_seated(name: str, hosts: Sequence[bytes], interfaces: Interfaces,
                      timeout: float) -> TableAd:
    """The event's table ``name`` as opened by the earliest of ``hosts`` (its seats in
    order, those whose turn to host has come) that mDNS shows within ``timeout``
    seconds: a stand-in's where the seats before it did not open it. One line of
    ``DiscoveryError`` when none is found."""
    order = {fingerprint_hex(key): i for i, key in enumerate(hosts)}

    def theirs(ads: list[TableAd]) -> list[TableAd]:
        return sorted((ad for ad in ads if ad.name == name and ad.fingerprint in order),
                      key=lambda ad: order[ad.fingerprint])

    try:
        async with TableBrowser(interfaces) as browser:
            try:
                await browser.wait_for(lambda ads: bool(theirs(ads)), timeout)
            except TimeoutError:
                raise TableNotFoundError(f"{name} is not open yet (looked {timeout:g} s)"
                                         ) from None
            await browser.settle(timeout)  # an earlier seat's, heard but not resolved yet
            found = theirs(browser.tables)
    except OSError as exc:
        raise DiscoveryError(f"cannot use mDNS here ({exc.strerror or exc})") from None
    if not found:
        raise TableNotFoundError(f"{name} went away while looking")
    return found[0]


def watch_game(identity: Identity, book: EventBook, game: int, interfaces: Interfaces,
               changed: Callable[[], None]) -> list[Coroutine[Any, Any, None]]:
    """A watch of each table of game ``game`` (each to run as a task), ``changed()``
    after each look."""
    return [TableWatch(identity, book, game, table.letter, table.seats, changed).run(interfaces)
            for table in book.games[game].seated.tables]


class TableWatch:
    """Watching one table of an event's game as a spectator (see the module)."""

    def __init__(self, identity: Identity, book: EventBook, game: int, letter: str,
                 hosts: Sequence[bytes], changed: Callable[[], None]) -> None:
        self._identity = identity
        self._book = book
        self._game = game
        self._letter = letter
        self._changed = changed
        self._name = table_name(game, letter)
        self._hosts = tuple(hosts)  # its seats: the first hosts it, or one stands in

    def _done(self) -> bool:
        state = self._book.games.get(self._game)
        return (state is None or state.finished
                or (self._game, self._letter) in self._book.results())

    async def run(self, interfaces: Interfaces) -> None:
        while not self._done():
            try:
                ad = await find_seated(self._name, self._hosts, interfaces, 5.0)
                session = await join_found(self._identity, ad, TableConfig(views=False),
                                           Endpoint(listen_addresses("", interfaces)),
                                           watch=True)
            except (DiscoveryError, LinkError, OSError) as exc:
                _log.debug("watching %s: %s", self._name, exc)
                await asyncio.sleep(LOOK)
                continue
            running = asyncio.ensure_future(session.run())
            try:
                while not self._done() and not running.done():
                    self._look(session)
                    await asyncio.sleep(LOOK)
            finally:
                session.close()
                await asyncio.gather(running, return_exceptions=True)

    def _look(self, session: NetSession) -> None:
        r = session.replica
        view = r.view()
        rnd = view.round
        with contextlib.suppress(EventError):
            self._book.follow(self._game, self._letter, _SHOWN.get(r.phase, "playing"),
                              rnd.number if rnd is not None else 0,
                              {s.key: r.totals.get(s.key, 0) for s in view.seats})
        self._changed()
