"""Envelope: framing, signature-before-decode, body validation, every rejection reason."""

from __future__ import annotations

import hashlib
import itertools
import os

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import p2p_nerts.protocol.envelope as envelope_module
from p2p_nerts.protocol.clock import LamportClock
from p2p_nerts.protocol.envelope import (
    DOMAIN,
    GENESIS,
    HEADER_LEN,
    MAGIC,
    MAX_ENTRY,
    MAX_INT,
    Entry,
    EnvelopeError,
    open_entry,
    seal,
)
from p2p_nerts.protocol.identity import Identity, verify

ANA = Identity.from_seed(bytes(range(32)), "Ana")
BO = Identity.from_seed(bytes(range(1, 33)), "Bo")
TABLE = bytes(range(16))
PLAY = {"c": 17, "p": 17, "s": 0, "d": 0, "m": 3}


def sealed(**overrides: object) -> Entry:
    args: dict[str, object] = {
        "table_id": TABLE,
        "round": 1,
        "seq": 7,
        "lamport": 300,
        "type": 20,
        "payload": PLAY,
    }
    args.update(overrides)
    return seal(ANA, **args)  # type: ignore[arg-type]


def signed(body: bytes, by: Identity = ANA) -> bytes:
    """A correctly signed frame around arbitrary body bytes: reaches the decoder."""
    return MAGIC + by.public_key + by.sign(DOMAIN + body) + body


def body_of(*fields: object) -> bytes:
    return msgpack.packb(list(fields), use_bin_type=True)


def good_fields() -> list[object]:
    return [2, TABLE, 1, ANA.public_key, 7, 300, 20, GENESIS, PLAY]


def reason(raw: bytes) -> str:
    with pytest.raises(EnvelopeError) as info:
        open_entry(raw)
    return info.value.reason


def test_round_trip() -> None:
    e = sealed()
    got = open_entry(e.raw)
    assert got == e
    assert (got.version, got.table_id, got.round, got.author) == (2, TABLE, 1, ANA.public_key)
    assert (got.seq, got.lamport, got.type, dict(got.payload)) == (7, 300, 20, PLAY)
    assert got.raw[:2] == b"NZ" and got.raw[2:34] == ANA.public_key
    assert got.body == got.raw[HEADER_LEN:] and got.signature == got.raw[34:98]
    assert got.id == hashlib.sha256(got.body).digest()
    assert hash(got) == hash(e)
    assert open_entry(bytearray(e.raw)) == e


def test_raw_is_kept_verbatim() -> None:
    # A non-minimal but valid encoding (int 1 as uint32) is accepted and kept as is.
    body = b"\x99\xce\x00\x00\x00\x02" + body_of(*good_fields())[2:]
    e = open_entry(signed(body))
    assert e.version == 2 and e.body == body and e.id == hashlib.sha256(body).digest()


def test_reasons_are_machine_readable() -> None:
    err = EnvelopeError("bad_magic")
    assert err.reason == "bad_magic" and str(err) == "bad_magic"


@pytest.mark.parametrize("size", [0, 1, 97, 98])
def test_too_short(size: int) -> None:
    assert reason(sealed().raw[:size]) == "too_short"


def test_too_large() -> None:
    raw = signed(b"\x00" * (MAX_ENTRY - HEADER_LEN + 1))
    assert reason(raw) == "too_large"
    with pytest.raises(EnvelopeError, match="too_large"):
        sealed(type=31, payload={"m": [[1, 2, 3, 4, 5, 6]] * 2000, "s": [b"x" * 200] * 300})


def test_bad_magic() -> None:
    raw = sealed().raw
    assert reason(b"NY" + raw[2:]) == "bad_magic"
    assert reason(b"\x00" * 200) == "bad_magic"


@pytest.mark.parametrize("where", [2, 33, 34, 60, 97, 98, 120, -1])
def test_any_flipped_bit_breaks_the_signature(where: int) -> None:
    raw = bytearray(sealed().raw)
    raw[where] ^= 0x01
    assert reason(bytes(raw)) == "bad_signature"


