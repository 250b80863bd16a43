"""Event standings over 127.0.0.1: records served on mDNS, verified, counted once."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import json
import secrets
import socket
from collections.abc import Callable
from pathlib import Path

import msgpack
import pytest
from zeroconf import ServiceInfo
from zeroconf.asyncio import AsyncZeroconf

from p2p_nerts import cli
from p2p_nerts.commands.records import INCOMPLETE
from p2p_nerts.game.variants import Variants
from p2p_nerts.net.discovery import TableAd, TableAdvertiser
from p2p_nerts.peer.node import NetSession, fingerprint_hex
from p2p_nerts.peer.results import (
    MAX_RECORDS,
    OWN,
    RESULTS_SERVICE,
    Budget,
    ResultsServer,
    Seen,
    ask,
    browse,
    serving_results,
    unfetched,
)
from p2p_nerts.peer.tables import LanTables
from p2p_nerts.protocol.envelope import open_entry
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import MsgType
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.records.history import keep
from p2p_nerts.records.record import MAX_RECORD, RecordError, decode, encode
from p2p_nerts.records.standings import Standings, standings_json, tally
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.testing.memnet import MemNet, bot_table
from p2p_nerts.testing.peers import PeerTable

from ..netkit import AnsweringPorts
from ..protocol.test_records import _game, _record, _resigned, _with
from ..replica_harness import game_record, resigned
from .test_net_session import LOCAL, bot_games, config

pytestmark = pytest.mark.timeout(60)
LOOPBACK = ["127.0.0.1"]
EVENING = 1_700_000_000.0


Served = list[tuple[str, bytes]]


async def fetch(host: str, port: int, since: float) -> list[bytes]:
    """Every record ``host:port`` serves for games ended since ``since``, kept whole."""
    records: list[bytes] = []

    async def keep(data: bytearray) -> bool:
        records.append(bytes(data))
        return True

    await ask(host, port, since, keep, Budget(MAX_RECORD * MAX_RECORDS))  # room for all
    return records


async def collect(interfaces: list[str], since: float, listen: float) -> Served:
    """``(where, record)`` for every record every results service found serves."""
    servers = await browse(interfaces, listen)
    answers = await asyncio.gather(*(fetch(h, p, since) for h, p in servers),
                                   return_exceptions=True)  # another test's, gone since
    return [(f"{host}:{port}", data) for (host, port), answer in zip(servers, answers, strict=True)
            if not isinstance(answer, BaseException) for data in answer]


async def collected(since: float, mine: Callable[[str, bytes], bool],
                    enough: Callable[[Served], bool] = bool, *, within: float = 45) -> Served:
    """What ``collect`` finds that ``mine`` says is this test's, asked again (3 s at a
    time) until ``enough`` of it is in: other programs on this machine (another
    test's players) may serve results too."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        found = [(where, data) for where, data in await collect(LOOPBACK, since, listen=3)
                 if mine(where, data)]
        if enough(found):
            return found
        assert asyncio.get_running_loop().time() < deadline, f"only {found}"


async def served_by(servers: list[ResultsServer], since: float) -> Served:
    """What ``servers`` serve, every one of them, and nothing another serves."""
    ours = {f"127.0.0.1:{server.port}" for server in servers}
    return await collected(since, lambda where, _data: where in ours,
                           lambda found: {where for where, _data in found} == ours)


def _table_of(data: bytes) -> str | None:
    """The table a served record names (None for one that is not a record)."""
    try:
        return decode(data).table
    except RecordError:
        return None


@functools.cache
def _second_game() -> MemNet:
    """Another table's game (four players), played to its end."""
    net = bot_table(4, seed=9, variants=Variants(target=15), table_id=bytes(range(16, 32)))
    net.replicas[0].seating.auto_next = 0.2
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    assert net.run(lambda: all(r.phase is Phase.OVER and r.rs is not None
                               and len(r.rs.signed_results) == 4
                               for r in net.replicas), limit=3600)
    return net


def _serve(records: list[bytes], since: float) -> list[bytes]:
    return records


def _forged() -> bytes:
    """The first game with one seat's final totals changed and signed again by it."""
    record = _record()
    entries = list(record.entries)
    i = next(k for k, raw in enumerate(entries) if open_entry(raw).type == MsgType.RESULT)

    def more(payload: dict[str, object]) -> None:
        totals = payload["t"]
        assert isinstance(totals, list)
        totals[0] += 50

    entries = _resigned(entries, i, more)
    return encode(_with(record, entries))


