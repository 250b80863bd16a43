#!/usr/bin/env python3
"""How much does handling one received PLAY frame cost beyond the bare signature check?

Every received entry costs one Ed25519 verify, which we cannot avoid; the
envelope and the payload schema should add little on top (target: the whole
receive path within 1.5x a bare verify).  The bare verify is libsodium's, the
one the receive path uses; OpenSSL's (through ``cryptography``, 2.2x slower
here) is shown beside it. All are measured in the same run, interleaved batch
by batch, so machine noise hits them alike.

Then the payload parse alone of the two link entries peers send most: a
full-mark ACK (one mark per seat, as every peer sends each tick) and a VIEW,
each against the way it was parsed before its map was read directly
(``ack_by_fields``, ``view_by_fields``: the reader and a checker call per
field), interleaved the same way.

Usage: scripts/bench_protocol.py [--batches N] [--batch-size N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Mapping

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.bindings import crypto_sign_open

from p2p_nerts.protocol.envelope import (
    DOMAIN,
    HEADER_LEN,
    MAX_INT,
    EnvelopeError,
    open_entry,
    open_link_entry,
)
from p2p_nerts.protocol.identity import PUBLIC_KEY_LEN, SIGNATURE_LEN, Identity
from p2p_nerts.protocol.messages import (
    MAX_ACK_AUTHORS,
    MAX_CARD,
    MAX_PILE,
    MAX_SEATS,
    WORK_PILES,
    Ack,
    AckMark,
    Play,
    View,
    link_message,
    parse_payload,
    seal_message,
)
from p2p_nerts.protocol.messages._fields import _bytes, _int, _Reader, _strictly_ascending

TARGET_RATIO = 1.5


def _timed_us(fn: Callable[[], object], batch: int) -> list[float]:
    """Each call timed on its own, in µs.

    At ~100 µs a call, the ~0.1 µs of perf_counter_ns is noise, and per-call
    samples keep the tail (GC pauses, preemption) visible in the p99.
    """
    out = []
    clock = time.perf_counter_ns
    for _ in range(batch):
        start = clock()
        fn()
        out.append((clock() - start) / 1000)
    return out


def _summary(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples), statistics.quantiles(samples, n=100)[98]


def ack_by_fields(payload: Mapping[str, object]) -> Ack:
    """The baseline: ACK marks read through the reader and the per-field checkers."""
    r = _Reader(Ack, payload)
    marks = []
    for item in r.array("upto", MAX_ACK_AUTHORS):
        if type(item) is not list or len(item) != 3:
            raise EnvelopeError("bad_field:upto")
        author, seq, head = item
        marks.append(AckMark(_bytes(author, "upto", PUBLIC_KEY_LEN),
                             _int(seq, "upto", 0, MAX_INT),
                             _bytes(head, "upto", SIGNATURE_LEN)))
    _strictly_ascending([m.author for m in marks], "upto")
    return Ack(tuple(marks))


def view_by_fields(payload: Mapping[str, object]) -> View:
    """The baseline: a VIEW read through the reader, a checker call per element."""
    r = _Reader(View, payload)
    nerts = r.integer("nerts", 0, MAX_PILE)
    top = r.opt_integer("top", 0, MAX_CARD)
    if (nerts == 0) != (top is None):
        raise EnvelopeError("bad_field:top")
    piles = r.array("work", WORK_PILES, min_len=WORK_PILES)
    work = tuple(tuple(_int(card, "work", 0, MAX_CARD) for card in _pile(pile)) for pile in piles)
    return View(
        nerts, top, work, r.opt_integer("waste", 0, MAX_CARD), r.integer("stock", 0, MAX_PILE)
    )


def _pile(value: object) -> list[object]:
    if type(value) is not list or len(value) > MAX_PILE:
        raise EnvelopeError("bad_field:work")
    return value


def bench_link(me: Identity, batches: int, batch: int) -> None:
    """A full-mark ACK's and a mid-round VIEW's payloads, decoded as a peer
    decodes them, each parsed both ways."""
    ack = Ack(tuple(AckMark(bytes([seat + 1]) * PUBLIC_KEY_LEN, 1000 + seat,
                            bytes([seat]) * SIGNATURE_LEN) for seat in range(MAX_SEATS)))
    view = View(9, 0x23, ((0x31, 0x22, 0x13), (0x2C,), (0x15, 0x34), (0x1A, 0x39, 0x28, 0x17)),
                0x1B, 21)
    cases = (("ACK, 8 marks", ack, ack_by_fields), ("VIEW", view, view_by_fields))
    for name, payload_obj, by_fields in cases:
        raw = link_message(me.public_key, payload_obj, table_id=bytes(16), round=1, seq=9,
                           lamport=99)
        payload = open_link_entry(raw, me.public_key).payload
        kind = payload_obj.TYPE
        if by_fields(payload) != payload_obj or parse_payload(kind, payload) != payload_obj:
            raise SystemExit(f"bench_protocol: the two {name} parsers disagree")

        def old(by_fields: Callable[[Mapping[str, object]], object] = by_fields,
                payload: Mapping[str, object] = payload) -> None:
            by_fields(payload)

        def new(kind: int = kind, payload: Mapping[str, object] = payload) -> None:
            parse_payload(kind, payload)

        for fn in (old, new):
            _timed_us(fn, batch * 5)
        old_us: list[float] = []
        new_us: list[float] = []
        for _ in range(batches):
            old_us += _timed_us(old, batch)
            new_us += _timed_us(new, batch)
        o_med, o_p99 = _summary(old_us)
        n_med, n_p99 = _summary(new_us)
        print(f"{name} payload: {batches * batch} parses each")
        print(f"  field by field (before) median {o_med:6.2f} µs   p99 {o_p99:6.2f} µs")
        print(f"  parse_payload (now)     median {n_med:6.2f} µs   p99 {n_p99:6.2f} µs")
        print(f"  ratio {n_med / o_med:.2f}x of before (p99 {n_p99 / o_p99:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=20)
    args = parser.parse_args()

    me = Identity.from_seed(bytes(range(32)), "Ana")
    play = Play(card=0x11, pile=0x11, src=0, decl=0, mv=42)
    entry = seal_message(me, play, table_id=bytes(16), round=1, seq=1234, lamport=56789)
    frame, body = entry.raw, entry.raw[HEADER_LEN:]
    # A separately parsed key object: the bare cost of the curve arithmetic.
    key = Ed25519PrivateKey.from_private_bytes(me.seed).public_key()
    signed = DOMAIN + body

    def bare_verify() -> None:
        crypto_sign_open(entry.signature + signed, me.public_key)

    def openssl_verify() -> None:
        key.verify(entry.signature, signed)

    def receive_play() -> None:
        got = open_entry(frame)
        parse_payload(got.type, got.payload)

    for fn in (bare_verify, openssl_verify, receive_play):  # warm caches and allocators
        _timed_us(fn, args.batch_size * 5)

    verify_us: list[float] = []
    openssl_us: list[float] = []
    receive_us: list[float] = []
    for _ in range(args.batches):
        verify_us += _timed_us(bare_verify, args.batch_size)
        openssl_us += _timed_us(openssl_verify, args.batch_size)
        receive_us += _timed_us(receive_play, args.batch_size)

    v_med, v_p99 = _summary(verify_us)
    r_med, r_p99 = _summary(receive_us)
    ratio = r_med / v_med
    n = args.batches * args.batch_size
    print(f"PLAY frame: {len(frame)} bytes; {n} calls each, batches of {args.batch_size}")
    o_med, o_p99 = _summary(openssl_us)
    print(f"bare Ed25519 verify      median {v_med:8.1f} µs   p99 {v_p99:8.1f} µs  (libsodium)")
    print(f"  the same with OpenSSL  median {o_med:8.1f} µs   p99 {o_p99:8.1f} µs  "
          f"({o_med / v_med:.1f}x; receive path {r_med / o_med:.2f}x of it)")
    print(f"open_entry+parse_payload median {r_med:8.1f} µs   p99 {r_p99:8.1f} µs")
    print(f"overhead {r_med - v_med:.1f} µs; ratio {ratio:.3f}x (target <= {TARGET_RATIO}x)")
    print("OK" if ratio <= TARGET_RATIO else "OVER TARGET")
    print()
    bench_link(me, args.batches, args.batch_size)


if __name__ == "__main__":
    main()
