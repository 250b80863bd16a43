"""The organiser's screen: who registered and is connected, the tables, one key per game."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from prompt_toolkit.input import create_pipe_input

from p2p_nerts.testing.screen import FixedOutput, screen_lines
from p2p_nerts.ui.desk import EventScreen


class Desk:
    """An event in memory: two players, one connected; a game seated on the first n."""

    title = "Friday cup · game 0 of 2 · port 4321"

    def __init__(self) -> None:
        self.game = 0
        self.forced: list[bool] = []
        self.listeners: list[Callable[[], None]] = []

    def players(self) -> list[tuple[str, str, bool]]:
        return [("Ana", "aaaa-bbbb-cccc-dddd", True), ("Ben", "1111-2222-3333-4444", False)]

    def tables(self) -> list[str]:
        return [f"table A: Ana 0, Ben 0 · playing, round {self.game}"] if self.game else []

    def start_game(self, *, force: bool = False) -> str:
        self.forced.append(force)
        if self.game and not force:
            raise ValueError("game 1 is still being played at table(s) A")
        self.game += 1
        return f"game {self.game} seated: 1 table, 2 players"

    def subscribe(self, changed: Callable[[], None]) -> None:
        self.listeners.append(changed)


def test_the_organiser_sees_who_is_connected_and_seats_each_game_with_one_key() -> None:
    async def scenario() -> None:
        desk = Desk()
        with create_pipe_input() as pipe:
            screen = EventScreen(desk, input=pipe, output=FixedOutput(120, 24))
            running = asyncio.ensure_future(screen.run())

            async def shows(text: str) -> str:
                for _ in range(2000):
                    shown = "\n".join(screen_lines(screen.app))
                    if text in shown:
                        return shown
                    await asyncio.sleep(0.005)
                raise AssertionError(f"never shown: {text!r}\n{shown}")

            first = await shows("2 registered, 1 connected")
            assert "● Ana" in first and "○ Ben" in first and "No game seated yet" in first
            assert first.splitlines()[-1].rstrip().endswith(
                "q quit (the event stays journaled: --resume)")  # 120 columns: in full
            pipe.send_text("n")
            await shows("game 1 seated: 1 table, 2 players")
            await shows("table A: Ana 0, Ben 0 · playing, round 1")
            pipe.send_text("n")
            await shows("Game 1 is still being played at table(s) A")
            pipe.send_text("F")
            await shows("game 2 seated")
            assert desk.forced == [False, False, True]
            assert desk.listeners == [screen.app.invalidate]
            pipe.send_text("q")
            await asyncio.wait_for(running, 10)

    asyncio.run(scenario())


@pytest.mark.parametrize("width", [80, 50])
def test_a_narrow_screen_cuts_the_events_name_never_its_game_or_port(width: int) -> None:
    """On a narrow screen the brand gives way, then the start of a long name: the game
    and the port players may be told stay whole at the right edge (a port cut short
    would send them elsewhere). The keys are said in short, every one whole."""
    async def scenario() -> None:
        desk = Desk()
        desk.title = "A very long event name for a small screen · game 0 of 3 · port 41503"
        with create_pipe_input() as pipe:
            screen = EventScreen(desk, input=pipe, output=FixedOutput(width, 24))
            running = asyncio.ensure_future(screen.run())
            for _ in range(2000):
                top = screen_lines(screen.app)[0]
                if "port" in top:
                    break
                await asyncio.sleep(0.005)
            assert top.rstrip().endswith("· game 0 of 3 · port 41503"), top
            assert "NERTS" not in top and len(top) <= width, top
            assert ("…" in top) == (width < 72), top
            keys = screen_lines(screen.app)[-1].rstrip()
            assert keys.endswith("q quit (--resume)") and keys.startswith(" n next game "), keys
            pipe.send_text("q")
            await asyncio.wait_for(running, 10)

    asyncio.run(scenario())
