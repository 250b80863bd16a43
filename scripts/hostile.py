#!/usr/bin/env python3
"""Attacks on a live table on 127.0.0.1, and what they cost its peers.

A table of three ``nerts`` processes (a host and two bots, fast, with no end
in sight) plays for ``--seconds`` undisturbed, then for ``--seconds`` under
one attack from this process, over real TCP on loopback only:

* throwaway  - authenticated connections with fresh keys, opened and dropped
  as fast as the table lets them (up to ``--count``);
* strangers  - signed entries (large AUDITs) from keys with no seat, as fast as
  a link takes them, up to ``--mib`` MiB (a new key and link whenever one is
  closed);
* flood      - READY and RESEND entries at full speed from keys with no seat;
* guesses    - ``--count`` table-code exchanges at once from one address, at
  a table with a code (how many the host judged).

For each attack it prints, per peer, the growth of its resident memory (VmRSS)
during the attack, its journal's growth in the calm window and in the attacked
one (the game's own records grow it in both), and its CPU use in each;
the rounds completed before and during it (median round time, and the ratio);
and whether every round that every peer wrote has identical summaries. The
figures are printed as measured, against the targets of a careful operator:
RSS < +20 MB, journal +0 bytes from strangers, rounds < 1.2x as long, at most
5 guesses judged per 30 s.

    scripts/hostile.py --attack throwaway --seconds 10
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from p2p_nerts.net.link import Link, LinkError, Refused, WrongCode, connect, open_link
from p2p_nerts.net.wire import NET_VERSION, Info
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Audit, Ready, Resend, seal_message
from p2p_nerts.testing.peers import PeerProcess, PeerTable, shared_lines

ATTACKS = ("throwaway", "strangers", "flood", "guesses")
COMMON = ["--headless", "--bot", "hard", "--pace", "0.05", "--bind", "127.0.0.1"]
HOST = ["--auto-next", "0.3", "--target", "10000", "--countdown", "0", "--drop-after", "3"]
CODE = "pink otter"
TICKS = os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def journal_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in home.rglob("*.log") if p.parent.name.endswith(
        ".journal"))


class Watch:
    """When the host wrote each round's summary line (a round just ended)."""

    def __init__(self, host: PeerProcess) -> None:
        self.host = host
        self.ends: list[float] = []
        self._seen = 0

    def poll(self) -> None:
        lines = len(self.host.summary.read_text().splitlines()) if self.host.summary.exists() \
            else 0
        for _ in range(lines - self._seen):
            self.ends.append(time.monotonic())
        self._seen = lines

    def rounds(self, start: float, end: float) -> list[float]:
        """Durations of the rounds that ended within [start, end] (from the end before)."""
        return [b - a for a, b in zip(self.ends, self.ends[1:], strict=False)
                if start <= b <= end]


