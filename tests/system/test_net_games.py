"""Whole games between real peer processes on 127.0.0.1.

Every peer is a ``nerts`` process with its own identity (NERTS_HOME), mDNS
pinned to 127.0.0.1 and TCP bound to 127.0.0.1. Bots play fast (``--pace``)
to a small target; at the end every peer must have written the same summary:
the same per-round foundation hashes, scores and result.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from p2p_nerts.testing.peers import Faults, PeerProcess, PeerTable, free_port, shared_lines

pytestmark = pytest.mark.timeout(180)

FAST = ["--headless", "--bot", "hard", "--pace", "0.05", "--bind", "127.0.0.1"]
CLOCKS = ["--countdown", "0", "--drop-after", "2"]  # the host's: every seat plays by them
GAME_TIMEOUT = 120.0


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


def table(tmp: Path, players: int, *, target: int = 15, faults: Faults | None = None,
          by_address: bool = False, extra: tuple[str, ...] = (),
          pace: float | None = None) -> PeerTable:
    """``extra`` goes to the host after CLOCKS (the last one wins); ``pace``, every
    bot's instead of FAST's."""
    common = FAST if pace is None else [*FAST, "--pace", str(pace)]
    return PeerTable(tmp, players, common=common, faults=faults,
                     host=["--auto-next", "0.3", "--target", str(target), *CLOCKS, *extra],
                     by_address=by_address, seed=players)


def assert_same_game(summaries: list[list[dict[str, Any]]], players: int) -> None:
    first = summaries[0]
    final = first[-1]
    assert final["final"] and final["game_over"] and final["winner"], final
    rounds = first[:-1]
    assert len(rounds) == final["rounds"] >= 1
    assert len(rounds[0]["players"]) == players
    # A seat dropped from a round leaves the table: the result lists the last round's.
    assert len(final["totals"]) == len(rounds[-1]["players"])
    for line in rounds:
        assert line["agreed"] is True
        assert len(line["foundation_hash"]) == 64
    for other in summaries[1:]:
        assert shared_lines(other) == shared_lines(first)
    for lines in summaries:  # every peer's own deck, at every round's end
        assert all(line["local"].get("cards_ok", True) for line in lines if "round" in line)


@pytest.mark.parametrize("players", [2, 4, 8])
def test_bots_find_the_table_by_mdns_and_agree_on_the_game(
        tmp_path: Path, players: int) -> None:
    async def scenario() -> None:
        t = table(tmp_path, players, target=10 if players == 8 else 15)
        await t.start()
        assert_same_game(await t.finish(GAME_TIMEOUT), players)

    run(scenario)


def test_manual_join_by_address(tmp_path: Path) -> None:
    async def scenario() -> None:
        t = table(tmp_path, 3, by_address=True)
        for peer in t.peers[1:]:
            peer.env = {"NERTS_INTERFACES": "127.0.0.2"}  # nobody to hear on mDNS there
        await t.start()
        assert_same_game(await t.finish(GAME_TIMEOUT), 3)

    run(scenario)


def test_share_a_deck_is_played_over_the_network(tmp_path: Path) -> None:
    """Three tableaux of two: every headless peer seats a second bot at its own
    tableau once the host's rules say share-a-deck, and the game is agreed."""
    async def scenario() -> None:
        t = table(tmp_path, 3, extra=("--teams", "share"))
        await t.start()
        summaries = await t.finish(GAME_TIMEOUT)
        assert_same_game(summaries, 3)

    run(scenario)


def test_games_converge_through_a_hostile_network(tmp_path: Path) -> None:
    # Each relay also tampers with one entry and cuts a connection after it for
    # sure (sure_after): at these chances a short game could meet no cut at all.
    faults = Faults(min_delay=0.0, max_delay=0.03, duplicate=0.05, tamper=0.02, cut=0.002,
                    sure_after=100)

    async def scenario() -> None:
        t = table(tmp_path, 4, faults=faults)
        await t.start()
        summaries = await t.finish(GAME_TIMEOUT)
        assert_same_game(summaries, 4)
        tampered = sum(r.stats.tampered for r in t.relays)
        rejected = sum(s[-1]["local"]["rejected"].get("bad_signature", 0) for s in summaries)
        cuts = sum(r.stats.cut for r in t.relays)
        assert tampered > 0 and cuts > 0 and sum(r.stats.duplicated for r in t.relays) > 0
        # Each tampered entry reached one peer, which refused it (unless a cut lost it first).
        assert 0 < rejected <= tampered

    run(scenario)


