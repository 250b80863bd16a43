#!/usr/bin/env python3
"""What making this seat's own records durable costs: a journal append with and
without the ``fsync`` that follows it (``Store.sync``, once per routed batch);
and what compacting the journal in a break between rounds costs, against that.

All are measured in the same run, alternating, on the same file system (a
temporary directory, or the one given as the first argument: the disk the
player's data dir is on is the one that matters). A batch is what the session
routes for one play: the signed PLAY and a MOVE record, about 300 bytes. The
compaction is that of a real journal (a 3-seat game played in memory, as one
seat journaled it, compacted after each round as the session does) as its
third round closes (``Store.compact``).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.journal import Kind, Record
from p2p_nerts.protocol.replica import Outbound, Phase, StartRound, compacts
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.testing.memnet import MemNet, bot_table

ROUNDS = 400
COMPACTIONS = 40
TABLE = b"b" * 16
BATCH = [Record(Kind.ENTRY, bytes(220)), Record(Kind.MOVE, bytes(12))]


def journaled(rounds: int) -> list[tuple[list[Record], bool]]:
    """What seat 1 of a seeded 3-seat game gives its store until round ``rounds``
    closes: each batch of records, and whether it closed a round."""
    batches: list[tuple[list[Record], bool]] = []
    route = MemNet._route

    def routed(net: MemNet, sender: int, out: Outbound) -> None:
        if sender == 1 and (out.journal or compacts(out.events)):
            batches.append((list(out.journal), compacts(out.events)))
        route(net, sender, out)

    MemNet._route = routed  # type: ignore[method-assign, assignment]
    net = bot_table(3, seed=5, variants=Variants(target=10_000))
    host = net.replicas[0]
    for number in range(1, rounds + 1):
        net.output(0, host.handle(StartRound(), net.now))
        assert net.run(lambda n=number: all(  # type: ignore[misc]
            r.rs is not None and r.rs.number == n and r.phase is Phase.BETWEEN
            for r in net.replicas), limit=net.now + 1800)
    MemNet._route = route  # type: ignore[method-assign]
    return batches


def main() -> None:
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    batches = journaled(3)
    last = max(i for i, (_, closes) in enumerate(batches) if closes)
    with tempfile.TemporaryDirectory(dir=where) as tmp, Store(Path(tmp) / DB_FILE) as store:
        store.append(TABLE, BATCH)  # the file exists, as it does mid-game
        plain: list[float] = []
        synced: list[float] = []
        for _ in range(ROUNDS):
            t0 = time.perf_counter()
            store.append(TABLE, BATCH)
            t1 = time.perf_counter()
            store.append(TABLE, BATCH)
            store.sync()
            t2 = time.perf_counter()
            plain.append((t1 - t0) * 1e6)
            synced.append((t2 - t1) * 1e6)
        compacting: list[float] = []
        for i in range(COMPACTIONS):
            table = bytes([i]) * 16
            for records, closes in batches[:last + 1]:
                store.append(table, records)
                if closes:  # the last one is timed: round 3's close
                    store.sync()
                    t0 = time.perf_counter()
                    store.compact(table)
                    elapsed = (time.perf_counter() - t0) * 1e6
            compacting.append(elapsed)
        written = sum(len(records) for records, _ in batches[:last + 1])
        kept = len(store.records(bytes([0]) * 16))
    for name, xs in (("append", plain), ("append+fsync", synced), ("compaction", compacting)):
        xs.sort()
        print(f"{name:<13} median {statistics.median(xs):9.1f} µs  "
              f"p99 {xs[int(len(xs) * 0.99)]:9.1f} µs")
    print(f"ratio (median) {statistics.median(synced) / statistics.median(plain):.1f}x "
          f"over {ROUNDS} batches each; a compaction "
          f"{statistics.median(compacting) / statistics.median(synced):.0f}x an append+fsync, "
          f"over {COMPACTIONS} (a journal of {written} records written, {kept} kept)")


if __name__ == "__main__":
    main()
