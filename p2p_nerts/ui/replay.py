"""The terminal replay of a finished round: frames from ``records.replay``, drawn.

All the state is an index into the replay's frames, whether it plays, and
how fast; the keys change those, and a ticker steps the index while it
plays. Nothing is computed here that the replay model did not decide.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from functools import partial

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyBindingsBase
from prompt_toolkit.layout import Container, FormattedTextControl, HSplit, Layout, Window
from prompt_toolkit.output import Output

from ..records.replay import RoundReplay
from .hands import Page, player_input
from .keys import on_key
from .theme import build_style, card_fragment, card_or_gap

#: Moves a second, slowest to fastest.
SPEEDS = (1, 2, 4, 8, 16, 32, 64)
_HISTORY = 6  # lines of what happened last
HELP = "Space pause/play · ← → step · + - speed · Home End · q or Esc leaves"


class Replaying(Page):
    """A replay's state and keys; ``index`` is the frame shown. The lobby opens it
    as a page (Esc goes back), :class:`ReplayView` as a program of its own."""

    def __init__(self, replay: RoundReplay) -> None:
        super().__init__()
        self.replay = replay
        self.index = 0
        self.playing = True
        self.speed = 3  # into SPEEDS
        keys = KeyBindings()
        for key, action in (
                (" ", self.toggle), ("right", partial(self.step, 1)),
                ("left", partial(self.step, -1)), ("+", partial(self.faster, 1)),
                ("=", partial(self.faster, 1)), ("-", partial(self.faster, -1)),
                ("home", partial(self.jump, 0)),
                ("end", partial(self.jump, len(replay.frames) - 1)),
                ("q", self.leave), ("escape", self.leave), ("c-c", self.leave)):
            keys.add(key, eager=True)(on_key(action))
        self._keys = keys
        self._screen = HSplit([Window(FormattedTextControl(self.render), wrap_lines=False)])

    @property
    def screen(self) -> Container:
        return self._screen

    @property
    def keys(self) -> KeyBindingsBase:
        return self._keys

    @player_input
    def toggle(self) -> None:
        self.playing = not self.playing

    @player_input
    def step(self, by: int) -> None:
        """One frame on (or back); stepping pauses, so the frame stays to be read."""
        self.playing = False
        self._show(self.index + by)

    @player_input
    def jump(self, index: int) -> None:
        self._show(index)

    @player_input
    def faster(self, by: int) -> None:
        self.speed = max(0, min(self.speed + by, len(SPEEDS) - 1))

    def _show(self, index: int) -> None:
        self.index = max(0, min(index, len(self.replay.frames) - 1))
        self.on_change()

    def start(self) -> None:
        self.spawn(self._tick())

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(1 / SPEEDS[self.speed])
            if self.playing and self.index < len(self.replay.frames) - 1:
                self._show(self.index + 1)
            elif self.playing:
                self.playing = False  # the end: stay on the result
                self.on_change()

    def render(self) -> StyleAndTextTuples:
        return frame_text(self.replay, self.index, SPEEDS[self.speed], self.playing)


class ReplayView(Replaying):
    """``nerts replay``: a replay as a program of its own; leaving it ends it."""

    def __init__(self, replay: RoundReplay, *, input: Input | None = None,
                 output: Output | None = None) -> None:
        super().__init__(replay)
        self.app: Application[None] = Application(
            layout=Layout(self.screen), key_bindings=self.keys,
            style=build_style(four_colour=False), full_screen=True, input=input,
            output=output)
        self.on_leave = self.app.exit
        self.on_change = self.app.invalidate

    async def run(self) -> None:
        self.start()
        try:
            await self.app.run_async()
        finally:
            self.stop()
            await asyncio.gather(*self.tasks, return_exceptions=True)


def _spaced(cards: Iterable[tuple[str, str]]) -> StyleAndTextTuples:
    """Cards each after a space: a card drawn three wide (``10♥``) must not run into
    a count or the card before it (``1310♥``, ``9♣10♠``)."""
    return [part for card in cards for part in (("", " "), card)]


def frame_text(replay: RoundReplay, index: int, speed: int, playing: bool) -> StyleAndTextTuples:
    """The screen for frame ``index``: state line, foundations, tableaux, what happened."""
    frame = replay.frames[index]
    last = len(replay.frames) - 1
    state = "playing" if playing else ("the end" if index == last else "paused")
    out: StyleAndTextTuples = [
        ("class:title", f" Round {replay.round} replay "),
        ("", f" move {index}/{last} · {speed} a second · {state}\n\n"),
        ("class:label", " Foundations "),
    ]
    out += _spaced(card_fragment(pile[-1]) for pile in frame.foundations)
    out.append(("class:dim", f"   {sum(map(len, frame.foundations))} cards\n\n"
                if frame.foundations else "(none yet)\n\n"))
    width = max(map(len, replay.names))
    for seat, name in enumerate(replay.names):
        view = frame.tableaux[seat]
        mark = "class:you" if seat == frame.seat else ""
        out.append((mark, f" {'▶' if seat == frame.seat else ' '} {name:<{width}}  "))
        if view is None:
            out.append(("class:dim", "dropped: no move log to replay\n"))
            continue
        out += [("class:label", "Nerts"), ("", f" {view.nerts:>2}"),
                *_spaced([card_or_gap(view.top)]), ("class:label", "   work")]
        out += _spaced(card_or_gap(p[-1] if p else None) for p in view.work)
        out += [("class:label", "   waste"), *_spaced([card_or_gap(view.waste)]),
                ("class:label", "   stock"), ("", f" {view.stock}\n")]
    out.append(("", "\n"))
    for earlier in replay.frames[max(1, index - _HISTORY + 1):index + 1]:
        style_class = "class:warn" if earlier.bounce else ("" if earlier is frame else "class:dim")
        out.append((style_class, f"   {earlier.text}\n"))
    if index == last:
        out.append(("class:label", "\n Scores  "))
        out.append(("", "  ".join(f"{replay.names[r.seat]} {r.score:+d}"
                                  + (" (Nerts!)" if r.called else "") for r in replay.scores)))
        out.append(("class:dim", f"   {replay.collisions} collisions, "
                                 f"{replay.bounces} bounces\n"))
    out.append(("class:dim", f"\n {HELP}\n"))
    return out
