#!/usr/bin/env python3
"""Cost of handling one received PLAY in the replica, against a bare Ed25519 verify.

Both are measured in the same run, interleaved in batches, because these
machines are noisy: the ratio is the figure that matters (target ≤ 1.3×).
Times are this process's CPU time, so other work on the machine counts less.
"receive" is the whole path a frame takes: verify, decode, validate, apply to
the foundation log, queue for total order, and the acknowledgement it causes
(one per batch of frames, as the network node hands them over). The bare
verify is libsodium's, the one the replica uses; OpenSSL's (through
``cryptography``) is timed beside it for reference.

Three workloads, in turn in the same run:

- *game-like*: every play lands on its pile, as almost every play of a
  simulated game does (``nerts simulate``: about 1 in 100 bounces). One seat
  has four piles of 13 cards, so a fresh table takes each 48 plays.
- *bouncing*: one table, where after the first 52 plays every play bounces off
  a complete pile, so each also pays for finding who was first; the figure
  this script gave before it had the game-like one.
- *ACK*: one seat of an 8-seat table at play receives its peers' ACKs (link
  entries, unsigned, as they are sent), one at a time, each with every mark
  news to it, as in play: at 8 peers a peer takes in more ACKs than PLAYs
  (seven straight after each play of its own, and the heartbeats), so their
  cost is much of its CPU per play. Its figure is µs per ACK (there is no
  signature to compare it with).

The replica measured is the one this Python imports: pure, or the compiled
build (``NERTS_COMPILE=1``; ``scripts/compile_engine.py --out DIR`` builds it
into DIR). ``--compiled DIR`` runs the whole measurement
in child processes instead, the pure sources and the build in DIR in turn, and
prints each one's ratios and speed-up against the first, pair by pair (so a
drift of the machine's speed cancels out); a DIR that holds no package gets the
compiled build of these sources first, so one run compares the two builds
(remove DIR to build it afresh after a change); each ``--baseline DIR`` (another
checkout's package, such as the code before a change) joins the turn, first.
Usage: ``scripts/bench_replica.py [--compiled DIR] [--baseline DIR] [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

import p2p_nerts.protocol.envelope as envelope_module
from p2p_nerts.game.cards import make_card
from p2p_nerts.protocol.envelope import DOMAIN, LINK_MAGIC, Entry, open_link_entry, seal
from p2p_nerts.protocol.identity import verify
from p2p_nerts.protocol.messages import MsgType
from p2p_nerts.protocol.replica import Replica, StartRound

try:
    from p2p_nerts.testing.memnet import TABLE_ID, MemNet, bot_table, identities
except ImportError:  # a --baseline from before the harnesses moved into p2p_nerts.testing
    from p2p_nerts.protocol.memnet import (  # type: ignore[import-not-found,no-redef]
        TABLE_ID,
        MemNet,
        bot_table,
        identities,
    )

BATCH = 8
ROUNDS = 150
TARGET = 1.3
#: This process's CPU time, not the wall clock (as bench_engine): on a shared
#: machine the wall clock also counts other work.
clock = time.process_time_ns
#: Plays one seat can land on a table: four piles, ace to queen, in suit turn.
LANDING = 48
WORKLOADS = ("game-like", "bouncing")
#: Seats at the table of the ACK workload: the table size bench_net's figures are for.
ACK_SEATS = 8


class Table:
    """A two-seat table at play, and signed PLAY frames by seat 1 for seat 0 to receive."""

    def __init__(self, plays: int, index: int = 0) -> None:
        """``index`` sets the table's frames apart from every other table's (the same
        seats, deal and plays would sign the very same frames, and the envelope
        checks a frame it has checked once no more): each starts at its own time."""
        net: MemNet = bot_table(2, seed=1)
        net.output(0, net.replicas[0].handle(StartRound(), net.now))
        assert net.run(lambda: all(r.view().can_move() for r in net.replicas), limit=60)
        self.now = net.now
        self.receiver: Replica = net.replicas[0]
        author = identities(2)[1]
        self.author = author.public_key
        # Read off the round itself, which every checkout a baseline may come from has.
        rs, theirs = self.receiver.rs, net.replicas[1].rs
        assert rs is not None and theirs is not None and theirs.me is not None
        seat = theirs.me
        log = self.receiver.authors[self.author]
        seq, prev = log.delivered, log.head  # each entry names the one before
        lamport = self.receiver.clock.time + 10 + 1000 * index
        self.frames: list[Entry] = []
        for i in range(plays):
            card = make_card(seat, i % 4, 1 + (i // 4) % 13)
            pile = card if card & 15 == 1 else make_card(seat, i % 4, 1)
            seq += 1
            lamport += 1
            self.frames.append(seal(author, table_id=TABLE_ID, round=rs.number, seq=seq,
                                    lamport=lamport, type=int(MsgType.PLAY),
                                    payload={"c": card, "p": pile, "s": 1, "d": 0, "m": i},
                                    prev=prev))
            prev = self.frames[-1].signature

    def check(self) -> None:
        """Every frame was taken as an honest play."""
        rs = self.receiver.rs
        assert rs is not None and len(rs.log) >= len(self.frames)
        assert not self.receiver.rejected.get("internal_error", 0)
        assert not self.receiver.rejected.get("broken_chain", 0)


class Workload:
    """Batches of frames to receive, from the tables they were signed for."""

    def __init__(self, name: str) -> None:
        per_table = LANDING if name == "game-like" else BATCH * ROUNDS
        self.tables = [Table(per_table, index) for index in range(BATCH * ROUNDS // per_table)]
        self.batches = [(t, t.frames[i:i + BATCH]) for t in self.tables
                        for i in range(0, len(t.frames), BATCH)]
        self.single: list[float] = []
        self.batched: list[float] = []

    def run(self, r: int) -> None:
        """Receive batch ``r``: one frame at a time, or as one batch (in turn)."""
        table, batch = self.batches[r]
        receiver = table.receiver
        t0 = clock()
        if r % 2:
            receiver.receive_batch([(e.raw, table.author) for e in batch], table.now)
            self.batched.append((clock() - t0) / BATCH / 1000)
        else:
            for e in batch:
                receiver.receive(e.raw, table.now)
            self.single.append((clock() - t0) / BATCH / 1000)


class AckTable:
    """An 8-seat table at play, and each guest's heartbeat ACK for the host to receive."""

    def __init__(self) -> None:
        net: MemNet = bot_table(ACK_SEATS, seed=1)
        net.output(0, net.replicas[0].handle(StartRound(), net.now))
        assert net.run(lambda: all(r.view().can_move() for r in net.replicas), limit=60)
        until = net.now + 3.0  # some plays, so that the marks name entries of each seat
        net.run(lambda: net.now > until, limit=10)
        net.drivers.clear()  # then the bots stop, and what is on its way arrives
        until = net.now + 1.0
        net.run(lambda: net.now > until, limit=10)
        self.receiver: Replica = net.replicas[0]
        rs = self.receiver.rs
        assert rs is not None
        self.rs = rs
        self.now = net.now
        #: (frame, the key of the link it comes on), one for each other seat.
        self.frames: list[tuple[bytes, bytes]] = []
        for peer in net.replicas[1:]:
            key = peer.me.public_key
            # Its heartbeat, as its next tick sends it (to every peer): at play it
            # goes at most every 1.5 s (``_heartbeats.every``; HEARTBEAT before).
            sends = peer.tick(net.now + 2.0).sends
            acks = [s.data for s in sends if s.data[:len(LINK_MAGIC)] == LINK_MAGIC
                    and open_link_entry(s.data, key).type == MsgType.ACK]
            assert acks, "a seat sent no heartbeat"
            self.frames.append((acks[0], key))
        self.times: list[float] = []

    def run(self, r: int) -> None:
        """Receive ``BATCH`` ACKs in turn from the seats, each one's marks news (the
        marks counted are forgotten before each, off the clock)."""
        receiver, frames, marks = self.receiver, self.frames, self.rs.marks
        spent = 0
        for i in range(BATCH):
            raw, via = frames[(r * BATCH + i) % len(frames)]
            marks.clear()
            t0 = clock()
            receiver.receive(raw, self.now, via)
            spent += clock() - t0
        self.times.append(spent / BATCH / 1000)

    def check(self) -> None:
        """Every ACK was taken in: none refused, and their marks counted."""
        assert not any(reason in self.receiver.rejected for reason in
                       ("internal_error", "author_mismatch", "stranger", "unsigned_type")), \
            self.receiver.rejected
        assert self.rs.marks, "no mark of the ACKs counted"


