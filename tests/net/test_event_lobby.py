"""An event in the lobby: its own row, Enter registers (its code asked), the seating is
said, and Enter takes the player to a table that deals once everyone sits.

The lobby is the real app on a pipe; the event and its tables are real, on
127.0.0.1 (mDNS pinned there); two computer players take part beside the
player at the screen.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from pathlib import Path

import pytest

from p2p_nerts.game.bot import SKILLS, Bot, paced
from p2p_nerts.peer.event_host import EventSettings, Organiser
from p2p_nerts.peer.event_lobby import LanEvents
from p2p_nerts.peer.event_seat import EventLink, take_part
from p2p_nerts.peer.node import Endpoint
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.ui.browser import Browser

from ..netkit import until
from ..uikit import DOWN, ENTER, PLAYER, FakeNetwork, LobbyHarness

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("quick_mdns")]

LOOPBACK = ["127.0.0.1"]
LOCAL = Endpoint("127.0.0.1")
CODE = "pink otter"


def test_a_player_registers_from_the_lobby_and_goes_to_the_table_the_seating_names(
        tmp_path: Path) -> None:
    name = f"Lobby cup {secrets.token_hex(3)}"

    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings(name, games=1, table_size=3, target=10_000,
                                                 code=CODE, turn_up=60), resume=False)
        await organiser.start(LOOPBACK, bind="127.0.0.1")
        label = f"{name}@{organiser.identity.fingerprint.replace('-', '')[:4]}"
        playing: list[asyncio.Task[bool]] = []
        for seed, who in enumerate(("Ana", "Ben")):
            changed = asyncio.Event()
            link = EventLink(Identity.generate(who), ("127.0.0.1", organiser.port),
                             register=True, code=CODE, changed=changed.set)
            bot = Bot(paced(SKILLS["hard"], 5.0), random.Random(seed))  # slow: the game lasts
            playing.append(asyncio.ensure_future(take_part(
                link, bot, changed, interfaces=LOOPBACK, endpoint=LOCAL, store=None)))
        h = LobbyHarness(FakeNetwork())
        h.browser = Browser(PLAYER, h.browser.network,
                            events=LanEvents(PLAYER, LOOPBACK, endpoint=LOCAL))
        try:
            async with h:
                await h.shows(label)
                while f"▸ {label}" not in h.screen():  # other runs' events may sort first
                    await h.press(DOWN)
                assert "Enter: register" in h.row(f"▸ {label}")
                assert " code" in h.row(f"▸ {label}")
                await h.press(ENTER)
                await h.shows(f"Register for {name}")
                await h.type("blue fox")
                await h.press(ENTER)
                await h.shows("That is not the event's code")
                await h.press(*["\x7f"] * len("blue fox"))
                await h.type(CODE)
                await h.press(ENTER)
                await h.shows(f"Registered for {name}")
                await until(lambda: len(organiser.connected) == 3, "three registered")
                assert PLAYER.public_key in organiser.connected
                seated = organiser.start_game()
                [table] = seated.tables
                await h.shows("Game 1: table A, with ")
                assert "(Enter: go)" in h.row(f"▸ {label}")
                await h.press(ENTER)
                await h.shows("NERTS · round 1")  # the table, dealt once all three sat
                await until(lambda: organiser.book.games[1].live.get("A") is not None
                            and organiser.book.games[1].live["A"].round >= 1,
                            "the table to deal once all three sit", timeout=60)
                assert set(table.seats) == {PLAYER.public_key, *(
                    r.player for r in organiser.registered if r.name in ("Ana", "Ben"))}
        finally:
            for task in playing:
                task.cancel()
            await asyncio.gather(*playing, return_exceptions=True)
            await organiser.close()

    asyncio.run(scenario())


def test_nerts_event_join_at_a_screen_registers_as_soon_as_the_event_is_heard(
        tmp_path: Path) -> None:
    name = f"Named cup {secrets.token_hex(3)}"

    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings(name, code=CODE), resume=False)
        await organiser.start(LOOPBACK, bind="127.0.0.1")
        h = LobbyHarness(FakeNetwork())
        h.browser = Browser(PLAYER, h.browser.network,
                            events=LanEvents(PLAYER, LOOPBACK, endpoint=LOCAL))
        h.browser.register_when_heard(name.upper(), CODE)  # as typed: any case
        try:
            async with h:
                await h.shows(f"Registered for {name}")
                assert [r.name for r in organiser.registered] == [PLAYER.name]
                assert "registered" in h.row(f"▸ {name}@")
        finally:
            await organiser.close()

    asyncio.run(scenario())
