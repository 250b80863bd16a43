"""An open lobby across separate network stacks (the namespace lab of test_net_netns).

A host, two players and a lobby each in a namespace of their own, over real
multicast: the lobby stays open while the players join, one crashes (SIGKILL)
and the other leaves, and its seat count follows each within ``FOLLOW`` s.
Needs root and ``ip netns`` (skipped with the reason otherwise).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2p_nerts.testing.peers import PeerProcess

from .test_net_netns import EVERY_INTERFACE, Lab, NamespaceProcess, running_lab, sh

pytestmark = pytest.mark.timeout(120)

FOLLOW = 2.0

#: A lobby without a screen: one JSON line per change of the named table.
LOBBY = """
import asyncio, json, sys
from p2p_nerts.net.discovery import TableBrowser
from p2p_nerts.net.interfaces import interfaces_setting

def show(event):
    if event.table.name == sys.argv[1]:
        print(json.dumps({"change": event.change.value, "seats": event.table.seats_taken,
                          "state": event.table.state, "host": event.table.host}), flush=True)

async def main():
    async with TableBrowser(interfaces_setting(None), on_event=show):
        await asyncio.sleep(3600)

asyncio.run(main())
"""


@pytest.fixture
def lab4() -> Iterator[Lab]:
    yield from running_lab(4)


class LobbyProcess(NamespaceProcess):
    """The lobby script in a namespace; its lines in a file."""

    def __init__(self, ns: str, name: str, out: Path) -> None:
        super().__init__(ns, [sys.executable, "-c", LOBBY, name], out)

    def seats(self) -> int | None:
        lines = self.lines()
        if not lines or lines[-1]["change"] == "removed":
            return None
        seats = lines[-1]["seats"]
        assert isinstance(seats, int)
        return seats

    async def shows(self, seats: int, what: str, timeout: float = FOLLOW) -> None:
        try:
            async with asyncio.timeout(timeout):
                while self.seats() != seats:
                    await asyncio.sleep(0.05)
        except TimeoutError:
            raise AssertionError(f"the lobby did not follow {what}: it shows {self.seats()} "
                                 f"seats\n{self.out.read_text()}") from None


def test_an_open_lobby_follows_joins_a_crash_and_a_leave(lab4: Lab, tmp_path: Path) -> None:
    name = f"lab-{secrets.token_hex(3)}"

    async def scenario() -> None:
        lobby = LobbyProcess(lab4.peers[3], name, tmp_path / "lobby.jsonl")
        host = PeerProcess("Tess", tmp_path / "host",
                           ["host", "--table-name", name, "--seats", "3", "--headless"],
                           prefix=("ip", "netns", "exec", lab4.peers[0]), env=EVERY_INTERFACE)
        players = [PeerProcess(who, tmp_path / who, ["join", name, "--headless",
                                                     "--find-timeout", "20"],
                               prefix=("ip", "netns", "exec", ns), env=EVERY_INTERFACE)
                   for who, ns in (("Ana", lab4.peers[1]), ("Bo", lab4.peers[2]))]
        try:
            await lobby.start()
            await host.start()
            await host.wait_for_line(f"table '{name}' open", 30)
            await lobby.shows(1, "the table opening", timeout=20)
            for seated, player in enumerate(players, start=2):
                await player.start()
                await player.wait_for_line("joined table", 30)
                await lobby.shows(seated, f"{player.name} sitting down")
            players[1].kill()  # a crash: its link goes, no goodbye
            await lobby.shows(2, "Bo's crash")
            players[0].terminate()  # leaves the table, saying so
            await lobby.shows(1, "Ana leaving")
            last = json.loads(lobby.out.read_text().splitlines()[-1])
            assert (last["state"], last["host"]) == ("lobby", "Tess")
        finally:
            for peer in (host, *players):
                peer.kill()
            await lobby.stop()

    asyncio.run(scenario())


#: A lobby without a screen: one JSON line per change, with the named table's rows.
ROWS = """
import asyncio, json, sys, time
from p2p_nerts.net.discovery import TableBrowser
from p2p_nerts.net.interfaces import interfaces_setting

browser = None

def show(event):
    if event.table.name == sys.argv[1]:
        rows = [t for t in browser.tables if t.name == sys.argv[1]]
        print(json.dumps({"change": event.change.value, "rows": len(rows),
                          "at": time.time()}), flush=True)

async def main():
    global browser
    browser = TableBrowser(interfaces_setting(None), on_event=show)
    async with browser:
        await asyncio.sleep(3600)