def measure() -> dict[str, list[float]]:
    """µs per frame of each batch: bare verifies and both workloads, interleaved."""
    loads = {name: Workload(name) for name in WORKLOADS}
    acks = AckTable()
    first = loads["game-like"].tables[0].frames[0]
    openssl_key = Ed25519PublicKey.from_public_bytes(first.author)
    verify_frames = loads["bouncing"].batches
    bare: list[float] = []
    openssl: list[float] = []
    for r in range(ROUNDS):
        batch = verify_frames[r][1]
        t0 = clock()
        for e in batch:
            verify(e.author, e.signature, DOMAIN + e.body)
        bare.append((clock() - t0) / BATCH / 1000)
        t0 = clock()
        for e in batch:
            openssl_key.verify(e.signature, DOMAIN + e.body)
        openssl.append((clock() - t0) / BATCH / 1000)
        for load in loads.values():
            load.run(r)
        acks.run(r)
    for load in loads.values():
        for table in load.tables:
            table.check()
    acks.check()
    out = {"verify": bare, "openssl": openssl}
    for name, load in loads.items():
        out[f"{name} single"] = load.single
        out[f"{name} batched"] = load.batched
    out["ack"] = acks.times
    return out


def p99(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * 0.99))]


def row(name: str, xs: list[float]) -> str:
    return f"{name:<40} median {statistics.median(xs):7.1f} µs   p99 {p99(xs):7.1f} µs"


