"""Helpers for the UI tests: the real app on a pipe input, a fake clock, the screen as text.

:class:`Harness` opens the app at a solo table on a fake clock; :class:`LobbyHarness`
opens it in the network lobby over any :class:`~p2p_nerts.lan.Network`
(:class:`FakeNetwork`, or the real one pinned to 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.input import PipeInput, create_pipe_input

from p2p_nerts.game.tableau import Tableau
from p2p_nerts.game.variants import Variants
from p2p_nerts.lan import Network, TableListing
from p2p_nerts.net.channel import normalize_code
from p2p_nerts.net.discovery import table_label
from p2p_nerts.protocol.events import Event
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Replica
from p2p_nerts.session import Listener, LocalTable, Session
from p2p_nerts.testing.screen import FixedOutput, screen_lines
from p2p_nerts.ui.app import NertsApp
from p2p_nerts.ui.browser import Browser
from p2p_nerts.ui.config import Config
from p2p_nerts.ui.hands import Hands

from .gamekit import cs, tableau

#: Seconds a helper waits for the app: long, for a busy machine is slow, and only a
#: failing test ever waits it out.
WAIT = 20.0

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


class Screen:
    """The app on a pipe input and a fixed-size output; keys in, screen text out."""

    def __init__(self, columns: int, rows: int) -> None:
        self.output = FixedOutput(columns, rows)
        self._input: PipeInput | None = None
        self._task: asyncio.Task[None] | None = None
        self.ui: NertsApp | None = None

    def make_app(self, input: PipeInput) -> NertsApp:
        raise NotImplementedError

    def serve(self, ui: NertsApp) -> asyncio.Task[None]:
        """What runs the app: by default the bare Application (the test drives the table)."""
        return asyncio.create_task(ui.app.run_async())

    async def __aenter__(self) -> Any:
        self._pipe = create_pipe_input()  # keep it: dropping the manager closes the pipe
        self._input = self._pipe.__enter__()
        self.ui = self.make_app(self._input)
        self._task = self.serve(self.ui)
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

    async def until(self, done: Callable[[], bool], what: str = "the app") -> None:
        deadline = time.monotonic() + WAIT
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}:\n{self.screen()}")
            await asyncio.sleep(0.001)

    async def press(self, *keys: str) -> None:
        """Type keys one at a time, each handled before the next is sent."""
        assert self.ui is not None and self._input is not None
        for key in keys:
            hands = self.ui.hands  # the key may hand the screen over: wait on who took it
            before = hands.handled
            self._input.send_text(key)

            def handled(h: Hands = hands, b: int = before) -> bool:
                return h.handled > b

            await self.until(handled, f"key {key!r}")
            self.settle()

    def settle(self) -> None:
        """After a key: what it sent is delivered (where nothing else delivers it)."""

    async def type(self, text: str) -> None:
        await self.press(*text)

    async def click(self, x: int, y: int) -> None:
        """A left click at screen cell (x, y), as an xterm SGR mouse report."""
        assert self.ui is not None and self._input is not None
        await self.redrawn()
        hands = self.ui.hands
        before = hands.handled
        self._input.send_text(f"\x1b[<0;{x + 1};{y + 1}M\x1b[<0;{x + 1};{y + 1}m")
        await self.until(lambda: hands.handled > before, "click")
        self.settle()

    async def click_text(self, text: str, row_hint: str = "") -> None:
        x, y = self.find(text, row_hint)
        await self.click(x + len(text) - 1, y)

    async def redrawn(self) -> None:
        """Wait for a frame of the current state (the mouse uses the last frame's handlers)."""
        count = self.app.render_counter
        self.app.invalidate()
        await self.until(lambda: self.app.render_counter > count, "a frame")

    async def shows(self, text: str) -> None:
        """Wait until ``text`` is on screen (network events arrive when they arrive)."""
        await self.until(lambda: text in self.screen(), repr(text))

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


class Harness(Screen):
    """A solo table (fake clock, no countdown) and the app playing at it."""

    def __init__(self, *, bots: int = 2, seed: int = 1, skill: str = "easy",
                 columns: int = 100, rows: int = 32, config: Config | None = None,
                 variants: Variants | None = None, notes: tuple[str, ...] = (),
                 countdown: float = 0.0, code: str | None = None) -> None:
        super().__init__(columns, rows)
        self.t = [0.0]
        self.code = code
        self.table = RecordingTable(Identity.from_seed(b"\x07" * 32, "Tess"), bots=bots,
                                    skill=skill, seed=seed, countdown=countdown,
                                    variants=variants, clock=lambda: self.t[0])
        self.config = config or Config()
        self.notes = notes

    async def __aenter__(self) -> Harness:
        await super().__aenter__()
        return self

    def make_app(self, input: PipeInput) -> NertsApp:
        return NertsApp(self.table, self.config, self.notes, code=self.code, input=input,
                        output=self.output)

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
        seat = self.replica.view().my_seat
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

    def settle(self) -> None:
        self.table.deliver()  # the test drives the table: no beat delivers it

    def advance(self, seconds: float, step: float = 0.05) -> None:
        """Let table time pass: ticks, bot moves and deliveries."""
        end = self.t[0] + seconds
        while self.t[0] < end:
            self.t[0] = min(end, self.t[0] + step)
            self.table.step()


PLAYER = Identity.from_seed(b"\x09" * 32, "Tess")


class LobbyHarness(Screen):
    """The app in the network lobby: the whole run (tables run for real once joined)."""

    def __init__(self, network: Network, *, columns: int = 100, rows: int = 32,
                 config: Config | None = None) -> None:
        super().__init__(columns, rows)
        self.browser = Browser(PLAYER, network)
        self.config = config or Config()

    async def __aenter__(self) -> LobbyHarness:
        await super().__aenter__()
        return self

    def make_app(self, input: PipeInput) -> NertsApp:
        return NertsApp(None, self.config, browser=self.browser, input=input,
                        output=self.output)

    def serve(self, ui: NertsApp) -> asyncio.Task[None]:
        return asyncio.create_task(ui.run(tidy=False))

    async def name_new_table(self, name: str) -> None:
        """Open the create form and put ``name`` in place of the default table name."""
        await self.press("c", *["\x7f"] * len(f"{PLAYER.name}'s table"))
        await self.type(name)

    async def select(self, name: str) -> None:
        """Wait for the table ``name`` in the list and move the cursor onto it."""
        await self.shows(name)
        while f"▸ {name}" not in self.screen():  # other runs' tables may sort first
            await self.press("\x1b[B")


@dataclass(frozen=True)
class Listing:
    """A table as a fake LAN advertises it."""

    name: str
    instance: str = ""
    seats_taken: int = 1
    seats_total: int = 8
    variant: str = "turn3 ties:both pen tgt100"
    protocol_version: int = 1
    needs_code: bool = False
    host: str = "Ana"
    fingerprint: str = "0123456789abcdef"
    state: str = "lobby"
    next_deal: int | None = None

    def __post_init__(self) -> None:
        if not self.instance:
            object.__setattr__(self, "instance", f"{self.name} #0001")


class FakeNetwork:
    """A LAN in memory: the test adds and removes tables and decides how joins end.

    Every table that needs a code has :attr:`code`; codes are checked by the
    real rule (``net.channel``), so the lobby's forms meet the real refusals,
    and tables are labelled by the real rule (``net.discovery``).
    """

    version = 1
    max_name = 32

    def __init__(self) -> None:
        self.listed: dict[str, Listing] = {}
        self.changed: Callable[[], None] = lambda: None
        self.outcome: Callable[[], Session] = lambda: solo(bots=1)
        self.joined: list[str] = []
        self.watched: list[str] = []
        self.waits: list[bool] = []  # whether each join waits for a free seat, in order
        self.codes: list[str | None] = []  # the code given with each join, in order
        self.hosted: list[tuple[str, Variants, str | None, float, float]] = []
        self.code = "pink otter"
        self.closed = False
        self.gate: asyncio.Event | None = None  # set: joins wait for it, as on a slow LAN

    @property
    def tables(self) -> list[TableListing]:
        return sorted(self.listed.values(), key=lambda t: t.name)

    def put(self, *tables: Listing) -> None:
        for table in tables:
            self.listed[table.instance] = table
        self.changed()

    def drop(self, instance: str) -> None:
        del self.listed[instance]
        self.changed()

    async def browse(self, changed: Callable[[], None]) -> None:
        self.changed = changed

    def address(self, text: str) -> tuple[str, int]:
        host, _, port = text.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"{text!r} is not HOST:PORT")
        return host, int(port)

    def check_code(self, text: str) -> None:
        normalize_code(text)

    def label(self, table: TableListing) -> str:
        return table_label(table, self.tables)

    async def join(self, table: TableListing, code: str | None, *,
                   wait: bool = False) -> Session:
        self.joined.append(table.instance)
        self.codes.append(code)
        self.waits.append(wait)
        if self.gate is not None:
            await self.gate.wait()
        if table.needs_code and code != self.code:
            raise ConnectionError(f"wrong table code for table {table.name}")
        return self.outcome()

    async def watch(self, table: TableListing, code: str | None) -> Session:
        self.watched.append(table.instance)
        self.codes.append(code)
        if table.needs_code and code != self.code:
            raise ConnectionError(f"wrong table code for table {table.name}")
        return self.outcome()

    async def join_address(self, address: tuple[str, int], code: str | None) -> Session:
        self.joined.append(f"{address[0]}:{address[1]}")
        self.codes.append(code)
        return self.outcome()

    async def host(self, name: str, variants: Variants, code: str | None, *,
                   countdown: float, drop_after: float) -> Session:
        self.hosted.append((name, variants, code, countdown, drop_after))
        return solo(bots=1, variants=variants)

    async def close(self) -> None:
        self.closed = True


def solo(*, bots: int = 1, variants: Variants | None = None) -> LocalTable:
    """A table that stands in for a networked one: the player hosts, bots fill seats."""
    return LocalTable(PLAYER, bots=bots, variants=variants, seed=3)
