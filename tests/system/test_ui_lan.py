"""The network lobby on real mDNS and TCP, pinned to 127.0.0.1 so nothing leaves this host.

Other test runs on the machine may advertise tables at the same time, so every
test names its tables uniquely and looks only for those.
"""

from __future__ import annotations

import asyncio
import random
import secrets

import pytest

from p2p_nerts.cli import main
from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.tableau import OP_FOUND, OP_SLIDE, OP_TURN, OP_WORK
from p2p_nerts.game.variants import Variants
from p2p_nerts.net.discovery import TableAd, TableAdvertiser
from p2p_nerts.net.wire import NET_VERSION
from p2p_nerts.peer.headless import paced, run_headless
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.peer.tables import LanTables
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import StartRound, TableView

from ..netkit import AnsweringPorts
from ..uikit import DOWN, ENTER, PLAYER, RIGHT, LobbyHarness

pytestmark = [pytest.mark.timeout(30), pytest.mark.usefixtures("quick_mdns")]

LOOPBACK = ["127.0.0.1"]
LOCAL = Endpoint("127.0.0.1")


def lan(identity: Identity = PLAYER) -> LanTables:
    return LanTables(identity, LOOPBACK, endpoint=LOCAL)


def _my_moves(view: TableView) -> list[tuple[int, ...]]:
    rnd = view.round
    tab = rnd.tableau if rnd is not None else None
    return tab.log if tab is not None else []


def unique() -> str:
    return f"t-{secrets.token_hex(4)}"


def test_an_advertised_table_appears_and_goes_when_it_closes() -> None:
    name = unique()

    answering = AnsweringPorts()  # the table's port answers the lobby's dials

    async def main() -> None:
        ad = TableAd(name=name, fingerprint="0123456789abcdef", protocol_version=NET_VERSION,
                     seats_taken=3, seats_total=6, variant="turn1 ties:strict pen tgt50",
                     needs_code=True, port=answering.new())
        # Wide enough for the whole rules column whatever other tables the loopback's
        # mDNS lists beside ours (other tests' and runs'): the longest name and host
        # narrow it for every row.
        async with LobbyHarness(lan(), columns=200) as h:
            async with TableAdvertiser(ad, LOOPBACK):
                await h.shows(name)
                row = next(line for line in h.lines() if name in line)
                assert "3/6" in row and "turn1 ties:strict pen tgt50" in row
                assert row.endswith(f"v{NET_VERSION} code")
            await h.until(lambda: name not in h.screen(), "the table to go")
    try:
        asyncio.run(main())
    finally:
        answering.close()


def test_a_table_opened_in_one_lobby_is_joined_from_another() -> None:
    name = unique()
    guest = Identity.from_seed(b"\x0b" * 32, "Gil")

    async def main() -> None:
        async with LobbyHarness(lan()) as host, LobbyHarness(lan(guest)) as joiner:
            await host.name_new_table(name)
            await host.press(*[DOWN] * 9, RIGHT, DOWN, RIGHT)  # the clocks: 5 s, 15 s
            await host.press(ENTER)
            await host.shows("Fingerprint")
            await joiner.select(name)
            await joiner.press(ENTER)
            await joiner.shows("Gil (you)")
            await joiner.shows("Tess (host)")
            # The clocks chosen as the table opened are the table's: the guest's too.
            await joiner.shows("Clocks:  5 s to get ready; a seat silent for 15 s is dropped")
            await host.shows("Gil")
            await host.press("r")
            await joiner.until(lambda: "✓ ready" in joiner.row("Tess (host)"), "Tess ready")
            assert guest.fingerprint in joiner.row("Gil (you)")
            assert PLAYER.fingerprint in joiner.row("Tess (host)")
            await joiner.press("q", "y")
            await joiner.shows("You left the table")
            await host.until(lambda: "Gil" not in host.screen(), "Gil to leave")
    asyncio.run(main())