def test_standings_count_each_verified_game_once_and_never_a_forged_one() -> None:
    first = encode(game_record(_game(), 0, "Table A", EVENING))
    same = encode(game_record(_game(), 2, "Table A", EVENING))  # the same game
    second = encode(game_record(_second_game(), 1, "Table B", EVENING + 60))
    served = {"ana": [first], "cy": [same, second], "mallory": [_forged()]}

    async def scenario() -> list[tuple[str, bytes]]:
        servers = [ResultsServer(functools.partial(_serve, mine), name * 4, bind="127.0.0.1")
                   for name, mine in (("a1", served["ana"]), ("c3", served["cy"]),
                                      ("e5", served["mallory"]))]
        try:
            for server in servers:
                await server.start(LOOPBACK)
            return await served_by(servers, 0.0)
        finally:
            for server in servers:
                await server.close()

    found = asyncio.run(scenario())
    assert sorted(data for _where, data in found) == sorted([first, same, second, _forged()])
    standings = tally(found, EVENING - 3600)
    assert len(standings.games) == 2  # the first game, kept by two of its players, once
    [(where, reason)] = standings.refused
    assert where.startswith("127.0.0.1:") and "signed another result" in reason
    rows = {r["name"]: r for r in standings.rows()}
    a = {p["name"]: p["total"] for g in standings.games.values()
         if g["table"] == "Table A" for p in g["players"]}
    b = {p["name"]: p["total"] for g in standings.games.values()
         if g["table"] == "Table B" for p in g["players"]}
    for name in ("p0", "p1", "p2", "p3"):
        assert rows[name]["games"] == (name in a) + (name in b)
        assert rows[name]["points"] == a.get(name, 0) + b.get(name, 0)
    winners = [g["winner"] for g in standings.games.values()]
    assert sum(r["wins"] for r in rows.values()) == len(winners)
    assert tally(found, EVENING + 30).games.keys() != standings.games.keys()  # the window


