"""The lobby's pages of results: history, a game's rounds, a replay, event standings."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from p2p_nerts.protocol.envelope import open_entry
from p2p_nerts.records.history import history_text, keep, round_to_replay
from p2p_nerts.records.record import GameRecord, encode
from p2p_nerts.records.standings import Standings, standings_text, tally
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.ui.browser import Browser

from ..protocol.test_records import _game
from ..replica_harness import game_record
from ..uikit import DOWN, ENTER, ESC, FakeNetwork, Listing, LobbyHarness

END = "\x1b[F"


def _lobby(browser: Browser, columns: int = 100, rows: int = 32) -> LobbyHarness:
    h = LobbyHarness(browser.network, columns=columns, rows=rows)
    h.browser = browser
    return h


def test_h_shows_the_history_and_replays_a_chosen_round(tmp_path: Path) -> None:
    net = _game()
    me = net.replicas[1]
    with Store(tmp_path / DB_FILE) as store:
        number = keep(store, me, "Test table", time.time(), journal=net.written(1))
        assert number is not None
        [(_n, game)] = store.games()
        printed = history_text(store.games(), me.me.fingerprint)  # what nerts history says
        second = game["rounds"][1]["round"]
        expected = round_to_replay(game_record(net, 1, "Test table", 0.0), second)

        async def main() -> None:
            fake = FakeNetwork()
            fake.put(Listing("Ana's table"))
            async with _lobby(Browser(me.me, fake, history=store)) as h:
                await h.shows("Ana's table")
                assert "h history" in h.screen() and "e standings" in h.screen()
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
                await h.click_text("Round 1 (")  # a click chooses a round...
                assert "▸ Round 1 (" in h.screen()
                await h.click_text("Round 1 (")  # ...and a click on the chosen one opens it
                await h.shows("Round 1 replay")
                await h.press("q")  # q leaves a page too (in the lobby it would quit)
                await h.shows(f"Rounds of game #{number}")
                await h.press(ESC)
                await h.shows("Your statistics")
                await h.press(ESC)
                await h.shows("Tables on your network")
                assert h.browser.pages == []
        asyncio.run(main())


def test_a_long_history_scrolls_with_the_choice(tmp_path: Path) -> None:
    me = _game().replicas[1]
    with Store(tmp_path / DB_FILE) as store:
        number = keep(store, me, "Test table", 1_700_000_000.0, journal=_game().written(1))
        assert number is not None
        [(_n, game)] = store.games()
        data = store.game_record(number)
        assert data is not None
        for n in range(1, 40):  # older games (the same one, as kept at other tables)
            store.keep_game(bytes([n]) * 16, 1, 1_700_000_000.0 - n * 60,
                            {**game, "table": f"Table {n:02}"}, data)

        async def main() -> None:
            async with _lobby(Browser(me.me, FakeNetwork(), history=store),
                           columns=100, rows=24) as h:
                await h.press("h")
                assert "40 games kept" in h.screen() and "▸ #1 " in h.screen()
                assert "Table 39" not in h.screen()
                for _ in range(39):
                    await h.press(DOWN)
                assert "Table 39" in h.row("▸ ") and "Test table" not in h.screen()
                assert len(h.lines()) == 24
                assert "You: 40 games" in h.screen()  # the statistics stay in view
                assert h.lines()[-1].startswith(" ↑↓ choose  Enter its rounds")
        asyncio.run(main())


def test_history_without_games_says_so_and_a_lobby_without_a_store_too(
        tmp_path: Path) -> None:
    async def main() -> None:
        with Store(tmp_path / DB_FILE) as store:
            async with _lobby(Browser(_game().replicas[0].me, FakeNetwork(),
                                      history=store)) as h:
                await h.press("h")
                await h.shows("No games yet: play one, and it is kept here.")
                await h.press(ENTER, "q")  # Enter on nothing does nothing; q goes back
                await h.shows("Tables on your network")
        async with LobbyHarness(FakeNetwork()) as h:
            await h.press("h", "e")
            assert "No history here: this lobby keeps no games" in h.screen()
            assert "No standings here: this lobby does not ask the network" in h.screen()
    asyncio.run(main())


def _forged(record: GameRecord) -> GameRecord:
    """The record with a byte of one entry's signed body changed (a score, a card...)."""
    entries = list(record.entries)
    i = next(i for i, raw in enumerate(entries) if open_entry(raw).payload)
    raw = bytearray(entries[i])
    raw[-1] ^= 1  # the body comes last: its signature no longer holds
    entries[i] = bytes(raw)
    return GameRecord(record.table_id, record.host, record.table, record.saved_at,
                      tuple(entries))


def test_e_shows_the_standings_live_and_refuses_a_forged_result() -> None:
    net = _game()
    record = game_record(net, 0, "Test table", time.time())
    found: list[tuple[str, bytes]] = []
    asked: list[float] = []

    async def results(since: float) -> Standings:
        asked.append(since)
        return tally(found, since)

    async def main() -> None:
        browser = Browser(net.replicas[2].me, FakeNetwork(), results=results)
        browser.standings_every = 0.05
        async with _lobby(browser) as h:
            await h.press("e")
            await h.shows("0 games verified")
            assert time.time() - 12 * 3600 - 5 < asked[0] <= time.time() - 12 * 3600
            found.append(("10.0.0.7:4100", encode(record)))
            found.append(("10.0.0.8:4100", encode(record)))  # the same game, from another
            await h.shows("1 game verified")
            found.append(("10.0.0.9:4100", encode(_forged(record))))
            await h.shows("NOT COUNTED (from 10.0.0.9:4100)")
            expected = standings_text(tally(found, time.time() - 3600))
            assert expected[0] == "1 game verified"
            for line in expected:
                assert line.strip() in h.screen(), line
            await h.press(ESC)
            await h.shows("Tables on your network")
            count = len(asked)
            await asyncio.sleep(0.2)  # a closed page asks no more
            assert len(asked) == count
    asyncio.run(main())


def test_a_network_that_cannot_be_asked_is_one_line() -> None:
    async def results(since: float) -> Standings:
        raise ConnectionError("network error: no multicast here")

    async def main() -> None:
        browser = Browser(_game().replicas[0].me, FakeNetwork(), results=results)
        browser.standings_every = 0.01
        async with _lobby(browser) as h:
            await h.press("e")
            await h.shows("Cannot ask for results: network error: no multicast here")
            await asyncio.sleep(0.1)
            assert h.screen().count("Cannot ask for results") == 1
            assert "Traceback" not in h.screen()
    asyncio.run(main())
