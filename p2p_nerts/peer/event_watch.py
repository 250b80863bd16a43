"""Watching an event's tables as a spectator, for the live scores a projector shows.

Any machine that holds an event's book (the organiser's, or one that only
follows the event, as the projector's page does) can watch the tables of the
game under way: each is found on mDNS by its name and its host's key
(:func:`table_name`), watched without a seat (every entry checked, as a
spectator checks them), and what the watcher sees -- the table's phase, its
round, the running totals -- goes to the book (``EventBook.follow``) every
second, until the table's record is in or the game is over. It is for show
only: standings count the signed records and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from ..event.book import EventBook
from ..event.entries import EventError
from ..net.discovery import DiscoveryError, find_table
from ..net.interfaces import Interfaces, listen_addresses
from ..net.link import LinkError
from ..protocol.identity import Identity
from ..protocol.replica import Phase
from .node import Endpoint, NetSession, TableConfig, fingerprint_hex
from .tables import join_found

__all__ = ["TableWatch", "table_name", "watch_game"]

_log = logging.getLogger(__name__)

LOOK = 1.0
"""Seconds between two looks at a watched table."""
#: What the projector's page calls a table's phase.
_SHOWN = {Phase.LOBBY: "waiting", Phase.SHUFFLE: "playing", Phase.PLAYING: "playing",
          Phase.SCORING: "playing", Phase.BETWEEN: "break", Phase.OVER: "over"}


def table_name(game: int, letter: str) -> str:
    """An event's table, as the lobbies show it."""
    return f"Game {game} · table {letter}"


def watch_game(identity: Identity, book: EventBook, game: int, interfaces: Interfaces,
               changed: Callable[[], None]) -> list[Coroutine[Any, Any, None]]:
    """A watch of each table of game ``game`` (each to run as a task), ``changed()``
    after each look."""
    return [TableWatch(identity, book, game, table.letter, table.host, changed).run(interfaces)
            for table in book.games[game].seated.tables]


class TableWatch:
    """Watching one table of an event's game as a spectator (see the module)."""

    def __init__(self, identity: Identity, book: EventBook, game: int, letter: str,
                 host: bytes, changed: Callable[[], None]) -> None:
        self._identity = identity
        self._book = book
        self._game = game
        self._letter = letter
        self._changed = changed
        self._wanted = f"{table_name(game, letter)}@{fingerprint_hex(host)}"

    def _done(self) -> bool:
        state = self._book.games.get(self._game)
        return (state is None or state.finished
                or (self._game, self._letter) in self._book.results())

    async def run(self, interfaces: Interfaces) -> None:
        while not self._done():
            try:
                ad = await find_table(self._wanted, interfaces, 5.0)
                session = await join_found(self._identity, ad, TableConfig(views=False),
                                           Endpoint(listen_addresses("", interfaces)),
                                           watch=True)
            except (DiscoveryError, LinkError, OSError) as exc:
                _log.debug("watching %s: %s", self._wanted, exc)
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
