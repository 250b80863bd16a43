"""The table code on every connection: who gets in, what a listener sees, guessing limits.

In-process NetSessions over 127.0.0.1 for the contracts (right, wrong and
missing codes, the per-address pause, the channel binding), a recording relay
for what a passive listener on the wire sees, and real ``nerts`` processes for
the command line: a whole game with a code, and the one-line errors and exit
status of a joiner with a wrong code or none.
"""

from __future__ import annotations

import asyncio
import io
import random
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.net.discovery import TableBrowser
from p2p_nerts.net.guard import CodeGuard
from p2p_nerts.net.handshake import Handshake, HandshakeError
from p2p_nerts.net.link import CodeNeeded, Refused, WrongCode
from p2p_nerts.peer.headless import paced, run_headless
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol.envelope import open_entry
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import MsgType
from p2p_nerts.testing.peers import Faults, PeerProcess, PeerTable, Relay, shared_lines

from ..netkit import until

pytestmark = pytest.mark.timeout(90)

LOCAL = Endpoint(bind="127.0.0.1")
CODE = "Pink Otter"
FAST = ["--headless", "--bot", "hard", "--pace", "0.05", "--bind", "127.0.0.1"]


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


def config(code: str | None, **changes: Any) -> TableConfig:
    base: dict[str, Any] = {"variants": Variants(target=15), "countdown": 0.0,
                            "drop_after": 3.0, "auto_next": 0.2, "code": code}
    return TableConfig(**(base | changes))


async def host_table(code: str | None, name: str = "Host", **changes: Any) -> NetSession:
    return await NetSession.host(Identity.generate(name), config(code, **changes), LOCAL,
                                 table_name="Quiet table", interfaces=None)


async def join(port: int, code: str | None, name: str = "Bo") -> NetSession:
    return await NetSession.join(Identity.generate(name), ("127.0.0.1", port), config(code),
                                 LOCAL)


# ------------------------------------------------------------------ pure parts
def test_the_guard_pauses_an_address_after_five_failures() -> None:
    guard = CodeGuard(tries=5, pause=30.0)
    assert [guard.failed("10.0.0.9", now=1.0) for _ in range(5)] == [False] * 4 + [True]
    assert guard.refused_for("10.0.0.9", 2.0) == pytest.approx(29.0)
    assert guard.refused_for("10.0.0.8", 2.0) == 0  # others are not affected
    assert guard.refused_for("10.0.0.9", 31.0) == 0  # the pause ends
    guard.failed("10.0.0.8", now=3.0)
    guard.succeeded("10.0.0.8")  # a right code wipes the slate
    assert [guard.failed("10.0.0.8", now=4.0) for _ in range(5)][-1]


def test_the_guard_remembers_a_bounded_number_of_addresses() -> None:
    guard = CodeGuard(tries=2, pause=30.0)
    for i in range(5000):
        guard.failed(f"10.{i >> 16}.{(i >> 8) & 255}.{i & 255}", now=0.0)
    assert len(guard._records) <= 1024


def test_the_handshake_signs_the_channel_binding() -> None:
    """Two channels with different bindings (a relay in the middle) cannot splice."""
    table = bytes(16)
    a = Handshake(Ed25519PrivateKey.generate(), table, b"A" * 32, binding=b"x" * 32)
    b = Handshake(Ed25519PrivateKey.generate(), table, b"B" * 32, binding=b"y" * 32)
    hello_a, hello_b = a.start(), b.start()
    auth_a, auth_b = a.receive(hello_b), b.receive(hello_a)
    assert auth_a is not None and auth_b is not None
    with pytest.raises(HandshakeError, match="does not verify"):
        b.receive(auth_a)


# ------------------------------------------------------------------ in-process
def test_only_peers_with_the_code_get_in() -> None:
    async def scenario() -> None:
        host = await host_table(CODE, auto_start=None)
        runner = asyncio.create_task(host.run())
        with pytest.raises(CodeNeeded, match=r"^table Quiet table needs a code: use --code$"):
            await join(host.port, None)
        with pytest.raises(WrongCode, match=r"^wrong table code for table Quiet table$"):
            await join(host.port, "pink ottter")
        # Case and spacing do not matter; guests link to each other through the code too.
        guests = [await join(host.port, "  pink   OTTER", name) for name in ("Bo", "Cy")]
        runners = [asyncio.create_task(g.run()) for g in guests]
        sessions = [host, *guests]
        keys = {s.replica.me.public_key for s in sessions}
        await until(lambda: len(host.replica.view().seats) == 3 and all(
            s.connected == keys - {s.replica.me.public_key} for s in sessions))
        assert all(link.sealed for s in sessions for link in s._mesh.links.values())
        for s in sessions:
            s.close()
        await asyncio.gather(runner, *runners)

        plain = await host_table(None, auto_start=None)
        runner = asyncio.create_task(plain.run())
        with pytest.raises(Refused, match=r"^table Quiet table has no code: join without --code$"):
            await join(plain.port, CODE)
        plain.close()
        await runner

    run(scenario)


