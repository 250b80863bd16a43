"""An event on loopback: players register, each game's seating is followed, the tables
deal themselves, the results come back to the organiser, and it resumes after a crash.

The organiser's server listens on 127.0.0.1; the tables are found on mDNS on
127.0.0.1 (by their name and their host's key), as players find them.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from p2p_nerts.event.entries import EventError
from p2p_nerts.game.bot import SKILLS, Bot, paced
from p2p_nerts.peer import event_host
from p2p_nerts.peer.event_host import EventSettings, Organiser, OrganiserDesk
from p2p_nerts.peer.event_seat import EventLink, take_part
from p2p_nerts.peer.node import Endpoint
from p2p_nerts.protocol.identity import Identity, fingerprint_of
from p2p_nerts.store import Store

from ..netkit import until

pytestmark = pytest.mark.timeout(240)

LOOPBACK = ["127.0.0.1"]
LOCAL = Endpoint("127.0.0.1")


def bot(seed: int) -> Bot:
    return Bot(paced(SKILLS["hard"], 0.05), random.Random(seed))


class Player:
    """A player's machine: its key, its store, its link to the event."""

    def __init__(self, tmp: Path, name: str, address: tuple[str, int],
                 code: str | None = None) -> None:
        self.identity = Identity.generate(name)
        self.store = Store(tmp / f"{name}.db")
        self.changed = asyncio.Event()
        self.link = EventLink(self.identity, address, register=True, code=code,
                              store=self.store, changed=self.changed.set)

    def play(self, seed: int) -> asyncio.Task[bool]:
        return asyncio.ensure_future(take_part(self.link, bot(seed), self.changed,
                                               interfaces=LOOPBACK, endpoint=LOCAL,
                                               store=self.store))


async def _leave(organiser: Organiser, players: list[Player],
                 running: Sequence[asyncio.Future[Any]]) -> None:
    """A scenario's end, however it went: the players' links closed and what they ran
    stopped, then the organiser and the players' stores closed."""
    for p in players:
        p.link.close()
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)
    await organiser.close()
    for p in players:
        p.store.close()


@pytest.mark.slow
def test_bots_register_follow_two_seatings_and_every_machine_agrees_on_the_standings(
        tmp_path: Path) -> None:
    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings("Loop cup", games=2, table_size=3, target=1,
                                                 turn_up=60), resume=False)
        await organiser.start(LOOPBACK, bind="127.0.0.1")  # it watches the tables too
        live: list[dict[str, object]] = []
        organiser.subscribe(lambda: live.extend(
            t for t in organiser.book.wall()["tables"] if t["state"] in ("playing", "break")))
        address = ("127.0.0.1", organiser.port)
        players = [Player(tmp_path, name, address)
                   for name in ("Ana", "Ben", "Cy", "Dee", "Eli", "Fay")]
        playing = [p.play(seed) for seed, p in enumerate(players)]
        # A projector's machine: it follows without registering, and watches the tables.
        wall: list[dict[str, object]] = []
        projector = EventLink(Identity.generate("Wall"), address, register=False,
                              watch=LOOPBACK, changed=lambda: wall.extend(
                                  t for t in projector.book.wall()["tables"]
                                  if t["state"] in ("playing", "break")))
        following = asyncio.ensure_future(projector.run())
        try:
            await until(lambda: len(organiser.connected) == 6, "six players registered")
            assert {r.name for r in organiser.registered} == {
                "Ana", "Ben", "Cy", "Dee", "Eli", "Fay"}
            first = organiser.start_game()
            assert sorted(len(t.seats) for t in first.tables) == [3, 3]
            await until(lambda: all(p.link.my_seat(1) is not None for p in players),
                        "every player to see its seat")
            seat = players[0].link.my_seat(1)
            assert seat is not None and seat.line().startswith(
                f"Game 1: table {seat.table.letter}, with ")
            await until(lambda: organiser.book.games[1].finished, "game 1's results",
                        timeout=120)
            # The organiser's screen shows a finished table's totals as its record
            # has them, not the last scores seen while watching it.
            done = organiser.book.results()
            names = {k: r.name for k, r in organiser.book.registrations.items()}
            lines = OrganiserDesk(organiser).tables()
            assert lines[-1] == "game 1 is over"
            for table, line in zip(first.tables, lines, strict=False):
                totals = {p["fingerprint"]: int(p["total"])
                          for p in done[(1, table.letter)].game["players"]}
                who = ", ".join(f"{names[k]} {totals[fingerprint_of(k)]}" for k in table.seats)
                assert line == f"table {table.letter}: {who} · over: its record is in"
            assert OrganiserDesk(organiser).start_game() == "game 2 seated: 2 tables, 6 players"
            results = await asyncio.wait_for(asyncio.gather(*playing), 120)
            assert results == [True] * 6
            expected = organiser.book.standings()
            assert sum(row.games for row in expected) == 12  # two games of six players
            for p in players:
                assert p.link.book.standings() == expected
            # What the projector shows of the tables as they played, from watching them.
            assert {(t["game"], t["table"]) for t in live} <= {
                (g, letter) for g in (1, 2) for letter in "AB"}
            assert live and all(len(t["players"]) == 3 for t in live)  # type: ignore[arg-type]
            assert any(t["round"] >= 1 for t in live)  # type: ignore[operator]
            assert any(t["round"] >= 1 for t in wall)  # type: ignore[operator]
            # The projector hears the last records after the organiser took them.
            await until(lambda: projector.book.standings() == expected,
                        "the projector to count every record")
            projector.close()
            await following
        finally:
            await _leave(organiser, players, playing)

    asyncio.run(scenario())


