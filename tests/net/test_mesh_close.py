"""Closing a mesh over real TCP on 127.0.0.1: a link whose opening exchange was
still under way when the mesh began to close is closed too, and ``close`` returns.

Seen under load: a dial that connected just as the mesh cancelled it went on to
serve a link nobody would ever close, and the peer never finished leaving.
"""

from __future__ import annotations

import asyncio

import pytest

from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol.identity import Identity

from ..netkit import until

pytestmark = pytest.mark.timeout(60)

LOCAL = Endpoint(bind="127.0.0.1")


def test_a_link_opened_while_the_mesh_closes_is_closed_at_once() -> None:
    async def scenario() -> None:
        host = await NetSession.host(Identity.generate("Host"), TableConfig(), LOCAL,
                                     table_name="Closing", interfaces=None)
        guest = await NetSession.join(Identity.generate("Bo"), ("127.0.0.1", host.port),
                                      TableConfig(), LOCAL)
        try:
            await until(lambda: len(host.replica.view().seats) == 2, "Bo seated")
            # Opened by hand as a redial would, then handed over after close began.
            late = await guest._mesh.connect("127.0.0.1", host.port, joining=False,
                                             expect_key=host.replica.me.public_key)
            await guest._mesh.close(flush=0)
            async with asyncio.timeout(10):
                await guest._mesh._serve(late)
            assert late.closed
            assert host.replica.me.public_key not in guest._mesh.links
        finally:
            await host._mesh.close(flush=0)

    asyncio.run(scenario())
