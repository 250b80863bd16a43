"""A seated table whose host never comes, on loopback: the next seat stands in, the
others play there, and the game counts on the organiser and in the export.

The organiser's server listens on 127.0.0.1; the tables are found on mDNS on
127.0.0.1, as players find them.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from p2p_nerts import cli
from p2p_nerts.event.export import export, verify_export
from p2p_nerts.game.bot import SKILLS, Bot, paced
from p2p_nerts.peer.event_host import EventSettings, Organiser
from p2p_nerts.peer.event_seat import EventLink, play_table
from p2p_nerts.peer.node import Endpoint
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.store import Store

from ..netkit import until

pytestmark = pytest.mark.timeout(240)

LOOPBACK = ["127.0.0.1"]
LOCAL = Endpoint("127.0.0.1")


def test_a_table_whose_host_never_comes_is_opened_by_the_next_seat_and_its_game_counts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings("Stand-in cup", games=1, table_size=3,
                                                 target=1, turn_up=30), resume=False)
        await organiser.start(LOOPBACK, bind="127.0.0.1")  # it watches the tables too
        seen: list[str] = []
        organiser.subscribe(lambda: seen.extend(
            t["state"] for t in organiser.book.wall()["tables"] if t["state"] != "waiting"))
        address = ("127.0.0.1", organiser.port)
        identities = [Identity.generate(name) for name in ("Ana", "Ben", "Cy")]
        stores = {i.public_key: Store(tmp_path / f"{i.name}.db") for i in identities}
        links = {i.public_key: EventLink(i, address, register=True, store=stores[i.public_key])
                 for i in identities}
        following = [asyncio.ensure_future(link.run()) for link in links.values()]
        playing: list[asyncio.Task[int]] = []
        try:
            await until(lambda: len(organiser.connected) == 3, "three players registered")
            [table] = organiser.start_game().tables
            await until(lambda: all(link.my_seat(1) is not None for link in links.values()),
                        "every player to see its seat")
            host, stand_in, guest = table.seats
            links[host].close()  # the host's machine goes off: it never opens the table
            for seed, key in enumerate((stand_in, guest)):
                link = links[key]
                seat = link.my_seat(1)
                assert seat is not None
                playing.append(asyncio.ensure_future(play_table(
                    link, seat, Bot(paced(SKILLS["hard"], 0.05), random.Random(seed)),
                    interfaces=LOOPBACK, endpoint=LOCAL, store=stores[key])))
            assert await asyncio.wait_for(asyncio.gather(*playing), 180) == [0, 0]
            await until(lambda: (1, "A") in organiser.book.results(),
                        "the stand-in's game to count on the organiser", timeout=60)
            assert organiser.book.results()[(1, "A")].version.host == stand_in
            rows = {row.player: row.games for row in organiser.book.standings()}
            assert rows == {host: 0, stand_in: 1, guest: 1}
            assert seen  # the organiser watched the stand-in's table
            await until(lambda: all(links[k].book.standings() == organiser.book.standings()
                                    for k in (stand_in, guest)), "every player to agree")
            data = export(organiser.book)
            assert verify_export(data).standings == organiser.book.standings()
            file = tmp_path / "stand-in.nerts-event"
            file.write_bytes(data)
            capsys.readouterr()
            assert cli.main(["verify", str(file)]) == 0
            assert "1 game records verified" in capsys.readouterr().err
        finally:
            for task in playing:
                task.cancel()
            for link in links.values():
                link.close()
            await asyncio.gather(*playing, *following, return_exceptions=True)
            await organiser.close()
            for store in stores.values():
                store.close()

    asyncio.run(scenario())
