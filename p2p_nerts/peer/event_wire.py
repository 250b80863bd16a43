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

A registered player is counted as connected (and so seated by the next
draw) only once it has proven, on this very connection, that it holds its
key: the organiser's answer carries a fresh ``nonce``, and the player signs
:func:`presence` of it (``{"here": signature}``) after its registration. A
registration is public (it is sent to everyone), so without this anyone
could make an absent player look present.

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

__all__ = ["BODY_TIME", "HELLO_TIME", "MAX_HELLO", "NONCE_LEN", "VERSION", "WireError",
           "hello", "presence", "read_body", "read_frame", "read_length", "write_frame"]

VERSION = 1
MAX_HELLO = MAX_ENTRY + 256
"""A hello carries one registration, at most an entry."""
MAX_FROM_ORGANISER = MAX_RECORD + 64
"""A frame from the organiser: one entry or one record, in a small map."""
HELLO_TIME = 5.0
"""Seconds a connection has to say hello (an honest player says it at once)."""
BODY_TIME = 60.0
"""Seconds a frame's body has to come once its header has: a game's record is at
most a few MiB, a second's work on any LAN."""
NONCE_LEN = 16
_PRESENCE = b"p2p-nerts/event-presence\x00"
_HEADER = struct.Struct(">I")


class WireError(ValueError):
    """A frame that is not the exchange's: the connection is closed."""


async def read_frame(reader: asyncio.StreamReader, limit: int) -> dict[str, Any]:
    """One frame's map; WireError for one larger than ``limit`` or not a map,
    ``asyncio.IncompleteReadError`` at the end of the stream."""
    return await read_body(reader, await read_length(reader, limit))


async def read_length(reader: asyncio.StreamReader, limit: int) -> int:
    """The next frame's length (its header read); WireError past ``limit``."""
    (length,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
    if length > limit:
        raise WireError(f"a frame of {length} bytes, more than the {limit} allowed")
    return int(length)


async def read_body(reader: asyncio.StreamReader, length: int) -> dict[str, Any]:
    """The map of a frame whose header said ``length``, read within ``BODY_TIME``."""
    try:
        async with asyncio.timeout(BODY_TIME):
            return _parsed(await reader.readexactly(length))
    except TimeoutError:
        raise WireError("a frame took too long to come") from None


def _parsed(data: bytes) -> dict[str, Any]:
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


def presence(event_id: bytes, nonce: bytes) -> bytes:
    """What a player signs to be counted present on a connection (see the module)."""
    return _PRESENCE + event_id + nonce
