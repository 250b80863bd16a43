"""NetSession and the mesh in one process, over real TCP on 127.0.0.1 (no mDNS).

Fast checks of the transport's contracts: a full mesh forms from the host's
peers frames, a whole bot game agrees everywhere, refusals come with the line
the user should see, and no bad bytes from the network stop a peer.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import random
import secrets
from collections.abc import Callable, Coroutine
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zeroconf._core

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.net import link as link_module
from p2p_nerts.net.discovery import TableAd, TableBrowser
from p2p_nerts.net.framing import encode_frame
from p2p_nerts.net.link import Connection, LinkError, Refused, connect, listen, open_link
from p2p_nerts.net.wire import NET_VERSION, Info, encode_info, encode_peers
from p2p_nerts.peer import journaling, shell
from p2p_nerts.peer.headless import paced, run_headless
from p2p_nerts.peer.journaling import HeldWrites
from p2p_nerts.peer.node import (
    Endpoint,
    NetSession,
    TableConfig,
    _as_opened,
    fingerprint_hex,
)
from p2p_nerts.peer.seatback import NO_SEAT, WAITING
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import MAGIC, seal
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import Kind, Record, move_record, secrets_record
from p2p_nerts.protocol.messages import MsgType
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.testing.peers import shared_lines

from ..netkit import until

pytestmark = pytest.mark.timeout(60)

LOCAL = Endpoint(bind="127.0.0.1")


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


def config(**changes: Any) -> TableConfig:
    base: dict[str, Any] = {"variants": Variants(target=15), "countdown": 0.0,
                            "drop_after": 3.0, "auto_next": 0.2}
    return TableConfig(**(base | changes))


async def host_table(n: int | None = 3, *, store: Store | None = None,
                     **changes: Any) -> NetSession:
    return await NetSession.host(Identity.generate("Host"), config(auto_start=n, **changes),
                                 LOCAL, table_name="Test table", interfaces=None, store=store)


def bot_games(sessions: list[NetSession], outs: list[io.StringIO],
              linger: float) -> list[Coroutine[Any, Any, int]]:
    """Each session played to the game's end by a fast bot, its summary written to ``outs``."""
    return [run_headless(s, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(i)),
                         summary=out, linger=linger)
            for i, (s, out) in enumerate(zip(sessions, outs, strict=True))]


async def join(host: NetSession, name: str) -> NetSession:
    return await NetSession.join(Identity.generate(name), ("127.0.0.1", host.port), config(),
                                 LOCAL)


def test_full_mesh_and_a_whole_game_that_every_peer_agrees_on() -> None:
    async def scenario() -> None:
        host = await host_table(3)
        guests = [await join(host, name) for name in ("Bo", "Cy")]
        sessions = [host, *guests]
        outs = [io.StringIO() for _ in sessions]
        tasks = [asyncio.create_task(g) for g in bot_games(sessions, outs, linger=0.5)]
        keys = {s.replica.me.public_key for s in sessions}
        # Every peer links to every other: the guests found each other via the peers frame.
        await until(lambda: all(s.connected == keys - {s.replica.me.public_key}
                                for s in sessions))
        codes = await asyncio.wait_for(asyncio.gather(*tasks), 45)
        assert codes == [0, 0, 0]
        summaries = [[json.loads(x) for x in out.getvalue().splitlines()] for out in outs]
        assert summaries[0][-1]["game_over"] and summaries[0][-1]["winner"]
        assert all(line.get("agreed", True) for line in summaries[0])
        for other in summaries[1:]:
            assert shared_lines(other) == shared_lines(summaries[0])

    run(scenario)


def test_the_database_is_checkpointed_between_rounds_not_during_them(tmp_path: Path) -> None:
    """SQLite's own checkpoint stalled writes (the event loop) for milliseconds;
    the session folds the database's WAL in as each round ends instead."""
    calls: list[Phase] = []
    sessions: list[NetSession] = []

    class Watched(Store):
        def checkpoint(self) -> None:
            calls.append(sessions[0].replica.phase)
            super().checkpoint()

    async def scenario() -> None:
        host = await host_table(2, store=Watched(tmp_path / DB_FILE))
        sessions.extend((host, await join(host, "Bo")))
        outs = [io.StringIO(), io.StringIO()]
        codes = await asyncio.wait_for(asyncio.gather(*bot_games(sessions, outs, linger=0.3)), 45)
        assert codes == [0, 0]
        rounds = len(outs[0].getvalue().splitlines()) - 1  # the last line is the result
        assert rounds >= 1 and len(calls) == rounds
        assert Phase.PLAYING not in calls

    run(scenario)


