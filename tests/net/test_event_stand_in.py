"""A seated table whose host never comes, on loopback: the next seat stands in, the
others play there, and the game counts on the organiser and in the export; a rival
table opened early under a later seat's key draws no one away.

The organiser's server listens on 127.0.0.1; the tables are found on mDNS on
127.0.0.1, as players find them.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path

import pytest

from p2p_nerts import cli
from p2p_nerts.event.book import EventBook, table_id_for
from p2p_nerts.event.entries import Opened, Registered, TableSeats, encode
from p2p_nerts.event.export import export, verify_export
from p2p_nerts.game.bot import SKILLS, Bot, paced
from p2p_nerts.peer import event_host
from p2p_nerts.peer.event_host import EventSettings, Organiser
from p2p_nerts.peer.event_seat import EventLink, Seat, open_table, play_table, stand_in_step
from p2p_nerts.peer.event_watch import table_name
from p2p_nerts.peer.node import Endpoint, NetSession
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.store import Store

from ..netkit import until

pytestmark = pytest.mark.timeout(240)

LOOPBACK = ["127.0.0.1"]
LOCAL = Endpoint("127.0.0.1")


@pytest.mark.slow
def test_a_table_whose_host_never_comes_is_opened_by_the_next_seat_and_its_game_counts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings("Stand-in cup", games=1, table_size=3,
                                                 target=1, turn_up=15), resume=False)
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


def _seated_table() -> tuple[EventBook, TableSeats, dict[bytes, Identity]]:
    """Three players of a fresh event at one table of three (keys of their own, so the
    tables of one test are not those of another on the loopback's mDNS)."""
    who = [Identity.generate(name) for name in ("Ana", "Ben", "Cy")]
    book = EventBook()
    organiser = Identity.generate("Olga")
    event_id = os.urandom(16)
    book.apply(encode(Opened(event_id, "Loop cup", organiser.public_key, 1, 3, 1, None, 300,
                             int(time.time())), organiser))
    for player in who:
        book.apply(encode(Registered(event_id, player.public_key, player.name, b""), player))
    book.apply(encode(book.next_seating([p.public_key for p in who], os.urandom(32)),
                      organiser))
    [table] = book.games[1].seated.tables
    return book, table, {p.public_key: p for p in who}


async def _sit(book: EventBook, table: TableSeats, me: Identity,
               seated_at: float | None = None) -> NetSession:
    return await open_table(me, book, Seat(1, table, table_name(1, table.letter), ()),
                            interfaces=LOOPBACK, endpoint=LOCAL, store=None, views=False,
                            seated_at=seated_at)


def test_a_rival_table_opened_early_under_a_later_seat_draws_no_one_from_the_host(
        ) -> None:
    """The third seat opens the table under its own key before anyone (as if its turn
    to stand in had come); the second seat comes, and then the host: the second seat
    joins the host's table, not the rival's there before it, for it looks only at the
    seats whose turn has come."""
    async def scenario() -> None:
        book, table, who = _seated_table()
        host, second, third = (who[k] for k in table.seats)
        rival = await _sit(book, table, third, seated_at=time.monotonic() - 3600)
        assert rival.replica.is_host
        joining = asyncio.ensure_future(_sit(book, table, second))
        await asyncio.sleep(0.5)
        real = await _sit(book, table, host)
        assert real.replica.is_host
        guest = await joining
        try:
            assert guest.replica.host_key == host.public_key
        finally:
            for session in (guest, real, rival):
                session.close()

    asyncio.run(scenario())


def test_when_the_host_is_absent_the_second_seat_opens_and_the_third_joins_it() -> None:
    async def scenario() -> None:
        book, table, who = _seated_table()
        _absent, second, third = (who[k] for k in table.seats)
        opened = book.opened
        assert opened is not None
        since = time.monotonic() - stand_in_step(opened, table)  # the second seat's turn
        stand_in = await _sit(book, table, second, seated_at=since)
        guest = await _sit(book, table, third, seated_at=since)
        try:
            assert stand_in.replica.is_host
            assert guest.replica.host_key == second.public_key
            assert guest.replica.table_id == stand_in.replica.table_id == table_id_for(
                opened.event_id, 1, table.letter)
        finally:
            for session in (guest, stand_in):
                session.close()

    asyncio.run(scenario())


def test_a_table_whose_game_is_over_without_one_that_counts_is_deserted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Too few of a table came for a stand-in's game to count: once it is over (or where
    a table never dealt), a headless organiser may end the game without it; a table
    seen being played is waited for."""
    monkeypatch.setattr(event_host, "DESERTED_AFTER", 0.0)

    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings("Few cup", games=2, table_size=3,
                                                 turn_up=0), resume=False)
        await organiser.start(None, bind="127.0.0.1")
        links = [EventLink(Identity.generate(name), ("127.0.0.1", organiser.port),
                           register=True) for name in ("Ana", "Ben", "Cy")]
        following = [asyncio.ensure_future(link.run()) for link in links]
        try:
            await until(lambda: len(organiser.connected) == 3, "three players")
            organiser.start_game()
            shown: list[list[str]] = []
            for state in ("waiting", "playing", "break", "over"):
                organiser.book.follow(1, "A", state, 1, {})
                shown.append(organiser.deserted())
            assert shown == [["A"], [], [], ["A"]]
            # Over a while only: its record may be on its way.
            monkeypatch.setattr(event_host, "DESERTED_AFTER", 3600.0)
            organiser.book.games[1].live.clear()
            organiser.start_game(force=True)  # game 2, seen over at once
            organiser._seated_at = time.monotonic() - 7200  # its turn-up time long over
            organiser.book.follow(2, "A", "over", 1, {})
            assert organiser.deserted() == []
        finally:
            for link in links:
                link.close()
            await asyncio.gather(*following, return_exceptions=True)
            await organiser.close()

    asyncio.run(scenario())
