#!/usr/bin/env python3
"""What making this seat's own records durable costs: a journal append with and
without the ``fsync`` that follows it (``Store.sync``, once per routed batch).

Both are measured in the same run, alternating, on the same file system (a
temporary directory, or the one given as the first argument: the disk the
player's data dir is on is the one that matters). A batch is what the session
routes for one play: the signed PLAY and a MOVE record, about 300 bytes.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from p2p_nerts.protocol.journal import Kind, Record
from p2p_nerts.store import DB_FILE, Store

ROUNDS = 400
TABLE = b"b" * 16
BATCH = [Record(Kind.ENTRY, bytes(220)), Record(Kind.MOVE, bytes(12))]


def main() -> None:
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else None
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
    for name, xs in (("append", plain), ("append+fsync", synced)):
        xs.sort()
        print(f"{name:<13} median {statistics.median(xs):9.1f} µs  "
              f"p99 {xs[int(len(xs) * 0.99)]:9.1f} µs")
    print(f"ratio (median) {statistics.median(synced) / statistics.median(plain):.1f}x "
          f"over {ROUNDS} batches each")


if __name__ == "__main__":
    main()