def test_a_play_is_journaled_and_sent_before_the_listeners_hear_of_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes in, replica, journal, send, and only then the listeners: a received play
    is journaled and acknowledged before it is shown, and the peer gives way to any
    other process ready to run once it is; every entry we sign is journaled before
    it is sent, and shown once it is out and the peer has given way."""
    trail: list[tuple[str, Any]] = []
    monkeypatch.setattr(shell, "_give_way", lambda: trail.append(("give way", None)))

    class Watched(Store):
        def append(self, table_id: bytes, records: Any) -> None:
            records = list(records)
            trail.append(("journal", {r.data for r in records if r.kind is Kind.ENTRY}))
            super().append(table_id, records)

    enough = 10  # of each side's plays, watched at the host

    async def scenario() -> None:
        # A game long enough for any deal: the sessions close once both sides
        # have played ``enough``, not when a lucky deal ends the game.
        host = await host_table(2, store=Watched(tmp_path / DB_FILE),
                                variants=Variants(target=1000))
        guest = await join(host, "Bo")
        send_all = host._mesh.send_all

        def sent(sends: Any) -> None:
            sends = list(sends)
            trail.append(("send", {data for data, _to in sends if data[:2] == MAGIC}))
            send_all(sends)

        counts = {True: 0, False: 0}

        def added(event: ev.Event) -> None:
            if isinstance(event, ev.PlayAdded):
                trail.append(("added", event.mine))
                counts[event.mine] += 1
                if min(counts.values()) >= enough:
                    host.close()
                    guest.close()

        host._mesh.send_all = sent  # type: ignore[method-assign]
        host.subscribe(added)
        outs = [io.StringIO(), io.StringIO()]
        await asyncio.wait_for(asyncio.gather(*bot_games([host, guest], outs, linger=0.3)), 45)

    run(scenario)
    theirs = [i for i, (step, mine) in enumerate(trail) if step == "added" and not mine]
    assert len(theirs) >= enough
    for i in theirs:
        before = [step for step, _ in trail[:i] if step != "added"]
        assert before[-2:] == ["journal", "send"], trail[i - 3:i + 1]
        after = [step for step, _ in trail[i + 1:] if step != "added"]
        assert after[:1] == ["give way"], trail[i:i + 3]
    mine = [i for i, (step, m) in enumerate(trail) if step == "added" and m]
    assert len(mine) >= enough
    for i in mine:
        before = [step for step, entries in trail[:i] if step != "send" or entries]
        assert before[-2:] == ["send", "give way"], trail[i - 4:i + 1]
    journaled: set[bytes] = set()
    signed = 0
    for step, entries in trail:
        if step == "journal":
            journaled |= entries
        elif step == "send":
            assert entries <= journaled, "an entry left before it was journaled"
            signed += len(entries)
    assert signed >= 10


def test_a_listener_that_acts_routes_after_the_batch_it_heard_never_inside_it(
        tmp_path: Path) -> None:
    """No re-entrant routing: the host's listener deals the round as it hears the
    second seat sit down. The ROSTER it heard is journaled and sent first; the deal
    it signs is journaled before it leaves, after the ROSTER; the shell's routing
    is never entered from inside itself; and every listener hears the seat sit
    down before the round it set off."""
    trail: list[tuple[str, object]] = []

    class Watched(Store):
        def append(self, table_id: bytes, records: Any) -> None:
            records = list(records)
            trail.append(("journal", {r.data for r in records if r.kind is Kind.ENTRY}))
            super().append(table_id, records)

    async def scenario() -> None:
        host = await host_table(None, store=Watched(tmp_path / DB_FILE))
        send_all = host._mesh.send_all

        def sent(sends: Any) -> None:
            sends = list(sends)
            trail.append(("send", {data for data, _to in sends if data[:2] == MAGIC}))
            send_all(sends)

        host._mesh.send_all = sent  # type: ignore[method-assign]
        route = host._route
        depth = [0, 0]  # now, deepest

        def routed(out: Any, *, own: bool = False) -> None:
            depth[0] += 1
            depth[1] = max(depth)
            try:
                route(out, own=own)
            finally:
                depth[0] -= 1

        host._route = routed  # type: ignore[method-assign]

        def deal(event: ev.Event) -> None:
            if isinstance(event, ev.RosterChanged) and len(host.view.seats) == 2 \
                    and host.view.phase is Phase.LOBBY:
                trail.append(("deals", None))
                host.act(StartRound())

        heard: list[ev.Event] = []
        host.subscribe(deal)
        host.subscribe(heard.append)
        runner = asyncio.create_task(host.run())
        guest = await join(host, "Bo")
        guest_runner = asyncio.create_task(guest.run())
        await until(lambda: any(isinstance(e, ev.RoundStarting) for e in heard))
        host.close()
        guest.close()
        await asyncio.gather(runner, guest_runner)
        assert depth[1] == 1, "the shell routed from inside its own routing"
        kinds = [type(e) for e in heard]
        seated = max(i for i, e in enumerate(heard) if isinstance(e, ev.RosterChanged)
                     and i < kinds.index(ev.RoundStarting))
        roster = heard[seated]
        assert isinstance(roster, ev.RosterChanged) and len(roster.names) == 2

    run(scenario)
    dealt = next(i for i, (step, _) in enumerate(trail) if step == "deals")
    roster = [step for step, entries in trail[:dealt] if entries]
    assert roster[-2:] == ["journal", "send"], trail[dealt - 3:dealt + 1]
    deal = [step for step, entries in trail[dealt + 1:] if entries]
    assert deal[:2] == ["journal", "send"], trail[dealt:dealt + 4]
    journaled: set[bytes] = set()
    for step, entries in trail:
        assert entries is None or isinstance(entries, set)
        if step == "journal" and entries:
            journaled |= entries
        elif step == "send" and entries:
            assert entries <= journaled, "an entry left before it was journaled"


def test_a_full_table_refuses_a_newcomer_clearly(caplog: pytest.LogCaptureFixture) -> None:
    """The reason at both ends: the newcomer is told the table is full, and the host's
    log says it turned a newcomer away for that (not that a connection failed)."""
    async def scenario() -> None:
        host = await host_table(None, max_seats=2)
        runner = asyncio.create_task(host.run())
        guest = await join(host, "Bo")
        guest_runner = asyncio.create_task(guest.run())
        await until(lambda: len(host.replica.view().seats) == 2)
        with pytest.raises(Refused, match="table Test table is full"):
            await join(host, "Cy")
        await until(lambda: any("turned away" in r.getMessage() for r in caplog.records))
        host.close()
        guest.close()
        await asyncio.gather(runner, guest_runner)

    with caplog.at_level(logging.INFO, logger="p2p_nerts"):
        run(scenario)
    lines = [r.getMessage() for r in caplog.records]
    assert "turned away a newcomer from 127.0.0.1: the table is full" in lines
    assert not [line for line in lines if "failed" in line or "a stranger (" in line
                or (" Test table (" in line and "host of Test table" not in line)], lines


def test_at_a_full_table_a_player_may_wait_for_a_free_seat() -> None:
    async def scenario() -> None:
        host = await host_table(None, max_seats=2)
        runner = asyncio.create_task(host.run())
        bo = await join(host, "Bo")
        bo_runs = asyncio.create_task(bo.run())
        await until(lambda: len(host.replica.view().seats) == 2)
        cy = await NetSession.join(Identity.generate("Cy"), ("127.0.0.1", host.port),
                                   config(wait_for_seat=True), LOCAL)
        told: list[ev.Notice | ev.Refused] = []  # that it waits, not each refusal
        cy.subscribe(lambda e: told.append(e) if isinstance(e, ev.Notice | ev.Refused) else None)
        cy_plays = asyncio.create_task(run_headless(cy, bot=None, summary=None))
        await until(lambda: bool(told))
        assert isinstance(told[0], ev.Notice) and "waiting for a free seat" in told[0].text
        assert cy.waiting_for_seat and cy.replica.view().my_seat is None
        assert not cy_plays.done()  # refused, but waiting: no exit status 1
        bo.close()
        await bo_runs
        await until(lambda: cy.replica.view().my_seat is not None)
        assert [s.name for s in host.replica.view().seats] == ["Host", "Cy"]
        assert not cy.waiting_for_seat
        cy.close()
        host.close()
        await asyncio.gather(runner, cy_plays)

    run(scenario)


def test_waiting_at_a_full_table_through_a_game_says_one_thing_then_that_it_ended(
        caplog: pytest.LogCaptureFixture) -> None:
    """``join --wait`` at a full table in mid-game: told it waits for a free seat
    (not that it plays from the next round, which it may not), and its place in
    line, once; no seat comes free, and as the game ends it is told it did not
    play."""
    async def scenario() -> None:
        host = await host_table(2, max_seats=2)
        bo = await join(host, "Bo")
        games = [asyncio.create_task(g) for g in bot_games([host, bo], [io.StringIO(),
                                                                          io.StringIO()],
                                                           linger=3.0)]
        await until(lambda: host.replica.phase is Phase.PLAYING)
        cy = await NetSession.join(Identity.generate("Cy"), ("127.0.0.1", host.port),
                                   config(wait_for_seat=True), LOCAL)
        told: list[ev.Event] = []
        cy.subscribe(told.append)
        cy_waits = asyncio.create_task(run_headless(cy, bot=None, summary=None, linger=0))
        await asyncio.wait_for(asyncio.gather(*games), 60)
        await asyncio.wait_for(cy_waits, 10)
        notices = [e.text for e in told if isinstance(e, ev.Notice)]
        assert notices == [WAITING, "waiting for a free seat: the table is full: you are 1st "
                                    "in line for a seat"], notices
        assert cy.replica.view().my_seat is None

    with caplog.at_level(logging.INFO, logger="p2p_nerts"):
        run(scenario)
    lines = [r.getMessage() for r in caplog.records]
    assert NO_SEAT in lines or any("the game is over" in line for line in lines), lines


def test_a_latecomer_waits_for_the_next_deal_and_plays_to_the_end() -> None:
    """Joining during a round seats you as it ends: told so at once, then dealt in,
    and the game ends for you as for everyone (exit status 0), with the same
    results for the rounds you saw."""
    async def scenario() -> None:
        host = await host_table(2, variants=Variants(target=40))
        guest = await join(host, "Bo")
        outs = [io.StringIO() for _ in range(3)]
        tasks = [asyncio.create_task(g) for g in bot_games([host, guest], outs[:2], linger=0.5)]
        await until(lambda: host.replica.phase is Phase.PLAYING)
        late = await join(host, "Cy")
        heard: list[ev.Event] = []
        late.subscribe(heard.append)
        assert any(isinstance(e, ev.Notice) and "you play from the next round" in e.text
                   for e in heard)
        [latecomer] = bot_games([late], outs[2:], linger=0.5)
        late_task = asyncio.create_task(latecomer)
        assert late.replica.view().my_seat is None
        codes = await asyncio.wait_for(asyncio.gather(*tasks, late_task), 45)
        assert codes == [0, 0, 0]
        summaries = [[json.loads(x) for x in out.getvalue().splitlines()] for out in outs]
        played = [line for line in summaries[2] if "players" in line
                  and any(p["name"] == "Cy" for p in line["players"])]
        assert played, f"the latecomer never played: {summaries}"
        for line in shared_lines(played):
            assert line in shared_lines(summaries[0])  # the same rounds, the same results
        assert shared_lines(summaries[2])[-1] == shared_lines(summaries[0])[-1]

    run(scenario)


def test_another_protocol_version_is_named() -> None:
    async def scenario() -> None:
        async def future_host(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(encode_frame(msgpack.packb({"v": NET_VERSION + 1, "name": "Zed"})))
            await reader.read(100)
            writer.close()

        server = await asyncio.start_server(future_host, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        with pytest.raises(Refused, match=f"table Zed runs protocol v{NET_VERSION + 1}; "
                                          f"this nerts speaks v{NET_VERSION}"):
            await NetSession.join(Identity.generate("Bo"), ("127.0.0.1", port), config(), LOCAL)
        server.close()

    run(scenario)


def test_nothing_from_the_network_stops_a_peer() -> None:
    async def scenario() -> None:
        host = await host_table(None)
        runner = asyncio.create_task(host.run())
        tid = host.replica.table_id

        async def raw() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
            return await asyncio.open_connection("127.0.0.1", host.port)

        async def closed(reader: asyncio.StreamReader) -> bool:
            async with asyncio.timeout(3):
                while await reader.read(4096):
                    pass
            return True

        # A frame header claiming 4 GB, garbage instead of an info frame, a bad handshake.
        for junk in (b"\xff\xff\xff\xff", encode_frame(b"\xc1\xc1"),
                     encode_frame(encode_info(Info(NET_VERSION, tid, "x", 1)))
                     + encode_frame(b"not a hello")):
            reader, writer = await raw()
            writer.write(junk)
            assert await closed(reader)
        # An authenticated peer that sends garbage entries and a peers frame it may not send.
        mallory = Identity.generate("Mallory")
        connection = await connect("127.0.0.1", host.port)
        link = await open_link(connection, mallory, Info(NET_VERSION, tid, "M", 1),
                               dialer=True)
        for frame in (b"NZ" + bytes(200), b"NZ" + bytes(10)):
            link.send(frame)
        await until(lambda: host.replica.rejected["bad_signature"] == 1
                    and host.replica.rejected["too_short"] == 1)
        link.send(encode_peers({}))
        async with asyncio.timeout(3):
            await connection.wait_closed()
        assert not runner.done() and host.replica.phase is Phase.LOBBY
        # And a real guest still gets in.
        guest = await join(host, "Bo")
        await until(lambda: len(host.replica.view().seats) == 2)
        host.close()
        guest.close()
        await asyncio.gather(runner, guest.run())

    run(scenario)


def test_a_peer_that_does_not_read_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_module, "SEND_BUFFER_LIMIT", 64 * 1024)

    async def scenario() -> None:
        accepted: asyncio.Queue[link_module.Link] = asyncio.Queue()
        tasks: set[asyncio.Task[None]] = set()
        server_id, client_id = Identity.generate("S"), Identity.generate("C")
        tid = bytes(16)

        async def on_connect(connection: Connection) -> None:
            await accepted.put(await open_link(connection, server_id,
                                               Info(NET_VERSION, tid, "S", 1), dialer=False))

        server = await listen("127.0.0.1", 0, lambda c: tasks.add(asyncio.create_task(
            on_connect(c))))
        connection = await connect("127.0.0.1", server.sockets[0].getsockname()[1])
        await open_link(connection, client_id, Info(NET_VERSION, None, "C", 1), dialer=True)
        link = await accepted.get()
        chunk = bytes(60000)
        sent = 0
        while link.send(chunk):  # the client never reads
            sent += 1
            await asyncio.sleep(0)
            assert sent < 10_000
        assert link.closed and "overflow" in link.reason
        server.close()

    run(scenario)


def test_the_handshake_proves_the_dialed_key() -> None:
    async def scenario() -> None:
        real, impostor = Identity.generate("Real"), Identity.generate("Impostor")
        tid = bytes(16)

        async def on_connect(connection: Connection) -> None:
            with contextlib.suppress(LinkError):
                await open_link(connection, impostor, Info(NET_VERSION, tid, "I", 1),
                                dialer=False)

        tasks: set[asyncio.Task[None]] = set()
        server = await listen("127.0.0.1", 0, lambda c: tasks.add(asyncio.create_task(
            on_connect(c))))
        connection = await connect("127.0.0.1", server.sockets[0].getsockname()[1])
        with pytest.raises(LinkError, match=r"expected .*, met "):
            await open_link(connection, Identity.generate("Me"),
                            Info(NET_VERSION, tid, "Me", 1), dialer=True,
                            expect_key=real.public_key)
        connection.close()
        server.close()

    run(scenario)


def test_a_headless_guest_gives_up_when_the_host_is_gone() -> None:
    async def scenario() -> None:
        host = await host_table(None)
        host_runner = asyncio.create_task(host.run())
        guest = await join(host, "Bo")
        await until(lambda: len(host.replica.view().seats) == 2)
        host.close()
        await host_runner
        code = await asyncio.wait_for(
            run_headless(guest, bot=None, summary=None, host_gone=0.5), 10)
        assert code == 1

    run(scenario)


def test_a_headless_bot_says_it_is_ready_once_seated() -> None:
    """The host's lobby lists who is ready: a bot always is, and says so."""
    async def scenario() -> None:
        host = await host_table(None)
        host_runner = asyncio.create_task(host.run())
        guest = await join(host, "Bo")
        key = guest.replica.me.public_key
        assert not host.replica.seating.ready.get(key, False)
        bot = Bot(paced(SKILLS["hard"], 0.05), random.Random(1))
        player = asyncio.create_task(run_headless(guest, bot=bot, summary=None))
        await until(lambda: host.replica.seating.ready.get(key, False))
        assert guest.replica.seating.ready == {key: True}  # said once: the host has not said it
        host.close()
        await host_runner
        player.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await player

    run(scenario)