def test_the_others_finish_when_a_peer_is_killed_mid_round(tmp_path: Path) -> None:
    async def scenario() -> None:
        # Killed as its round starts, at a pace where a round lasts several seconds:
        # killed a moment later, in a fast round on a busy machine, it could already
        # have published its AUDIT (and the round's end be clean for it).
        t = table(tmp_path, 3, pace=0.2)
        await t.start()
        victim = t.peers[2]
        await victim.wait_for_line("round 1 starts", 20)
        victim.kill()
        summaries = await t.finish(GAME_TIMEOUT, skip=(2,))
        assert_same_game(summaries, 3)
        first_round = summaries[0][0]
        seat = next(p["seat"] for p in first_round["players"] if p["name"] == victim.name)
        assert first_round["verdicts"][seat] == "unaudited"

    run(scenario)


@pytest.mark.slow
def test_a_killed_bot_resumes_from_its_journal(tmp_path: Path) -> None:
    async def scenario() -> None:
        t = table(tmp_path, 3, target=60, extra=("--drop-after", "10"))  # no 1-round game
        await t.start()
        victim = t.peers[2]
        await victim.wait_for_line("round 1 starts", 20)
        await asyncio.sleep(0.3)
        await t.crash(2)
        await t.resume(2)
        summaries = await t.finish(GAME_TIMEOUT)
        assert_same_game(summaries[:2], 3)
        first_round = summaries[0][0]
        seat = next(p["seat"] for p in first_round["players"] if p["name"] == victim.name)
        assert first_round["verdicts"][seat] == ""  # back before the drop: a clean audit
        # The resumed peer agrees on every round it saw end (it counted collisions
        # and bounces only from its return on).
        resumed = {line.get("round"): line for line in shared_lines(summaries[2])}
        for line in shared_lines(summaries[0]):
            mine = resumed.get(line.get("round"))
            assert mine is not None
            for key in ("foundation_hash", "players", "verdicts", "totals", "winner"):
                assert mine.get(key) == line.get(key)

    run(scenario)


@pytest.mark.slow
def test_bots_beside_their_host_on_one_data_dir_are_players_of_their_own(
        tmp_path: Path) -> None:
    """The README's test table: ``nerts host`` and two ``nerts bot`` with one data
    dir. Each bot takes a free ``bots/N`` dir (a key, a journal of its own), and
    a crashed one resumes from its own, not the running bot's."""
    async def scenario() -> None:
        home = tmp_path / "home"
        t = table(tmp_path, 3, target=60, extra=("--drop-after", "10"))
        for peer in t.peers:
            peer.env["NERTS_HOME"] = str(home)
        await t.start()
        victim = t.peers[2]
        await victim.wait_for_line("round 1 starts", 20)
        keys = {(home / d / "identity.key").read_bytes() for d in ("", "bots/1", "bots/2")}
        assert len(keys) == 3
        await t.crash(2)
        await t.resume(2)
        summaries = await t.finish(GAME_TIMEOUT)
        assert_same_game(summaries[:2], 3)
        # The resumed bot saw the same game end.
        assert shared_lines(summaries[2])[-1] == shared_lines(summaries[0])[-1]
        assert not (home / "bots" / "3").exists()

    run(scenario)


@pytest.mark.slow
def test_a_killed_host_resumes_and_its_guests_find_it_again(tmp_path: Path) -> None:
    """Killed in its second round, the host comes back as the table it opened: its
    name, seats and dealing by itself (``--auto-next``: the game goes on without
    anyone dealing) from its store, though ``--resume`` says none of them; its
    final line counts the rounds before the crash too."""
    async def scenario() -> None:
        t = table(tmp_path, 3, target=60, extra=("--drop-after", "10"))  # no 1-round game
        await t.start()
        host = t.peers[0]
        await host.wait_for_line("round 2 starts", 60)
        await asyncio.sleep(0.3)
        await t.crash(0)
        await t.resume(0)
        assert f"back at table '{t.name}'" in host.log.read_text()
        summaries = await t.finish(GAME_TIMEOUT)
        assert_same_game(summaries[1:], 3)
        assert all(v == "" for v in summaries[1][0]["verdicts"])
        assert shared_lines(summaries[0])[-1] == shared_lines(summaries[1])[-1]
        assert summaries[0][-1]["rounds"] == summaries[1][-1]["rounds"] >= 2

    run(scenario)


