"""Length-prefixed framing: any chunking of the stream yields the same frames."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2p_nerts.net.framing import MAX_FRAME, FrameDecoder, FrameError, encode_frame

pytestmark = pytest.mark.timeout(60)

payloads = st.lists(st.binary(max_size=300), max_size=12)


def test_encoding_is_length_then_payload() -> None:
    assert encode_frame(b"abc") == b"\x00\x00\x00\x03abc"
    assert encode_frame(b"") == b"\x00\x00\x00\x00"


def test_byte_by_byte_input() -> None:
    stream = encode_frame(b"hello") + encode_frame(b"") + encode_frame(b"world")
    decoder = FrameDecoder()
    out: list[bytes] = []
    for i in range(len(stream)):
        out += decoder.feed(stream[i : i + 1])
    assert out == [b"hello", b"", b"world"]
    assert decoder.buffered == 0


@given(frames=payloads, data=st.data())
def test_any_split_decodes_to_the_same_frames(frames: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(encode_frame(f) for f in frames)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    decoder = FrameDecoder()
    out: list[bytes] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        out += decoder.feed(stream[start:end])
    assert out == frames
    assert decoder.buffered == 0


@given(frames=payloads, tail=st.binary(min_size=1, max_size=20))
def test_incomplete_tail_is_held_not_lost(frames: list[bytes], tail: bytes) -> None:
    partial = encode_frame(tail)[:-1]
    decoder = FrameDecoder()
    assert decoder.feed(b"".join(map(encode_frame, frames)) + partial) == frames
    assert decoder.buffered == len(partial)
    assert decoder.feed(tail[-1:]) == [tail]


def test_largest_frame_passes() -> None:
    payload = bytes(MAX_FRAME)
    assert FrameDecoder().feed(encode_frame(payload)) == [payload]


def test_oversized_header_fails_at_once_and_for_good() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(encode_frame(b"ok")) == [b"ok"]
    with pytest.raises(FrameError, match="limit"):
        decoder.feed(struct.pack(">I", MAX_FRAME + 1))  # no payload needed to refuse it
    assert decoder.buffered == 0
    with pytest.raises(FrameError):
        decoder.feed(encode_frame(b"late"))


def test_oversized_header_split_across_reads() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(b"\xff\xff") == []
    with pytest.raises(FrameError):
        decoder.feed(b"\xff\xff")


def test_frames_before_a_bad_header_are_not_returned_from_the_failing_call() -> None:
    # The connection is dead either way; the caller must not act on a half-read batch.
    decoder = FrameDecoder()
    with pytest.raises(FrameError):
        decoder.feed(encode_frame(b"a") + b"\xff\xff\xff\xff")


def test_encoder_refuses_what_the_peer_would_refuse() -> None:
    with pytest.raises(FrameError):
        encode_frame(bytes(MAX_FRAME + 1))


def test_custom_limit() -> None:
    decoder = FrameDecoder(max_frame=4)
    assert decoder.feed(encode_frame(b"1234")) == [b"1234"]
    with pytest.raises(FrameError):
        decoder.feed(encode_frame(b"12345"))
