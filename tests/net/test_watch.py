"""Spectators: a whole round of a 4-player table watched on 127.0.0.1.

The spectator checks every entry as a player does and must reach the same
results; it signs nothing the table waits for, so the players' rounds close
without it, and a host keeps at most ``MAX_SPECTATORS`` of them.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import random
from collections.abc import Iterable
from pathlib import Path

import pytest

from p2p_nerts.cli import main
from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.net.bounds import Limits
from p2p_nerts.net.link import LinkError
from p2p_nerts.peer import admission
from p2p_nerts.peer.headless import paced, run_headless
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import open_entry
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import MsgType
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.testing.peers import shared_lines

from ..netkit import until

pytestmark = pytest.mark.timeout(90)

LOCAL = Endpoint("127.0.0.1")
CODE = "pink otter"


def lines(out: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_spectator_watches_a_whole_game_of_four_and_sees_what_they_saw() -> None:
    async def scenario() -> None:
        config = TableConfig(variants=Variants(target=25), countdown=0.0, auto_start=4,
                             auto_next=0.3, code=CODE)
        host = await NetSession.host(Identity.generate("Tess"), config, LOCAL,
                                     table_name="Lab", interfaces=None)
        guests = [await NetSession.join(Identity.generate(name), ("127.0.0.1", host.port),
                                        TableConfig(code=CODE), LOCAL)
                  for name in ("Bo", "Cy")]
        with pytest.raises(LinkError):  # a coded table's spectator needs the code
            await NetSession.watch(Identity.generate("Nosy"), ("127.0.0.1", host.port),
                                   TableConfig(), LOCAL)
        watcher = await NetSession.watch(Identity.generate("Wes"), ("127.0.0.1", host.port),
                                         TableConfig(code=CODE), LOCAL)
        signed: list[int] = []
        original = watcher._mesh.send_all

        def counted(sends: Iterable[tuple[bytes, bytes | None]]) -> None:
            frames = list(sends)
            entries = [open_entry(data) for data, _to in frames]
            signed.extend(e.type for e in entries if e.author == watcher.replica.me.public_key)
            original(frames)

        watcher._mesh.send_all = counted  # type: ignore[method-assign]
        last = await NetSession.join(Identity.generate("Di"), ("127.0.0.1", host.port),
                                     TableConfig(code=CODE), LOCAL)
        players = [host, *guests, last]
        outs = [io.StringIO() for _ in range(5)]
        tasks = [asyncio.create_task(run_headless(
                     s, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(i)), summary=out,
                     linger=0.5))
                 for i, (s, out) in enumerate(zip(players, outs[:4], strict=True))]
        tasks.append(asyncio.create_task(run_headless(watcher, bot=None, summary=outs[4],
                                                      linger=0.5)))
        codes = await asyncio.wait_for(asyncio.gather(*tasks), 75)
        assert codes == [0] * 5
        summaries = [lines(out) for out in outs]
        assert summaries[0][-1]["game_over"]
        assert sum(1 for line in summaries[0] if "round" in line) >= 1
        for other in summaries[1:]:
            assert shared_lines(other) == shared_lines(summaries[0])
        assert watcher.replica.view().my_seat is None
        assert all(w.replica.me.public_key not in {s.key for s in p.replica.view().seats}
                   for w in (watcher,) for p in players)
        # Of its own it asked for what it missed (RESEND) at most: no JOIN, ACK, vote
        # or summary. (It may pass on others' entries that a peer asked it for.)
        assert set(signed) <= {MsgType.RESEND}

    asyncio.run(scenario())


def test_a_host_keeps_at_most_its_spectators(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admission, "MAX_SPECTATORS", 2)

    async def scenario() -> None:
        host = await NetSession.host(Identity.generate("Tess"), TableConfig(), LOCAL,
                                     table_name="Lab", interfaces=None)
        runner = asyncio.create_task(host.run())
        watchers = [await NetSession.watch(Identity.generate(f"W{i}"),
                                           ("127.0.0.1", host.port), TableConfig(), LOCAL)
                    for i in range(3)]
        watching = [asyncio.create_task(w.run()) for w in watchers]
        keys = [w.replica.me.public_key for w in watchers]
        refused: list[ev.Refused] = []
        watchers[2].subscribe(lambda e: refused.append(e) if isinstance(e, ev.Refused) else None)
        await until(lambda: bool(refused), "the third spectator turned away")
        assert refused[0].reason == "this table has 2 spectators already"
        await until(lambda: host.connected == frozenset(keys[:2]), "the third link closed")
        # A player still gets in, and sits down.
        bo = await NetSession.join(Identity.generate("Bo"), ("127.0.0.1", host.port),
                                   TableConfig(), LOCAL)
        bo_runs = asyncio.create_task(bo.run())
        await until(lambda: bo.replica.view().my_seat is not None, "Bo seated")
        assert host.replica.phase is Phase.LOBBY
        await until(lambda: watching[2].done(), "the one turned away to close")
        for session in (bo, *watchers):
            session.close()
        host.close()
        await asyncio.gather(runner, bo_runs, *watching)

    asyncio.run(scenario())


def test_nerts_watch_by_address_exits_0_at_the_games_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``nerts watch HOST:PORT --headless --summary FILE``: the same lines as a player's."""
    monkeypatch.setenv("NERTS_HOME", str(tmp_path))
    summary = tmp_path / "watched.jsonl"

    async def table() -> tuple[int, list[dict[str, object]]]:
        config = TableConfig(variants=Variants(target=15), countdown=0.0, auto_start=2,
                             auto_next=0.3)
        host = await NetSession.host(Identity.generate("Tess"), config, LOCAL,
                                     table_name="Lab", interfaces=None)
        out = io.StringIO()
        players = [asyncio.create_task(run_headless(host, bot=Bot(paced(SKILLS["hard"], 0.05),
                                                                  random.Random(1)),
                                                    summary=out, linger=3.0))]
        watching = asyncio.create_task(asyncio.to_thread(
            main, ["watch", f"127.0.0.1:{host.port}", "--headless", "--bind", "127.0.0.1",
                   "--summary", str(summary)]))
        await until(lambda: len(host.connected) == 1, "the spectator linked")
        guest = await NetSession.join(Identity.generate("Gil"), ("127.0.0.1", host.port),
                                      TableConfig(), LOCAL)
        players.append(asyncio.create_task(run_headless(
            guest, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(2)), summary=None,
            linger=3.0)))
        await asyncio.gather(*players)
        return await watching, lines(out)

    code, played = asyncio.run(table())
    assert code == 0
    watched = [json.loads(line) for line in summary.read_text().splitlines()]
    assert shared_lines(watched) == shared_lines(played)


