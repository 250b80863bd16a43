"""A lobby row lives only as long as its table (see ``discovery._browser``).

mDNS alone cannot say a table is gone when its host was killed: no goodbye is
sent, and python-zeroconf keeps a PTR record it heard for at least 1125 s.
The lobby dials each table's port: a host that is gone (its port refuses, or
nothing answers) leaves every open lobby within ``LIVE_FOR + PROBE_EVERY`` s,
a host resumed on its old port shows as one row, and a row shows only while
its table answers. Every test names its tables uniquely and looks only at
them: other runs on this machine may advertise tables too.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from p2p_nerts.net.discovery import TableAd, TableAdvertiser, TableBrowser
from p2p_nerts.net.discovery._browser import LIVE_FOR, PROBE_EVERY
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.testing.peers import PeerProcess

from ..netkit import AnsweringPorts

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("quick_mdns")]

LOOPBACK = ["127.0.0.1"]
GONE_WITHIN = LIVE_FOR + PROBE_EVERY
"""Seconds a gone table's row may outlive it (the browser's bound)."""
SLACK = 1.0
"""Seconds a busy machine may add to that: the event loop's own delays."""


def ad(name: str, port: int, fingerprint: str | None = None) -> TableAd:
    """A table ``name`` at ``port``; its host's fingerprint, unless given, the name's
    own. The names are drawn per test, so two tests under way at once (on other
    workers, on the same loopback) never advertise one table: one host key at one
    address and port, of which a lobby shows only the ad heard last (a test's row
    that never came back, as another's took its place)."""
    if fingerprint is None:
        fingerprint = hashlib.sha256(name.encode()).hexdigest()[:16]
    return TableAd(name=name, fingerprint=fingerprint, protocol_version=1, seats_taken=1,
                   seats_total=4, variant="classic", needs_code=False, port=port, host="Ana")


def rows(name: str) -> Callable[[list[TableAd]], list[TableAd]]:
    return lambda tables: [t for t in tables if t.name == name]


async def gone_within(browser: TableBrowser, name: str, bound: float) -> float:
    """Seconds until ``name``'s row left ``browser``; fails past ``bound``."""
    start = time.monotonic()
    try:
        await browser.wait_for(lambda ts: not rows(name)(ts), bound)
    except TimeoutError:
        raise AssertionError(f"{name}'s row stayed {bound:g} s: {rows(name)(browser.tables)}"
                             ) from None
    return time.monotonic() - start


def test_a_table_whose_port_refuses_leaves_at_the_next_dial() -> None:
    """A killed host's port refuses connections: its row goes with the next dial,
    though its ad (no goodbye sent) is still in every cache."""
    name = f"t-{secrets.token_hex(4)}"

    async def scenario() -> None:
        answering = AnsweringPorts()
        port = answering.new()
        try:
            async with (TableAdvertiser(ad(name, port), LOOPBACK) as advertiser,
                        TableBrowser(LOOPBACK) as browser):
                await browser.wait_for(lambda ts: bool(rows(name)(ts)), 20)
                answering.close()  # the host's process is gone; its ad stays
                await gone_within(browser, name, PROBE_EVERY + SLACK)
                assert advertiser.ad.instance  # still published: only the dial told
        finally:
            answering.close()

    asyncio.run(scenario())


def test_a_silent_table_leaves_after_live_for_and_comes_back_when_it_answers() -> None:
    """A host cut off (nothing answers, not even a refusal) keeps its row for
    ``LIVE_FOR`` s at most; when it answers again, its row is back within the
    wait of the dial under way and the next."""
    name = f"t-{secrets.token_hex(4)}"
    answers = {"now": True}

    async def probe(_ad: TableAd, timeout: float) -> bool | None:
        if answers["now"]:
            return True
        await asyncio.sleep(timeout)  # a dial into a cut network: no answer at all
        return None

    async def scenario() -> None:
        async with (TableAdvertiser(ad(name, 40123), LOOPBACK),
                    TableBrowser(LOOPBACK, probe=probe) as browser):
            await browser.wait_for(lambda ts: bool(rows(name)(ts)), 20)
            answers["now"] = False
            took = await gone_within(browser, name, GONE_WITHIN + SLACK)
            assert took >= LIVE_FOR - PROBE_EVERY  # a dial or two lost is not a table gone
            answers["now"] = True  # back within a dial's wait, and the next dial
            await browser.wait_for(lambda ts: bool(rows(name)(ts)), 2 * LIVE_FOR + SLACK)

    asyncio.run(scenario())


def test_a_table_that_does_not_answer_never_shows() -> None:
    """An ad whose port nobody listens on (a table the cache remembers, or a lie)
    is no row; a namesake that answers is."""
    name = f"t-{secrets.token_hex(4)}"

    async def scenario() -> None:
        answering = AnsweringPorts()
        dead = answering.new()
        answering.close()
        live = AnsweringPorts()
        try:
            async with (TableAdvertiser(ad(name, dead), LOOPBACK),
                        TableAdvertiser(ad(name, live.new(), "fedcba9876543210"), LOOPBACK),
                        TableBrowser(LOOPBACK) as browser):
                await browser.wait_for(lambda ts: bool(rows(name)(ts)), 20)
                await asyncio.sleep(LIVE_FOR)
                assert [t.fingerprint for t in rows(name)(browser.tables)] == [
                    "fedcba9876543210"]
        finally:
            live.close()

    asyncio.run(scenario())


