"""A player who leaves before the first deal (a crash) and joins again with the same
key, without ``--resume``: seated at once, counted for ``--auto-start``, and no
peer rejects its entries as equivocation (it picks up its own journal)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.testing.peers import PeerProcess

from ..netkit import until

pytestmark = pytest.mark.timeout(150)

LOCAL = Endpoint("127.0.0.1")


def test_back_before_the_first_deal_sits_down_at_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        host = await NetSession.host(Identity.generate("Tess"),
                                     TableConfig(auto_start=3, countdown=0.0), LOCAL,
                                     table_name="Lab", interfaces=None)
        hosting = asyncio.create_task(host.run())
        ana = PeerProcess("Ana", tmp_path / "ana", ["join", f"127.0.0.1:{host.port}",
                                                    "--headless", "--bind", "127.0.0.1"])
        bo: NetSession | None = None
        try:
            await ana.start()
            await until(lambda: len(host.replica.view().seats) == 2, "Ana seated")
            ana.kill()  # a crash, before any deal
            await until(lambda: len(host.replica.view().seats) == 1, "Ana's seat given up")
            await ana.start()  # the same home: the same key, and no --resume
            await until(lambda: len(host.replica.view().seats) == 2, "Ana seated again")
            await ana.wait_for_line("back at a table we sat at", 30)
            bo = await NetSession.join(Identity.generate("Bo"), ("127.0.0.1", host.port),
                                       TableConfig(), LOCAL)
            boing = asyncio.create_task(bo.run())
            await until(lambda: host.replica.phase is not Phase.LOBBY, "the deal at 3 seats")
            rs = host.replica.rs
            assert rs is not None and sorted(rs.names) == ["Ana", "Bo", "Tess"]
            await until(lambda: bo is not None and bo.replica.rs is not None, "Bo dealt in")
            for session in (host, bo):
                assert "equivocation" not in session.replica.rejected
            bo.close()
            await boing
        finally:
            ana.kill()
            host.close()
            await hosting
            PeerProcess.kill_all()

    asyncio.run(scenario())
