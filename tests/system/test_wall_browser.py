"""The projector's page in a real browser: headless Chromium, driven over the
DevTools protocol (aiohttp's websocket client), against ``peer.wall`` on 127.0.0.1.

The page renders the standings the server holds, then follows a change without a
reload; a typical evening fits a 1920×1080 screen unscrolled, a phone gets one
column, and a player's name is shown as the text it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import os
import shutil
import string
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from p2p_nerts.peer.wall import Feed, serving_wall

from .test_wall import snapshot

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                       reason="Chromium is not installed (apt-get install chromium): the "
                              "projector's page is tested in a real browser"),
]
WAIT = 60.0  # seconds any one condition may take: a browser starting on a busy machine
#: Headless, and nothing but loopback: no updates, sync, metrics or QUIC probes.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-domain-reliability", "--disable-dev-shm-usage",
         "--no-default-browser-check", "--mute-audio", "--window-size=1920,1080",
         "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0"]


class DevTools:
    """One page of a browser, over the DevTools protocol: commands and their answers
    (the protocol's events are not needed here, and are let go)."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self._socket = socket
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reading = asyncio.ensure_future(self._read())
        self.session: str | None = None

    async def _read(self) -> None:
        async for message in self._socket:
            if message.type is not aiohttp.WSMsgType.TEXT:
                break
            answer = json.loads(message.data)
            waiting = self._waiting.pop(answer.get("id", 0), None)
            if waiting is not None and not waiting.done():
                waiting.set_result(answer)
        for waiting in self._waiting.values():
            waiting.set_exception(ConnectionError("the browser closed its DevTools socket"))

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if self.session is not None and not method.startswith("Target."):
            message["sessionId"] = self.session
        self._waiting[number] = asyncio.get_running_loop().create_future()
        await self._socket.send_str(json.dumps(message))
        async with asyncio.timeout(WAIT):
            answer = await self._waiting[number]
        assert "error" not in answer, (method, answer["error"])
        result: dict[str, Any] = answer["result"]
        return result

    async def open(self, url: str) -> None:
        """Open ``url`` in a new page, and speak to that page from now on."""
        target = await self.call("Target.createTarget", url=url)
        attached = await self.call("Target.attachToTarget", targetId=target["targetId"],
                                   flatten=True)
        self.session = attached["sessionId"]

    async def value(self, expression: str) -> Any:
        """What ``expression`` comes to in the page."""
        done = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in done, (expression, done["exceptionDetails"])
        return done["result"].get("value")

    async def words(self, selector: str) -> list[str]:
        """The words the page shows in ``selector``'s element."""
        text = await self.value(f"document.querySelector({json.dumps(selector)}).innerText")
        return str(text).split()

    async def until(self, expression: str) -> None:
        """Wait until ``expression`` is true in the page (bounded by :data:`WAIT`)."""
        async with asyncio.timeout(WAIT):
            while not await self.value(expression):
                await asyncio.sleep(0.1)

    async def close(self) -> None:
        await self._socket.close()
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading


@contextlib.asynccontextmanager
async def chromium(profile: Path) -> AsyncIterator[DevTools]:
    """A headless Chromium of its own profile, on loopback only, as a DevTools page."""
    browser = await asyncio.create_subprocess_exec(
        CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL)
    try:
        active = profile / "DevToolsActivePort"
        async with asyncio.timeout(WAIT):  # the file is written once the port listens
            while len(lines := _lines(active)) < 2:
                assert browser.returncode is None, "Chromium exited at its start"
                await asyncio.sleep(0.1)
        async with aiohttp.ClientSession() as session, session.ws_connect(
                f"ws://127.0.0.1:{int(lines[0])}{lines[1]}", max_msg_size=0) as socket:
            tools = DevTools(socket)
            try:
                yield tools
            finally:
                await tools.close()
    finally:
        if browser.returncode is None:
            browser.terminate()
            try:
                async with asyncio.timeout(WAIT):
                    await browser.wait()
            except TimeoutError:
                browser.kill()
                await browser.wait()


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []


def evening(players: int, per_table: int) -> dict[str, Any]:
    """A typical evening's snapshot: ``players`` ranked, tables of ``per_table``
    playing, and the next game's seating."""
    names = [f"{string.ascii_uppercase[i % 26]}{'abcdefghij'[i // 26]}ster Longname"
             for i in range(players)]
    people = [{"name": n, "fp": f"{i:016x}"} for i, n in enumerate(names)]
    letters = string.ascii_uppercase
    return snapshot(
        event={"name": "Thursday Nerts at the Crown", "game": 3, "games": 5,
               "state": "playing"},
        standings=[{"place": i + 1, **p, "games": 2, "wins": 2 - (i * 3) // players,
                    "points": 120 - 4 * i, "tiebreak": 0} for i, p in enumerate(people)],
        tables=[{"game": 3, "table": letters[t], "state": "playing", "round": 4,
                 "players": [{**p, "score": 40 - 7 * k} for k, p in
                             enumerate(people[t * per_table:(t + 1) * per_table])]}
                for t in range(players // per_table)],
        next={"game": 4, "tables": [{"table": letters[t], "players": people[t::players
                                                                             // per_table]}
                                    for t in range(players // per_table)]},
        missing=[])


def test_the_page_shows_the_standings_and_follows_a_change_without_a_reload(
        tmp_path: Path) -> None:
    async def run() -> None:
        feed = Feed(snapshot())
        async with serving_wall(feed, "127.0.0.1", 0) as bound, \
                chromium(tmp_path / "profile") as page:
            await page.open(f"http://127.0.0.1:{bound[0][1]}/")
            await page.until("document.querySelectorAll('#standings .row:not(.head)')"
                             ".length === 2")
            assert await page.value("document.getElementById('event').textContent") \
                == "Friday Nerts"
            assert await page.value("document.getElementById('progress').textContent") \
                == "Game 2 of 4 · playing"
            rows = await page.value("[...document.querySelectorAll('#standings .row')]"
                                    ".map(r => [...r.children].map(c => c.textContent))")
            assert rows == [["#", "Player", "W", "Pts", "G", "TB"],
                            ["1", "Ana", "1", "31", "1", "2.5"],
                            ["2", "Ben", "0", "12", "1", "0"]]
            assert await page.words("#tables") == [
                "Table", "A", "round", "3", "Ana", "14", "Ben", "-3"]
            assert await page.value("document.getElementById('next-title').textContent") \
                == "Next: game 3"
            assert await page.value("document.getElementById('missing').textContent") \
                == "Cleo"
            await page.until("document.getElementById('link').textContent === 'live'")
            # Marked now, the page would lose this on a reload.
            await page.value("window.stillThisPage = true")

            later = copy.deepcopy(snapshot())
            later["standings"].insert(0, {"place": 1, "name": "Cleo", "fp": "cc33" * 4,
                                          "games": 2, "wins": 2, "points": 55, "tiebreak": 0})
            later["standings"][1]["place"], later["standings"][2]["place"] = 2, 3
            later["tables"][0]["players"][1]["score"] = 27
            later["next"] = None
            later["missing"] = []
            assert feed.set(later)
            await page.until("document.querySelector('#standings .row.lead .name')"
                             ".textContent === 'Cleo'")
            assert await page.value("window.stillThisPage") is True
            assert await page.words("#tables") == [
                "Table", "A", "round", "3", "Ben", "27", "Ana", "14"]
            assert await page.value("document.getElementById('next-box').hidden") is True
            assert await page.value("document.getElementById('missing-box').hidden") is True

    asyncio.run(run())


def test_a_typical_evening_fits_the_projector_and_a_phone_gets_one_column(
        tmp_path: Path) -> None:
    async def run() -> None:
        feed = Feed(evening(24, 4))
        async with serving_wall(feed, "127.0.0.1", 0) as bound, \
                chromium(tmp_path / "profile") as page:
            await page.open(f"http://127.0.0.1:{bound[0][1]}/")
            await page.call("Emulation.setDeviceMetricsOverride", width=1920, height=1080,
                            deviceScaleFactor=1, mobile=False)
            await page.until("document.querySelectorAll('#standings .row:not(.head)')"
                             ".length === 24")
            await page.until("window.innerWidth === 1920 && window.innerHeight === 1080")
            await _fitted(page)
            shown = await page.value(
                "({cols: document.querySelectorAll('#standings .col').length,"
                " row: parseFloat(getComputedStyle(document.querySelector("
                "'#standings .row:not(.head)')).fontSize),"
                " cards: document.querySelectorAll('#tables .card').length})")
            assert shown["cols"] == 2 and shown["cards"] == 6
            # From the back of a room: rows of at least 24 px on a 1080-line screen.
            assert shown["row"] >= 24, shown

            await page.call("Emulation.setDeviceMetricsOverride", width=390, height=844,
                            deviceScaleFactor=3, mobile=True)
            await page.until("window.innerWidth === 390 && "
                             "document.querySelectorAll('#standings .col').length === 1")
            assert await page.value("document.documentElement.scrollWidth") <= 390
            assert await page.value("parseFloat(getComputedStyle(document.querySelector("
                                    "'#standings .row:not(.head)')).fontSize)") >= 16

    asyncio.run(run())


async def _fitted(page: DevTools) -> None:
    """The page fits the screen it is on: nothing below or beside it to scroll to."""
    await page.until("document.documentElement.scrollHeight <= window.innerHeight && "
                     "document.documentElement.scrollWidth <= window.innerWidth")


def test_a_players_name_is_shown_as_text_never_as_markup(tmp_path: Path) -> None:
    async def run() -> None:
        name = '<img src=x onerror="window.hacked=1">'
        hostile = snapshot()
        hostile["standings"][0]["name"] = name
        hostile["tables"][0]["players"][0]["name"] = name
        feed = Feed(hostile)
        async with serving_wall(feed, "127.0.0.1", 0) as bound, \
                chromium(tmp_path / "profile") as page:
            await page.open(f"http://127.0.0.1:{bound[0][1]}/")
            await page.until("document.querySelector('#standings .row.lead .name') !== null")
            assert await page.value("document.querySelector('#standings .row.lead .name')"
                                    ".textContent") == name
            assert await page.value("document.querySelectorAll('img').length") == 0
            assert await page.value("window.hacked === undefined") is True

    asyncio.run(run())
