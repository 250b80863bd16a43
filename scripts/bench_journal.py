#!/usr/bin/env python3
"""What making this seat's own records durable costs: a journal append with and
without the ``fsync`` that follows it (``Store.sync``, once per routed batch);
and what compacting the journal as a round begins costs, against that.

All are measured in the same run, alternating, on the same file system (a
temporary directory, or the one given as the first argument: the disk the
player's data dir is on is the one that matters). A batch is what the session
routes for one play: the signed PLAY and a MOVE record, about 300 bytes. The
compaction is that of a real journal (a 3-seat game played in memory, as one
seat journaled it) as its third round begins: the batch that holds the
round's note, appended and synced, against the same batch without the note.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.journal import Kind, Record
from p2p_nerts.protocol.memnet import MemNet, bot_table
from p2p_nerts.protocol.replica import Outbound, Phase, StartRound, compacts
from p2p_nerts.store import DB_FILE, Store

ROUNDS = 400
COMPACTIONS = 40
TABLE = b"b" * 16
BATCH = [Record(Kind.ENTRY, bytes(220)), Record(Kind.MOVE, bytes(12))]


def journaled(rounds: int) -> list[list[Record]]:
    """The batches seat 1 of a seeded 3-seat game journals until round ``rounds`` begins."""
    batches: list[list[Record]] = []
    route = MemNet._route

    def routed(net: MemNet, sender: int, out: Outbound) -> None:
        if sender == 1 and out.journal:
            batches.append(list(out.journal))
        route(net, sender, out)

    MemNet._route = routed  # type: ignore[method-assign, assignment]
    net = bot_table(3, seed=5, variants=Variants(target=10_000))
    host, seat = net.replicas[0], net.replicas[1]
    for number in range(1, rounds + 1):
        net.output(0, host.handle(StartRound(), net.now))
        assert net.run(lambda n=number: all(  # type: ignore[misc]
            r.rs is not None and r.rs.number == n
            and (n == rounds or r.phase is Phase.BETWEEN) for r in net.replicas),
            limit=net.now + 1800)
    MemNet._route = route  # type: ignore[method-assign]
    assert seat.rs is not None and seat.rs.number == rounds
    return batches


def main() -> None:
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    batches = journaled(3)
    last = max(i for i, b in enumerate(batches) if compacts(b))
    before = [r for b in batches[:last] for r in b]
    trigger = batches[last]
    plain_trigger = [r for r in trigger if r.kind is not Kind.SNAPSHOT]
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
        noted: list[float] = []
        unnoted: list[float] = []
        for i in range(COMPACTIONS):
            for table, batch, times in ((bytes([i, 1]) * 8, trigger, noted),
                                        (bytes([i, 2]) * 8, plain_trigger, unnoted)):
                store.append(table, before)  # (compacts as the round before began)
                store.sync()
                t0 = time.perf_counter()
                store.append(table, batch)
                store.sync()
                times.append((time.perf_counter() - t0) * 1e6)
        size = len(store.records(bytes([0, 1]) * 8))
    for name, xs in (("append", plain), ("append+fsync", synced),
                     ("round's batch", unnoted), ("+compaction", noted)):
        xs.sort()
        print(f"{name:<14} median {statistics.median(xs):9.1f} µs  "
              f"p99 {xs[int(len(xs) * 0.99)]:9.1f} µs")
    print(f"ratio (median) {statistics.median(synced) / statistics.median(plain):.1f}x "
          f"over {ROUNDS} batches each; compaction "
          f"{statistics.median(noted) / statistics.median(unnoted):.1f}x over {COMPACTIONS} "
          f"(a journal of {len(before) + len(trigger)} records compacted to {size})")


if __name__ == "__main__":
    main()
