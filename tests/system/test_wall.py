"""The projector's server (``peer.wall``, ``nerts event serve``) over 127.0.0.1: its
routes, the event stream, and the command fed by today's standings."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from p2p_nerts import cli
from p2p_nerts.game.variants import Variants
from p2p_nerts.peer.results import Seen
from p2p_nerts.peer.wall import Feed, WallError, serving_wall, shaped, standings_wall, wall_app
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.records.history import keep
from p2p_nerts.records.record import encode, record_of
from p2p_nerts.records.standings import Standings, Tally
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.testing.memnet import MemNet, bot_table

from ..protocol.test_records import _record

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).parents[2]
WAIT = 30.0  # seconds any one condition may take, however loaded the machine


def snapshot(**changes: Any) -> dict[str, Any]:
    """An evening in the middle of its second game, as ``EventBook.wall()`` gives it."""
    shot: dict[str, Any] = {
        "event": {"name": "Friday Nerts", "game": 2, "games": 4, "state": "playing"},
        "standings": [
            {"place": 1, "name": "Ana", "fp": "aa11" * 4, "games": 1, "wins": 1,
             "points": 31, "tiebreak": 2.5},
            {"place": 2, "name": "Ben", "fp": "bb22" * 4, "games": 1, "wins": 0,
             "points": 12, "tiebreak": 0}],
        "tables": [{"game": 2, "table": "A", "state": "playing", "round": 3,
                    "players": [{"name": "Ana", "fp": "aa11" * 4, "score": 14},
                                {"name": "Ben", "fp": "bb22" * 4, "score": -3}]}],
        "next": {"game": 3, "tables": [{"table": "A", "players": [
            {"name": "Ben", "fp": "bb22" * 4}, {"name": "Ana", "fp": "aa11" * 4}]}]},
        "missing": ["Cleo"],
    }
    shot.update(changes)
    return shot


Scenario = Callable[[TestClient[Any, Any], Feed], Awaitable[None]]


def served(scenario: Scenario, feed: Feed | None = None, max_clients: int = 8) -> None:
    async def run() -> None:
        wall = feed or Feed(snapshot())
        async with TestClient(TestServer(wall_app(wall, max_clients), host="127.0.0.1")) as client:
            await scenario(client, wall)

    asyncio.run(run())


async def next_data(stream: aiohttp.ClientResponse) -> dict[str, Any]:
    """The next snapshot an event stream sends (skipping its comments and retry line)."""
    async with asyncio.timeout(WAIT):
        while True:
            line = await stream.content.readline()
            assert line, "the stream ended"
            if line.startswith(b"data: "):
                data: dict[str, Any] = json.loads(line[len(b"data: "):])
                return data


def test_the_page_and_its_files_are_served_from_the_package() -> None:
    async def scenario(client: TestClient[Any, Any], feed: Feed) -> None:
        page = await client.get("/")
        assert page.status == 200 and page.content_type == "text/html"
        html = await page.text()
        assert '<script src="/wall.js" defer></script>' in html
        assert 'href="/wall.css"' in html
        # Nothing from elsewhere: the LAN of an evening has no internet.
        assert not re.search(r"(src|href)=\"(https?:)?//", html)
        assert "script-src 'self'" in page.headers["Content-Security-Policy"]
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        script = await client.get("/wall.js")
        assert script.content_type == "text/javascript"
        assert "EventSource(\"/events\")" in await script.text()
        style = await client.get("/wall.css")
        assert style.content_type == "text/css"
        assert "http" not in await style.text()

    served(scenario)


def test_standings_json_is_the_snapshots_standings_under_the_events_name() -> None:
    async def scenario(client: TestClient[Any, Any], feed: Feed) -> None:
        answer = await client.get("/standings.json")
        assert answer.status == 200 and answer.content_type == "application/json"
        assert await answer.json() == {"event": "Friday Nerts",
                                       "standings": snapshot()["standings"]}
        feed.set(snapshot(event={"name": "Saturday", "game": 3, "games": 4,
                                 "state": "seating"}, standings=[]))
        assert await (await client.get("/standings.json")).json() == {
            "event": "Saturday", "standings": []}

    served(scenario)


@pytest.mark.parametrize("path", ["/", "/standings.json", "/events", "/wall.js"])
def test_it_is_read_only(path: str) -> None:
    async def scenario(client: TestClient[Any, Any], feed: Feed) -> None:
        for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
            answer = await client.request(method, path, data=b"{}")
            assert answer.status == 405, method
            assert set(answer.headers["Allow"].split(",")) == {"GET", "HEAD"}
        head = await client.head(path)
        assert head.status == 200 and await head.read() == b""
        assert feed.version == 0

    served(scenario)


@pytest.mark.parametrize("path", ["/index.html", "/wall_page/index.html", "/wall.py",
                                  "/standings.json/x", "/../wall.py", "/%2e%2e/wall.py",
                                  "/events/", "/favicon.ico"])
def test_no_other_path_is_served(path: str) -> None:
    async def scenario(client: TestClient[Any, Any], feed: Feed) -> None:
        assert (await client.get(path)).status == 404

    served(scenario)


def test_the_event_stream_sends_the_snapshot_at_once_and_again_when_it_changes() -> None:
    async def scenario(client: TestClient[Any, Any], feed: Feed) -> None:
        stream = await client.get("/events")
        assert stream.status == 200
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        assert await next_data(stream) == shaped(snapshot())
        later = copy.deepcopy(snapshot())
        later["standings"][1]["points"] = 40
        later["standings"].reverse()
        assert feed.set(later)
        assert not feed.set(later)  # nothing new: nothing sent
        assert await next_data(stream) == shaped(later)
        stream.close()

    served(scenario)


def test_event_streams_are_bounded_and_a_closed_one_makes_room() -> None:
    async def scenario(client: TestClient[Any, Any], feed: Feed) -> None:
        first, second = await client.get("/events"), await client.get("/events")
        for stream in (first, second):
            await next_data(stream)
        refused = await client.get("/events")
        assert refused.status == 503 and refused.headers["Retry-After"] == "10"
        # The page and the standings stay served to everyone.
        assert (await client.get("/standings.json")).status == 200
        first.close()
        async with asyncio.timeout(WAIT):
            while (third := await client.get("/events")).status == 503:
                third.close()
                await asyncio.sleep(0.05)
        assert await next_data(third) == shaped(snapshot())
        second.close()
        third.close()

    served(scenario, max_clients=2)


def test_only_the_contracts_fields_are_served_and_a_bad_snapshot_changes_nothing() -> None:
    extra = snapshot(secret="the organiser's key")
    extra["standings"][0]["address"] = "192.0.2.7"
    extra["tables"][0]["players"][0]["code"] = "1234"
    feed = Feed(extra)
    assert feed.snapshot == shaped(snapshot())
    assert "secret" not in feed.body and "192.0.2.7" not in feed.body and "1234" not in feed.body
    long = snapshot()
    long["standings"][0]["name"] = "x" * 500
    assert len(shaped(long)["standings"][0]["name"]) == 64
    for bad, said in [
            (snapshot(event={"name": "E", "game": 1, "games": 2, "state": "lost"}),
             "event.state must be one of"),
            (snapshot(standings=[{"place": "1"}]), "standings[0].place must be a whole number"),
            (snapshot(standings=[1]), "standings[0] must be an object"),
            (snapshot(tables=None), "tables must be a list"),
            (snapshot(next={"game": 3, "tables": [{"table": "A", "players": [
                {"name": None, "fp": ""}]}]}), "next.tables[0].players[0].name must be text"),
            (snapshot(standings=[dict(snapshot()["standings"][0], tiebreak=float("nan"))]),
             "standings[0].tiebreak must be a whole number"),
            (snapshot(missing=["x"] * 1001), "missing holds more than 1000")]:
        with pytest.raises(WallError, match=re.escape(said)):
            feed.set(bad)
        assert feed.version == 0 and feed.snapshot == shaped(snapshot())


def test_stopping_the_server_ends_its_streams() -> None:
    async def run() -> None:
        feed = Feed(snapshot())
        async with asyncio.timeout(WAIT), aiohttp.ClientSession() as session:
            async with serving_wall(feed, "127.0.0.1", 0) as bound:
                host, port = bound[0]
                assert host == "127.0.0.1" and port > 0
                stream = await session.get(f"http://127.0.0.1:{port}/events")
                await next_data(stream)
            # Out of the block the server has stopped, and the stream has ended with it.
            assert feed.closed
            with contextlib.suppress(aiohttp.ClientPayloadError):
                while await stream.content.readline():
                    pass
            stream.close()

    asyncio.run(run())


def test_todays_standings_become_a_snapshot_of_the_wall() -> None:
    assert shaped(standings_wall(Standings(), "Nerts")) == {
        "event": {"name": "Nerts", "game": 0, "games": 0, "state": "playing"},
        "standings": [], "tables": [], "next": None, "missing": []}
    tally = Tally(0.0)
    assert tally.add("here", encode(_record(1)))
    standings = tally.standings()
    wall = shaped(standings_wall(standings, "Tonight"))
    rows = standings.rows()
    assert [(r["place"], r["name"], r["fp"], r["wins"], r["points"]) for r in wall["standings"]] \
        == [(i, r["name"], r["fingerprint"], r["wins"], r["points"])
            for i, r in enumerate(rows, start=1)]
    (table,) = wall["tables"]
    assert table["state"] == "over" and re.fullmatch(r"p0@[0-9a-f]{4}", table["table"])
    assert {p["name"]: p["score"] for p in table["players"]} == {
        r["name"]: r["points"] for r in rows}


def _own_game() -> tuple[MemNet, list[str]]:
    """A whole game of three bots whose keys and names are this run's own: no other
    game on 127.0.0.1 (another test's, a table someone plays there) has them."""
    names = [f"w{secrets.token_hex(3)}" for _ in range(3)]
    net = bot_table(3, seed=5, variants=Variants(target=20),
                    ids=[Identity.generate(name) for name in names])
    net.replicas[0].seating.auto_next = 0.2
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    assert net.run(lambda: all(r.phase is Phase.OVER and r.rs is not None
                               and len(r.rs.signed_results) == 3 for r in net.replicas),
                   limit=3600)
    return net, names


def test_nerts_event_serve_shows_this_players_games(tmp_path: Path) -> None:
    """The command, as an organiser runs it: the page and its standings from the
    games this computer kept, with what others on 127.0.0.1 serve beside them."""
    net, names = _own_game()
    with Store(tmp_path / DB_FILE) as store:
        keep(store, net.replicas[1], "Table A", 4_000_000_000.0, journal=net.written(1))
    tally = Tally(0.0)
    assert tally.add("here", encode(record_of(net.replicas[1], "Table A", 4_000_000_000.0,
                                              net.written(1))))
    points = {r["name"]: r["points"] for r in tally.standings().rows()}
    command = [sys.executable, "-m", "p2p_nerts", "event", "--data-dir", str(tmp_path),
               "serve", "127.0.0.1:0", "--name", "Club night", "--interfaces", "127.0.0.1",
               "--listen", "0.5", "--every", "1"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}) as nerts:
        try:
            assert nerts.stdout is not None
            line = nerts.stdout.readline()
            url = re.fullmatch(r"the standings page: (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops "
                               r"it\)\n", line)
            assert url, line

            async def standings() -> dict[str, Any]:
                async with aiohttp.ClientSession() as session, asyncio.timeout(WAIT):
                    while True:
                        async with session.get(url[1] + "standings.json") as answer:
                            got: dict[str, Any] = await answer.json()
                        if set(names) <= {r["name"] for r in got["standings"]}:
                            return got
                        await asyncio.sleep(0.2)

            got = asyncio.run(standings())
            assert got["event"] == "Club night"
            assert {r["name"]: r["points"] for r in got["standings"]
                    if r["name"] in names} == points
            nerts.send_signal(signal.SIGINT)
            assert nerts.wait(WAIT) == 130
            assert nerts.stderr is not None and "Traceback" not in nerts.stderr.read()
        finally:
            nerts.kill()


