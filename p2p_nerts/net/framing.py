"""Length-prefixed frames on a TCP stream, sans I/O.

TCP delivers bytes, not messages: a read may hold half a frame or three. The
decoder here owns that bookkeeping so the socket code stays a thin loop
(``for payload in decoder.feed(data): ...``) and the logic is tested without
sockets. A frame is a 4-byte big-endian length followed by that many bytes.

The size limit is checked on the *declared* length, before any payload is
buffered, so a peer cannot make us allocate memory by announcing a huge frame.
"""

from __future__ import annotations

import struct
from typing import Any

import msgpack

__all__ = ["HEADER_SIZE", "MAX_FRAME", "FrameDecoder", "FrameError", "encode_frame"]

MAX_FRAME = 64 * 1024 + 1024
"""Largest payload accepted: a 64 KiB message body plus room for its envelope."""

HEADER_SIZE = 4
_HEADER = struct.Struct(">I")


class FrameError(Exception):
    """The stream is not valid framing; the connection must be closed.

    There is no way to resynchronise a length-prefixed stream after a bad
    header, so this is fatal for the connection (never for the process).
    """


def encode_frame(payload: bytes) -> bytes:
    """Prefix ``payload`` with its length; refuse what the peer would reject."""
    if len(payload) > MAX_FRAME:
        raise FrameError(f"frame of {len(payload)} bytes exceeds the {MAX_FRAME}-byte limit")
    return _HEADER.pack(len(payload)) + payload


class FrameDecoder:
    """Turns arbitrary chunks of a byte stream back into whole payloads."""

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self._max_frame = max_frame
        self._buffer = bytearray()
        self._failed: FrameError | None = None

    @property
    def buffered(self) -> int:
        """Bytes held for an incomplete frame (lets callers assert nothing is lost)."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes]:
        """Add received bytes; return every payload completed by them, in order.

        Raises ``FrameError`` as soon as a header declares more than the limit,
        and keeps raising it afterwards: the stream is dead from that point, and
        frames completed earlier in the same call are dropped with it.
        """
        if self._failed is not None:
            raise self._failed
        self._buffer += data
        frames: list[bytes] = []
        while len(self._buffer) >= HEADER_SIZE:
            (length,) = _HEADER.unpack_from(self._buffer)
            if length > self._max_frame:
                self._buffer.clear()
                self._failed = FrameError(
                    f"peer declared a {length}-byte frame; the limit is {self._max_frame}"
                )
                raise self._failed
            end = HEADER_SIZE + length
            if len(self._buffer) < end:
                break
            frames.append(bytes(self._buffer[HEADER_SIZE:end]))
            del self._buffer[:end]
        return frames


def unpack_map(payload: bytes, limit: int, what: str,
               error: type[Exception]) -> dict[str, Any]:
    """One small msgpack map with str keys from a peer, or ``error`` saying what is wrong.

    The transport's own messages (info, peers, handshake) are decoded this one
    strict way; the game's entries have their own, stricter envelope.
    """
    if len(payload) > limit:
        raise error(f"{what} of {len(payload)} bytes is too large")
    try:
        message = msgpack.unpackb(payload, raw=False, strict_map_key=True)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise error(f"{what} is not valid msgpack: {exc}") from None
    if not isinstance(message, dict):
        raise error(f"{what} is a {type(message).__name__}, expected a map")
    return message