def test_a_wrong_code_is_refused_on_the_players_machine_and_a_right_one_registers(
        tmp_path: Path) -> None:
    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings("Coded cup", code="pink otter"),
                                   resume=False)
        await organiser.start(None, bind="127.0.0.1")
        address = ("127.0.0.1", organiser.port)
        wrong = Player(tmp_path, "Ana", address, code="blue fox")
        right = Player(tmp_path, "Ben", address, code="pink otter")
        try:
            with pytest.raises(EventError, match="that is not the event's code"):
                await asyncio.wait_for(wrong.link.run(), 30)
            following = asyncio.ensure_future(right.link.run())
            await until(lambda: right.link.registered, "Ben's registration")
            assert [r.name for r in organiser.registered] == ["Ben"]
            right.link.close()
            await following
        finally:
            await organiser.close()
            wrong.store.close()
            right.store.close()

    asyncio.run(scenario())


def test_the_organiser_comes_back_with_every_registration_and_seating_and_players_reconnect(
        tmp_path: Path) -> None:
    """The organiser's machine stops (its server and journal closed as a crash leaves
    them: nothing written but what it had journaled) and comes back with --resume:
    the players find it on its old port by themselves."""
    async def scenario() -> None:
        olga = Identity.generate("Olga")
        journal = tmp_path / "event.journal"
        settings = EventSettings("Crash cup", games=2, table_size=3)
        organiser = Organiser.open(olga, journal, settings, resume=False)
        await organiser.start(None, bind="127.0.0.1")
        address = ("127.0.0.1", organiser.port)
        players = [Player(tmp_path, name, address) for name in ("Ana", "Ben", "Cy")]
        following = [asyncio.ensure_future(p.link.run()) for p in players]
        try:
            await until(lambda: len(organiser.connected) == 3, "three players")
            seated = organiser.start_game()
            await until(lambda: all(len(p.link.book.games) == 1 for p in players),
                        "the seating to reach everyone")
            desk = OrganiserDesk(organiser)  # what the organiser's screen shows
            assert desk.title == f"Crash cup · game 1 of 2 · port {address[1]}"
            assert [(name, on) for name, _fp, on in desk.players()] == [
                ("Ana", True), ("Ben", True), ("Cy", True)]
            [line] = desk.tables()
            assert line.startswith("table A: ") and line.endswith(" · waiting for its players")
            with pytest.raises(ValueError, match="game 1 is still being played at table"):
                desk.start_game()
            before = list(organiser.book.entries)
            await organiser.close()
            with pytest.raises(EventError, match=r"journaled .* already"):
                Organiser.open(olga, journal, settings, resume=False)
            organiser = Organiser.open(olga, journal, settings, resume=True)
            assert organiser.book.entries == before
            assert organiser.book.games[1].seated == seated
            assert organiser.opened.seed_commit is not None  # its seeds fixed at the opening
            assert {r.name for r in organiser.registered} == {"Ana", "Ben", "Cy"}
            await organiser.start(None, bind="127.0.0.1")
            assert organiser.port == address[1]
            await until(lambda: len(organiser.connected) == 3, "the players back")
        finally:
            await _leave(organiser, players, following)

    asyncio.run(scenario())


def test_a_game_played_while_the_organiser_is_down_counts_once_it_is_back(
        tmp_path: Path) -> None:
    async def scenario() -> None:
        olga = Identity.generate("Olga")
        journal = tmp_path / "event.journal"
        settings = EventSettings("Down cup", games=1, table_size=3, target=1, turn_up=60)
        organiser = Organiser.open(olga, journal, settings, resume=False)
        await organiser.start(None, bind="127.0.0.1")
        players = [Player(tmp_path, name, ("127.0.0.1", organiser.port))
                   for name in ("Ana", "Ben", "Cy")]
        playing = [p.play(seed) for seed, p in enumerate(players)]
        try:
            await until(lambda: len(organiser.connected) == 3, "three players")
            organiser.start_game()
            await until(lambda: all(p.link.my_seat(1) is not None for p in players),
                        "every player to see its seat")
            await organiser.close()  # down for the whole game
            await until(lambda: all(p.store.records_since(0.0) for p in players),
                        "the game played and kept by every player", timeout=120)
            organiser = Organiser.open(olga, journal, settings, resume=True)
            assert not organiser.book.records
            await organiser.start(None, bind="127.0.0.1")
            assert await asyncio.wait_for(asyncio.gather(*playing), 60) == [True] * 3
            assert organiser.book.games[1].finished
            rows = organiser.book.standings()
            assert [row.games for row in rows] == [1, 1, 1]
            assert all(p.link.book.standings() == rows for p in players)
        finally:
            await _leave(organiser, players, playing)

    asyncio.run(scenario())


def test_a_table_that_never_opens_is_found_deserted_and_its_game_can_end_without_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(event_host, "DESERTED_AFTER", 0.0)

    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings("Empty cup", games=2, table_size=3,
                                                 turn_up=0), resume=False)
        await organiser.start(None, bind="127.0.0.1")
        players = [Player(tmp_path, name, ("127.0.0.1", organiser.port))
                   for name in ("Ana", "Ben", "Cy")]
        following = [asyncio.ensure_future(p.link.run()) for p in players]  # nobody plays
        try:
            await until(lambda: len(organiser.connected) == 3, "three players")
            assert organiser.deserted() == []  # no game yet
            organiser.start_game()
            assert organiser.deserted() == ["A"]  # seated, never seen, no result
            organiser.end_game()
            assert organiser.book.games[1].finished and organiser.deserted() == []
            await until(lambda: all(p.link.moved_on(1) for p in players),
                        "the players to hear that game 1 is over")
            assert organiser.start_game().game == 2  # the event goes on
        finally:
            await _leave(organiser, players, following)

    asyncio.run(scenario())
