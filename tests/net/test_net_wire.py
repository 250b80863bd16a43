"""The mesh's own frames: info and peers codecs, refusals, addresses (no sockets)."""

from __future__ import annotations

import contextlib

import msgpack
import pytest
from hypothesis import given

from p2p_nerts.net.wire import (
    NET_VERSION,
    Info,
    WireError,
    decode_info,
    decode_peers,
    encode_info,
    encode_peers,
    format_address,
    is_entry,
    parse_address,
    refusal,
)

from ..strategies import junk

TID = bytes(range(16))
KEY_A, KEY_B = b"A" * 32, b"B" * 32


def test_info_round_trip() -> None:
    info = Info(NET_VERSION, TID, "Ana's table", 4242, 3, full=False, playing=True, code=False)
    assert decode_info(encode_info(info)) == info
    newcomer = Info(NET_VERSION, None, "Bo", 0)
    assert decode_info(encode_info(newcomer)) == newcomer
    headless = Info(NET_VERSION, None, "Bot", 0, views=False)  # draws no other tableau
    assert decode_info(encode_info(headless)) == headless


def test_other_version_is_read_far_enough_to_say_so() -> None:
    future = msgpack.packb({"v": NET_VERSION + 1, "name": "Zed's table", "extra": [1, 2]})
    info = decode_info(future)
    assert info.v == NET_VERSION + 1 and info.name == "Zed's table"
    assert refusal(info, joining=False) == (
        f"table Zed's table runs protocol v{NET_VERSION + 1}; this nerts speaks v{NET_VERSION}")


def test_refusals_stop_newcomers_only() -> None:
    """A round under way stops nobody: a newcomer waits for the next deal."""
    full = Info(NET_VERSION, TID, "T", 1, 8, full=True)
    busy = Info(NET_VERSION, TID, "T", 1, 3, playing=True)
    assert refusal(full, joining=True) == "table T is full (--wait waits for a free seat)"
    assert refusal(busy, joining=True) is None
    assert refusal(full, joining=False) is None  # a seated player coming back
    assert refusal(busy, joining=False) is None


@pytest.mark.parametrize("payload", [
    b"", b"\xc1", msgpack.packb([1]), msgpack.packb({"v": "1"}), msgpack.packb({"v": 0}),
    msgpack.packb({"v": NET_VERSION, "tid": None}),
    encode_info(Info(NET_VERSION, TID, "x", 1)).replace(TID, b"\x00" * 16)[:-1],
    msgpack.packb({"v": NET_VERSION, "tid": b"short", "name": "x", "port": 1, "seats": 0,
                   "full": False, "playing": False, "code": False,
                   "views": True}),
    msgpack.packb({"v": NET_VERSION, "tid": None, "name": "x", "port": 70000, "seats": 0,
                   "full": False, "playing": False, "code": False,
                   "views": True}),
    msgpack.packb({"v": NET_VERSION, "tid": None, "name": "x", "port": 1, "seats": 0,
                   "full": 0, "playing": False, "code": False,
                   "views": True}),
    msgpack.packb({"v": NET_VERSION, "tid": None, "name": "x", "port": 1, "seats": 0,
                   "full": False, "playing": False, "code": False, "views": 1}),
    bytes(600),
])
def test_bad_info_frames_are_refused(payload: bytes) -> None:
    with pytest.raises(WireError):
        decode_info(payload)


def test_peers_round_trip_and_validation() -> None:
    frame = encode_peers({KEY_A: "127.0.0.1:4000", KEY_B: "[::1]:5000"})
    assert decode_peers(frame) == {KEY_A: ("127.0.0.1", 4000), KEY_B: ("::1", 5000)}
    for bad in (
        msgpack.packb({"peers": [[b"short", "127.0.0.1:1"]]}),
        msgpack.packb({"peers": [[KEY_A, "example.org:1"]]}),  # never a name to resolve
        msgpack.packb({"peers": [[KEY_A, "127.0.0.1:0"]]}),
        msgpack.packb({"peers": [[KEY_A]]}),
        msgpack.packb({"peers": [], "more": 1}),
        msgpack.packb({"peers": [[bytes([i]) * 32, "127.0.0.1:1"] for i in range(65)]}),
    ):
        with pytest.raises(WireError):
            decode_peers(bad)


def test_addresses() -> None:
    assert parse_address("10.99.0.11:4000") == ("10.99.0.11", 4000)
    assert parse_address("[fe80::1]:80") == ("fe80::1", 80)
    assert parse_address("10.0.0.1", default_port=7) == ("10.0.0.1", 7)
    assert format_address("::1", 9) == "[::1]:9"
    for bad in ("host:1", "10.0.0.1:", "10.0.0.1:99999", "1.2.3.4:x", ":5", "1.2.3.4:²"):
        with pytest.raises(WireError):
            parse_address(bad)


def test_entries_are_told_from_transport_frames() -> None:
    assert is_entry(b"NZ" + bytes(100))
    assert not is_entry(encode_peers({}))


@given(junk(["v", "tid", "name", "port", "seats", "full", "playing", "code", "peers"]))
def test_decoders_never_raise_anything_else(data: bytes) -> None:
    for decode in (decode_info, decode_peers):
        with contextlib.suppress(WireError):
            decode(data)