def test_a_latecomer_and_a_spectator_keep_their_links_to_the_seats_while_it_waits(
        caplog: pytest.LogCaptureFixture) -> None:
    """A latecomer waiting for the next deal is on the host's list of peers (it has a
    place there), so it links to every seat and spectator, though only the host
    knows it waits. Each asks the other for the table, as a spectator does, and
    the link stays: nobody closes it for taking no seat (``Limits.grace``) and
    redials, logging "no seat taken" every grace (every 5 s in the lab) for the
    whole round. Watched here for three graces and a half, the grace shortened
    to 1.5 s."""
    grace = 1.5
    limits = Limits(grace=grace)

    async def scenario() -> None:
        config = TableConfig(variants=Variants(target=1000), countdown=0.0, auto_start=2,
                             limits=limits, views=False)
        host = await NetSession.host(Identity.generate("Tess"), config, LOCAL,
                                     table_name="Lab", interfaces=None)
        guest = await NetSession.join(Identity.generate("Bo"), ("127.0.0.1", host.port),
                                      TableConfig(limits=limits, views=False), LOCAL)
        sessions = [host, guest]
        runners = [asyncio.create_task(s.run()) for s in sessions]
        try:
            # Nobody plays: the round lasts as long as the test.
            await until(lambda: host.replica.phase is Phase.PLAYING, "the round is dealt")
            late = await NetSession.join(Identity.generate("Lu"), ("127.0.0.1", host.port),
                                         TableConfig(limits=limits, views=False), LOCAL)
            sessions.append(late)
            runners.append(asyncio.create_task(late.run()))
            lu = late.replica.me.public_key
            await until(lambda: lu in host.replica.seating.waiting
                        and late.replica.phase is Phase.PLAYING, "Lu waits for the deal")
            # Caught up on the round: still catching up, it would ask the seats for
            # entries, which makes it a watcher there anyway.
            await asyncio.sleep(1.0)
            # The spectator's link makes the host list the peers again, Lu with them.
            watcher = await NetSession.watch(Identity.generate("Wes"),
                                             ("127.0.0.1", host.port),
                                             TableConfig(limits=limits), LOCAL)
            sessions.append(watcher)
            runners.append(asyncio.create_task(watcher.run()))
            others = {guest.replica.me.public_key, watcher.replica.me.public_key}
            await until(lambda: others <= late.connected, "Lu links to Bo and to Wes")
            await asyncio.sleep(3.5 * grace)
            assert others <= late.connected and lu in host.replica.seating.waiting
            assert lu in guest.connected and lu in watcher.connected
        finally:
            for s in sessions:
                s.close()
            await asyncio.gather(*runners)

    with caplog.at_level(logging.INFO, logger="p2p_nerts"):
        asyncio.run(scenario())
    closed = [r.getMessage() for r in caplog.records if "no seat taken" in r.getMessage()]
    assert closed == []