class Attacker:
    def __init__(self, port: int, table_id: bytes | None, deadline: float) -> None:
        self.port = port
        self.table_id = table_id
        self.deadline = deadline
        self.done = 0  # connections opened, entries sent, guesses judged...
        self.other = 0  # connections refused, dropped...

    def live(self) -> bool:
        return time.monotonic() < self.deadline

    async def link(self, who: Identity, code: str | None = None) -> Link:
        return await open_link(await connect("127.0.0.1", self.port), who,
                               Info(NET_VERSION, None, who.name, 0), dialer=True, code=code)

    async def throwaway(self, count: int) -> None:
        async def one() -> None:
            while self.live() and self.done + self.other < count:
                try:
                    link = await self.link(Identity.generate("throwaway"))
                except (LinkError, OSError):
                    self.other += 1
                    continue
                self.done += 1
                link.close("thrown away")
        await asyncio.gather(*(one() for _ in range(8)))

    async def strangers(self, mib: int) -> None:
        limit = mib << 20
        sent = 0
        audit = Audit(bytes(32), tuple((1, i, i, i) for i in range(4000)))  # ~50 KB
        while self.live() and sent < limit:
            who = Identity.generate("stranger")
            try:
                link = await self.link(who)
            except (LinkError, OSError):
                self.other += 1
                await asyncio.sleep(0.05)
                continue
            # Signed once, sent over and over: a key with no seat is refused whatever
            # the number, and signing 50 KB entries would take this process's CPU.
            frames = [seal_message(who, audit, table_id=self._tid(link), round=1, seq=seq,
                                   lamport=seq).raw for seq in range(1, 9)]
            n = 0
            while self.live() and sent < limit and not link.closed:
                raw = frames[n % len(frames)]
                n += 1
                link.send(raw)
                sent += len(raw)
                self.done += len(raw)
                while not link.closed and link.buffered > 1 << 20:
                    await asyncio.sleep(0.005)  # as fast as the link takes them
                await asyncio.sleep(0)
            link.close("done")

    async def flood(self) -> None:
        async def one() -> None:
            while self.live():
                who = Identity.generate("flooder")
                try:
                    link = await self.link(who)
                except (LinkError, OSError):
                    self.other += 1
                    await asyncio.sleep(0.05)
                    continue
                tid = self._tid(link)
                seq = 0
                while self.live() and not link.closed:
                    batch = []
                    for _ in range(100):
                        seq += 1
                        payload = (Ready(seq % 2 == 0) if seq % 2 else
                                   Resend(link.key, 1, 1024))
                        batch.append(seal_message(who, payload, table_id=tid, round=0,
                                                  seq=seq, lamport=seq).raw)
                    link.send_all(batch)
                    self.done += len(batch)
                    while not link.closed and link.buffered > 1 << 20:
                        await asyncio.sleep(0.005)
                    await asyncio.sleep(0)
                link.close("done")
        await asyncio.gather(*(one() for _ in range(2)))

    async def guesses(self, count: int) -> None:
        async def one(n: int) -> None:
            try:
                await self.link(Identity.generate(f"guess{n}"), code=f"{n:04d}")
            except WrongCode:
                self.done += 1  # judged: a guess spent
            except (Refused, LinkError, OSError):
                self.other += 1
        await asyncio.gather(*(one(n) for n in range(count)))

    def _tid(self, link: Link) -> bytes:
        assert link.peer.tid is not None
        return link.peer.tid


