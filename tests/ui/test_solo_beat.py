"""A solo table's beat shares the loop with the screen: it lets the loop turn between
its pieces (a key waits for one piece, not a whole beat), and plays exactly as a
beat taken at once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from p2p_nerts import session
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.botdriver import IDLE_LOOK
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


def test_a_table_with_nothing_due_sleeps_until_something_is() -> None:
    """After a beat, the table sleeps until a seat's tick, a bot's move or a frame
    falls due (QUIET_BEAT at most), not PUMP_INTERVAL every time: in its lobby,
    its bots ready, a bot's look again (every IDLE_LOOK) is not due. A beat in
    which a seat told of something is followed by another soon (the bots look
    again); a frame on its way is delivered when it falls due."""
    t = [0.0]
    table = LocalTable(PLAYER, bots=3, skill="hard", seed=5, countdown=0.0,
                       delay=(0.1, 0.1), clock=lambda: t[0])
    while table._moved or table._wires.next_due is not None:  # all said, all heard
        t[0] += 0.05
        table._moved = False
        table.step()
    assert all(driver.idle for _, driver in table._drivers)
    assert IDLE_LOOK < table._rest() <= session.QUIET_BEAT
    table.act(StartRound())  # the deal's frames are on their way, 0.1 s each
    assert table._moved
    assert table._rest() == session.PUMP_INTERVAL
    table._moved = False
    assert table._rest() == pytest.approx(0.1)


def test_a_running_table_beats_seldom_in_its_lobby_and_plays_once_dealt() -> None:
    """On the real clock: a few beats a second in the lobby (its seats'
    heartbeats), where a beat every PUMP_INTERVAL woke the process fifty times
    a second; once dealt, the bots play."""
    table = LocalTable(PLAYER, bots=3, skill="hard", seed=5, countdown=0.0)
    beats = [0]
    beat = table._beat

    def counted() -> Iterator[None]:
        beats[0] += 1
        return beat()

    table._beat = counted  # type: ignore[method-assign]
    plays: list[ev.PlayAdded] = []
    table.subscribe(lambda e: plays.append(e) if isinstance(e, ev.PlayAdded) else None)

    async def main() -> None:
        runner = asyncio.create_task(table.run())
        await asyncio.sleep(0.2)  # the first beats: what the bots said is heard
        before = beats[0]
        await asyncio.sleep(2.0)
        # A beat every PUMP_INTERVAL: 100. Now each seat's heartbeat, a few a second.
        assert beats[0] - before <= 2.0 / session.PUMP_INTERVAL / 5
        table.act(StartRound())
        async with asyncio.timeout(30):
            while not plays:
                await asyncio.sleep(0.05)
        table.close()
        await runner

    asyncio.run(main())