def test_the_lobby_asks_as_nerts_event_does(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The lobby's standings (``LanTables.results``) count this player's own games
    beside what the network serves, and a network that cannot be asked is a line."""
    served = encode(game_record(_second_game(), 1, "Table B", EVENING))
    heard: list[float] = []

    def source(since: float) -> list[bytes]:
        heard.append(since)
        return [served]

    server = ResultsServer(source, "ab" * 8, bind="127.0.0.1")

    async def network(interfaces: object, listen: float) -> list[tuple[str, int]]:
        return [("127.0.0.1", server.port)]

    async def standings(tables: LanTables) -> Standings:
        await server.start(None)
        try:
            return await tables.results(EVENING - 60)
        finally:
            await server.close()

    monkeypatch.setattr("p2p_nerts.peer.results.browse", network)
    with Store(tmp_path / DB_FILE) as store:
        keep(store, _game().replicas[1], "Table A", EVENING, journal=_game().written(1))
        tables = LanTables(Identity.from_seed(b"\x05" * 32, "Ana"), LOOPBACK, store=store)
        found = asyncio.run(standings(tables))
        [own] = store.records_since(0.0)
    assert heard == [EVENING - 60]
    assert standings_json(found) == standings_json(
        tally([("127.0.0.1:x", served), (OWN, own)], EVENING - 60))
    assert len(found.games) == 2

    async def blocked(interfaces: object, listen: float) -> list[object]:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr("p2p_nerts.peer.results.browse", blocked)
    with pytest.raises(ConnectionError, match=r"^network error: Operation not permitted$"):
        asyncio.run(LanTables(Identity.from_seed(b"\x05" * 32, "Ana"), LOOPBACK).results(0.0))


def test_a_server_answers_only_what_it_should() -> None:
    async def scenario() -> None:
        server = ResultsServer(lambda since: [b"x" * 10] if since < 5 else [], "ab" * 8,
                               bind="127.0.0.1,127.0.0.2")  # a seat's --bind: one port
        await server.start(None)
        try:
            assert await fetch("127.0.0.2", server.port, 0.0) == [b"x" * 10]
            assert await fetch("127.0.0.1", server.port, 0.0) == [b"x" * 10]
            assert await fetch("127.0.0.1", server.port, 9.0) == []
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"\x00\x00\x00\x05hello")  # not a request: closed, nothing sent
            await writer.drain()
            assert await reader.read() == b""
            writer.close()
        finally:
            await server.close()

    asyncio.run(scenario())


def test_nerts_event_counts_this_players_own_games(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    with Store(tmp_path / DB_FILE) as store:
        keep(store, _game().replicas[1], "Table A", 4_000_000_000.0,  # not yet ended: in window
             journal=_game().written(1))

    async def nobody(*args: object, **kwargs: object) -> Seen:
        return Seen([], frozenset(), [])

    monkeypatch.setattr("p2p_nerts.peer.results.look", nobody)
    # Nobody on the network answered: the player's own games count, and the exit
    # status says the standings may be incomplete.
    assert cli.main(["event", "--json", "--data-dir", str(tmp_path),
                     "--interfaces", "127.0.0.1"]) == INCOMPLETE
    out = json.loads(capsys.readouterr().out)
    assert len(out["games"]) == 1 and out["refused"] == []
    assert {r["name"] for r in out["standings"]} == {"p0", "p1", "p2"}
    assert [i["why"] for i in out["incomplete"]] == [
        "nobody on the network answered (is multicast blocked here?): only this "
        "computer's games are counted"]
    assert cli.main(["event", "--csv", "--data-dir", str(tmp_path),
                     "--interfaces", "127.0.0.1"]) == INCOMPLETE
    said = capsys.readouterr()
    csv_lines = said.out.splitlines()
    assert csv_lines[0] == "place,name,fingerprint,games,wins,points" and len(csv_lines) == 4
    assert "nobody on the network answered" in said.err
    assert cli.main(["event", "--data-dir", str(tmp_path),
                     "--interfaces", "127.0.0.1"]) == INCOMPLETE
    text = capsys.readouterr().out
    host = fingerprint_hex(_game().replicas[1].host_key)[:4]
    assert text.startswith("1 game verified\n")
    # Named as the lobby and nerts join tell tables apart, by the host's signed name
    # and the start of its fingerprint (a record's table name is nobody's signature).
    assert f"  game hosted by p0@{host}: " in text
    assert text.rstrip().endswith("NOT COMPLETE: nobody on the network answered (is "
                                  "multicast blocked here?): only this computer's games "
                                  "are counted")


@pytest.mark.usefixtures("quick_mdns")
def test_nerts_event_names_a_player_it_could_not_ask_and_exits_incomplete(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A player's results ad heard, its port refusing (the player gone home): the
    standings say so, and the exit status says they are incomplete."""
    gone = socket.create_server(("127.0.0.1", 0))
    port = gone.getsockname()[1]
    gone.close()
    info = ServiceInfo(RESULTS_SERVICE, f"gone-{secrets.token_hex(4)}.{RESULTS_SERVICE}",
                       port=port, properties={"v": "1"}, parsed_addresses=["127.0.0.1"])

    async def advertised() -> int:
        async with AsyncZeroconf(interfaces=LOOPBACK) as aiozc:
            await aiozc.async_register_service(info)
            return await asyncio.to_thread(cli.main, [
                "event", "--data-dir", str(tmp_path), "--interfaces", "127.0.0.1",
                "--listen", "3"])

    assert asyncio.run(advertised()) == INCOMPLETE
    out = capsys.readouterr().out
    assert (f"NOT COUNTED (from 127.0.0.1:{port}): could not fetch its games: refused the "
            "connection (the player has left?)") in out.splitlines()


def test_a_table_that_dealt_is_unfetched_only_when_its_host_serves_no_results() -> None:
    """A table seen playing, between rounds or over, whose host serves no results, is
    named as ``nerts join`` takes it; one still seating players has no games, and a
    host heard serving is asked (its failure, if any, is the ask's own line)."""
    def table(name: str, fingerprint: str, state: str) -> TableAd:
        return TableAd(name=name, fingerprint=fingerprint, protocol_version=1, seats_taken=2,
                       seats_total=4, variant="classic", needs_code=False, port=40123,
                       instance=f"{name} {fingerprint[:4]}", host="Ana", state=state)

    silent, serving = "22d7b07e" * 2, "a1" * 8
    seen = Seen([("127.0.0.1", 1)], frozenset({serving}),
                [table("Main table", silent, "playing"), table("Main table", serving, "over"),
                 table("Side", silent, "break"), table("New", silent, "lobby")])
    assert [t for t, _why in unfetched(seen)] == ["Main table@22d7", "Side@22d7"]
    assert all(why.startswith("its host serves no results") for _t, why in unfetched(seen))
    assert unfetched(Seen([], frozenset(), [])) == []


@pytest.mark.usefixtures("quick_mdns")
def test_nerts_event_names_a_table_seen_playing_whose_games_it_could_not_fetch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], answering: AnsweringPorts) -> None:
    """Over 127.0.0.1: a table advertised playing, its host serving no results, is a
    NOT COUNTED line naming the table as NAME@FP, and the exit status says incomplete;
    a table whose host serves its results (nothing ended yet) and one still seating
    players are no such line."""
    tag = secrets.token_hex(4)
    silent, serving = secrets.token_hex(8), secrets.token_hex(8)

    def table(name: str, fingerprint: str, state: str) -> TableAd:
        return TableAd(name=f"{name} {tag}", fingerprint=fingerprint, protocol_version=1,
                       seats_taken=2, seats_total=4, variant="classic", needs_code=False,
                       port=answering.new(), host="Ana", state=state)

    ads = [table("Lost", silent, "playing"), table("Served", serving, "playing"),
           table("Seating", silent, "lobby")]
    server = ResultsServer(lambda since: [], serving, bind="127.0.0.1")

    async def advertised() -> int:
        async with contextlib.AsyncExitStack() as stack:
            for ad in ads:
                await stack.enter_async_context(TableAdvertiser(ad, LOOPBACK))
            await server.start(LOOPBACK)
            stack.push_async_callback(server.close)
            return await asyncio.to_thread(cli.main, [
                "event", "--data-dir", str(tmp_path), "--interfaces", "127.0.0.1",
                "--listen", "3"])

    assert asyncio.run(advertised()) == INCOMPLETE
    ours = [line for line in capsys.readouterr().out.splitlines() if tag in line]
    assert ours == [f"NOT COUNTED: table Lost {tag}@{silent[:4]} seen, its games not fetched: "
                    "its host serves no results (it keeps no records, or its results ad was "
                    "never heard here)"]