def test_after_five_wrong_codes_an_address_waits(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        host = await host_table(CODE, auto_start=None)
        runner = asyncio.create_task(host.run())
        for _ in range(5):
            with pytest.raises(WrongCode):
                await join(host.port, "1234")
        # Even the right code is refused from that address for a while, with a clear line.
        with pytest.raises(Refused, match="after 5 wrong ones waits 30 s; try again in 30 s"):
            await join(host.port, CODE)
        host.close()
        await runner

    with caplog.at_level("INFO"):
        run(scenario)
    assert "wrong table code for table Quiet table from 127.0.0.1: refusing that address" \
        in caplog.text


@pytest.mark.parametrize("code", [CODE, None], ids=["code", "control"])
def test_a_passive_listener_sees_no_card_data_at_a_table_with_a_code(code: str | None) -> None:
    """Every byte between two peers goes through a recording relay for a whole game.

    With a code, none of the identifying or game bytes show; the control game
    without a code shows all of them, so the test can fail.
    """
    async def scenario() -> None:
        host = await host_table(code, name="Alicia", auto_start=2, variants=Variants(target=1))
        relay = Relay(("127.0.0.1", host.port), Faults(), random.Random(1), record=True)
        await relay.start()
        guest = await join(relay.port, code, "Bertrand")
        sessions = [host, guest]
        games = [run_headless(s, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(i)),
                              summary=io.StringIO(), linger=0.3)
                 for i, s in enumerate(sessions)]
        assert await asyncio.wait_for(asyncio.gather(*games), 60) == [0, 0]
        await relay.close()
        captured = bytes(relay.captured or b"")
        keys = [s.replica.me.public_key for s in sessions]
        plays = [msgpack.packb(entry.payload)
                 for me, other in zip(sessions, reversed(keys), strict=True)
                 for entry in map(open_entry, me.replica.authors[other].entries.values())
                 if entry.type == MsgType.PLAY]
        assert plays and len(captured) > 10_000
        shown = [b"NZ" + k in captured for k in keys]
        shown += [name in captured for name in (b"Alicia", b"Bertrand")]
        shown += [play in captured for play in plays]
        assert shown == [code is None] * len(shown)

    run(scenario)


# ------------------------------------------------------------------ processes
def test_a_game_with_a_code_between_processes_and_joiners_without_it(tmp_path: Path) -> None:
    """mDNS says a code is needed; a wrong or missing code is one line and exit 1;
    the code from ``--code`` or ``NERTS_CODE`` plays a whole game."""
    async def scenario() -> None:
        table = PeerTable(tmp_path, 3, common=FAST, seed=3,
                          host=["--code", CODE, "--auto-next", "0.3", "--target", "15",
                                "--countdown", "0", "--drop-after", "2"])
        try:
            await table.start_host()
            async with TableBrowser(["127.0.0.1"]) as browser:
                ads = await browser.wait_for(
                    lambda ads: any(a.name == table.name for a in ads), 10)
                assert next(a for a in ads if a.name == table.name).needs_code
            for label, extra, line in (
                    ("wrong", ["--code", "pink ottter"],
                     f"nerts: wrong table code for table {table.name}"),
                    ("none", [], f"nerts: table {table.name} needs a code: use --code")):
                stranger = PeerProcess(label, tmp_path / label,
                                       ["bot", table.name, *FAST, *extra],
                                       env={"NERTS_INTERFACES": "127.0.0.1"})
                await stranger.start()
                assert await stranger.wait(20) == 1
                assert line in stranger.log.read_text().splitlines(), stranger.tail()
            table.own[1] = ["--code", CODE]
            table.peers[2].env["NERTS_CODE"] = CODE.upper()
            await table.start_guests()
            summaries = await table.finish(60)
            assert summaries[0][-1]["game_over"]
            assert all(line.get("agreed", True) for line in summaries[0])
            for other in summaries[1:]:
                assert shared_lines(other) == shared_lines(summaries[0])
        finally:
            await table.close()

    run(scenario)
