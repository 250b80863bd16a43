#!/usr/bin/env python3
"""What a guest keeps for RESENDs signed by fresh keys: its resident memory before
and after ``--count`` of them (100,000 by default), each under a key made for it
alone, fed to a seated guest's replica in memory (no network).

A stranger on the LAN can sign with as many keys as it likes, and a RESEND is
the one entry a key without a place is heard for (a spectator asks for the
table's entries with it). Whatever the replica keeps per asker must therefore
be capped and pruned, or memory grows with the count of keys: this prints the
growth (RSS, and the bytes Python itself still holds, by ``tracemalloc``, the
figure the allocator's caching does not blur) and the sizes of the per-key
structures at the end. The issue's bound: RSS +<5 MB for 100,000 keys.

Each key is made (libsodium, from a random seed), signs its one RESEND and is
dropped before the next: the keys are not held by the script itself.
Usage: ``scripts/fresh_keys.py [--count N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import tracemalloc

from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Resend, seal_message
from p2p_nerts.protocol.replica import Replica, StartRound
from p2p_nerts.testing.memnet import TABLE_ID, bot_table


def rss_kib() -> int:
    """This process's resident set (VmRSS), in KiB."""
    with open(f"/proc/{os.getpid()}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def per_key_sizes(r: Replica) -> dict[str, int]:
    """The sizes of what the replica keeps by key (chains, times, watchers, budgets)."""
    places = r._places  # what is measured is the replica's own state
    return {"authors": len(places.authors), "last_heard": len(places.last_heard),
            "watchers": len(places.watchers), "placed": len(places.placed),
            "resend budgets": places.resends.budgets()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000, help="fresh keys (default 100000)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.count < 1:
        parser.error("--count must be at least 1")
    net = bot_table(3, seed=args.seed)
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    net.run(lambda: False, limit=3.0)  # a round under way: the guest holds chains to ask for
    guest = net.replicas[1]
    host_key = guest.host_key
    gc.collect()
    tracemalloc.start()
    before_rss, (before_py, _) = rss_kib(), tracemalloc.get_traced_memory()
    start = time.perf_counter()
    for n in range(args.count):
        who = Identity.from_seed(os.urandom(32), "x")
        raw = seal_message(who, Resend(host_key, 1, 1024), table_id=TABLE_ID, round=0,
                           seq=1, lamport=1).raw
        guest.receive(raw, net.now + n * 1e-4)
    took = time.perf_counter() - start
    gc.collect()
    after_rss, (after_py, _) = rss_kib(), tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{args.count} RESENDs from fresh keys in {took:.1f} s")
    print(f"RSS {before_rss / 1024:.1f} -> {after_rss / 1024:.1f} MiB "
          f"(+{(after_rss - before_rss) / 1024:.2f} MiB)")
    print(f"Python heap still held: +{(after_py - before_py) / 2**20:.2f} MiB (tracemalloc)")
    print("kept by key: " + ", ".join(f"{k} {v}" for k, v in per_key_sizes(guest).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