def test_the_host_advertises_the_table_and_keeps_its_seats_current(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in (("_CHECK_TIME", 10), ("_REGISTER_TIME", 10), ("_UNREGISTER_TIME", 10),
                        ("_PROBE_RANDOM_DELAY_INTERVAL", (1, 5))):
        monkeypatch.setattr(zeroconf._core, name, value, raising=False)  # loopback needs no waits
    table = f"t-{secrets.token_hex(4)}"

    async def scenario() -> None:
        host = await NetSession.host(Identity.generate("Host"), config(max_seats=4), LOCAL,
                                     table_name=table, interfaces=["127.0.0.1"])
        runner = asyncio.create_task(host.run())
        async with TableBrowser(["127.0.0.1"]) as browser:
            def ours(seats: int) -> Callable[[list[TableAd]], bool]:
                return lambda ads: any(a.name == table and a.seats_taken == seats for a in ads)

            ad = next(a for a in await browser.wait_for(ours(1), 30) if a.name == table)
            assert ad.port == host.port and ad.seats_total == 4 and not ad.needs_code
            assert ad.fingerprint == fingerprint_hex(host.replica.me.public_key)
            assert ad.variant == host.replica.seating.variants.summary()
            guest = await join(host, "Bo")
            await browser.wait_for(ours(2), 30)
            host.close()
            await runner
            await browser.wait_for(lambda ads: all(a.name != table for a in ads), 30)
            guest.close()
            await guest.run()

    run(scenario)


@pytest.mark.parametrize("boot", [None, b"this-boot"], ids=["boot unknown", "boot known"])
def test_what_this_seat_signed_is_on_the_disk_as_it_is_sent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, boot: bytes | None) -> None:
    """Durability: every entry the host signs is journaled before it leaves, and
    fsynced (with its batch: one fsync for all of it) before it leaves where the
    machine's boot cannot be told, or just after, before anything else is sent,
    where it can (the journal then names the boot). What it only received is not
    waited for."""
    monkeypatch.setattr(journaling, "boot_id", lambda: boot)
    trail: list[str] = []
    pending: set[bytes] = set()  # the host's own entries journaled, not yet synced
    synced: set[bytes] = set()
    unsynced_sent: set[bytes] = set()  # sent by the last batch, its fsync due next
    ahead = [0]  # entries sent before their fsync (none, where the boot is unknown)
    me = Identity.generate("Host")
    host_key = [me.public_key]

    class Watched(Store):
        def append(self, table_id: bytes, records: Any) -> None:
            records = list(records)
            pending.update(r.data for r in records if r.kind is Kind.ENTRY
                           and r.data[len(MAGIC):len(MAGIC) + 32] == host_key[0])
            trail.append("journal")
            super().append(table_id, records)

    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        trail.append("fsync")
        synced.update(pending)
        pending.clear()
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)

    store = Watched(tmp_path / DB_FILE)

    async def scenario() -> None:
        host = await NetSession.host(me, config(auto_start=2, variants=Variants(target=1000)),
                                     LOCAL, table_name="Test table", interfaces=None,
                                     store=store)
        guest = await join(host, "Bo")
        send_all = host._mesh.send_all
        mine = 0

        def sent(sends: Any) -> None:
            nonlocal mine
            sends = list(sends)
            own = {data for data, _to in sends
                   if data[:len(MAGIC)] == MAGIC and data[len(MAGIC):len(MAGIC) + 32]
                   == host_key[0]}
            assert unsynced_sent <= synced, "a batch's fsync waited past the next batch"
            if boot is None:
                assert own <= synced, "an entry left before it was on the disk"
            else:
                assert own <= synced | pending, "an entry left before it was journaled"
                unsynced_sent.clear()
                unsynced_sent.update(own)
                ahead[0] += len(own - synced)
            mine += len(own)
            trail.append("send")
            send_all(sends)
            if mine >= 20:
                host.close()
                guest.close()

        host._mesh.send_all = sent  # type: ignore[method-assign]
        outs = [io.StringIO(), io.StringIO()]
        await asyncio.wait_for(asyncio.gather(*bot_games([host, guest], outs, linger=0.3)), 45)
        assert mine >= 20

    run(scenario)
    assert unsynced_sent <= synced
    assert (ahead[0] > 0) is (boot is not None)
    # Group commit: one fsync at most for each batch journaled, and none for a batch
    # of what the others made alone (what we received waits for no disk).
    assert 0 < trail.count("fsync") < trail.count("journal")
    table = store.last_table()
    assert table is not None
    named = [r.data for r in store.records(table.table_id) if r.kind is Kind.BOOT]
    store.close()
    assert named == ([] if boot is None else [boot])