def test_two_ads_of_one_host_at_one_port_are_one_row_the_newer() -> None:
    """A host resumed from its journal listens on its old port under a new instance
    name, while the old ad (no goodbye) is still cached: one row, the new one."""
    name = f"t-{secrets.token_hex(4)}"

    async def scenario() -> None:
        answering = AnsweringPorts()
        port = answering.new()
        try:
            async with TableBrowser(LOOPBACK) as browser:
                old = TableAdvertiser(replace(ad(name, port), seats_taken=4), LOOPBACK)
                await old.start()
                await browser.wait_for(lambda ts: bool(rows(name)(ts)), 20)
                async with TableAdvertiser(ad(name, port), LOOPBACK) as new:
                    await browser.wait_for(
                        lambda ts: [t.instance for t in rows(name)(ts)] == [new.ad.instance],
                        20)
                    await asyncio.sleep(LIVE_FOR)  # dials of the old ad get through too
                    assert [t.instance for t in rows(name)(browser.tables)] == [
                        new.ad.instance]
                await old.close()
        finally:
            answering.close()

    asyncio.run(scenario())


def test_a_lobbys_dial_is_not_in_the_hosts_log(caplog: pytest.LogCaptureFixture) -> None:
    """The host takes a connection closed before it said a word for a lobby's dial:
    an open lobby must not write a line a second into every host's log."""
    name = f"t-{secrets.token_hex(4)}"

    async def scenario() -> None:
        host = await NetSession.host(Identity.generate("Tess"), TableConfig(max_seats=4),
                                     Endpoint("127.0.0.1"), table_name=name,
                                     interfaces=LOOPBACK)
        hosting = asyncio.create_task(host.run())
        try:
            async with TableBrowser(LOOPBACK) as browser:
                await browser.wait_for(lambda ts: bool(rows(name)(ts)), 20)
                await asyncio.sleep(4 * PROBE_EVERY)
        finally:
            host.close()
            await hosting

    with caplog.at_level(logging.INFO, logger="p2p_nerts"):
        asyncio.run(scenario())
    said = [r.getMessage() for r in caplog.records if "connection" in r.getMessage()]
    assert not [line for line in said if "127.0.0.1" in line], said


def test_a_killed_host_leaves_an_open_lobby_and_comes_back_as_one_row(tmp_path: Path) -> None:
    """``nerts host`` killed (SIGKILL: no goodbye) mid-game, then resumed from its
    journal on its old port: the open lobby drops its row, then shows one row."""
    name = f"t-{secrets.token_hex(4)}"

    async def scenario() -> None:
        hosting = ["host", "--table-name", name, "--headless", "--seats", "3",
                   "--auto-start", "2", "--bot", "medium", "--pace", "2", "--target", "1000"]
        host = PeerProcess("Tess", tmp_path / "tess", hosting)
        async with TableBrowser(LOOPBACK) as browser:
            await host.start()
            await host.wait_for_line(f"table '{name}' open", 30)
            row = (await browser.wait_for(lambda ts: bool(rows(name)(ts)), 20))
            port = rows(name)(row)[0].port
            bot = PeerProcess("Bo", tmp_path / "bo", ["bot", f"127.0.0.1:{port}",
                                                        "--pace", "2"])
            await bot.start()
            await browser.wait_for(lambda ts: any(t.state == "playing"
                                                  for t in rows(name)(ts)), 30)
            host.kill()
            await gone_within(browser, name, PROBE_EVERY + SLACK)
            resumed = PeerProcess("Tess", tmp_path / "tess", [*hosting, "--resume"])
            await resumed.start()
            await resumed.wait_for_line("back at table", 30)
            await browser.wait_for(lambda ts: bool(rows(name)(ts)), 20)
            await asyncio.sleep(LIVE_FOR)
            assert len(rows(name)(browser.tables)) == 1, rows(name)(browser.tables)
            for peer in (resumed, bot):
                peer.kill()

    try:
        asyncio.run(scenario())
    finally:
        PeerProcess.kill_all()


def test_a_table_that_does_not_answer_is_dialed_seldom() -> None:
    """An ad is anyone's to send: one whose table never answers is dialed one at a
    time, every ``LIVE_FOR`` s at most, not twice a second by every lobby."""
    name = f"t-{secrets.token_hex(4)}"
    dials: list[float] = []

    async def probe(ad: TableAd, _timeout: float) -> bool | None:
        if ad.name == name:
            dials.append(time.monotonic())
        return False  # refused: nobody listens there

    async def scenario() -> None:
        async with (TableAdvertiser(ad(name, 40123), LOOPBACK),
                    TableBrowser(LOOPBACK, probe=probe) as browser):
            async with asyncio.timeout(20):
                while not dials:
                    await asyncio.sleep(0.05)
            await asyncio.sleep(2 * LIVE_FOR)
            assert not rows(name)(browser.tables)

    asyncio.run(scenario())
    gaps = [later - earlier for earlier, later in itertools.pairwise(dials)]
    assert len(dials) >= 2 and all(gap >= LIVE_FOR - 0.05 for gap in gaps), gaps