def test_a_table_with_a_code_is_joined_after_a_wrong_one() -> None:
    name = unique()
    guest = Identity.from_seed(b"\x0b" * 32, "Gil")

    async def main() -> None:
        async with LobbyHarness(lan()) as host, LobbyHarness(lan(guest)) as joiner:
            await host.name_new_table(name)
            await host.press("\x1b[B")
            await host.type("pink otter")
            await host.press(ENTER)
            await host.shows("Code:    pink otter")
            await joiner.select(name)
            assert joiner.row(f"▸ {name}").endswith("code")
            await joiner.press(ENTER)
            await joiner.type("blue fox")
            await joiner.press(ENTER)
            await joiner.shows(f"Wrong table code for table {name}")
            await joiner.press(*["\x7f"] * len("blue fox"))
            await joiner.type("Pink  Otter")  # case and spacing do not matter
            await joiner.press(ENTER)
            await joiner.shows("Gil (you)")
            await host.shows("Gil")
            assert "Code:" not in joiner.screen()  # the host reads it out; a guest knew it
    asyncio.run(main())


def test_join_by_address_says_what_is_wrong() -> None:
    name = unique()

    async def main() -> None:
        table = await NetSession.host(Identity.from_seed(b"\x0c" * 32, "Hal"),
                                      TableConfig(code="4417"), LOCAL, table_name=name,
                                      interfaces=None)
        runner = asyncio.create_task(table.run())
        async with LobbyHarness(lan()) as h:
            await h.press("a")
            await h.type("nowhere")
            await h.press(ENTER)
            assert "'nowhere' is not HOST:PORT (for example 192.168.1.20:40123)" in h.screen()
            await h.press(*["\x7f"] * 7)
            await h.type("127.0.0.1:1")
            await h.press(ENTER)
            await h.shows("Cannot reach 127.0.0.1:1")
            assert "Join by address" in h.screen()  # the form is back, to correct
            await h.press("\x7f")
            await h.type(str(table.port))
            await h.press(ENTER)
            await h.shows(f"Table {name} needs a code: type it in the code field")
            await h.press("\x1b[B")
            await h.type("4417")
            await h.press(ENTER)
            await h.shows("Hal (host)")
            table.close()  # the host leaves first, with Tess still seated
            await runner
    asyncio.run(main())


def test_the_lobby_command_says_when_interfaces_are_wrong(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--interfaces", "not-an-address"])
    assert stop.value.code == 2
    assert "'not-an-address' is not an IP address" in capsys.readouterr().err


def test_the_settings_partner_plays_beside_the_player_at_a_share_table() -> None:
    """``partner = "hard"`` in the settings: at a share-a-deck table opened from the
    lobby, the player's tableau is played with nobody at the keys, and the
    partner goes when the player leaves."""
    async def main() -> None:
        tables = LanTables(PLAYER, LOOPBACK, endpoint=LOCAL, partner="hard")
        host = await tables.host(unique(), Variants(teams="share"), None, countdown=0.0,
                                 drop_after=6.0)
        assert isinstance(host, NetSession)
        runner = asyncio.create_task(host.run())
        guests = [await NetSession.join(Identity.generate(name), ("127.0.0.1", host.port),
                                        TableConfig(), LOCAL) for name in ("Bo", "Cy")]
        bots = [asyncio.create_task(run_headless(
                    guest, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(i)),
                    summary=None)) for i, guest in enumerate(guests)]
        async with asyncio.timeout(20):
            while len(host.replica.view().seats) < 3:
                await asyncio.sleep(0.02)
            host.act(StartRound())
            while not any(move[0] in (OP_TURN, OP_FOUND, OP_WORK, OP_SLIDE) for move in
                          _my_moves(host.replica.view())):
                await asyncio.sleep(0.05)
        def partners() -> list[asyncio.Task[object]]:
            return [t for t in asyncio.all_tasks() if "drive_partner" in repr(t.get_coro())]

        assert len(partners()) == 1
        host.close()
        await runner
        for task in bots:
            task.cancel()
        for guest in guests:
            guest.close()
        await asyncio.sleep(0.1)
        assert not partners()
        await tables.close()

    asyncio.run(main())
