"""The organiser's screen at an event (``nerts event open`` at a terminal).

Small on purpose: who registered and who is connected now, the tables of the
game under way and what each is doing, the news, and one key that seats the
next game (another that seats it though tables still play, ending those
without their result). It reads the event through ``lan.EventDesk`` and
never imports ``net``. Quitting leaves the event journaled:
``nerts event open --resume`` goes on with it.
"""

from __future__ import annotations

from collections import deque

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples, fragment_list_width
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import HSplit, Layout, Window
from prompt_toolkit.output import Output
from prompt_toolkit.utils import get_cwidth

from ..lan import EventDesk
from .theme import build_style
from .widgets import rule, screen_width, spread, text

__all__ = ["DESK_KEYS", "EventScreen"]

#: Each key with what it does, in full and in short (for a narrow screen).
DESK_KEYS = (("n", "seat the next game", "next game"),
             ("F", "seat it, ending the tables still playing", "end tables, seat"),
             ("q", "quit (the event stays journaled: --resume)", "quit (--resume)"))
_NEWS = 4


class EventScreen:
    """The organiser's screen over ``desk`` (see the module's docstring)."""

    def __init__(self, desk: EventDesk, *, input: Input | None = None,
                 output: Output | None = None) -> None:
        self.desk = desk
        self.news: deque[tuple[str, str]] = deque(maxlen=_NEWS)
        keys = KeyBindings()
        keys.add("n")(lambda _e: self._start(force=False))
        keys.add("F")(lambda _e: self._start(force=True))

        @keys.add("q")
        @keys.add("c-c")
        def _quit(event: KeyPressEvent) -> None:
            event.app.exit()

        anchor = Window(height=0)  # the focus: the layout's rows are no windows
        self.app: Application[None] = Application(
            layout=Layout(HSplit([
                anchor,
                text(self._top),
                rule(lambda: self._players_title()),
                text(self._players, height=None),
                rule(lambda: [("class:rule.title", "Tables")]),
                text(self._tables, height=None),
                rule(lambda: [("class:rule.title", "News")]),
                text(self._news, height=_NEWS, stretch=True),
                text(self._hints),
            ]), focused_element=anchor),
            key_bindings=keys, style=build_style(four_colour=False), full_screen=True,
            input=input, output=output)
        desk.subscribe(self.app.invalidate)

    async def run(self) -> None:
        await self.app.run_async()

    def _start(self, *, force: bool) -> None:
        try:
            self.news.appendleft(("class:msg.event", self.desk.start_game(force=force)))
        except ValueError as exc:
            line = str(exc)
            self.news.appendleft(("class:msg.error", line[:1].upper() + line[1:]))
        self.app.invalidate()

    def _top(self) -> StyleAndTextTuples:
        """The event, its game and its port at the right edge, whole: on a narrow
        screen the brand gives way first, then the start of the event's name (a
        port cut short would send players to another)."""
        brand: StyleAndTextTuples = [("class:title", " NERTS "), ("class:dim", " event")]
        title = f" {self.desk.title} "
        room = screen_width()
        if get_cwidth(title) + fragment_list_width(brand) + 1 > room:
            brand = []
            if get_cwidth(title) > room:
                while get_cwidth(title) > room - 1:
                    title = title[1:]
                title = "…" + title
        return spread(brand, [("class:you", title)])

    def _players_title(self) -> StyleAndTextTuples:
        players = self.desk.players()
        on = sum(1 for _name, _fp, connected in players if connected)
        return [("class:rule.title", "Players"),
                ("class:dim", f" · {len(players)} registered, {on} connected")]

    def _players(self) -> StyleAndTextTuples:
        players = self.desk.players()
        if not players:
            return [("class:dim", "  Nobody has registered yet: players find the event in "
                                  "their lobby, or nerts event join NAME\n")]
        out: StyleAndTextTuples = []
        for name, fp, connected in players:
            out += [("class:good" if connected else "class:dim",
                     f"  {'●' if connected else '○'} "),
                    ("", f"{name:<24} "), ("class:dim", f"{fp}\n")]
        return out

    def _tables(self) -> StyleAndTextTuples:
        lines = self.desk.tables()
        if not lines:
            return [("class:dim", "  No game seated yet: n seats the first among the "
                                  "players connected\n")]
        return [("", f"  {line}\n") for line in lines]

    def _news(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        for style, line in self.news:
            out += [(style, f"  {line}\n")]
        return out

    def _hints(self) -> StyleAndTextTuples:
        """Every key, in full where the screen is wide enough, else in short (never
        cut: a hint cut off reads as another)."""
        def line(short: bool, gap: str) -> StyleAndTextTuples:
            out: StyleAndTextTuples = [("", " ")]
            for key, what, brief in DESK_KEYS:
                out += [("class:key", key), ("class:dim", f" {brief if short else what}{gap}")]
            return out

        room = screen_width()
        for short, gap in ((False, "  "), (True, "  "), (True, " ")):
            keys = line(short, gap)
            if fragment_list_width(keys) - len(gap) <= room:  # the last gap may overhang
                break
        return keys
