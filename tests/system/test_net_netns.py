"""Games across separate network stacks: a lab of network namespaces, built per test.

One namespace holds a bridge; each peer gets its own namespace with a veth into
it (10.99.0.x/24, multicast route), so mDNS, TCP and the addresses a table
advertises are all real — and nothing leaves the namespaces this test made.
Inside them zeroconf uses every interface, as it does for players. Needs root
and ``ip netns``; the packet-loss case also needs ``nft``. Always torn down.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest

from p2p_nerts.testing.peers import PeerProcess, shared_lines, wait_all

pytestmark = pytest.mark.timeout(240)

FAST = ["--headless", "--bot", "hard", "--pace", "0.05"]
SUBNET = "10.99.0"


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, timeout=20)


def netns_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2 (ip) is not installed"
    probe = f"nzprobe{os.getpid()}"
    try:
        sh("ip", "netns", "add", probe)
    except (subprocess.CalledProcessError, OSError) as exc:
        return f"ip netns is not permitted here: {exc}"
    sh("ip", "netns", "del", probe)
    return None


class Lab:
    """A bridge namespace and ``n`` peer namespaces, named uniquely for this run."""

    def __init__(self, n: int) -> None:
        tag = f"{os.getpid() % 100000}{secrets.token_hex(2)}"
        self.bridge = f"nzb{tag}"
        self.peers = [f"nzp{tag}-{i}" for i in range(n)]
        self.made: list[str] = []

    def build(self) -> None:
        sh("ip", "netns", "add", self.bridge)
        self.made.append(self.bridge)
        sh("ip", "-n", self.bridge, "link", "add", "br0", "type", "bridge",
           "mcast_snooping", "0", "stp_state", "0")
        sh("ip", "-n", self.bridge, "link", "set", "br0", "up")
        for i, ns in enumerate(self.peers):
            sh("ip", "netns", "add", ns)
            self.made.append(ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "link", "add", "eth0", "netns", ns, "type", "veth",
               "peer", "name", f"veth{i}", "netns", self.bridge)
            sh("ip", "-n", self.bridge, "link", "set", f"veth{i}", "master", "br0", "up")
            sh("ip", "-n", ns, "addr", "add", f"{SUBNET}.{10 + i}/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "multicast", "on", "up")
            sh("ip", "-n", ns, "route", "add", "224.0.0.0/4", "dev", "eth0")

    def lose(self, i: int, percent: int) -> None:
        """Drop ``percent``% of the packets in and out of peer ``i``'s eth0."""
        rules = (
            "table inet nzloss {\n"
            "  chain in { type filter hook input priority 0; policy accept;\n"
            f"    iifname \"eth0\" numgen random mod 100 < {percent} drop\n  }}\n"
            "  chain out { type filter hook output priority 0; policy accept;\n"
            f"    oifname \"eth0\" numgen random mod 100 < {percent} drop\n  }}\n"
            "}\n"
        )
        subprocess.run(["ip", "netns", "exec", self.peers[i], "nft", "-f", "-"],
                       input=rules.encode(), check=True, capture_output=True, timeout=20)

    def teardown(self) -> None:
        delete_namespaces(self.made)


def delete_namespaces(made: list[str]) -> None:
    """Delete the namespaces a lab made, the last made first, and forget them."""
    for ns in reversed(made):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)
    made.clear()


class Built(Protocol):
    """A lab of namespaces: made, then torn down whatever happened."""

    def build(self) -> None: ...
    def teardown(self) -> None: ...


L = TypeVar("L", bound=Built)


#: mDNS on every interface of a namespace (its eth0), not only loopback.
EVERY_INTERFACE = {"NERTS_INTERFACES": ""}


def running(make: Callable[[], L]) -> Iterator[L]:
    """A lab for one test (skipped with the reason where none can be made); the
    test's processes are killed and the lab torn down before it goes."""
    reason = netns_unavailable()
    if reason is not None:
        pytest.skip(reason)
    lab = make()
    try:
        lab.build()
        yield lab
    finally:
        PeerProcess.kill_all()
        lab.teardown()


def running_lab(n: int) -> Iterator[Lab]:
    """A lab of ``n`` peer namespaces for one test (see :func:`running`)."""
    yield from running(lambda: Lab(n))


class NamespaceProcess:
    """A process in a namespace (a Python script, or ``nerts``): stdout to ``out``,
    stderr beside it."""

    def __init__(self, ns: str, args: list[str], out: Path) -> None:
        self.ns, self.args, self.out = ns, args, out
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        with self.out.open("wb") as out, self.out.with_suffix(".err").open("wb") as err:
            self.proc = await asyncio.create_subprocess_exec(
                "ip", "netns", "exec", self.ns, *self.args, stdin=asyncio.subprocess.DEVNULL,
                stdout=out, stderr=err, env={**os.environ, **EVERY_INTERFACE})

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in self.out.read_text().splitlines() if x.strip()]


@pytest.fixture
def lab3() -> Iterator[Lab]:
    yield from running_lab(3)


async def play(lab: Lab, tmp: Path) -> list[list[dict[str, object]]]:
    name = f"lab-{secrets.token_hex(3)}"
    peers = [
        PeerProcess(f"n{i}", tmp / f"n{i}",
                    ["host", "--table-name", name, "--auto-start", str(len(lab.peers)),
                     "--auto-next", "0.3", "--target", "15", "--countdown", "0",
                     "--drop-after", "4", *FAST] if i == 0
                    else ["bot", name, "--find-timeout", "10", *FAST],
                    prefix=("ip", "netns", "exec", ns), env=EVERY_INTERFACE)
        for i, ns in enumerate(lab.peers)
    ]
    try:
        await peers[0].start()
        await peers[0].wait_for_line(f"table '{name}' open", 30)
        assert f"on {SUBNET}.10 port" in peers[0].log.read_text()  # the real address, not lo
        for peer in peers[1:]:
            await peer.start()
        await wait_all(peers, 180)
    finally:
        for peer in peers:
            peer.kill()
            if peer.proc is not None:
                await peer.proc.wait()
    return [peer.lines() for peer in peers]


def check(summaries: list[list[dict[str, object]]]) -> None:
    final = summaries[0][-1]
    assert final["game_over"] and final["winner"]
    for other in summaries[1:]:
        assert shared_lines(other) == shared_lines(summaries[0])


def test_a_game_across_namespaces(lab3: Lab, tmp_path: Path) -> None:
    check(asyncio.run(play(lab3, tmp_path)))


def test_a_game_with_packet_loss_on_one_link(lab3: Lab, tmp_path: Path) -> None:
    if shutil.which("nft") is None:
        pytest.skip("nft is not installed (apt-get install nftables)")
    lab3.lose(2, 10)
    check(asyncio.run(play(lab3, tmp_path)))