asyncio.run(main())
"""

GONE = 3.0
"""Seconds an open lobby may show a table that is gone (the issue's bound)."""


class RowsProcess(NamespaceProcess):
    """The rows script in a namespace."""

    def __init__(self, ns: str, name: str, out: Path) -> None:
        super().__init__(ns, [sys.executable, "-c", ROWS, name], out)

    def rows(self) -> int:
        lines = self.lines()
        return 0 if not lines else int(lines[-1]["rows"])

    async def shows(self, rows: int, what: str, timeout: float) -> float:
        """Seconds until the lobby shows ``rows`` rows; fails after ``timeout``."""
        start = asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(timeout):
                while self.rows() != rows:
                    await asyncio.sleep(0.05)
        except TimeoutError:
            raise AssertionError(f"the lobby did not follow {what}: {self.rows()} rows\n"
                                 f"{self.out.read_text()}") from None
        return asyncio.get_running_loop().time() - start


def test_an_open_lobby_loses_a_killed_or_cut_off_host_and_shows_a_resumed_one_once(
        lab4: Lab, tmp_path: Path) -> None:
    """Across network stacks: a host killed mid-game (no goodbye) leaves the open
    lobby within ``GONE`` s; resumed on its old port it is one row; its link cut
    (nothing answers, not even a refusal), it leaves within ``GONE`` s again."""
    name = f"lab-{secrets.token_hex(3)}"

    async def scenario() -> None:
        lobby = RowsProcess(lab4.peers[3], name, tmp_path / "lobby.jsonl")
        hosting = ["host", "--table-name", name, "--headless", "--seats", "3", "--port",
                   "40999", "--auto-start", "2", "--bot", "medium", "--pace", "2",
                   "--target", "1000"]
        netns = ("ip", "netns", "exec", lab4.peers[0])
        host = PeerProcess("Tess", tmp_path / "host", hosting, prefix=netns,
                           env=EVERY_INTERFACE)
        bot = PeerProcess("Bo", tmp_path / "bo", ["bot", name, "--pace", "2",
                                                  "--find-timeout", "20"],
                          prefix=("ip", "netns", "exec", lab4.peers[1]), env=EVERY_INTERFACE)
        resumed = PeerProcess("Tess", tmp_path / "host", [*hosting, "--resume"],
                              prefix=netns, env=EVERY_INTERFACE)
        try:
            await lobby.start()
            await host.start()
            await host.wait_for_line(f"table '{name}' open", 30)
            await lobby.shows(1, "the table opening", 20)
            await bot.start()
            await host.wait_for_line("round 1", 30)
            host.kill()
            await lobby.shows(0, "the host killed", GONE)
            await resumed.start()
            await resumed.wait_for_line("back at table", 30)
            await lobby.shows(1, "the host resumed", 20)
            await asyncio.sleep(GONE)
            assert lobby.rows() == 1, lobby.out.read_text()
            sh("ip", "-n", lab4.bridge, "link", "set", "veth0", "down")  # the host cut off
            await lobby.shows(0, "the host cut off", GONE)
        finally:
            for peer in (host, bot, resumed):
                peer.kill()
            await lobby.stop()

    asyncio.run(scenario())


def test_a_player_whose_machine_goes_silent_frees_its_seat_in_an_open_lobby(
        lab4: Lab, tmp_path: Path) -> None:
    """Before the first deal, a bot's machine goes silent (its link to the segment cut:
    its TCP link is never closed): its seat is free in the open lobby within
    ``--drop-after`` + 2 s."""
    name = f"lab-{secrets.token_hex(3)}"
    drop_after = 3.0

    async def scenario() -> None:
        lobby = LobbyProcess(lab4.peers[3], name, tmp_path / "lobby.jsonl")
        host = PeerProcess("Tess", tmp_path / "host",
                           ["host", "--table-name", name, "--seats", "4", "--headless",
                            "--drop-after", str(drop_after)],
                           prefix=("ip", "netns", "exec", lab4.peers[0]), env=EVERY_INTERFACE)
        bo = PeerProcess("Bo", tmp_path / "bo", ["bot", name, "--find-timeout", "20"],
                         prefix=("ip", "netns", "exec", lab4.peers[1]), env=EVERY_INTERFACE)
        try:
            await lobby.start()
            await host.start()
            await host.wait_for_line(f"table '{name}' open", 30)
            await lobby.shows(1, "the table opening", timeout=20)
            await bo.start()
            await bo.wait_for_line("joined table", 30)
            await lobby.shows(2, "Bo sitting down")
            sh("ip", "-n", lab4.bridge, "link", "set", "veth1", "down")  # Bo goes silent
            await lobby.shows(1, "Bo gone silent", timeout=drop_after + FOLLOW)
        finally:
            for peer in (host, bo):
                peer.kill()
            await lobby.stop()

    asyncio.run(scenario())