@pytest.mark.parametrize(("args", "said"), [
    (["serve", "8080", "--every", "0"], "--every must be 1..3600 seconds"),
    (["serve", "localhost:8080"], "give a port, or an IP address and a port"),
    (["serve", "127.0.0.1:65536"], "a port must be 0..65535"),
    (["serve", "8080", "--name", ""], "the event's name must be 1..64 printable characters"),
])
def test_nerts_event_serve_refuses_bad_arguments_in_a_line(
        args: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        raise SystemExit(cli.main(["event", *args]))
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_a_port_taken_is_one_line(capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    async def nobody(*args: object, **kwargs: object) -> Seen:
        return Seen([], frozenset(), [])

    async def holding() -> int:
        async with serving_wall(Feed(snapshot()), "127.0.0.1", 0) as bound:
            return await asyncio.to_thread(cli.main, [
                "event", "serve", f"127.0.0.1:{bound[0][1]}", "--interfaces", "127.0.0.1"])

    monkeypatch.setattr("p2p_nerts.peer.results.look", nobody)
    assert asyncio.run(holding()) == 1
    err = capsys.readouterr().err
    assert re.fullmatch(r"nerts: cannot serve the page on 127\.0\.0\.1:\d+: .+\n", err), err



def test_a_page_that_stops_reading_is_cut_off_and_makes_room(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that never reads holds a stream only until a write to it has waited
    ``_WRITE_TIMEOUT`` (shortened here): then its place is free for another page."""
    monkeypatch.setattr("p2p_nerts.peer.wall._WRITE_TIMEOUT", 0.5)

    def big(n: int) -> dict[str, Any]:
        return snapshot(standings=[
            {"place": i + 1, "name": f"{i:04d}" + "x" * 60, "fp": f"{i:016x}", "games": n,
             "wins": 0, "points": n, "tiebreak": 0} for i in range(1000)])

    async def run() -> None:
        loop = asyncio.get_running_loop()
        feed = Feed(snapshot())
        async with serving_wall(feed, "127.0.0.1", 0, max_clients=1) as bound, \
                aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{bound[0][1]}/events"
            with socket.socket() as stalled:
                stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                stalled.setblocking(False)
                await loop.sock_connect(stalled, ("127.0.0.1", bound[0][1]))
                await loop.sock_sendall(stalled, b"GET /events HTTP/1.1\r\nHost: wall\r\n\r\n")

                async def status() -> int:
                    async with session.get(url) as answer:
                        return answer.status

                async with asyncio.timeout(WAIT):
                    while await status() != 503:  # the stalled reader holds the one place
                        await asyncio.sleep(0.05)
                    for n in itertools.count(1):  # snapshots pile up unread...
                        feed.set(big(n))
                        await asyncio.sleep(0.05)
                        if await status() == 200:  # ...until it is cut off
                            break

    asyncio.run(run())