def compiled() -> bool:
    return not envelope_module.__file__.endswith(".py")


def report(figures: dict[str, list[float]]) -> None:
    engine = "compiled by mypyc" if compiled() else "pure Python"
    base = statistics.median(figures["verify"])
    print(f"replica ({engine}), {ROUNDS} batches of {BATCH} frames of each")
    print(row("bare Ed25519 verify (per frame)", figures["verify"]))
    print(row("  the same with OpenSSL", figures["openssl"]))
    for name in WORKLOADS:
        print(row(f"{name}: receive, one frame at a time", figures[f"{name} single"]))
        print(row(f"{name}: receive_batch, {BATCH} frames", figures[f"{name} batched"]))
        print(f"    ratio to verify: single "
              f"{statistics.median(figures[f'{name} single']) / base:.2f}x   "
              f"batched {statistics.median(figures[f'{name} batched']) / base:.2f}x   "
              f"(target <= {TARGET}x)")
    print(row(f"ACK at {ACK_SEATS} seats: receive, one", figures["ack"]))


def child(path: Path | None, *, expect: str | None) -> dict[str, float]:
    """Medians and p99s (``"<name> p99"``) of one measurement in a fresh process
    importing the package from ``path`` (None: the sources beside this script);
    ``expect`` ("pure", "compiled" or None for either) is what must be found there."""
    env = dict(os.environ, PYTHONPATH=str(path or Path(__file__).resolve().parents[1]))
    out = json.loads(subprocess.run([sys.executable, __file__, "--child"], env=env,
                                    capture_output=True, text=True, check=True).stdout)
    engine = out.pop("engine")
    if expect is not None and engine != expect:
        where = path or "the sources"
        raise SystemExit(f"bench_replica: {where} holds no {expect} replica "
                         "(scripts/compile_engine.py --out DIR builds the compiled one)")
    return {k: float(v) for k, v in out.items()}


