"""Seat counts are the truth, in an open lobby and at the host.

Counted: the seats the next deal goes to as things stand (``lobby.taken``):
the players still in the round and the latecomers waiting for the next deal;
a seat the table dropped is free at once, and a player gone silent before a
deal (its machine asleep: its TCP link stays up) loses its seat after
``drop_after`` s. Real tables (``NetSession.host``) advertise on 127.0.0.1,
and the players who go silent or die are ``nerts bot`` processes stopped
(SIGSTOP) or killed (SIGKILL).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from p2p_nerts.game.variants import Variants
from p2p_nerts.net.discovery import TableAd, TableBrowser
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.testing.peers import PeerProcess

pytestmark = [pytest.mark.timeout(150), pytest.mark.usefixtures("quick_mdns")]

LOOPBACK = ["127.0.0.1"]
LOCAL = Endpoint("127.0.0.1")
DROP_AFTER = 3.0
FOLLOW = 2.0
"""Seconds an open lobby may lag behind its table (the issue's bound)."""


@pytest.fixture(autouse=True)
def no_peer_left() -> Iterator[None]:
    yield
    PeerProcess.kill_all()


def row(browser: TableBrowser, name: str) -> TableAd | None:
    return next((t for t in browser.tables if t.name == name), None)


async def shows(browser: TableBrowser, name: str, seats: int, what: str,
                within: float = FOLLOW) -> None:
    try:
        await browser.wait_for(lambda ts: any(t.name == name and t.seats_taken == seats
                                              for t in ts), within)
    except TimeoutError:
        raise AssertionError(f"the lobby did not follow {what} within {within:g} s: "
                             f"{row(browser, name)}") from None


def stop(peer: PeerProcess) -> None:
    """The peer's machine goes silent: the process stops, its TCP links stay up."""
    assert peer.proc is not None
    os.kill(peer.proc.pid, signal.SIGSTOP)


def bot(tmp: Path, name: str, port: int, *more: str) -> PeerProcess:
    return PeerProcess(name, tmp / name, ["bot", f"127.0.0.1:{port}", "--bind", "127.0.0.1",
                                          *more])


async def hosting(name: str, **config: object) -> tuple[NetSession, asyncio.Task[None]]:
    host = await NetSession.host(Identity.generate("Tess"),
                                 TableConfig(drop_after=DROP_AFTER, **config),  # type: ignore[arg-type]
                                 LOCAL, table_name=name, interfaces=LOOPBACK)
    return host, asyncio.create_task(host.run())


def counted(host: NetSession) -> Callable[[], int]:
    return lambda: host.replica.view().seats_taken


def test_a_player_silent_before_the_deal_gives_its_seat_up(tmp_path: Path) -> None:
    name = f"t-{secrets.token_hex(4)}"

    async def scenario() -> None:
        host, runs = await hosting(name, max_seats=4)
        bo = bot(tmp_path, "Bo", host.port)
        try:
            async with TableBrowser(LOOPBACK) as browser:
                await shows(browser, name, 1, "the table opening", 20)
                await bo.start()
                await bo.wait_for_line("joined table", 30)
                await shows(browser, name, 2, "Bo sitting down")
                stop(bo)
                await shows(browser, name, 1, "Bo gone silent", DROP_AFTER + FOLLOW)
                assert counted(host)() == 1
        finally:
            bo.kill()
            host.close()
            await runs

    asyncio.run(scenario())


def test_in_a_round_the_dropped_free_their_seats_and_latecomers_take_them(
        tmp_path: Path) -> None:
    """A round of three: a bot gone silent is dropped, and its seat is free in the
    lobby at once; a latecomer waiting for the next deal takes it (the table is
    full again, and a newcomer is told so); the latecomer killed, the seat is
    free again."""
    name = f"t-{secrets.token_hex(4)}"

    async def scenario() -> None:
        host, runs = await hosting(name, max_seats=3, auto_start=3,
                                   variants=Variants(target=1000))
        gil = await NetSession.join(Identity.generate("Gil"), ("127.0.0.1", host.port),
                                    TableConfig(), LOCAL)
        gil_runs = asyncio.create_task(gil.run())
        # Bots who think slowly, so the round lasts (Tess and Gil do not play).
        bo, cy, dee = (bot(tmp_path, who, host.port, "--pace", "20")
                       for who in ("Bo", "Cy", "Dee"))
        try:
            async with TableBrowser(LOOPBACK) as browser:
                await bo.start()
                await browser.wait_for(lambda ts: any(
                    t.name == name and t.state == "playing" for t in ts), 30)
                await shows(browser, name, 3, "the round of three")
                stop(bo)
                await shows(browser, name, 2, "Bo dropped", DROP_AFTER + FOLLOW)
                await cy.start()
                await cy.wait_for_line("next round", 30)
                await shows(browser, name, 3, "Cy waiting for the next deal")
                assert (row(browser, name) or ()) and counted(host)() == 3
                await dee.start()
                assert await dee.wait(30) == 1
                assert "full" in dee.tail()
                cy.kill()
                await shows(browser, name, 2, "Cy killed")
                assert not host.replica.seating.waiting
        finally:
            for peer in (bo, cy, dee):
                peer.kill()
            gil.close()
            host.close()
            await asyncio.gather(runs, gil_runs)

    asyncio.run(scenario())
