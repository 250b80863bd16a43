"""``nerts event serve --event``: the projector's page follows a running event over
127.0.0.1, as the page's own machine checks it (registrations, then a seating)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from p2p_nerts import cli
from p2p_nerts.peer.event_host import EventSettings, Organiser
from p2p_nerts.peer.event_seat import EventLink
from p2p_nerts.peer.wall import Feed, shaped
from p2p_nerts.protocol.identity import Identity

from ..event.eventkit import event, play_all, seat
from .test_wall import ROOT, WAIT

pytestmark = pytest.mark.timeout(180)


async def snapshots(url: str) -> AsyncIterator[dict[str, Any]]:
    """Every snapshot the page's event stream sends, as they come."""
    async with aiohttp.ClientSession() as session, session.get(url + "events") as stream:
        while line := await stream.content.readline():
            if line.startswith(b"data: "):
                shot: dict[str, Any] = json.loads(line[len(b"data: "):])
                yield shot


async def first(url: str, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first snapshot the stream sends for which ``wanted`` is true."""
    async with asyncio.timeout(WAIT):
        async for shot in snapshots(url):
            if wanted(shot):
                return shot
    raise AssertionError("the event stream ended")


def test_the_page_follows_an_event_from_its_registrations_to_its_seating(
        tmp_path: Path) -> None:
    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings("Loop cup", games=2, table_size=3),
                                   resume=False)
        await organiser.start(None, bind="127.0.0.1")
        links = [EventLink(Identity.generate(name), ("127.0.0.1", organiser.port),
                           register=True) for name in ("Ana", "Ben", "Cy")]
        following = [asyncio.ensure_future(link.run()) for link in links]
        nerts = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "p2p_nerts", "event", "--data-dir", str(tmp_path / "wall"),
            "serve", "127.0.0.1:0", "--event", f"127.0.0.1:{organiser.port}",
            "--interfaces", "127.0.0.1", stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            assert nerts.stdout is not None and nerts.stderr is not None
            async with asyncio.timeout(WAIT):
                line = (await nerts.stdout.readline()).decode()
            said = re.fullmatch(r"the standings page: (http://127\.0\.0\.1:\d+/) \(Ctrl-C "
                                r"stops it\)\n", line)
            assert said, line
            url = said[1]
            shot = await first(url, lambda s: len(s["standings"]) == 3)
            assert shot["event"] == {"name": "Loop cup", "game": 0, "games": 2,
                                     "state": "registering"}
            assert {r["name"] for r in shot["standings"]} == {"Ana", "Ben", "Cy"}
            assert shot["next"] is None
            async with aiohttp.ClientSession() as session, \
                    session.get(url + "standings.json") as answer:
                assert (await answer.json())["event"] == "Loop cup"

            seated = organiser.start_game()
            shot = await first(url, lambda s: s["next"] is not None)
            assert shot["event"]["game"] == 1 and shot["event"]["state"] == "seating"
            names = {k: r.name for k, r in organiser.book.registrations.items()}
            assert [(t["table"], [p["name"] for p in t["players"]])
                    for t in shot["next"]["tables"]] == [
                (t.letter, [names[k] for k in t.seats]) for t in seated.tables]
            assert [t["state"] for t in shot["tables"]] == ["waiting"] * len(seated.tables)

            nerts.send_signal(signal.SIGINT)
            async with asyncio.timeout(WAIT):
                assert await nerts.wait() == 130
            assert b"Traceback" not in await nerts.stderr.read()
        finally:
            with contextlib.suppress(ProcessLookupError):
                nerts.kill()
            await nerts.wait()
            for link in links:
                link.close()
            await asyncio.gather(*following, return_exceptions=True)
            await organiser.close()

    asyncio.run(scenario())


def test_an_event_not_found_is_one_line(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["event", "--data-dir", str(tmp_path), "serve", "127.0.0.1:0",
                     "--event", "No such cup", "--interfaces", "127.0.0.1",
                     "--listen", "0.5"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("nerts: ") and err.count("\n") == 1 and "No such cup" in err, err


def test_the_wall_shows_all_an_event_book_says_and_keeps_its_shape() -> None:
    """The event's snapshot (its book's ``wall()``, the contract) passes the wall's
    checks whole, at every stage: nothing of it is dropped or refused."""
    book = event(7, games=2)
    stages = [book.wall()]
    seat(book)
    stages.append(book.wall())
    play_all(book)
    stages.append(book.wall())
    seat(book)
    stages.append(book.wall())
    assert [s["event"]["state"] for s in stages] == [
        "registering", "seating", "playing", "seating"]
    feed = Feed(stages[0])
    for stage in stages:
        assert shaped(stage) == stage
        feed.set(stage)
        assert json.loads(feed.body) == stage
        assert json.loads(feed.standings_body) == {"event": "Friday Nerts",
                                                   "standings": stage["standings"]}