@pytest.mark.parametrize("boot", [None, b"this-boot"], ids=["boot unknown", "boot known"])
def test_what_this_seat_made_is_synced_with_the_next_entry_it_signs(
        tmp_path: Path, boot: bytes | None) -> None:
    """Group commit: a batch of this seat's moves (or round secrets) alone waits for no
    disk; the next batch with an entry it signed makes all of it durable, as it is
    written where the machine's boot cannot be told (before that entry leaves),
    by the ``sync`` that follows its sending where it can. What it received never
    waits."""
    calls: list[str] = []

    class Counted(Store):
        def sync(self) -> None:
            calls.append("sync")
            super().sync()

    me, other = Identity.generate("Me"), Identity.generate("Other")
    table = bytes(16)
    entry = seal(me, table_id=table, round=1, seq=1, lamport=1, type=int(MsgType.PLAY),
                 payload={"c": 1, "p": 1, "s": 1, "d": 0, "m": 0})
    theirs = seal(other, table_id=table, round=1, seq=1, lamport=1, type=int(MsgType.PLAY),
                  payload={"c": 2, "p": 2, "s": 1, "d": 0, "m": 0})
    with Counted(tmp_path / DB_FILE) as store:
        disk = HeldWrites(store)
        disk.boot = boot
        disk.journal(table, [move_record(1, (1, 2)), secrets_record(1, bytes(32), bytes(32))],
                     me.public_key)
        disk.journal(table, [Record(Kind.ENTRY, theirs.raw)], me.public_key)
        disk.flush()
        disk.sync()
        assert calls == []
        disk.journal(table, [move_record(1, (1, 3)), Record(Kind.ENTRY, entry.raw)],
                     me.public_key)
        disk.flush()
        assert calls == ([] if boot is not None else ["sync"])
        disk.sync()
        assert calls == ["sync"]
        disk.flush()
        disk.sync()
        assert calls == ["sync"]
        assert store.records(table)[-1] == Record(Kind.ENTRY, entry.raw)


