"""Event standings across separate network stacks (the namespace lab of test_net_netns).

Two tables (a host and a bot each, in namespaces of their own) play short
games over real multicast while a ``nerts event --watch`` view stays open in
another. Once the games end, a player of each table serves its store as its
lobby would (``peer.results.serving_results``), and a stranger serves a tampered copy
of one game's record: the open view ends up counting both games with the
players' own totals, and lists the tampered copy as not counted.
Needs root and ``ip netns`` (skipped with the reason otherwise).
"""

from __future__ import annotations

import asyncio
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2p_nerts.records.record import GameRecord, decode, encode
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.testing.peers import PeerProcess, nerts_command, wait_all

from .test_net_netns import EVERY_INTERFACE, FAST, Lab, NamespaceProcess, running_lab

pytestmark = pytest.mark.timeout(300)


#: A player's results served as their lobby serves them, until killed.
SERVE = """
import asyncio, sys
from pathlib import Path
from p2p_nerts.peer.results import serving_results
from p2p_nerts.net.interfaces import interfaces_setting
from p2p_nerts.protocol.identity import IDENTITY_FILE, load_or_create
from p2p_nerts.store import DB_FILE, Store

home = Path(sys.argv[1])
with Store(home / DB_FILE) as store:
    me = load_or_create(home / IDENTITY_FILE)
    asyncio.run(serving_results(store, me, interfaces_setting(None), asyncio.sleep(3600)))
"""

#: A stranger serving one record file (a tampered one) as if it were theirs.
FORGE = """
import asyncio, sys
from pathlib import Path
from p2p_nerts.net.interfaces import interfaces_setting
from p2p_nerts.peer.results import ResultsServer

data = Path(sys.argv[1]).read_bytes()

async def main():
    server = ResultsServer(lambda since: [data], "e5" * 8)
    await server.start(interfaces_setting(None))
    await asyncio.sleep(3600)

asyncio.run(main())
"""


@pytest.fixture
def lab6() -> Iterator[Lab]:
    yield from running_lab(6)


def _tampered(record: GameRecord) -> GameRecord:
    """The record with one byte of its last entry's signed body changed."""
    entries = list(record.entries)
    raw = bytearray(entries[-1])
    raw[-1] ^= 1  # the body comes last in an entry: its signature no longer holds
    entries[-1] = bytes(raw)
    return GameRecord(record.table_id, record.host, record.table, record.saved_at,
                      tuple(entries))


@pytest.mark.slow
def test_an_open_event_view_counts_two_tables_and_refuses_a_forgery(
        lab6: Lab, tmp_path: Path) -> None:
    tag = secrets.token_hex(3)
    names = {f"A-{tag}": ("a0", "a1"), f"B-{tag}": ("b0", "b1")}

    async def scenario() -> None:
        view = NamespaceProcess(lab6.peers[5], nerts_command(
            "event", "--watch", "1", "--json", "--listen", "3", "--hours", "1",
            "--data-dir", str(tmp_path / "view")), tmp_path / "view.jsonl")
        peers: list[PeerProcess] = []
        for t, (table, (host, bot)) in enumerate(names.items()):
            peers += [
                PeerProcess(host, tmp_path / host,
                            ["host", "--table-name", table, "--auto-start", "2",
                             "--auto-next", "0.3", "--target", "15", "--countdown", "0",
                             *FAST], prefix=("ip", "netns", "exec", lab6.peers[2 * t]),
                            env=EVERY_INTERFACE),
                PeerProcess(bot, tmp_path / bot, ["bot", table, "--find-timeout", "20", *FAST],
                            prefix=("ip", "netns", "exec", lab6.peers[2 * t + 1]),
                            env=EVERY_INTERFACE)]
        servers: list[NamespaceProcess] = []
        try:
            await view.start()
            for seat, table in zip(peers[::2], names, strict=True):
                await seat.start()
                await seat.wait_for_line(f"table '{table}' open", 30)
            for seat in peers[1::2]:
                await seat.start()
            await wait_all(peers, 180)
            # What each table's players agreed on, from their summaries.
            finals = {p.name: p.lines()[-1] for p in peers}
            for host, bot in names.values():
                assert finals[host]["winner"] and finals[host]["totals"] == finals[bot]["totals"]
                assert finals[host]["winner"] == finals[bot]["winner"]
            with Store(tmp_path / "a0" / DB_FILE) as store:
                [record] = store.records_since(0.0)
            bot_home = tmp_path / "b1" / "bots" / "1"  # where nerts bot keeps its games
            forged = tmp_path / "forged.nerts"
            forged.write_bytes(encode(_tampered(decode(record))))
            servers = [
                NamespaceProcess(lab6.peers[0], [sys.executable, "-c", SERVE, str(tmp_path / "a0")],
                                 tmp_path / "serve-a0.txt"),
                NamespaceProcess(lab6.peers[3], [sys.executable, "-c", SERVE, str(bot_home)],
                                 tmp_path / "serve-b1.txt"),
                NamespaceProcess(lab6.peers[4], [sys.executable, "-c", FORGE, str(forged)],
                                 tmp_path / "forger.txt")]
            for server in servers:
                await server.start()
            try:
                async with asyncio.timeout(90):
                    while not (shown := view.lines()) or len(shown[-1]["games"]) < 2 \
                            or not shown[-1]["refused"]:
                        await asyncio.sleep(0.2)
            except TimeoutError:
                raise AssertionError(f"the open view did not count both games and the "
                                     f"forgery:\n{view.out.read_text()}") from None
            last = view.lines()[-1]
            # Each table named by its host, as the signed entries name it.
            assert sorted(g["host"]["name"] for g in last["games"]) == ["a0", "b0"]
            [refused] = last["refused"]
            assert refused["from"].startswith("10.99.0.14:"), refused  # the stranger
            rows = {r["name"]: r for r in last["standings"]}
            assert sorted(rows) == ["a0", "a1", "b0", "b1"]
            for host, bot in names.values():
                final = finals[host]
                for name in (host, bot):
                    assert rows[name]["games"] == 1
                    assert rows[name]["points"] == final["totals"][name]
                    assert rows[name]["wins"] == (final["winner"] == name)
        finally:
            for peer in peers:
                peer.kill()
            for script in (view, *servers):
                await script.stop()

    asyncio.run(scenario())
