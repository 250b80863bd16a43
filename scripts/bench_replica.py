#!/usr/bin/env python3
"""Cost of handling one received PLAY in the replica, against a bare Ed25519 verify.

Both are measured in the same run, interleaved in batches, because these
machines are noisy: the ratio is the figure that matters (target ≤ 1.3×).
"receive" is the whole path a frame takes: verify, decode, validate, apply to
the foundation log, queue for total order, and the acknowledgement it causes
(one per batch of frames, as the network node hands them over). The bare
verify is libsodium's, the one the replica uses; OpenSSL's (through
``cryptography``) is timed beside it for reference.
"""

from __future__ import annotations

import statistics
import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2p_nerts.game.cards import make_card
from p2p_nerts.protocol.envelope import DOMAIN, seal
from p2p_nerts.protocol.identity import verify
from p2p_nerts.protocol.memnet import TABLE_ID, bot_table, identities
from p2p_nerts.protocol.messages import MsgType
from p2p_nerts.protocol.replica import Replica, StartRound

BATCH = 8
ROUNDS = 150


def main() -> None:
    net = bot_table(2, seed=1)
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: all(r.can_move() for r in net.replicas), limit=60)
    receiver: Replica = net.replicas[0]
    author = identities(2)[1]
    seat = net.replicas[1].my_seat
    assert seat is not None and receiver.rs is not None
    seq = receiver.authors[author.public_key].delivered
    prev = receiver.authors[author.public_key].head  # each entry names the one before
    lamport = receiver.clock.time + 10
    frames = []
    for i in range(BATCH * ROUNDS):
        card = make_card(seat, i % 4, 1 + (i // 4) % 13)
        pile = card if card & 15 == 1 else make_card(seat, i % 4, 1)
        seq += 1
        lamport += 1
        frames.append(seal(author, table_id=TABLE_ID, round=receiver.rs.number, seq=seq,
                           lamport=lamport, type=int(MsgType.PLAY),
                           payload={"c": card, "p": pile, "s": 1, "d": 0, "m": i}, prev=prev))
        prev = frames[-1].signature
    openssl_key = Ed25519PublicKey.from_public_bytes(author.public_key)
    openssl: list[float] = []
    bare: list[float] = []
    handled_single: list[float] = []
    handled_batch: list[float] = []
    now = net.now
    for r in range(ROUNDS):
        batch = frames[r * BATCH:(r + 1) * BATCH]
        t0 = time.perf_counter_ns()
        for e in batch:
            verify(e.author, e.signature, DOMAIN + e.body)
        bare.append((time.perf_counter_ns() - t0) / BATCH / 1000)
        t0 = time.perf_counter_ns()
        for e in batch:
            openssl_key.verify(e.signature, DOMAIN + e.body)
        openssl.append((time.perf_counter_ns() - t0) / BATCH / 1000)
        t0 = time.perf_counter_ns()
        if r % 2:
            receiver.receive_batch([(e.raw, author.public_key) for e in batch], now)
            handled_batch.append((time.perf_counter_ns() - t0) / BATCH / 1000)
        else:
            for e in batch:
                receiver.receive(e.raw, now)
            handled_single.append((time.perf_counter_ns() - t0) / BATCH / 1000)
    assert receiver.rs is not None and len(receiver.rs.log) >= BATCH * ROUNDS
    assert not receiver.rejected.get("internal_error", 0)
    assert not receiver.rejected.get("broken_chain", 0)

    def row(name: str, xs: list[float]) -> str:
        xs = sorted(xs)
        p99 = xs[min(len(xs) - 1, int(len(xs) * 0.99))]
        return f"{name:<38} median {statistics.median(xs):7.1f} µs   p99 {p99:7.1f} µs"

    base = statistics.median(bare)
    print(row("bare Ed25519 verify (per frame)", bare))
    print(row("  the same with OpenSSL", openssl))
    print(row("replica.receive, one frame at a time", handled_single))
    print(row(f"replica.receive_batch, {BATCH} frames", handled_batch))
    print(f"ratio single/verify {statistics.median(handled_single) / base:.2f}x   "
          f"ratio batched/verify {statistics.median(handled_batch) / base:.2f}x   "
          f"(target <= 1.3x)")
    vs_openssl = statistics.median(handled_batch) / statistics.median(openssl)
    print(f"against OpenSSL's verify: batched {vs_openssl:.2f}x")


if __name__ == "__main__":
    main()