@pytest.mark.slow
def test_a_bot_dropped_from_a_round_sits_down_again_after_resume(tmp_path: Path) -> None:
    async def scenario() -> None:
        # --drop-after 2. Back after round 2 has been dealt, the victim sits down
        # for round 3, so the game must last that long (at target 60 one CI run
        # saw no later round: most likely a game over in round 2).
        t = table(tmp_path, 3, target=100)
        await t.start()
        victim = t.peers[2]
        await victim.wait_for_line("round 1 starts", 20)
        await t.crash(2)
        await t.peers[0].wait_for_line(f"{victim.name} dropped out of the round", 20)
        await t.resume(2)
        await victim.wait_for_line("asking for our seat back", 30)
        summaries = await t.finish(GAME_TIMEOUT)
        assert_same_game(summaries[:2], 3)
        rounds = summaries[0][:-1]
        seat = next(p["seat"] for p in rounds[0]["players"] if p["name"] == victim.name)
        assert rounds[0]["verdicts"][seat] == "unaudited"
        back = [line["round"] for line in rounds
                if any(p["name"] == victim.name for p in line["players"])]
        assert back[0] == 1 and back[1:], "it played a later round"
        # Back in its seat it agrees with the others, and keeps every card of its deck.
        mine = {line["round"]: line for line in summaries[2] if "round" in line}
        for line in rounds[back[1] - 1:]:
            assert mine[line["round"]]["foundation_hash"] == line["foundation_hash"]
            assert mine[line["round"]]["local"]["cards_ok"]

    run(scenario)


@pytest.mark.slow
@pytest.mark.parametrize(("sides", "dropped"), [
    pytest.param(({0, 1}, {2, 3}), set(), id="even"),
    pytest.param(({0, 1, 2}, {3}), {3}, id="lone"),
])
def test_a_table_split_by_the_relays_merges_when_healed(
        tmp_path: Path, sides: tuple[set[int], set[int]], dropped: set[int]) -> None:
    """Cut every link between two groups for longer than --drop-after, then heal.

    In an even split nobody can gather the votes to drop anyone: finality waits
    and the logs merge. A lone peer is dropped from the round; its later plays
    come back to it, and it sits down again.
    """
    async def scenario() -> None:
        # The round outlasts the split (no side can finish it alone in an even one);
        # a lone peer dropped from it must live to sit down in a later round.
        t = table(tmp_path, 4, target=100 if dropped else 30, faults=Faults())
        await t.start()
        await t.peers[0].wait_for_line("round 1 starts", 20)
        await asyncio.sleep(0.3)
        for side, other in (sides, sides[::-1]):
            for i in side:
                t.relays[i].isolate(t.dial[j] for j in other)
        await asyncio.sleep(4.0)  # twice --drop-after
        for relay in t.relays:
            relay.heal()
        summaries = await t.finish(GAME_TIMEOUT)
        assert sum(r.stats.partitioned for r in t.relays) >= 4
        assert_same_game([s for i, s in enumerate(summaries) if i not in dropped], 4)
        reference = {line["round"]: line for line in shared_lines(summaries[0])[:-1]}
        for i in dropped:  # it missed rounds while it was away; the rest it agrees on
            lines = [line for line in summaries[i] if "round" in line]
            assert all(line["local"].get("cards_ok", True) for line in lines)
            assert len(lines) >= 2
            for line in shared_lines(lines):
                assert line == reference[line["round"]] | {
                    k: line[k] for k in ("collisions", "bounces")}
        first = summaries[0][0]
        names = {p["name"]: p["seat"] for p in first["players"]}
        assert {i for i in range(4) if first["verdicts"][names[f"p{i}"]] == "unaudited"} == dropped

    run(scenario)


def test_a_peer_left_running_by_a_failed_test_is_killed(tmp_path: Path) -> None:
    async def start() -> int:
        peer = PeerProcess("stray", tmp_path, ["host", *FAST, "--port", str(free_port())],
                           env={"NERTS_INTERFACES": "127.0.0.1"})
        await peer.start()
        await peer.wait_for_line("open on port", 20)
        assert peer.proc is not None
        return peer.proc.pid

    pid = asyncio.run(start())  # the loop is gone; the host plays on
    os.kill(pid, 0)
    PeerProcess.kill_all()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