def test_a_quiet_batch_leaves_its_records_for_the_next_one(tmp_path: Path) -> None:
    """A batch that sends and tells nothing (an ACK heard) is journaled with the next
    batch that does, in order and in one write; an entry this seat signed never
    waits, nor does anything held before it."""
    appends: list[int] = []

    class Counted(Store):
        def append(self, table_id: bytes, records: Any) -> None:
            records = list(records)
            appends.append(len(records))
            super().append(table_id, records)

    me = Identity.generate("Me")
    table = bytes(16)
    heard = [Record(Kind.LINK, bytes([i]) * 40) for i in range(3)]
    mine = seal(me, table_id=table, round=1, seq=1, lamport=1, type=int(MsgType.PLAY),
                payload={"c": 1, "p": 1, "s": 1, "d": 0, "m": 0})
    with Counted(tmp_path / DB_FILE) as store:
        disk = HeldWrites(store)
        disk.journal(table, heard[:1], me.public_key)
        disk.flush(quiet=True)
        disk.journal(table, heard[1:2], me.public_key)
        disk.flush(quiet=True)
        assert store.records(table) == [] and appends == []
        disk.journal(table, heard[2:], me.public_key)
        disk.flush()
        assert store.records(table) == heard and appends == [3]
        disk.journal(table, heard[:1], me.public_key)
        disk.journal(table, [Record(Kind.ENTRY, mine.raw)], me.public_key)
        disk.flush(quiet=True)  # (an entry of mine always goes with a send: still, it waits not)
        assert store.records(table)[-2:] == [heard[0], Record(Kind.ENTRY, mine.raw)]


