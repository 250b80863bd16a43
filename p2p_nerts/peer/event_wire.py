"""The exchange between an event's organiser and its players, over one TCP connection.

Every frame is a 4-byte big-endian length and a msgpack map. The player (or
anyone following the event) speaks first, once: ``{"v": 1, "reg": bytes or
None, "from": [entries, records]}`` -- its signed registration, if it
registers, and how many of the event's entries and game records it holds
already. The organiser answers ``{"v": 1, "ok": True}`` or ``{"v": 1,
"error": line}`` (a wrong code, a registration refused), then sends every
entry (``{"e": bytes}``) and record (``{"r": bytes}``) from those counts on,
and each new one as it comes, for as long as the connection lasts. The player
sends the records of the event's games it played (``{"r": bytes}``) whenever
it has new ones, and again at each connection: a game played while the
organiser was down counts once it is back.

Nothing here is trusted: the entries are signed (``event.entries``) and each
record proves itself (``records``); the organiser and every player check them
all. The organiser's order is its journal's, so counts mean the same after
it comes back from a crash.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any

import msgpack

from ..protocol.envelope import MAX_ENTRY
from ..records.record import MAX_RECORD

__all__ = ["HELLO_TIME", "MAX_HELLO", "VERSION", "WireError", "hello", "read_frame",
           "write_frame"]

VERSION = 1
MAX_HELLO = MAX_ENTRY + 256
"""A hello carries one registration, at most an entry."""
MAX_FROM_ORGANISER = MAX_RECORD + 64
"""A frame from the organiser: one entry or one record, in a small map."""
HELLO_TIME = 5.0
"""Seconds a connection has to say hello (an honest player says it at once)."""
_HEADER = struct.Struct(">I")


class WireError(ValueError):
    """A frame that is not the exchange's: the connection is closed."""


async def read_frame(reader: asyncio.StreamReader, limit: int) -> dict[str, Any]:
    """One frame's map; WireError for one larger than ``limit`` or not a map,
    ``asyncio.IncompleteReadError`` at the end of the stream."""
    (length,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
    if length > limit:
        raise WireError(f"a frame of {length} bytes, more than the {limit} allowed")
    data = await reader.readexactly(length)
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except (ValueError, TypeError, msgpack.UnpackException):
        raise WireError("a malformed frame") from None
    if not isinstance(value, dict):
        raise WireError("a malformed frame")
    return value


def write_frame(writer: asyncio.StreamWriter, value: dict[str, Any]) -> None:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    writer.write(_HEADER.pack(len(data)) + data)


def hello(value: dict[str, Any]) -> tuple[bytes | None, int, int]:
    """A player's hello: its registration (None: it only follows) and the counts of
    entries and records it holds; WireError if it is not one."""
    reg = value.get("reg")
    held = value.get("from")
    if value.get("v") != VERSION or not (reg is None or type(reg) is bytes) or not (
            isinstance(held, list) and len(held) == 2
            and all(type(n) is int and 0 <= n < 1 << 31 for n in held)):
        raise WireError("a malformed hello")
    return reg, held[0], held[1]
