"""A solo table's beat shares the loop with the screen: it lets the loop turn between
its pieces (a key waits for one piece, not a whole beat), and plays exactly as a
beat taken at once."""

from __future__ import annotations

import asyncio

import pytest

from p2p_nerts import session
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.replica import StartRound
from p2p_nerts.session import LocalTable

from ..uikit import PLAYER


def _dealt(t: list[float]) -> tuple[LocalTable, list[ev.Event]]:
    """A seeded table of eight on the fake clock ``t``, three seconds into its round."""
    table = LocalTable(PLAYER, bots=7, skill="hard", seed=5, countdown=0.0,
                       clock=lambda: t[0])
    table.act(StartRound())
    while t[0] < 3.0:  # into the round: every bot has played a while
        t[0] += 0.05
        table.step()
    heard: list[ev.Event] = []
    table.subscribe(heard.append)
    return table, heard


def test_a_running_beat_lets_the_loop_turn_and_plays_as_a_step(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "SLICE", 0.0)  # the loop's turn after every piece
    t, u = [0.0], [0.0]
    stepped, expected = _dealt(t)
    ran, heard = _dealt(u)
    t[0] = u[0] = 4.0  # every bot has a move due, and each move reaches seven seats
    stepped.step()
    assert len(expected) >= 2
    turns = 0
    at: list[int] = []  # the loop's turns as each event was heard
    ran.subscribe(lambda _event: at.append(turns))

    async def main() -> None:
        nonlocal turns
        runner = asyncio.create_task(ran.run())
        while len(heard) < len(expected) and turns < 100_000:
            await asyncio.sleep(0)  # what the screen does between the table's pieces
            turns += 1
        ran.close()
        await runner

    asyncio.run(main())
    assert heard == expected
    assert at[-1] > at[0]  # the loop turned in the middle of the beat
