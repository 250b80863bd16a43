"""Screens that follow a table without playing it, on 127.0.0.1: a spectator's
(``nerts watch``), and a latecomer's until the next deal."""

from __future__ import annotations

import asyncio
import random

import pytest
from prompt_toolkit.input import PipeInput

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.peer.headless import paced, run_headless
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.ui.app import NertsApp
from p2p_nerts.ui.config import Config

from ..uikit import Screen

pytestmark = pytest.mark.timeout(60)

LOCAL = Endpoint("127.0.0.1")


class Watching(Screen):
    def __init__(self, session: NetSession, columns: int = 100, rows: int = 36) -> None:
        super().__init__(columns, rows)
        self.session = session

    def box(self, name: str) -> list[str]:
        """The rows of ``name``'s layout, around the table ([] while not drawn)."""
        title = f"─ {name} up"
        lines = self.lines()
        for y, line in enumerate(lines):
            if title in line:
                x = line.index(title)
                return [row[x:x + 38] for row in lines[y:y + 6]]
        return []

    def make_app(self, input: PipeInput) -> NertsApp:
        return NertsApp(self.session, Config(), (), input=input, output=self.output)


def test_a_spectators_screen_follows_the_round() -> None:
    async def scenario() -> None:
        config = TableConfig(variants=Variants(target=1000), countdown=0.0, auto_start=2,
                             auto_next=30.0)
        host = await NetSession.host(Identity.generate("Tess"), config, LOCAL,
                                     table_name="Lab", interfaces=None)
        guest = await NetSession.join(Identity.generate("Gil"), ("127.0.0.1", host.port),
                                      TableConfig(), LOCAL)
        players = [asyncio.create_task(run_headless(
            s, bot=Bot(paced(SKILLS["hard"], 0.3), random.Random(i)), summary=None))
            for i, s in enumerate((host, guest))]
        watcher = await NetSession.watch(Identity.generate("Wes"), ("127.0.0.1", host.port),
                                         TableConfig(), LOCAL)
        watching = asyncio.create_task(watcher.run())
        async with Watching(watcher, 120, 36) as h:
            await h.until(lambda: "Round 1" in h.screen() and "Tess " in h.screen()
                          and "Gil " in h.screen(), "the round in view")
            assert "Watching · read-only" in h.screen()
            assert "watching  ? help  q leave" in h.screen()
            # Each player's whole layout, from the views they send: Nerts pile,
            # waste and stock, and the four work piles.
            await h.until(lambda: all(
                len(box) == 6 and "Stock" in box[1]
                and [row[:2] for row in box[2:]] == [" 1", " 2", " 3", " 4"]
                for box in (h.box("Tess"), h.box("Gil"))), "both players' layouts")
            await h.until(lambda: any(pile in h.screen() for pile in ("A♠", "A♥", "A♦", "A♣")),
                          "an ace on the foundations")
            await h.press(" ")
            await h.shows("You are watching this table: a spectator does not play")
        for s in (host, guest, watcher):
            s.close()
        await asyncio.gather(*players, watching)

    asyncio.run(scenario())


def test_a_latecomer_is_told_it_plays_from_the_next_round() -> None:
    async def scenario() -> None:
        config = TableConfig(variants=Variants(target=1000), countdown=0.0, auto_start=2,
                             auto_next=30.0)
        host = await NetSession.host(Identity.generate("Tess"), config, LOCAL,
                                     table_name="Lab", interfaces=None)
        guest = await NetSession.join(Identity.generate("Gil"), ("127.0.0.1", host.port),
                                      TableConfig(), LOCAL)
        players = [asyncio.create_task(run_headless(
            s, bot=Bot(paced(SKILLS["hard"], 0.3), random.Random(i)), summary=None))
            for i, s in enumerate((host, guest))]
        async with asyncio.timeout(20):
            while host.replica.phase is not Phase.PLAYING:
                await asyncio.sleep(0.02)
        late = await NetSession.join(Identity.generate("Cy"), ("127.0.0.1", host.port),
                                     TableConfig(), LOCAL)
        running = asyncio.create_task(late.run())
        async with Watching(late) as h:
            await h.shows("A round is under way: you play from the next round")
            await h.until(lambda: "Tess " in h.screen() and "Gil " in h.screen(),
                          "the round in view")
        for s in (host, guest, late):
            s.close()
        await asyncio.gather(*players, running)

    asyncio.run(scenario())
