"""``nerts event open`` and ``nerts event join`` as processes on 127.0.0.1.

Every process has its own home (key and store), mDNS pinned to 127.0.0.1 and
its TCP bound there. Players find the event by its name on mDNS and register
by command; bots find their tables by themselves. The organiser is killed
with SIGKILL and comes back with ``--resume``.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from p2p_nerts.cli import build_parser
from p2p_nerts.commands.event import lobby_join
from p2p_nerts.testing.peers import PeerProcess, nerts_command, wait_all

pytestmark = pytest.mark.timeout(240)

LOCAL = ["--interfaces", "127.0.0.1"]


def standings(peer: PeerProcess) -> list[dict[str, Any]]:
    [line] = peer.summary.read_text().splitlines()
    rows: list[dict[str, Any]] = json.loads(line)
    return rows


@pytest.mark.slow
def test_players_register_by_command_and_bots_play_a_seating_with_the_same_standings(
        tmp_path: Path) -> None:
    name = f"Cmd cup {secrets.token_hex(3)}"

    async def scenario() -> None:
        organiser = PeerProcess("Olga", tmp_path / "olga", [
            "event", "open", name, "--games", "1", "--table-size", "3", "--target", "1",
            "--start-with", "3", "--turn-up", "60", "--bind", "127.0.0.1",
            "--export", str(tmp_path / "cup.nerts-event"), *LOCAL])
        bots = [PeerProcess(n, tmp_path / n, ["event", "join", name, "--bot", "hard",
                                              "--pace", "0.05", "--listen", "5", *LOCAL])
                for n in ("Ana", "Ben", "Cy")]
        try:
            await organiser.start()
            await organiser.wait_for_line(f"event '{name}' open on port", 30)
            for bot in bots:
                await bot.start()
            await organiser.wait_for_line("game 1 seated: table A: ", 60)
            for bot in bots:
                await bot.wait_for_line("Game 1: table A, with ", 60)
            await wait_all([organiser, *bots], 180)
        finally:
            for peer in (organiser, *bots):
                peer.kill()
        final = standings(organiser)
        assert sorted(row["name"] for row in final) == ["Ana", "Ben", "Cy"]
        assert all(row["games"] == 1 for row in final)
        assert sum(row["wins"] for row in final) >= 1
        for bot in bots:
            assert standings(bot) == final
        # The whole event, checked by a machine that was not there.
        checked = subprocess.run(nerts_command("verify", str(tmp_path / "cup.nerts-event")),
                                 capture_output=True, text=True, timeout=60, check=False)
        assert checked.returncode == 0, checked.stderr
        assert f"event {name!r} by " in checked.stderr
        assert ("1 of 1 games seated at 1 tables (each seed the one the opening committed "
                "to), 1 game records verified") in checked.stderr
        recomputed = [line.split()[1:5] for line in checked.stdout.splitlines()[1:]]
        assert recomputed == [[row["name"], "1", str(row["wins"]), str(row["points"])]
                              for row in final]

    asyncio.run(scenario())


def test_the_organiser_killed_comes_back_with_every_registration_and_seating(
        tmp_path: Path) -> None:
    name = f"Crash cup {secrets.token_hex(3)}"
    options = ["--games", "2", "--table-size", "3", "--start-with", "3", "--turn-up", "600",
               "--bind", "127.0.0.1", *LOCAL]

    async def scenario() -> None:
        organiser = PeerProcess("Olga", tmp_path / "olga", ["event", "open", name, *options])
        players = [PeerProcess(n, tmp_path / n, ["event", "join", name, "--listen", "5",
                                                 *LOCAL])
                   for n in ("Ana", "Ben", "Cy")]
        try:
            await organiser.start()
            await organiser.wait_for_line(f"event '{name}' open on port", 30)
            port = organiser.log.read_text().split("open on port ")[1].split(":")[0]
            for player in players:
                await player.start()
            await organiser.wait_for_line("game 1 seated: table A: ", 60)
            for player in players:
                await player.wait_for_line("Game 1: table A, with ", 60)
            assert organiser.proc is not None
            organiser.proc.send_signal(signal.SIGKILL)
            assert await organiser.wait(10) == -signal.SIGKILL
            mark = organiser.log.stat().st_size
            organiser.args = ["event", "open", name, "--resume", *options]
            await organiser.start()
            await organiser.wait_for_line(
                f"event '{name}' resumed on port {port}: 3 registered, game 1 of 2", 30,
                after=mark)
            await organiser.wait_for_line("3 registered, 3 connected", 60, after=mark)
            assert "game 2 seated" not in organiser.log.read_text()  # game 1 goes on
            for player in players:
                assert player.proc is not None and player.proc.returncode is None
        finally:
            for peer in (organiser, *players):
                peer.kill()

    asyncio.run(scenario())


def test_event_join_at_a_terminal_opens_the_lobby_and_refuses_what_the_lobby_cannot_honour(
        monkeypatch: pytest.MonkeyPatch) -> None:
    parse = build_parser().parse_args
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert lobby_join(parse(["event", "join", "Cup", "--code", "pink otter"])) == (
        "Cup", "pink otter")
    assert lobby_join(parse(["event", "join", "Cup", "--bot"])) is None
    assert lobby_join(parse(["event", "join", "Cup", "--headless"])) is None
    assert lobby_join(parse(["event"])) is None  # the standings, as ever
    with pytest.raises(ValueError, match="--data-dir and --name are for --bot or --headless"):
        lobby_join(parse(["event", "join", "Cup", "--name", "Ana"]))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False)
    assert lobby_join(parse(["event", "join", "Cup"])) is None  # a script: log lines


@pytest.mark.slow
def test_a_tables_host_killed_mid_game_comes_back_to_it_and_the_game_counts(
        tmp_path: Path) -> None:
    name = f"Host crash cup {secrets.token_hex(3)}"

    async def scenario() -> None:
        organiser = PeerProcess("Olga", tmp_path / "olga", [
            "event", "open", name, "--games", "1", "--table-size", "3", "--target", "50",
            "--start-with", "3", "--turn-up", "60", "--bind", "127.0.0.1", *LOCAL])
        bots = {n: PeerProcess(n, tmp_path / n, ["event", "join", name, "--bot", "hard",
                                                 "--pace", "0.05", "--listen", "5", *LOCAL])
                for n in ("Ana", "Ben", "Cy")}
        try:
            await organiser.start()
            await organiser.wait_for_line(f"event '{name}' open on port", 30)
            for bot in bots.values():
                await bot.start()
            await organiser.wait_for_line("game 1 seated: table A: ", 60)
            seated = organiser.log.read_text().split("game 1 seated: table A: ")[1]
            host = bots[seated.split(",")[0]]  # a table's first seat hosts it
            await host.wait_for_line("round 1 over", 90)
            assert host.proc is not None
            host.proc.send_signal(signal.SIGKILL)
            assert await host.wait(10) == -signal.SIGKILL
            mark = host.log.stat().st_size
            await host.start()
            await host.wait_for_line("back at Game 1 · table A: the game goes on", 60,
                                     after=mark)
            await wait_all([organiser, *bots.values()], 180)
        finally:
            for peer in (organiser, *bots.values()):
                peer.kill()
        final = standings(organiser)
        assert [row["games"] for row in final] == [1, 1, 1]
        for bot in bots.values():
            assert standings(bot) == final

    asyncio.run(scenario())