def compare(engines: list[tuple[str, Path | None, str | None]], runs: int) -> None:
    """Each engine in turn, ``runs`` times; speed-ups against the first, pair by pair."""
    results: list[list[dict[str, float]]] = [[] for _ in engines]
    for _ in range(runs):
        for n, (_label, path, expect) in enumerate(engines):
            results[n].append(child(path, expect=expect))
    print(f"in fresh processes, {runs} runs of each in turn; medians of the runs' medians "
          f"(and of their p99s), ratios to the same run's verify (target <= {TARGET}x), "
          f"speed-up against {engines[0][0]} pair by pair")
    print(f"    {'engine':34} {'verify':>8} " + " ".join(f"{w + ' batched':>42}"
                                                       for w in WORKLOADS))
    for n, (label, _path, _expect) in enumerate(engines):
        cells = []
        for w in WORKLOADS:
            us = statistics.median(r[f"{w} batched"] for r in results[n])
            tail = statistics.median(r[f"{w} batched p99"] for r in results[n])
            ratio = statistics.median(r[f"{w} batched"] / r["verify"] for r in results[n])
            gain = statistics.median(a[f"{w} batched"] / b[f"{w} batched"]
                                     for a, b in zip(results[0], results[n], strict=True))
            cells.append(f"{us:6.1f} µs (p99 {tail:6.1f}) {ratio:5.2f}x  {gain:4.2f}x as fast")
        verify_us = statistics.median(r["verify"] for r in results[n])
        print(f"    {label:34} {verify_us:5.1f} µs " + " ".join(f"{c:>42}" for c in cells))
    print(f"    an ACK received at {ACK_SEATS} seats, median µs (p99), speed-up against "
          f"{engines[0][0]} pair by pair:")
    for n, (label, _path, _expect) in enumerate(engines):
        us = statistics.median(r["ack"] for r in results[n])
        tail = statistics.median(r["ack p99"] for r in results[n])
        gain = statistics.median(a["ack"] / b["ack"]
                                 for a, b in zip(results[0], results[n], strict=True))
        print(f"    {label:34} {us:6.1f} µs (p99 {tail:6.1f})  {gain:4.2f}x as fast")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compiled", type=Path, metavar="DIR",
                        help="compare the pure sources with the build in DIR, in turn "
                             "(built there from these sources first if DIR holds none)")
    parser.add_argument("--baseline", type=Path, action="append", default=[], metavar="DIR",
                        help="also time the p2p_nerts package in DIR (another checkout, pure "
                             "or compiled, such as the code before a change), first in the turn")
    parser.add_argument("--runs", type=int, default=5, help="runs of each in turn")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        figures = measure()
        summary: dict[str, object] = {k: statistics.median(v) for k, v in figures.items()}
        summary.update({f"{k} p99": p99(v) for k, v in figures.items()})
        summary["engine"] = "compiled" if compiled() else "pure"
        print(json.dumps(summary))
        return 0
    if args.compiled is not None and not (args.compiled / "p2p_nerts").is_dir():
        from compile_engine import build  # beside this script

        print(f"building the compiled package from these sources in {args.compiled}",
              file=sys.stderr)
        build(args.compiled)
    for directory in (*args.baseline, *([args.compiled] if args.compiled else [])):
        if not (directory / "p2p_nerts" / "protocol").is_dir():
            parser.error(f"{directory} holds no p2p_nerts package")
    if args.compiled is None and not args.baseline:
        report(measure())
        return 0
    engines: list[tuple[str, Path | None, str | None]] = [
        (f"baseline {d}", d, None) for d in args.baseline]
    engines.append(("pure (these sources)", None, "pure"))
    if args.compiled is not None:
        engines.append((f"compiled ({args.compiled})", args.compiled, "compiled"))
    compare(engines, max(1, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
