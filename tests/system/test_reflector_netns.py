"""A table found and played across a router, through avahi-daemon's mDNS reflector.

Venues often have several subnets (a wired room and a Wi-Fi). mDNS stays on its
segment, and p2p-nerts carries no relay of its own: the reflector of
avahi-daemon, run on the router, carries the announcements across (the event
guide says how). The lab: two segments (a bridge namespace each, 10.99.1.0/24
and 10.99.2.0/24), a router namespace with a leg in each that forwards between
them, a host on one segment and a bot on the other. Without the reflector the
bot finds no table; with it, it finds the table, joins across the router and
the game ends alike on both. Needs root, ``ip netns`` and avahi-daemon (each
skipped with the reason); always torn down.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from p2p_nerts.testing.peers import PeerProcess, shared_lines, wait_all

from .test_net_netns import EVERY_INTERFACE, FAST, delete_namespaces, running, sh

pytestmark = pytest.mark.timeout(240)

#: The reflector's own configuration: the router's two legs, IPv4, no D-Bus
#: (a namespace has no system bus), nothing published of its own.
AVAHI_CONF = """\
[server]
use-ipv4=yes
use-ipv6=no
allow-interfaces=lega,legb
enable-dbus=no

[wide-area]
enable-wide-area=no

[publish]
disable-publishing=yes

[reflector]
enable-reflector=yes
"""


@dataclass
class RoutedLab:
    """Two segments and a router: ``a`` and ``b`` are the peers' namespaces."""

    tag: str = field(default_factory=lambda: f"{os.getpid() % 100000}{secrets.token_hex(2)}")
    made: list[str] = field(default_factory=list)

    def ns(self, part: str) -> str:
        return f"nzr{self.tag}{part}"

    def build(self) -> None:
        for part in ("sa", "sb", "r", "a", "b"):
            sh("ip", "netns", "add", self.ns(part))
            self.made.append(self.ns(part))
        router = self.ns("r")
        sh("ip", "-n", router, "link", "set", "lo", "up")
        sh("ip", "netns", "exec", router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        for side, subnet in (("a", "10.99.1"), ("b", "10.99.2")):
            seg, peer = self.ns("s" + side), self.ns(side)
            sh("ip", "-n", seg, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0",
               "stp_state", "0")
            sh("ip", "-n", seg, "link", "set", "br0", "up")
            # The peer's eth0 and the router's leg, each a veth into the segment.
            sh("ip", "link", "add", "eth0", "netns", peer, "type", "veth",
               "peer", "name", "vpeer", "netns", seg)
            sh("ip", "link", "add", f"leg{side}", "netns", router, "type", "veth",
               "peer", "name", "vrouter", "netns", seg)
            for end in ("vpeer", "vrouter"):
                sh("ip", "-n", seg, "link", "set", end, "master", "br0", "up")
            sh("ip", "-n", router, "addr", "add", f"{subnet}.1/24", "dev", f"leg{side}")
            sh("ip", "-n", router, "link", "set", f"leg{side}", "multicast", "on", "up")
            sh("ip", "-n", peer, "link", "set", "lo", "up")
            sh("ip", "-n", peer, "addr", "add", f"{subnet}.10/24", "dev", "eth0")
            sh("ip", "-n", peer, "link", "set", "eth0", "multicast", "on", "up")
            sh("ip", "-n", peer, "route", "add", "default", "via", f"{subnet}.1")
            sh("ip", "-n", peer, "route", "add", "224.0.0.0/4", "dev", "eth0")

    def teardown(self) -> None:
        delete_namespaces(self.made)


@pytest.fixture
def lab() -> Iterator[RoutedLab]:
    if shutil.which("avahi-daemon") is None:
        pytest.skip("avahi-daemon is not installed (apt-get install avahi-daemon)")
    yield from running(RoutedLab)


async def reflector(lab: RoutedLab, tmp: Path) -> asyncio.subprocess.Process:
    """avahi-daemon reflecting between the router's legs, up once it has joined both."""
    conf = tmp / "avahi-daemon.conf"
    conf.write_text(AVAHI_CONF)
    log = tmp / "avahi.log"
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            "ip", "netns", "exec", lab.ns("r"), "avahi-daemon", "-f", str(conf),
            "--no-drop-root", "--no-chroot", "--no-rlimits", "--no-proc-title",
            stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out)
    async with asyncio.timeout(30):
        while "enumeration completed" not in log.read_text(errors="replace"):
            if proc.returncode is not None:
                raise AssertionError(f"avahi-daemon stopped:\n{log.read_text()}")
            await asyncio.sleep(0.05)
    return proc


def test_a_table_is_found_and_played_across_a_router_through_avahis_reflector(
        lab: RoutedLab, tmp_path: Path) -> None:
    name = f"lab-{secrets.token_hex(3)}"

    def seat(who: str, ns: str, args: list[str]) -> PeerProcess:
        return PeerProcess(who, tmp_path / who, args, prefix=("ip", "netns", "exec", ns),
                           env=EVERY_INTERFACE)

    async def scenario() -> None:
        host = seat("host", lab.ns("a"),
                    ["host", "--table-name", name, "--auto-start", "2", "--auto-next", "0.3",
                     "--target", "15", "--countdown", "0", *FAST])
        alone = seat("alone", lab.ns("b"), ["bot", name, "--find-timeout", "3", *FAST])
        bot = seat("bot", lab.ns("b"), ["bot", name, "--find-timeout", "10", *FAST])
        avahi: asyncio.subprocess.Process | None = None
        try:
            await host.start()
            await host.wait_for_line(f"table '{name}' open", 30)
            # Without the reflector the other segment hears nothing of the table.
            await alone.start()
            assert await alone.wait(60) != 0
            assert "no table" in alone.tail().lower(), alone.tail()
            avahi = await reflector(lab, tmp_path)
            await bot.start()
            await wait_all([host, bot], 180)
        finally:
            for peer in (host, alone, bot):
                peer.kill()
            if avahi is not None and avahi.returncode is None:
                avahi.terminate()
                await avahi.wait()
        assert "on 10.99.1.10 port" in host.log.read_text()
        final = host.lines()[-1]
        assert final["game_over"] and final["winner"]
        assert shared_lines(bot.lines()) == shared_lines(host.lines())

    asyncio.run(scenario())
