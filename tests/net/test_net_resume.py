"""Seats resumed from their journals over 127.0.0.1: a host is the table it was (its
clocks), and a bot back after a restart of its machine plays the game out."""

from __future__ import annotations

import asyncio
import io
import json
import random
import signal
from pathlib import Path

import pytest

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.peer.headless import paced, run_headless
from p2p_nerts.peer.node import NetSession, TableConfig
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import Kind, Record
from p2p_nerts.protocol.replica import COUNTDOWN, DROP_AFTER, ChangeSettings
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.testing.peers import PeerProcess, shared_lines

from ..netkit import until
from .test_net_session import LOCAL, config

pytestmark = pytest.mark.timeout(60)


def test_a_resumed_host_keeps_its_clocks_from_the_journal(tmp_path: Path) -> None:
    """Opened with a 7.5 s countdown and 4 s drop-after, then changed to 2.5 s and
    9 s at the table (the host's settings form): ``--resume``, whose command line
    gives the default clocks, plays by the clocks the table last signed, not the
    command line's nor those it opened with."""
    me = Identity.generate("Tess")
    assert (COUNTDOWN, DROP_AFTER) != (2.5, 9.0)

    async def scenario() -> None:
        with Store(tmp_path / DB_FILE) as store:
            opened = await NetSession.host(me, config(countdown=7.5, drop_after=4.0,
                                                      auto_start=None),
                                           LOCAL, table_name="Main table", interfaces=None,
                                           store=store)
            running = asyncio.create_task(opened.run())
            seating = opened.replica.seating
            assert (seating.countdown, seating.drop_after) == (7.5, 4.0)
            opened.act(ChangeSettings(Variants(target=15), countdown=2.5, drop_after=9.0))
            await until(lambda: (seating.countdown, seating.drop_after) == (2.5, 9.0))
            opened.close()  # as a crash leaves it: the game not over, the journal kept
            await running
            table = store.unfinished()
            assert table is not None
            back = await NetSession.resume(me, TableConfig(), LOCAL, store, table,
                                           table_name="Tess's table", interfaces=None)
            resumed = asyncio.create_task(back.run())
            try:
                assert back.table_name == "Main table"
                seating = back.replica.seating
                assert (seating.countdown, seating.drop_after) == (2.5, 9.0)
                assert seating.variants == Variants(target=15)
            finally:
                back.close()
                await resumed

    asyncio.run(scenario())


def _as_if_written_in_an_earlier_boot(data: Path) -> None:
    """Rewrite the journal of the table last sat at with the store in ``data`` so that it
    names another boot of the machine than this one, as a journal written before a
    power cut does."""
    with Store(data / DB_FILE) as store:
        table = store.last_table()
        assert table is not None
        records = store.records(table.table_id)
        assert any(r.kind is Kind.BOOT for r in records)
        earlier = [Record(Kind.BOOT, b"an earlier boot") if r.kind is Kind.BOOT else r
                   for r in records]
        journal = store._journal(table.table_id)  # the file itself
    journal.unlink()
    with Store(data / DB_FILE) as store:
        store.append(table.table_id, earlier)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_bot_back_after_its_machine_restarted_says_so_and_plays_the_game_out(
        tmp_path: Path) -> None:
    """Killed mid-round (SIGKILL), its journal naming an earlier boot of the machine (as
    after a power cut, which can take the last batch it sent), ``nerts bot --resume``
    says in one line that it waits for the players' word, learns from the table
    where its chain ends, and plays the game out: the host and it agree on every
    round, and nobody is flagged."""
    me = Identity.generate("Tess")

    async def scenario() -> None:
        host = await NetSession.host(me, config(auto_start=2, variants=Variants(target=25)),
                                     LOCAL, table_name="Reboot table", interfaces=None)
        said = io.StringIO()
        hosting = asyncio.create_task(run_headless(
            host, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(1)), summary=said,
            linger=1.0))
        bo = PeerProcess("Bo", tmp_path / "bo", ["bot", f"127.0.0.1:{host.port}", "--bind",
                                                 "127.0.0.1", "--pace", "0.05"])
        try:
            await bo.start()
            await bo.wait_for_line("round 1 starts in", 30)
            await until(lambda: host.replica.rs is not None and len(host.replica.rs.log) >= 6)
            assert bo.proc is not None
            bo.proc.send_signal(signal.SIGKILL)
            assert await bo.wait(10) == -signal.SIGKILL
            _as_if_written_in_an_earlier_boot(bo.home / "bots" / "1")  # (its seat's own)
            mark = bo.log.stat().st_size
            bo.args = ["bot", "--resume", "--bind", "127.0.0.1", "--pace", "0.05"]
            await bo.start()
            await bo.wait_for_line("this machine restarted since our journal was written", 30,
                                   after=mark)
            assert await bo.wait(90) == 0
            assert await asyncio.wait_for(hosting, 30) == 0
        finally:
            bo.kill()
        log = bo.log.read_text()
        assert "flagged" not in log and "equivocat" not in log, log
        host_lines = [json.loads(x) for x in said.getvalue().splitlines()]
        bo_lines = [json.loads(x) for x in bo.summary.read_text().splitlines()]
        assert host_lines[-1]["game_over"]
        assert shared_lines(bo_lines)[-1] == shared_lines(host_lines)[-1]
        assert all(line.get("agreed", True) for line in host_lines)

    asyncio.run(scenario())