def test_a_frame_checked_once_is_not_checked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[bytes] = []

    def counting(key: bytes, signature: bytes, data: bytes) -> bool:
        checked.append(signature)
        return verify(key, signature, data)

    monkeypatch.setattr(envelope_module, "verify", counting)
    fields = good_fields()
    fields[5] = 1 + int.from_bytes(os.urandom(6), "big")  # a frame no other test opened
    raw = signed(body_of(*fields))
    first = open_entry(raw)
    assert open_entry(bytes(bytearray(raw))) == first  # the same bytes, another object
    assert len(checked) == 1
    # A copy with one byte changed is another frame: checked, and refused.
    changed = bytearray(raw)
    changed[40] ^= 0x01
    assert reason(bytes(changed)) == "bad_signature"
    assert len(checked) == 2


def test_the_checked_frames_are_forgotten_a_generation_at_a_time() -> None:
    checked = envelope_module._Checked(frames=2, size=1 << 20)
    frames = [bytes([i]) * 100 for i in range(5)]
    for raw in frames[:3]:
        checked.add(raw)
    assert all(raw in checked for raw in frames[:3])  # the third began a new generation
    checked.add(frames[3])
    checked.add(frames[4])  # a third generation: the first goes
    assert [raw in checked for raw in frames] == [False, False, True, True, True]
    by_size = envelope_module._Checked(frames=100, size=250)
    for raw in frames[:3]:
        by_size.add(raw)  # 300 bytes: a new generation
    for raw in frames[3:]:
        by_size.add(raw)
    assert [raw in by_size for raw in frames] == [True] * 5
    by_size.add(b"\xff" * 100)  # 300 bytes again: the first three go
    assert [raw in by_size for raw in frames] == [False, False, False, True, True]


def test_truncated_or_extended_body_breaks_the_signature() -> None:
    raw = sealed().raw
    assert reason(raw[:-1]) == "bad_signature"
    assert reason(raw + b"\x00") == "bad_signature"


def test_frame_signed_by_someone_else() -> None:
    raw = sealed().raw
    assert reason(raw[:2] + BO.public_key + raw[34:]) == "bad_signature"


def test_author_mismatch() -> None:
    fields = good_fields()
    fields[3] = BO.public_key
    assert reason(signed(body_of(*fields))) == "author_mismatch"


@pytest.mark.parametrize(
    "body",
    [
        b"\xc1",  # never-used msgpack byte
        body_of(*good_fields()) + b"\x00",  # trailing data
        b"\x99\x02",  # truncated array
        msgpack.packb({"v": 1}),
        msgpack.packb(b"x" * 10),
        msgpack.packb([]),
        body_of(*good_fields()[:8]),
        body_of(*good_fields(), 0),
        b"\x91" * 5000 + b"\x01",  # nesting deeper than the decoder allows
        b"\xdd\xff\xff\xff\xff",  # array claiming 4 billion items
        body_of(*good_fields()[:8], {"a": list(range(5001))}),
        body_of(*good_fields()[:8], {"a": "x" * 1025}),
        body_of(*good_fields()[:8], {str(i): i for i in range(33)}),
        body_of(*good_fields()[:8], {1: 1}),
        body_of(*good_fields()[:8], {b"k": 1}),
        body_of(*good_fields()[:8], {"a": msgpack.ExtType(5, b"xyz")}),
        body_of(*good_fields()[:8], {"a": msgpack.ExtType(5, b"")}),
        body_of(*good_fields()[:8])[:-1] + b"\x82\xa1a\x01\xa1a\x02",  # duplicate key
        body_of(*good_fields()[:8])[:-1] + b"\x81\xa1a\xa2\xff\xfe",  # invalid UTF-8
    ],
)
def test_malformed_body(body: bytes) -> None:
    assert reason(signed(body)) == "malformed_body"


@pytest.mark.parametrize("version", [0, 1, 99])
def test_unsupported_version(version: int) -> None:
    assert reason(signed(body_of(version, "future", "layout"))) == "unsupported_version"


@pytest.mark.parametrize(
    ("index", "value", "name"),
    [
        (0, True, "version"),
        (0, "1", "version"),
        (1, TABLE[:15], "table_id"),
        (1, TABLE + b"\x00", "table_id"),
        (1, TABLE.hex(), "table_id"),
        (2, -1, "round"),
        (2, MAX_INT + 1, "round"),
        (2, 2**64 - 1, "round"),
        (2, 1.0, "round"),
        (2, None, "round"),
        (3, ANA.public_key[:31], "author"),
        (3, ANA.public_key.hex(), "author"),
        (4, 0, "seq"),
        (4, False, "seq"),
        (5, 0, "lamport"),
        (5, -(2**63), "lamport"),
        (6, 256, "type"),
        (6, -1, "type"),
        (7, None, "prev"),
        (7, GENESIS[:31], "prev"),
        (8, [], "payload"),
        (8, None, "payload"),
    ],
)
def test_bad_body_field(index: int, value: object, name: str) -> None:
    fields = good_fields()
    fields[index] = value
    assert reason(signed(body_of(*fields))) == f"bad_field:{name}"


