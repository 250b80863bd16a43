"""An event on loopback: players register, each game's seating is followed, the tables
deal themselves, the results come back to the organiser, and it resumes after a crash.

The organiser's server listens on 127.0.0.1; the tables are found on mDNS on
127.0.0.1 (by their name and their host's key), as players find them.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from p2p_nerts.event.entries import EventError
from p2p_nerts.game.bot import SKILLS, Bot, paced
from p2p_nerts.peer.event_host import EventSettings, Organiser
from p2p_nerts.peer.event_seat import EventLink, take_part
from p2p_nerts.peer.node import Endpoint
from p2p_nerts.protocol.identity import Identity
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


def test_bots_register_follow_two_seatings_and_every_machine_agrees_on_the_standings(
        tmp_path: Path) -> None:
    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings("Loop cup", games=2, table_size=3, target=1,
                                                 turn_up=60), resume=False)
        await organiser.start(None, bind="127.0.0.1")
        address = ("127.0.0.1", organiser.port)
        players = [Player(tmp_path, name, address)
                   for name in ("Ana", "Ben", "Cy", "Dee", "Eli", "Fay")]
        playing = [p.play(seed) for seed, p in enumerate(players)]
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
            organiser.start_game()
            results = await asyncio.wait_for(asyncio.gather(*playing), 120)
            assert results == [True] * 6
            expected = organiser.book.standings()
            assert sum(row.games for row in expected) == 12  # two games of six players
            for p in players:
                assert p.link.book.standings() == expected
        finally:
            for task in playing:
                task.cancel()
            await asyncio.gather(*playing, return_exceptions=True)
            await organiser.close()
            for p in players:
                p.store.close()

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
            before = list(organiser.book.entries)
            await organiser.close()
            with pytest.raises(EventError, match=r"journaled .* already"):
                Organiser.open(olga, journal, settings, resume=False)
            organiser = Organiser.open(olga, journal, settings, resume=True)
            assert organiser.book.entries == before
            assert organiser.book.games[1].seated == seated
            assert {r.name for r in organiser.registered} == {"Ana", "Ben", "Cy"}
            await organiser.start(None, bind="127.0.0.1")
            assert organiser.port == address[1]
            await until(lambda: len(organiser.connected) == 3, "the players back")
        finally:
            for p in players:
                p.link.close()
            await asyncio.gather(*following, return_exceptions=True)
            await organiser.close()
            for p in players:
                p.store.close()

    asyncio.run(scenario())
