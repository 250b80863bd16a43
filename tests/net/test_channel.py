"""Table code: SPAKE2-keyed encrypted channel."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from p2p_nerts.net.channel import SPAKE_MSG_LEN, ChannelError, SecureChannel, normalize_code

TABLE = b"T" * 16


def pair(code_a: str, code_b: str, table_b: bytes = TABLE) -> tuple[SecureChannel, SecureChannel]:
    a = SecureChannel(code_a, TABLE, dialer=True)
    b = SecureChannel(code_b, table_b, dialer=False)
    ma, mb = a.start(), b.start()
    a.finish(mb)
    b.finish(ma)
    return a, b


def test_same_code_talks_both_ways() -> None:
    a, b = pair("pink otter", "  Pink   OTTER ")
    for i in range(5):
        assert b.open(a.seal(b"hello %d" % i)) == b"hello %d" % i
        assert a.open(b.seal(b"back %d" % i)) == b"back %d" % i
    assert a.binding == b.binding and len(a.binding) == 32


@pytest.mark.parametrize(("code_b", "table_b"), [("pink ottter", TABLE), ("pink otter", b"U" * 16)])
def test_wrong_code_or_table_fails_clearly(code_b: str, table_b: bytes) -> None:
    a, b = pair("pink otter", code_b, table_b)
    with pytest.raises(ChannelError, match="wrong table code"):
        b.open(a.seal(b"secret card data"))
    assert a.binding != b.binding


def test_replayed_reordered_or_tampered_frames_are_refused() -> None:
    a, b = pair("4417", "4417")
    first, second = a.seal(b"one"), a.seal(b"two")
    with pytest.raises(ChannelError):
        b.open(second)  # out of order
    assert b.open(first) == b"one"
    with pytest.raises(ChannelError):
        b.open(first)  # replayed
    tampered = bytearray(second)
    tampered[0] ^= 1
    with pytest.raises(ChannelError):
        b.open(bytes(tampered))


def test_ciphertext_shows_no_plaintext() -> None:
    a, _b = pair("4417", "4417")
    secret = b"NZ" + b"\x07" * 32 + b"Q\xe2\x99\xa0 card data"
    sealed = a.seal(secret)
    assert secret not in sealed and b"card data" not in sealed


@pytest.mark.parametrize("bad", ["", "   ", "x" * 65, "tab\tin\x00code"])
def test_bad_codes_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="table code"):
        normalize_code(bad)


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=64))
@example(bytes(SPAKE_MSG_LEN))  # a 33-byte frame whose side byte is not SPAKE2's: it once
# reached spake2, which asserts the side (an AssertionError, not a ChannelError)
def test_garbage_exchange_message_is_a_channel_error(junk: bytes) -> None:
    a = SecureChannel("4417", TABLE, dialer=True)
    a.start()
    try:
        a.finish(junk)
    except ChannelError:
        return
    with pytest.raises(ChannelError):
        a.open(b"\x00" * 40)