def test_a_resumed_host_takes_what_it_opened_with_and_checks_each_fact() -> None:
    """``--resume`` reopens the table as the store kept it; a fact that is missing or
    makes no sense (a damaged store) keeps the command line's."""
    given = TableConfig(max_seats=8, auto_start=None, auto_next=None)
    kept = {"name": "Main table", "seats": 4, "auto_start": 3, "auto_next": 5}
    config, name = _as_opened(given, "Tess's table", kept)
    assert name == "Main table"
    assert (config.max_seats, config.auto_start, config.auto_next) == (4, 3, 5.0)
    bad = {"name": "\x1b[2J", "seats": 99, "auto_start": "3", "auto_next": True}
    assert _as_opened(given, "Tess's table", bad) == (given, "Tess's table")
    assert _as_opened(given, "Tess's table", {}) == (given, "Tess's table")
    dealing = TableConfig(auto_start=2, auto_next=1.0)
    assert _as_opened(dealing, "Tess's table", {"seats": 4}) == (
        replace(dealing, max_seats=4), "Tess's table")  # kept from before: the others


def test_the_log_names_each_peer_as_who_it_is_never_after_the_table(
        caplog: pytest.LogCaptureFixture) -> None:
    """A peer at a table says the table's name in its info frame: the log names a
    seated peer by its seat's name and a spectator as one, not "Test table"."""
    async def scenario() -> None:
        host = await host_table(None, max_seats=3)
        guest = await join(host, "Bo")
        runs = [asyncio.create_task(s.run()) for s in (host, guest)]
        await until(lambda: len(guest.replica.view().seats) == 2)
        watcher = await NetSession.watch(Identity.generate("Wes"), ("127.0.0.1", host.port),
                                         config(), LOCAL)
        runs.append(asyncio.create_task(watcher.run()))
        await until(lambda: watcher.watching and len(watcher.connected) == 2)
        await asyncio.sleep(0.5)
        for session in (watcher, guest, host):
            session.close()
        await asyncio.gather(*runs)

    with caplog.at_level(logging.INFO, logger="p2p_nerts.net.mesh"):
        run(scenario)
    lines = [r.getMessage() for r in caplog.records]
    assert any(line.startswith("disconnected from a spectator (") for line in lines), lines
    assert not [line for line in lines if " Test table (" in line
                and "the host of Test table" not in line], lines