def test_the_lobby_serves_its_players_games_while_it_runs(tmp_path: Path) -> None:
    """What ``nerts`` alone does beside its screen: an event view elsewhere finds the game.
    Its table's name is this run's own, so that no other server (another test's) can
    serve the very record found."""
    with Store(tmp_path / DB_FILE) as store:
        table = f"Table {secrets.token_hex(4)}"
        keep(store, _game().replicas[2], table, EVENING, journal=_game().written(2))
        found: list[tuple[str, bytes]] = []

        async def event_view() -> None:  # until it hears this player's own record
            kept = store.records_since(EVENING - 1)
            found.extend(await collected(EVENING - 1, lambda _where, data: data in kept))

        asyncio.run(serving_results(store, _game().replicas[2].me, LOOPBACK, event_view()))
        assert [data for _where, data in found] == store.records_since(EVENING - 1)
    assert len(tally(found, EVENING - 1).games) == 1


def test_two_tables_finish_and_an_open_event_view_counts_both(tmp_path: Path) -> None:
    """Two tables over TCP on 127.0.0.1, each host's lobby-like server serving its store:
    the standings, collected as the games end, are the games' own totals."""
    stores = [Store(tmp_path / str(k) / DB_FILE) for k in range(4)]

    async def table(name: str, host_store: Store, guest_store: Store) -> list[dict[str, object]]:
        host = await NetSession.host(Identity.generate(f"{name} host"), config(auto_start=2),
                                     LOCAL, table_name=name, interfaces=None, store=host_store)
        guest = await NetSession.join(Identity.generate(f"{name} guest"),
                                      ("127.0.0.1", host.port), config(), LOCAL,
                                      store=guest_store)
        outs = [io.StringIO(), io.StringIO()]
        codes = await asyncio.gather(*bot_games([host, guest], outs, 0.3))
        assert codes == [0, 0]
        return [json.loads(x) for x in outs[0].getvalue().splitlines()]

    async def scenario() -> tuple[list[list[dict[str, object]]], Standings]:
        servers = [ResultsServer(s.records_since, f"{k:02x}" * 8, bind="127.0.0.1")
                   for k, s in enumerate(stores[:2])]
        for server in servers:
            await server.start(LOOPBACK)
        try:
            summaries = await asyncio.wait_for(asyncio.gather(
                table("Table A", stores[0], stores[2]), table("Table B", stores[1], stores[3])),
                45)
            standings = Standings()
            while len(standings.games) < 2:  # the view asks again until both are in
                standings = tally(await served_by(servers, 0.0), 0.0)
            return list(summaries), standings
        finally:
            for server in servers:
                await server.close()

    summaries, standings = asyncio.run(scenario())
    for store in stores:
        store.close()
    assert standings.refused == []
    assert sorted(g["table"] for g in standings.games.values()) == ["Table A", "Table B"]
    finals = [lines[-1] for lines in summaries]
    points = {name: total for final in finals
              for name, total in final["totals"].items()}  # type: ignore[attr-defined]
    rows = {r["name"]: r for r in standings.rows()}
    assert {name: r["points"] for name, r in rows.items()} == points
    assert sorted(name for name, r in rows.items() if r["wins"]) == sorted(
        str(final["winner"]) for final in finals)
    assert all(r["games"] == 1 for r in rows.values())


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_headless_seat_serves_its_game_to_an_event_view_while_it_runs(
        tmp_path: Path) -> None:
    """``nerts host --headless`` and ``nerts bot``, processes with stores of their own,
    play a game; the bot leaves at its end, and the host, lingering, still serves the
    game: an event view counts it with the players' totals. A signal ends the linger,
    and the exit is the game's (0)."""
    fast = ["--headless", "--bot", "hard", "--pace", "0.05", "--bind", "127.0.0.1"]
    t = PeerTable(tmp_path, 2, common=fast, seed=5,
                  host=["--target", "15", "--auto-next", "0.3", "--countdown", "0",
                        "--linger", "600"])

    async def scenario() -> Standings:
        try:
            await t.start()
            host, bot = t.peers
            assert await bot.wait(180) == 0, bot.tail()  # the game is over: the bot is gone
            await host.wait_for_line("staying 600 s after the game", 30)
            # Until the host's history has the signed game (this table's, not others').
            standings = tally(await collected(
                0.0, lambda _where, data: _table_of(data) == t.name,
                lambda found: bool(tally(found, 0.0).games), within=120), 0.0)
            assert host.proc is not None and host.proc.returncode is None  # still running
            host.terminate()
            assert await host.wait(30) == 0, host.tail()
            return standings
        finally:
            await t.close()

    standings = asyncio.run(scenario())
    final = t.peers[0].lines()[-1]
    assert final["final"] and final["game_over"]
    assert t.peers[1].lines()[-1]["totals"] == final["totals"]
    [game] = standings.games.values()
    assert {p["name"]: p["total"] for p in game["players"]} == final["totals"]
    assert game["winner"] == final["winner"] and standings.refused == []


