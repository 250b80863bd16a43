"""Link entries' tags: they check in order, and any change, replay or loss is caught."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2p_nerts.net.linkmac import TAG_SIZE, FrameMac, MacError

A_TO_B, B_TO_A = b"a" * 32, b"b" * 32


def pair() -> tuple[FrameMac, FrameMac]:
    return FrameMac(A_TO_B, B_TO_A), FrameMac(B_TO_A, A_TO_B)


def test_frames_check_in_order() -> None:
    a, b = pair()
    frames = [a.tag(b"NL" + bytes([i]) * 40) for i in range(3)]
    assert all(len(f) == 42 + TAG_SIZE for f in frames)
    assert [b.check(f) for f in frames] == [b"NL" + bytes([i]) * 40 for i in range(3)]
    assert a.check(b.tag(b"NLback")) == b"NLback"


@pytest.mark.parametrize("spot", [0, 5, -1])
def test_a_flipped_bit_is_caught(spot: int) -> None:
    a, b = pair()
    frame = bytearray(a.tag(b"NL" + b"x" * 20))
    frame[spot] ^= 1
    with pytest.raises(MacError):
        b.check(bytes(frame))


def test_replayed_reordered_or_lost_frames_are_caught() -> None:
    a, b = pair()
    first, second, third = (a.tag(b"NL%d" % i) for i in range(3))
    b.check(first)
    with pytest.raises(MacError):
        b.check(first)  # replayed
    with pytest.raises(MacError):
        b.check(third)  # second was lost (or comes later)
    assert b.check(second) == b"NL1"


def test_a_frame_cannot_be_reflected_to_its_sender() -> None:
    a, _b = pair()
    with pytest.raises(MacError):
        a.check(a.tag(b"NLmine"))
    with pytest.raises(MacError):
        a.check(b"short")
    with pytest.raises(ValueError):
        FrameMac(A_TO_B, A_TO_B)


@given(st.binary(max_size=80))
def test_any_frame_either_checks_or_is_a_mac_error(frame: bytes) -> None:
    mac = FrameMac(b"s" * 32, b"r" * 32)
    try:
        mac.check(frame)
    except MacError:
        return
    raise AssertionError("a frame nobody tagged passed the check")