async def measure(attack: str, seconds: float, count: int, mib: int, home: Path,
                  niced: bool) -> bool:
    host_args = [*HOST, "--code", CODE] if attack == "guesses" else HOST
    extra = ["--code", CODE] if attack == "guesses" else []
    table = PeerTable(home, 3, common=[*COMMON, *extra], host=host_args, by_address=True)
    watch = Watch(table.peers[0])
    try:
        await table.start()
        async with asyncio.timeout(60):
            while len(watch.ends) < 2:  # warmed up: a round played at full speed
                watch.poll()
                await asyncio.sleep(0.1)
        pids = [p.proc.pid for p in table.peers if p.proc is not None]

        async def window(run: Callable[[], Awaitable[None]] | None) -> tuple[float, float]:
            start = time.monotonic()
            end = start + seconds
            task = asyncio.ensure_future(run()) if run is not None else None
            while time.monotonic() < end:
                watch.poll()
                await asyncio.sleep(0.1)
            if task is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(task, 5)
            watch.poll()
            return start, time.monotonic()

        cpu0 = [cpu_seconds(p) for p in pids]
        journal0 = [journal_bytes(p.home) for p in table.peers]
        before = await window(None)
        cpu1 = [cpu_seconds(p) for p in pids]
        rss1 = [rss_mb(p) for p in pids]
        journal1 = [journal_bytes(p.home) for p in table.peers]
        if niced:
            os.nice(19)  # the peers keep theirs: on a small machine they run first
        attacker = Attacker(table.ports[0], None, time.monotonic() + seconds)
        runs: dict[str, Callable[[], Awaitable[None]]] = {
            "throwaway": lambda: attacker.throwaway(count),
            "strangers": lambda: attacker.strangers(mib),
            "flood": attacker.flood,
            "guesses": lambda: attacker.guesses(count),
        }
        during = await window(runs[attack])
        cpu2 = [cpu_seconds(p) for p in pids]
        rss2 = [rss_mb(p) for p in pids]
        journal2 = [journal_bytes(p.home) for p in table.peers]
        alive = all(p.proc is not None and p.proc.returncode is None for p in table.peers)
        for peer in table.peers:
            peer.terminate()
        for peer in table.peers:
            with contextlib.suppress(TimeoutError):
                await peer.wait(10)
    finally:
        await table.close()

    # The rounds the host ended before the peers were stopped: those every peer
    # must have written alike (the one under way as they stop may end apart).
    summaries = [shared_lines(p.lines()) for p in table.peers]
    common = min(len(watch.ends), *(len(s) for s in summaries))
    rounds = [s[:common] for s in summaries]
    agree = common > 0 and all(r == rounds[0] for r in rounds[1:])
    calm, rough = watch.rounds(*before), watch.rounds(*during)
    what = {"throwaway": "connections opened / closed before the handshake",
            "strangers": "bytes of entries sent / links refused",
            "flood": "READY+RESEND entries sent / links refused",
            "guesses": "guesses judged / refused"}[attack]
    print(f"== {attack}: {what}: {attacker.done} / {attacker.other}")
    for i, peer in enumerate(table.peers):
        busy = (cpu1[i] - cpu0[i]) / (before[1] - before[0]) * 100
        hit = (cpu2[i] - cpu1[i]) / (during[1] - during[0]) * 100
        print(f"   {peer.name}: RSS {rss1[i]:6.1f} -> {rss2[i]:6.1f} MB "
              f"({rss2[i] - rss1[i]:+.1f})  journal {journal1[i] - journal0[i]:+,d} B calm, "
              f"{journal2[i] - journal1[i]:+,d} B attacked  "
              f"CPU {busy:4.0f}% -> {hit:4.0f}% of a core")

    def med(xs: list[float]) -> str:
        return f"{statistics.median(xs):.2f} s" if xs else "none"

    ratio = (f"{statistics.median(rough) / statistics.median(calm):.2f}x"
             if calm and rough else "n/a")
    print(f"   rounds: {len(calm)} before (median {med(calm)}), {len(rough)} during "
          f"(median {med(rough)}): {ratio}")
    print(f"   peers alive: {alive}; {common} rounds written by all, identical: {agree}")
    for n, lines in enumerate(zip(*rounds, strict=True)):
        if any(line != lines[0] for line in lines[1:]):
            print(f"   round line {n + 1} differs: {lines}")
            break
    return alive and agree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attack", choices=(*ATTACKS, "all"), default="all")
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="length of the calm window and of the attack (10)")
    parser.add_argument("--count", type=int, default=300,
                        help="connections (throwaway) or parallel guesses (300)")
    parser.add_argument("--mib", type=int, default=100, help="MiB of strangers' entries (100)")
    parser.add_argument("--nice", action="store_true",
                        help="attack at the lowest CPU priority, so that on a machine "
                             "with few cores the attacker's own CPU use does not count "
                             "against the table")
    args = parser.parse_args()
    if not 1 <= args.seconds <= 60 or not 1 <= args.count <= 5000 or not 1 <= args.mib <= 1000:
        parser.error("--seconds 1..60, --count 1..5000, --mib 1..1000")
    if args.nice and args.attack == "all":
        parser.error("--nice runs one --attack (the tables after it would start niced too)")
    ok = True
    for attack in ATTACKS if args.attack == "all" else (args.attack,):
        with tempfile.TemporaryDirectory(prefix="nerts-hostile-") as tmp:
            try:
                ok &= asyncio.run(measure(attack, args.seconds, args.count, args.mib,
                                          Path(tmp), args.nice))
            finally:
                PeerProcess.kill_all()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