def test_players_waiting_at_a_full_table_sit_down_in_the_order_they_came() -> None:
    """Two ``join --wait`` at a full table: each told its place in line; the seat that
    frees goes to the first, and the second is told it is first now."""
    async def scenario() -> None:
        host = await host_table(None, max_seats=2)
        bo = await join(host, "Bo")
        runs: list[asyncio.Task[Any]] = [asyncio.create_task(s.run()) for s in (host, bo)]
        await until(lambda: len(host.replica.view().seats) == 2)
        told: dict[str, list[str]] = {"Cy": [], "Dee": []}
        waiters: dict[str, NetSession] = {}

        def heard(name: str, place: str) -> Callable[[], bool]:
            return lambda: any(f"you are {place} in line" in text for text in told[name])

        for name, place in (("Cy", "1st"), ("Dee", "2nd")):
            waiter = await NetSession.join(Identity.generate(name), ("127.0.0.1", host.port),
                                           config(wait_for_seat=True), LOCAL)
            waiter.subscribe(partial(notices_to, told[name]))
            runs.append(asyncio.create_task(run_headless(waiter, bot=None, summary=None)))
            waiters[name] = waiter
            await until(heard(name, place), f"{name} in line")
        bo.close()
        await until(lambda: waiters["Cy"].replica.view().my_seat is not None, "Cy seated")
        await until(heard("Dee", "1st"), "Dee first in line")
        assert [s.name for s in host.replica.view().seats] == ["Host", "Cy"]
        assert list(host.replica.seating.queue.values()) == ["Dee"]
        for session in (*waiters.values(), host):
            session.close()
        await asyncio.gather(*runs)

    run(scenario)


def notices_to(said: list[str], event: ev.Event) -> None:
    if isinstance(event, ev.Notice):
        said.append(event.text)
