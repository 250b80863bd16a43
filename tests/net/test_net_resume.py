"""A host resumed from its journal over 127.0.0.1 is the table it was: its clocks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from p2p_nerts.game.variants import Variants
from p2p_nerts.peer.node import NetSession, TableConfig
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import COUNTDOWN, DROP_AFTER, ChangeSettings
from p2p_nerts.store import DB_FILE, Store

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
