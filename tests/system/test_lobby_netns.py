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

from .test_net_netns import EVERY_INTERFACE, Lab, NamespaceProcess, running_lab

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
