"""``nerts solo --loopback``: the network game on one machine, each bot a peer of its own."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import random
from collections import Counter
from pathlib import Path

import pytest

from p2p_nerts.commands.play import LOG_FILE
from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.net.logs import setup_logging
from p2p_nerts.peer.headless import paced, run_headless
from p2p_nerts.peer.loopback import loopback_table
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import CommandError, Phase, StartRound
from p2p_nerts.store import DB_FILE, SOLO, Store

from ..netkit import until

pytestmark = pytest.mark.timeout(90)


def test_a_loopback_solo_table_is_a_full_mesh_of_peers_that_plays_a_whole_game() -> None:
    async def scenario() -> None:
        me = Identity.generate("Tess")
        async with loopback_table(me, bots=3, skill="hard", variants=Variants(target=15),
                                  countdown=0.0, pace=0.05) as table:
            host = table.session
            sessions = [host, *table.bots]
            port = host.port
            # Each bot is a peer of its own (its own key), seated in name order.
            assert [s.name for s in host.replica.view().seats] == ["Tess", "Ada", "Bix", "Cleo"]
            # No seat falls silent alone: the lobby shows no silent-seat clock (3600 s).
            assert not host.networked
            keys = {s.replica.me.public_key for s in sessions}
            assert len(keys) == 4
            await until(lambda: all(s.connected == keys - {s.replica.me.public_key}
                                    for s in sessions))
            # A bot stands in for the player at the keyboard; the player deals.
            game = asyncio.create_task(run_headless(
                host, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(1)),
                summary=io.StringIO(), linger=0.2))
            while not game.done():
                if host.replica.phase in (Phase.LOBBY, Phase.BETWEEN):
                    with contextlib.suppress(CommandError):
                        host.act(StartRound())
                await asyncio.sleep(0.05)
            assert game.result() == 0
            await until(lambda: all(s.replica.phase is Phase.OVER for s in table.bots))
            assert all(s.replica.totals == host.replica.totals for s in table.bots)
        # Everything is closed on the way out: the table's port takes no one.
        with pytest.raises(OSError):
            await asyncio.open_connection("127.0.0.1", port)

    asyncio.run(scenario())


def test_a_loopback_solo_game_is_kept_flagged_solo_as_an_in_process_one_is(
        tmp_path: Path) -> None:
    """Finished, it is in the player's history with the table's totals; nobody's event
    standings are served it; and the computer players, who keep no store, keep nothing.
    Played to more points than one round can score (52 cards), so the replica has
    forgotten the early rounds by the end and the record must have them from elsewhere."""
    async def scenario(store: Store) -> dict[str, int]:
        me = Identity.generate("Tess")
        async with loopback_table(me, bots=1, skill="hard", variants=Variants(target=53),
                                  countdown=0.0, pace=0.05, store=store) as table:
            host = table.session
            game = asyncio.create_task(run_headless(
                host, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(2)),
                summary=None, linger=0.2))
            while not game.done():
                if host.replica.phase in (Phase.LOBBY, Phase.BETWEEN):
                    with contextlib.suppress(CommandError):
                        host.act(StartRound())
                await asyncio.sleep(0.05)
            assert game.result() == 0
            assert store.games() == []  # kept on the way out, with all the table holds
            return {s.name: host.replica.totals[s.key] for s in host.replica.view().seats}

    with Store(tmp_path / DB_FILE) as store:
        totals = asyncio.run(scenario(store))
        [(_number, game)] = store.games()
        assert game["table"] == "Tess's solo table" and game["flags"] == [SOLO]
        assert {p["name"]: p["total"] for p in game["players"]} == totals
        assert sorted(totals) == ["Ada", "Tess"]
        assert game["winner"] is not None and len(game["rounds"]) >= 2
        assert store.records_since(0.0) == []


def test_at_a_loopback_share_table_a_partner_plays_the_players_tableau() -> None:
    async def scenario() -> None:
        me = Identity.generate("Tess")
        async with loopback_table(me, bots=2, skill="hard", countdown=0.0, pace=0.05,
                                  variants=Variants(teams="share")) as table:
            host = table.session
            runner = asyncio.create_task(host.run())
            host.act(StartRound())
            # Nothing drives the player's seat but the partner: any move is its.
            await until(lambda: host.replica.rs is not None and host.replica.rs.tab is not None
                        and len(host.replica.rs.tab.log) > 0, timeout=30)
            host.close()
            await runner

    asyncio.run(scenario())


def test_each_computer_player_logs_under_its_own_name(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """All seats share one process, but a line says whose connection it is about."""
    for logger in (logging.getLogger(), logging.getLogger("zeroconf")):
        monkeypatch.setattr(logger, "level", logger.level)
    root = logging.getLogger().handlers
    pytests, root[:] = root[:], []  # in place: pytest takes its own handlers off later
    log = tmp_path / LOG_FILE
    setup_logging("Tess", False, log)

    async def scenario() -> None:
        me = Identity.generate("Tess")
        async with loopback_table(me, bots=2, skill="hard", variants=Variants(target=15),
                                  countdown=0.0, pace=0.05) as table:
            sessions = [table.session, *table.bots]
            keys = {s.replica.me.public_key for s in sessions}
            await until(lambda: all(s.connected == keys - {s.replica.me.public_key}
                                    for s in sessions))

    try:
        asyncio.run(scenario())
    finally:
        for handler in root:
            handler.close()
        root[:] = pytests
    lines = [line.split(" ", 1)[1] for line in log.read_text().splitlines()]
    links = Counter(line.split(": ", 1)[0] for line in lines if ": connected to " in line)
    assert links == {"Tess": 2, "Ada": 2, "Bix": 2}, lines  # a full mesh of three
