"""A game over real TCP on 127.0.0.1 lands in every player's history, alike."""

from __future__ import annotations

import asyncio
import io
import json
import random
import time
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import pytest

from p2p_nerts import cli
from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.peer import keeping
from p2p_nerts.peer.headless import drive_bot, paced
from p2p_nerts.peer.node import NetSession
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.records import history
from p2p_nerts.records.history import Kept
from p2p_nerts.records.record import GameRecord, RecordError, decode
from p2p_nerts.records.verify import verify
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.testing.peers import shared_lines

from ..netkit import until
from .test_net_session import LOCAL, bot_games, config, host_table

pytestmark = pytest.mark.timeout(60)


def test_a_loopback_game_is_in_every_players_history_with_the_same_scores(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dirs = [tmp_path / name for name in ("host", "bo", "cy")]
    stores = [Store(d / DB_FILE) for d in dirs]

    async def scenario() -> list[list[dict[str, object]]]:
        host = await host_table(3, store=stores[0])
        guests = [await NetSession.join(Identity.generate(name), ("127.0.0.1", host.port),
                                        config(), LOCAL, store=store)
                  for name, store in zip(("Bo", "Cy"), stores[1:], strict=True)]
        sessions = [host, *guests]
        outs = [io.StringIO() for _ in sessions]
        codes = await asyncio.wait_for(asyncio.gather(*bot_games(sessions, outs, 0.5)), 45)
        assert codes == [0, 0, 0]
        return [[json.loads(x) for x in out.getvalue().splitlines()] for out in outs]

    summaries = asyncio.run(scenario())
    for store in stores:
        store.close()
    listings = []
    for d in dirs:
        assert cli.main(["history", "--json", "--data-dir", str(d)]) == 0
        listings.append(json.loads(capsys.readouterr().out))
    games = [listing["games"] for listing in listings]
    assert all(len(g) == 1 for g in games)
    shared = [{k: v for k, v in g[0].items() if k not in ("me", "number", "ended_at")}
              for g in games]
    assert shared[0] == shared[1] == shared[2]
    game = shared[0]
    final = summaries[0][-1]
    assert {p["name"]: p["total"] for p in game["players"]} == final["totals"]
    assert game["winner"] == final["winner"] and game["flags"] == []
    assert len(game["rounds"]) == final["rounds"]
    for d, listing in zip(dirs, listings, strict=True):
        assert listing["statistics"]["games"] == 1
        with Store(d / DB_FILE) as store:
            record = store.game_record(listing["games"][0]["number"])
        assert record is not None
        # Every seat's record proves the game: it prints what the players' summaries did.
        assert shared_lines(verify(decode(record)).lines) == shared_lines(summaries[0])


def test_a_seat_still_at_the_table_keeps_the_game_once_every_seat_has_signed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each seat signs the result as it sees the game end, so one that saw it first
    lacks the others' signatures. A seat still at the table (a lobby's, a lingering
    headless one) keeps the game as the last comes in, so the record it serves then
    verifies: the host here stays until its history's copy does. Kept again as it
    leaves, a game is replayed again only if entries came meanwhile."""
    stores = [Store(tmp_path / name / DB_FILE) for name in ("host", "bo", "cy")]
    replayed: dict[bytes, list[GameRecord]] = {}  # by the seat keeping it
    reckon = history.to_keep

    def to_keep(record: GameRecord, me: bytes, flags: Sequence[str] = ()) -> Kept | None:
        replayed.setdefault(me, []).append(record)
        return reckon(record, me, flags)

    monkeypatch.setattr(keeping, "to_keep", to_keep)
    lacking: list[bool] = []  # at the host's game over: had a seat not signed yet?

    def signed(store: Store) -> bool:
        try:
            [data] = store.records_since(0.0)
            verify(decode(data))
        except (ValueError, RecordError):  # none kept yet, or not the whole game
            return False
        return True

    async def scenario() -> None:
        host = await host_table(3, store=stores[0])
        guests = [await NetSession.join(Identity.generate(name), ("127.0.0.1", host.port),
                                        config(), LOCAL, store=store)
                  for name, store in zip(("Bo", "Cy"), stores[1:], strict=True)]

        def heard(event: ev.Event) -> None:
            rs = host.replica.rs
            if isinstance(event, ev.GameOver) and rs is not None:
                lacking.append(not rs.live <= rs.signed_results.keys())

        host.subscribe(heard)
        running = asyncio.create_task(host.run())
        playing = asyncio.create_task(drive_bot(
            host, Bot(paced(SKILLS["hard"], 0.05), random.Random(7)), time.monotonic))
        try:
            outs = [io.StringIO() for _ in guests]
            codes = await asyncio.wait_for(asyncio.gather(*bot_games(guests, outs, 0.5)), 45)
            assert codes == [0, 0]
            await until(lambda: signed(stores[0]), "the host's copy holding every signature")
            assert host.replica.phase is Phase.OVER and lacking in ([True], [False])
            [(_number, at_the_table)] = stores[0].games()
        finally:
            playing.cancel()
            host.close()
            await asyncio.gather(running, playing, return_exceptions=True)
        # Kept again as the host left, still dated at the game's end (the standings'
        # window reads that date), however long it stayed.
        [(_number, left)] = stores[0].games()
        assert left["ended_at"] == at_the_table["ended_at"]
        assert replayed.get(host.replica.me.public_key)
        for records in replayed.values():
            assert all(a != b for a, b in pairwise(records)), "the same game replayed"

    try:
        asyncio.run(scenario())
    finally:
        for store in stores:
            store.close()


def test_a_game_played_again_at_a_networked_table_is_kept_apart_and_resumable(
        tmp_path: Path) -> None:
    """After a game over the host deals a new game at the same table: each seat keeps
    it in its history as a game of its own (the one before stays as it was), and
    its journal goes on (it can be resumed). A seat that left after the first game
    and joins again picks up its own chain from the journal, kept for that: a
    fresh replica signed the game's result a second time as it caught up."""
    stores = [Store(tmp_path / name / DB_FILE) for name in ("host", "bo")]
    bo_key = Identity.generate("Bo")

    def games(store: Store) -> list[tuple[int, list[int]]]:
        """Each kept game's first round and its rounds, oldest first, its record
        checked to the end of the game."""
        kept = []
        for number, game in reversed(store.games()):
            record = store.game_record(number)
            assert record is not None
            assert verify(decode(record)).game_over
            kept.append((game["first_round"], [r["round"] for r in game["rounds"]]))
        return kept

    def bot(session: NetSession, seed: int) -> asyncio.Task[None]:
        return asyncio.create_task(drive_bot(
            session, Bot(paced(SKILLS["hard"], 0.02), random.Random(seed)), time.monotonic))

    async def scenario() -> None:
        host = await host_table(2, store=stores[0], variants=Variants(target=5))
        bo = await NetSession.join(bo_key, ("127.0.0.1", host.port), config(), LOCAL,
                                   store=stores[1])
        tasks = [asyncio.create_task(host.run()), bot(host, 1)]
        boing = [asyncio.create_task(bo.run()), bot(bo, 2)]
        try:
            await until(lambda: host.replica.phase is Phase.OVER
                        and all(len(st.games()) == 1 for st in stores), "the first game kept")
            [(first, rounds)] = games(stores[0])
            bo.close()  # Bo leaves, and comes back for the next game
            boing[1].cancel()
            await asyncio.gather(*boing, return_exceptions=True)
            bo = await NetSession.join(bo_key, ("127.0.0.1", host.port), config(), LOCAL,
                                       store=stores[1])
            assert bo.replica.phase is Phase.OVER and bo.view.my_seat is not None
            boing = [asyncio.create_task(bo.run()), bot(bo, 3)]
            await until(lambda: bo.connected == {host.replica.me.public_key}, "Bo back")
            host.act(StartRound())
            await until(lambda: all(s.replica.phase is not Phase.OVER for s in (host, bo)),
                        "the second game dealt")
            # It can be resumed, as the first could: the table is not finished.
            assert [st.unfinished() is not None for st in stores] == [True, True]
            await until(lambda: all(s.replica.phase is Phase.OVER for s in (host, bo))
                        and all(len(st.games()) == 2 for st in stores),
                        "the second game kept, at the table", timeout=30)
            for store in stores:
                assert games(store)[0] == (first, rounds)  # as it was
                [(again, more)] = games(store)[1:]
                assert again == more[0] > rounds[-1]  # its own rounds, and only those
            for session in (host, bo):
                assert not session.replica.rejected, session.replica.rejected
        finally:
            bo.close()
            host.close()
            for task in [*tasks, *boing]:
                task.cancel()
            await asyncio.gather(*tasks, *boing, return_exceptions=True)

    try:
        asyncio.run(scenario())
        for store in stores:
            assert len(store.games()) == 2 and store.unfinished() is None
    finally:
        for store in stores:
            store.close()