@pytest.mark.parametrize("idle", [8, 64])
def test_a_strangers_idle_connections_never_keep_an_asker_waiting(idle: int) -> None:
    """Connections that never ask, from the asker's own address and from another, all
    open before it asks: it is answered in full, and each idle one is closed unanswered."""
    async def scenario() -> None:
        server = ResultsServer(lambda since: [b"x" * 10, b"y" * 20], "ab" * 8, bind="127.0.0.1")
        await server.start(None)
        held: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        try:
            for k in range(idle):  # half from the asker's address, half from another
                held.append(await asyncio.open_connection(
                    "127.0.0.1", server.port, local_addr=(f"127.0.0.{1 + k % 2}", 0)))
            await asyncio.sleep(0.1)  # the server has taken them all
            assert await fetch("127.0.0.1", server.port, 0.0) == [b"x" * 10, b"y" * 20]
            for reader, _writer in held:  # closed by the server, unanswered, in time
                assert await asyncio.wait_for(reader.read(), 30) == b""
        finally:
            for _reader, writer in held:
                writer.close()
            await server.close()

    asyncio.run(scenario())


def test_one_address_cannot_close_anothers_asking() -> None:
    """A busy server still answers each address; a flood of connections from one
    address makes room only among its own."""
    async def scenario() -> None:
        server = ResultsServer(lambda since: [b"z" * 5], "cd" * 8, bind="127.0.0.1")
        await server.start(None)
        try:
            first = await asyncio.open_connection("127.0.0.1", server.port,
                                                  local_addr=("127.0.0.3", 0))
            flood = [await asyncio.open_connection("127.0.0.1", server.port,
                                                   local_addr=("127.0.0.2", 0))
                     for _ in range(32)]
            await asyncio.sleep(0.1)
            reader, writer = first  # opened before the flood, still open: it asks now
            request = msgpack.packb({"v": 1, "since": 0.0})
            writer.write(len(request).to_bytes(4, "big") + request)
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 30)
            assert answer == b"\x00\x00\x00\x05zzzzz\x00\x00\x00\x00"
            writer.close()
            for _r, w in flood:
                w.close()
        finally:
            await server.close()

    asyncio.run(scenario())


