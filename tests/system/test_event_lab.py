"""An evening's event across separate network stacks (the namespace lab of test_net_netns).

The organiser and twelve computer players each run in a namespace of their
own, over real multicast and TCP: the players find the event by its name and
register by command, the organiser seats two games of three tables of four
by itself, every player goes to the table its seating names (found by its
name and its host's key) and plays it, and each machine's own book, checked
entry by entry, ends with the organiser's standings. Needs root and ``ip
netns`` (skipped with the reason otherwise).
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from p2p_nerts.testing.peers import PeerProcess, wait_all

from .test_net_netns import EVERY_INTERFACE, Lab, running_lab

pytestmark = pytest.mark.timeout(600)

PLAYERS = 12
GAMES = 2


@pytest.fixture
def lab13() -> Iterator[Lab]:
    yield from running_lab(PLAYERS + 1)


def standings(peer: PeerProcess) -> list[dict[str, Any]]:
    [line] = peer.summary.read_text().splitlines()
    rows: list[dict[str, Any]] = json.loads(line)
    return rows


def seatings(log: str) -> dict[int, list[set[str]]]:
    """Each game's tables as the organiser logged them: the names at each."""
    out: dict[int, list[set[str]]] = {}
    for game, tables in re.findall(r"game (\d+) seated: (.*)", log):
        out[int(game)] = [set(t.split(": ", 1)[1].split(", ")) for t in tables.split("; ")]
    return out


@pytest.mark.slow
def test_twelve_bots_play_two_games_on_three_tables_and_agree_on_the_standings(
        lab13: Lab, tmp_path: Path) -> None:
    name = f"Lab cup {secrets.token_hex(3)}"
    names = [f"p{i:02d}" for i in range(PLAYERS)]

    async def scenario() -> None:
        organiser = PeerProcess(
            "Olga", tmp_path / "olga",
            ["event", "open", name, "--games", str(GAMES), "--table-size", "4", "--target",
             "1", "--start-with", str(PLAYERS), "--turn-up", "90"],
            prefix=("ip", "netns", "exec", lab13.peers[0]), env=EVERY_INTERFACE)
        bots = [PeerProcess(n, tmp_path / n, ["event", "join", name, "--bot", "hard",
                                              "--pace", "0.05", "--listen", "10"],
                            prefix=("ip", "netns", "exec", ns), env=EVERY_INTERFACE)
                for n, ns in zip(names, lab13.peers[1:], strict=True)]
        try:
            await organiser.start()
            await organiser.wait_for_line(f"event '{name}' open on port", 30)
            for bot in bots:
                await bot.start()
            await wait_all([organiser, *bots], 480)
        finally:
            for peer in (organiser, *bots):
                peer.kill()
        drawn = seatings(organiser.log.read_text())
        assert sorted(drawn) == list(range(1, GAMES + 1))
        for tables in drawn.values():
            assert [len(t) for t in tables] == [4, 4, 4]
            assert set().union(*tables) == set(names)
        for bot in bots:  # each went where its seating said, with whom it said
            log = bot.log.read_text()
            for game, tables in drawn.items():
                found = re.search(rf"Game {game}: table [A-C], with (.*)", log)
                assert found is not None, bot.tail()
                table = next(t for t in tables if bot.name in t)
                assert set(found[1].split(", ")) == table - {bot.name}
        final = standings(organiser)
        assert sorted(row["name"] for row in final) == names
        assert all(row["games"] == GAMES for row in final)
        assert sum(row["wins"] for row in final) >= 3 * GAMES
        for bot in bots:
            assert standings(bot) == final

    asyncio.run(scenario())
