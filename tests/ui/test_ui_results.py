"""The lobby's pages of results: history, a game's rounds, a replay."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from p2p_nerts.records.history import history_text, keep, round_to_replay
from p2p_nerts.records.record import record_of
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.ui.browser import Browser

from ..protocol.test_records import _game
from ..uikit import DOWN, ENTER, ESC, FakeNetwork, Listing, LobbyHarness

END = "\x1b[F"


def _lobby(browser: Browser) -> LobbyHarness:
    h = LobbyHarness(browser.network)
    h.browser = browser
    return h


def test_h_shows_the_history_and_replays_a_chosen_round(tmp_path: Path) -> None:
    net = _game()
    me = net.replicas[1]
    with Store(tmp_path / DB_FILE) as store:
        number = keep(store, me, "Test table", time.time())
        assert number is not None
        [(_n, game)] = store.games()
        printed = history_text(store.games(), me.me.fingerprint)  # what nerts history says
        second = game["rounds"][1]["round"]
        expected = round_to_replay(record_of(me, "Test table", 0.0), second)

        async def main() -> None:
            fake = FakeNetwork()
            fake.put(Listing("Ana's table"))
            async with _lobby(Browser(me.me, fake, store=store)) as h:
                await h.shows("Ana's table")
                assert "h history" in h.screen()
                await h.press("h")
                assert "Your games · 1 game kept, newest first" in h.screen()
                for line in printed:
                    if line:
                        assert line.strip() in h.screen(), line
                await h.press(ENTER)
                await h.shows(f"Rounds of game #{number} at Test table")
                assert "Round 1 (" in h.row("▸ Round 1")
                await h.press(DOWN, ENTER)
                await h.shows(f"Round {second} replay")
                await h.press(END)
                await h.shows("Scores")
                for r in expected.scores:
                    assert f"{expected.names[r.seat]} {r.score:+d}" in h.screen()
                await h.press(ESC)
                await h.shows(f"Rounds of game #{number}")
                assert f"▸ Round {second} (" in h.screen()  # the choice stayed
                await h.press(ESC)
                await h.shows("Your statistics")
                await h.press(ESC)
                await h.shows("Tables on your network")
                assert h.browser.pages == []
        asyncio.run(main())


def test_history_without_games_says_so_and_a_lobby_without_a_store_too(
        tmp_path: Path) -> None:
    async def main() -> None:
        with Store(tmp_path / DB_FILE) as store:
            async with _lobby(Browser(_game().replicas[0].me, FakeNetwork(),
                                      store=store)) as h:
                await h.press("h")
                await h.shows("No games yet: play one, and it is kept here.")
                await h.press(ENTER, "q")  # Enter on nothing does nothing; q goes back
                await h.shows("Tables on your network")
        async with LobbyHarness(FakeNetwork()) as h:
            await h.press("h")
            assert "No history here: this lobby keeps no games" in h.screen()
    asyncio.run(main())