def test_nerts_event_shows_a_strangers_resigned_copy_as_a_conflict_and_keeps_its_own(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A stranger serves the game this player sat at, every entry signed again under
    keys of its own: ``nerts event`` counts the player's own record, and lists the
    copy as a conflict, counted for nothing; a player without a record of it counts
    neither, and sees both."""
    real = game_record(_game(), 0, "Table A", 4_000_000_000.0)
    forged = encode(resigned(real, salt=3))
    servers = {"player": ResultsServer(lambda since: [encode(real)], "a1" * 8, bind="127.0.0.1"),
               "stranger": ResultsServer(lambda since: [forged], "e5" * 8, bind="127.0.0.1")}
    asked: list[str] = []

    async def network(interfaces: object, listen: float) -> Seen:
        return Seen([("127.0.0.1", servers[name].port) for name in asked], frozenset(), [])

    async def event(*args: str) -> int:
        for server in servers.values():
            await server.start(None)
        try:
            return await asyncio.to_thread(cli.main, ["event", "--json", *args,
                                                      "--interfaces", "127.0.0.1"])
        finally:
            for server in servers.values():
                await server.close()

    monkeypatch.setattr("p2p_nerts.peer.results.look", network)
    with Store(tmp_path / DB_FILE) as store:
        keep(store, _game().replicas[1], "Table A", 4_000_000_000.0,
             journal=_game().written(1))
    asked[:] = ["stranger"]
    assert asyncio.run(event("--data-dir", str(tmp_path))) == 0
    out = json.loads(capsys.readouterr().out)
    stranger = f"127.0.0.1:{servers['stranger'].port}"
    [game] = out["games"]
    assert {c["from"][0]: c["counted"] for c in out["conflicts"]} == {OWN: True,
                                                                      stranger: False}
    [copy] = [c for c in out["conflicts"] if not c["counted"]]
    assert copy["winners"] != game["winners"]  # under the forger's key, not the winner's
    assert {r["fingerprint"] for r in out["standings"]} == {p["fingerprint"]
                                                           for p in game["players"]}

    asked[:] = ["player", "stranger"]
    assert asyncio.run(event("--data-dir", str(tmp_path / "nobody"))) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == [] and out["standings"] == []
    assert sorted(c["from"][0] for c in out["conflicts"]) == sorted(
        f"127.0.0.1:{s.port}" for s in servers.values())
    assert not any(c["counted"] for c in out["conflicts"])


def test_askers_that_never_read_hold_no_more_than_their_share(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two addresses ask, each on four connections, and read none of the answers (large
    enough to fill what the network buffers), with exchanges given all the time they
    like: an asker from a third address is answered all the same, for the two hold
    two answers each, their other asks waiting their turn."""
    monkeypatch.setattr("p2p_nerts.peer.results._TIMEOUT", 600.0)
    big = b"r" * (4 << 20)

    async def scenario() -> None:
        server = ResultsServer(lambda since: [big] * 3, "ef" * 8, bind="127.0.0.1")
        await server.start(None)
        request = msgpack.packb({"v": 1, "since": 0.0})
        held = []
        try:
            for k in range(8):
                held.append(await asyncio.open_connection(
                    "127.0.0.1", server.port, local_addr=(f"127.0.0.{2 + k % 2}", 0)))
                held[-1][1].write(len(request).to_bytes(4, "big") + request)
            assert await asyncio.wait_for(fetch("127.0.0.1", server.port, 0.0), 60) == [big] * 3
        finally:
            for _reader, writer in held:
                writer.close()
            await server.close()

    asyncio.run(scenario())
