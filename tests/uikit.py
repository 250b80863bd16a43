"""Helpers for the UI tests: the real app on a pipe input, a fake clock, the screen as text."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.input import PipeInput, create_pipe_input

from p2p_nerts.game.tableau import Tableau
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.events import Event
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Replica
from p2p_nerts.session import Listener, LocalTable
from p2p_nerts.ui.app import NertsApp
from p2p_nerts.ui.config import Config
from p2p_nerts.ui.headless import FixedOutput, screen_lines

from .gamekit import cs, tableau

WAIT = 3.0  # seconds a helper waits for the app before failing

ENTER, ESC, SPACE = "\r", "\x1b", " "
UP, DOWN, RIGHT, LEFT = "\x1b[A", "\x1b[B", "\x1b[C", "\x1b[D"
F1 = "\x1bOP"


class RecordingTable(LocalTable):
    """A LocalTable that also lets a test announce an event to the screen."""

    def __init__(self, player: Identity, **kwargs: Any) -> None:
        super().__init__(player, **kwargs)
        self.listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        super().subscribe(listener)
        self.listeners.append(listener)

    def announce(self, event: Event) -> None:
        for listener in self.listeners:
            listener(event)


class Harness:
    """A solo table (fake clock, no countdown) and the app playing at it."""

    def __init__(self, *, bots: int = 2, seed: int = 1, skill: str = "easy",
                 columns: int = 100, rows: int = 32, config: Config | None = None,
                 variants: Variants | None = None, notes: tuple[str, ...] = (),
                 countdown: float = 0.0) -> None:
        self.t = [0.0]
        self.table = RecordingTable(Identity.from_seed(b"\x07" * 32, "Tess"), bots=bots,
                                    skill=skill, seed=seed, countdown=countdown,
                                    variants=variants, clock=lambda: self.t[0])
        self.output = FixedOutput(columns, rows)
        self.config = config or Config()
        self.notes = notes
        self._input: PipeInput | None = None
        self._task: asyncio.Task[None] | None = None
        self.ui: NertsApp | None = None

    async def __aenter__(self) -> Harness:
        self._pipe = create_pipe_input()  # keep it: dropping the manager closes the pipe
        self._input = self._pipe.__enter__()
        self.ui = NertsApp(self.table, self.config, self.notes, input=self._input,
                           output=self.output)
        self._task = asyncio.create_task(self.ui.app.run_async())
        await self.until(lambda: self.app.render_counter > 0)
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        assert self._task is not None and self._input is not None
        if not self.app.is_done:
            self.app.exit()
        await asyncio.wait_for(self._task, WAIT)
        self._pipe.__exit__(None, None, None)

    @property
    def app(self) -> Application[None]:
        assert self.ui is not None
        return self.ui.app

    @property
    def replica(self) -> Replica:
        return self.table.replica

    @property
    def tab(self) -> Tableau:
        rs = self.replica.rs
        assert rs is not None and rs.tab is not None
        return rs.tab

    @property
    def me(self) -> int:
        seat = self.replica.my_seat
        assert seat is not None
        return seat

    async def deal(self) -> None:
        """Press Enter in the table lobby and let the round start."""
        await self.press(ENTER)
        self.advance(0.1)

    def set_tableau(self, *, nerts: str = "", work: tuple[str, ...] = (), stock: str = "",
                    waste: str = "") -> Tableau:
        """Put my tableau in a known position (cards as in gamekit: "QH 9S"), piles bottom first."""
        rs = self.replica.rs
        assert rs is not None
        rs.tab = tableau(self.me, nerts=cs(nerts, self.me), stock=cs(stock, self.me),
                         work=[cs(p, self.me) for p in work], waste=cs(waste, self.me))
        return rs.tab

    async def until(self, done: Callable[[], bool], what: str = "the app") -> None:
        deadline = time.monotonic() + WAIT
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.001)

    async def press(self, *keys: str) -> None:
        """Type keys one at a time, each handled before the next is sent."""
        assert self.ui is not None and self._input is not None
        for key in keys:
            before = self.ui.ctl.handled
            self._input.send_text(key)
            await self.until(lambda b=before: self.ui is not None and self.ui.ctl.handled > b,
                             f"key {key!r}")

    async def click(self, x: int, y: int) -> None:
        """A left click at screen cell (x, y), as an xterm SGR mouse report."""
        assert self.ui is not None and self._input is not None
        await self.redrawn()
        before = self.ui.ctl.handled
        self._input.send_text(f"\x1b[<0;{x + 1};{y + 1}M\x1b[<0;{x + 1};{y + 1}m")
        await self.until(lambda: self.ui is not None and self.ui.ctl.handled > before, "click")

    async def click_text(self, text: str, row_hint: str = "") -> None:
        x, y = self.find(text, row_hint)
        await self.click(x + len(text) - 1, y)

    async def redrawn(self) -> None:
        """Wait for a frame of the current state (the mouse uses the last frame's handlers)."""
        count = self.app.render_counter
        self.app.invalidate()
        await self.until(lambda: self.app.render_counter > count, "a frame")

    def advance(self, seconds: float, step: float = 0.05) -> None:
        """Let table time pass: ticks, bot moves and deliveries."""
        end = self.t[0] + seconds
        while self.t[0] < end:
            self.t[0] = min(end, self.t[0] + step)
            self.table.step()

    def lines(self) -> list[str]:
        return screen_lines(self.app)

    def screen(self) -> str:
        return "\n".join(self.lines())

    def row(self, starts: str) -> str:
        """The first screen row whose text, stripped, starts with ``starts``."""
        for line in self.lines():
            if line.strip().startswith(starts):
                return line
        raise AssertionError(f"no row starts with {starts!r}:\n{self.screen()}")

    def find(self, text: str, row_hint: str = "") -> tuple[int, int]:
        for y, line in enumerate(self.lines()):
            if row_hint in line and text in line:
                start = line.index(row_hint) if row_hint else 0
                return line.index(text, start), y
        raise AssertionError(f"{text!r} is not on screen:\n{self.screen()}")
