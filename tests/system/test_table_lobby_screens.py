"""The table lobby of a networked table on 127.0.0.1, as its screens show it: the
host sees the address players join by; a spectator is offered no seat's keys."""

from __future__ import annotations

import asyncio

import pytest
from prompt_toolkit.input import PipeInput

from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.ui.app import NertsApp
from p2p_nerts.ui.config import Config

from ..uikit import Screen

pytestmark = pytest.mark.timeout(60)

LOCAL = Endpoint("127.0.0.1")


class At(Screen):
    def __init__(self, session: NetSession) -> None:
        super().__init__(80, 24)
        self.session = session

    def make_app(self, input: PipeInput) -> NertsApp:
        return NertsApp(self.session, Config(), (), input=input, output=self.output)


def test_the_host_sees_its_address_and_a_spectator_no_ready_key() -> None:
    async def scenario() -> None:
        config = TableConfig(countdown=0.0)
        host = await NetSession.host(Identity.generate("Tess"), config, LOCAL,
                                     table_name="Lab", interfaces=None)
        guest = await NetSession.join(Identity.generate("Gil"), ("127.0.0.1", host.port),
                                      TableConfig(), LOCAL)
        watcher = await NetSession.watch(Identity.generate("Wes"), ("127.0.0.1", host.port),
                                         TableConfig(), LOCAL)
        running = [asyncio.create_task(s.run()) for s in (host, guest, watcher)]
        assert host.address == f"127.0.0.1:{host.port}"
        async with At(host) as h:
            await h.shows("Gil")
            assert f"Address: 127.0.0.1:{host.port}" in h.row("Address:")
            assert "Enter deal" in h.lines()[-1]
        async with At(guest) as h:
            await h.shows("Waiting for Tess to deal")
            assert "Address:" not in h.screen()  # a guest hosts nothing
            assert "r ready" in h.lines()[-1]
        async with At(watcher) as h:
            await h.shows("Waiting for Tess to deal")
            assert "Address:" not in h.screen()
            footer = h.lines()[-1]
            assert "ready" not in footer and "? help" in footer
        for s in (host, guest, watcher):
            s.close()
        await asyncio.gather(*running)

    asyncio.run(scenario())
