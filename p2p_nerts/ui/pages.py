"""The lobby's pages of results: the player's history, a game's rounds, event standings.

Every line shown is written by ``records`` (the same words ``nerts history``
and ``nerts event`` print): these pages only choose which lines, and let the
player pick a game, then a round to watch again. Reading a record
checks every signature again, so it runs in a worker thread while the page
says what is under way; a record that fails is one line, and the page stays.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial

from prompt_toolkit.application import get_app
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyBindingsBase
from prompt_toolkit.layout import Container, HSplit

from ..lines import counted
from ..protocol.identity import Identity
from ..records.history import (
    NO_GAMES,
    Game,
    game_line,
    round_line,
    round_to_replay,
    statistics,
    statistics_text,
)
from ..records.record import RecordError, decode
from ..records.replay import RoundReplay
from ..records.standings import EVENT_HOURS, Standings, standings_text
from ..session import History, HistoryError
from .hands import Page, player_input, sentence
from .keys import on_key
from .replay import Replaying
from .table import MESSAGE_ROWS, messages
from .widgets import on_click, rule, spread, text

Results = Callable[[float], Awaitable[Standings]]
"""The standings of the signed game records the LAN's players serve (and this
player's own) for games that ended since a time, each verified as it came;
ConnectionError when the network cannot be asked."""

STANDINGS_EVERY = 5.0
"""Seconds between two askings of an open standings page."""

#: Rows of a list page that are neither its list nor the lines below it: header,
#: three rules, the news, key hints.
_OTHER_ROWS = 5 + MESSAGE_ROWS


def header(identity: Identity, title: str) -> Container:
    """`` NERTS  history ...  Ana 0123-4567-89ab-cdef``: the page, and who you are."""
    return text(lambda: spread([("class:title", " NERTS "), ("class:dim", f" {title}")],
                               [("class:you", identity.name),
                                ("class:dim", f" {identity.fingerprint} ")]))


class ListPage(Page):
    """A title, rows to choose one of (↑↓ or a click, then Enter or a click again), and
    lines below them."""

    def __init__(self, identity: Identity, title: str, below: str, rows: Sequence[str],
                 lines: Sequence[str] = ()) -> None:
        super().__init__()
        self.identity = identity
        self.chosen = 0
        self._title = title
        self._row_texts = rows
        self._lines_below = lines
        keys = KeyBindings()
        for key, action in (("up", lambda: self.move(-1)), ("down", lambda: self.move(1)),
                            ("enter", self.choose),
                            ("escape", self.leave), ("q", self.leave)):
            keys.add(key, eager=True)(on_key(action))
        self._keys = keys
        self._screen = HSplit([
            header(identity, title),
            rule(lambda: [("class:rule.title", self.heading())]),
            text(self._rows, height=None),
            rule(lambda: [("class:rule.title", below)]),
            text(lambda: _lines(self.lines()), height=None),
            rule(lambda: [("class:rule.title", "News")]),
            text(lambda: messages(self.state), height=MESSAGE_ROWS, stretch=True),
            text(lambda: [("class:dim", f" ↑↓ choose  Enter {self.action}  Esc back")]),
        ])

    action = "open"  # what Enter does, for the key hints
    empty = "Nothing here yet."  # what the list says when it has no rows

    @property
    def screen(self) -> Container:
        return self._screen

    @property
    def keys(self) -> KeyBindingsBase:
        return self._keys

    def heading(self) -> str:
        return self._title

    def rows(self) -> Sequence[str]:
        return self._row_texts

    def lines(self) -> Sequence[str]:
        """The lines under the list."""
        return self._lines_below

    def opened(self, index: int) -> None:
        """Row ``index`` was chosen."""
        raise NotImplementedError

    @player_input
    def move(self, by: int) -> None:
        self.chosen = max(0, min(len(self.rows()) - 1, self.chosen + by))

    @player_input
    def choose(self) -> None:
        """Enter: open the chosen row (there may be none)."""
        if self.rows():
            self.opened(self.chosen)

    @player_input
    def click(self, index: int) -> None:
        """A click chooses a row; a click on the chosen one opens it (as in the lobby)."""
        if index == self.chosen:
            self.opened(index)
        else:
            self.chosen = index

    def _rows(self) -> StyleAndTextTuples:
        rows = self.rows()
        if not rows:
            return [("class:dim", f"  {self.empty}")]
        room = max(1, get_app().output.get_size().rows - _OTHER_ROWS - len(self.lines()))
        first = max(0, min(self.chosen - room // 2, len(rows) - room))
        out: StyleAndTextTuples = []
        for index in range(first, min(len(rows), first + room)):
            here = index == self.chosen
            if out:
                out.append(("", "\n"))
            out.append(("class:selected" if here else "",
                        f"  {'▸' if here else ' '} {rows[index]}",
                        on_click(partial(self.click, index))))
        return out


def _lines(lines: Sequence[str]) -> StyleAndTextTuples:
    return [("", "\n".join(f"  {line}" for line in lines))]


class HistoryPage(ListPage):
    """The player's games, newest first, and their statistics (``nerts history``'s lines)."""

    action = "its rounds"
    empty = NO_GAMES

    def __init__(self, identity: Identity, store: History,
                 open_page: Callable[[Page], None]) -> None:
        me = identity.fingerprint
        self.games: list[tuple[int, Game]] = store.games()
        stats = statistics([g for _n, g in self.games], me)
        super().__init__(identity, "history", "Your statistics",
                         [game_line(n, g, me) for n, g in self.games],
                         statistics_text(stats) if self.games else [])
        self.store = store
        self._open = open_page

    def heading(self) -> str:
        return f"Your games · {counted(len(self.games), 'game')} kept, newest first"

    def opened(self, index: int) -> None:
        number, game = self.games[index]
        self._open(GamePage(self.identity, self.store, number, game, self._open))


class GamePage(ListPage):
    """One game's rounds; choosing one replays it (:class:`~p2p_nerts.ui.replay.Replaying`)."""

    action = "replay it"

    def __init__(self, identity: Identity, store: History, number: int, game: Game,
                 open_page: Callable[[Page], None]) -> None:
        super().__init__(identity, f"game #{number}", "The game",
                         [round_line(game, r) for r in game["rounds"]],
                         [game_line(number, game, identity.fingerprint)])
        self.store = store
        self.number = number
        self.game = game
        self._open = open_page
        self.loading: int | None = None  # the round being read from the record

    def heading(self) -> str:
        return f"Rounds of game #{self.number} at {self.game['table']}"

    def opened(self, index: int) -> None:
        if self.loading is not None:
            self.state.error(f"Wait: reading round {self.loading}…")
            return
        number = self.game["rounds"][index]["round"]
        try:
            data = self.store.game_record(self.number)
        except HistoryError as exc:
            self.state.error(sentence(str(exc)))
            return
        if data is None:
            self.state.error(f"Game #{self.number} is no longer kept")
            return
        self.loading = number
        self.state.say(f"Reading round {number} from the game's record…")
        self.spawn(self._replay(data, number))

    async def _replay(self, data: bytes, number: int) -> None:
        try:
            chosen = await asyncio.to_thread(_round, data, number)
        except RecordError as exc:
            self.state.error(sentence(str(exc)))
        else:
            self._open(Replaying(chosen))
        finally:
            self.loading = None
            self.on_change()