BAD_INTS: dict[int, list[object]] = {
    2: [-1, MAX_INT + 1, 1.0, None, True], 4: [0, MAX_INT + 1, False, "7"],
    5: [0, -1, MAX_INT + 1, b"\x01"], 6: [256, -1, 2.0, None]}
INT_NAMES = {2: "round", 4: "seq", 5: "lamport", 6: "type"}


def test_two_bad_body_integers_name_the_first() -> None:
    """An honest body's integers are checked at once; a body with any of them
    wrong is refused by the field checks in turn, which name the first."""
    for (i, bad_i), (j, bad_j) in itertools.combinations(BAD_INTS.items(), 2):
        for a, b in itertools.product(bad_i, bad_j):
            fields = good_fields()
            fields[i], fields[j] = a, b
            assert reason(signed(body_of(*fields))) == f"bad_field:{INT_NAMES[i]}"
            fields[i] = good_fields()[i]
            assert reason(signed(body_of(*fields))) == f"bad_field:{INT_NAMES[j]}"


def test_limits_are_inclusive() -> None:
    fields = good_fields()
    fields[2] = fields[4] = fields[5] = MAX_INT
    fields[6] = 255
    e = open_entry(signed(body_of(*fields)))
    assert (e.round, e.seq, e.lamport, e.type) == (MAX_INT, MAX_INT, MAX_INT, 255)


def test_seal_refuses_what_peers_would_refuse() -> None:
    with pytest.raises(EnvelopeError, match="bad_field:table_id"):
        sealed(table_id=b"short")
    with pytest.raises(EnvelopeError, match="bad_field:seq"):
        sealed(seq=0)
    with pytest.raises(EnvelopeError, match="bad_field:lamport"):
        sealed(lamport=2**60)
    with pytest.raises(EnvelopeError, match="malformed_body"):
        sealed(payload={"a": object()})
    with pytest.raises(EnvelopeError, match="malformed_body"):
        sealed(payload={"a": 2**70})
    with pytest.raises(EnvelopeError, match="malformed_body"):
        sealed(payload={1: "int key"})


# -- fuzz: nothing but EnvelopeError may come out of open_entry ---------------

FRAMES = [sealed().raw, sealed(type=1, payload={"n": "Ana", "v": 1}, seq=1, lamport=1).raw]


def _must_reject_cleanly(raw: bytes) -> None:
    try:
        open_entry(raw)
    except EnvelopeError as exc:
        assert exc.reason


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_fuzz_random_bytes(raw: bytes) -> None:
    _must_reject_cleanly(raw)
    _must_reject_cleanly(MAGIC + raw)


@st.composite
def mutated(draw: st.DrawFn, base: bytes) -> bytes:
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "insert", "delete"]))
        pos = draw(st.integers(0, len(data)))
        if op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif data:
            pos = min(pos, len(data) - 1)
            if op == "flip":
                data[pos] ^= 1 << draw(st.integers(0, 7))
            else:
                del data[pos : pos + draw(st.integers(1, 8))]
    return bytes(data)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FRAMES).flatmap(mutated))
def test_fuzz_mutated_frames(raw: bytes) -> None:
    if raw in FRAMES:
        return
    with pytest.raises(EnvelopeError):
        open_entry(raw)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([f.raw[HEADER_LEN:] for f in map(open_entry, FRAMES)]).flatmap(mutated))
def test_fuzz_mutated_bodies_signed(body: bytes) -> None:
    """Re-signed mutations get past the signature and exercise the decoder itself."""
    _must_reject_cleanly(signed(body))


# -- Lamport clock --------------------------------------------------------------


def test_lamport_clock() -> None:
    clock = LamportClock()
    assert clock.tick() == 1 and clock.tick() == 2
    assert clock.observe(10) == 11
    assert clock.observe(3) == 12  # never goes back
    assert clock.tick() == 13 and clock.time == 13
    assert repr(clock) == "LamportClock(time=13)"
    assert LamportClock(5).tick() == 6
    with pytest.raises(ValueError):
        LamportClock(-1)