def _round(data: bytes, number: int) -> RoundReplay:
    return round_to_replay(decode(data), number)


class StandingsPage(Page):
    """The evening's standings across the LAN's tables (``nerts event``'s lines),
    asked again every ``every`` seconds while the page is open."""

    def __init__(self, identity: Identity, results: Results, *, hours: float = EVENT_HOURS,
                 every: float = STANDINGS_EVERY) -> None:
        super().__init__()
        self.results = results
        self.hours = hours
        self.every = every
        self.shown: list[str] = []
        self.asked: float | None = None  # when the standings shown were asked for
        keys = KeyBindings()
        for key in ("escape", "q"):
            keys.add(key, eager=True)(on_key(self.leave))
        self._keys = keys
        self._screen = HSplit([
            header(identity, "event standings"),
            rule(lambda: [("class:rule.title", "Standings"), ("class:dim", f" · {self._when()}")]),
            text(lambda: _lines(self.shown), height=None),
            rule(lambda: [("class:rule.title", "News")]),
            text(lambda: messages(self.state), height=MESSAGE_ROWS, stretch=True),
            text(lambda: [("class:dim", f" each record verified before it counts · asked "
                                        f"every {self.every:g} s · Esc back")]),
        ])

    @property
    def screen(self) -> Container:
        return self._screen

    @property
    def keys(self) -> KeyBindingsBase:
        return self._keys

    def _when(self) -> str:
        back = f"games of the last {self.hours:g} h"
        if self.asked is None:
            return f"{back}, asking the players on your network…"
        return f"{back}, as of {time.strftime('%H:%M:%S', time.localtime(self.asked))}"

    def start(self) -> None:
        self.spawn(self._watch())

    async def _watch(self) -> None:
        failed = None
        while True:
            since = time.time() - self.hours * 3600
            try:
                standings = await self.results(since)
            except ConnectionError as exc:
                if str(exc) != failed:  # once, not at every asking
                    self.state.error(f"Cannot ask for results: {exc}")
                failed = str(exc)
            else:
                failed = None
                self.shown = standings_text(standings)
                self.asked = time.time()
            self.on_change()
            await asyncio.sleep(self.every)
