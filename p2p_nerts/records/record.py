"""The game record: a table's signed entries, kept byte for byte, in one file.

Format (``docs/RECORD.md``): one msgpack array
``["p2p-nerts record", 1, header, entries]`` where ``header`` is a map of
``table_id`` (16 bytes), ``host`` (the host's 32-byte key), ``table`` (its
name) and ``saved_at`` (seconds since the epoch), and ``entries`` the signed
frames exactly as they were received or sent. Only the entries are trusted:
the header says where to look, and the verifier checks that the entries bear
it out (the table id of every entry, the host's signature on the rules and
seats). Entries are in (Lamport time, author) order, so two peers that hold
the same entries write the same list.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import msgpack

from ..game.cards import MAX_SEATS
from ..protocol.envelope import HEADER_LEN, MAGIC, MAX_ENTRY, MIN_ENTRY, TABLE_ID_LEN
from ..protocol.identity import PUBLIC_KEY_LEN
from ..protocol.journal import Kind, Record
from ..protocol.replica import EPHEMERAL, Replica

FORMAT = "p2p-nerts record"
VERSION = 1
#: What one seat signs in one round of a game, at most, as nerts plays: a PLAY per
#: card it lays on a foundation (at most 54 cards, each PLAY some 250 bytes), its
#: AUDIT (the round's move log: a few KiB), its COMMIT, REVEAL, STUCKs, NERTS,
#: SUMMARY and VERDICTs (a few hundred bytes each). A real game's seat signs about
#: a fifth of it.
SEAT_ROUND = 24 * 1024
#: Rounds one record holds at most: every game its table played in an evening
#: (a round takes minutes: several hours of play).
MAX_ROUNDS = 80
#: The largest record any game makes (15 MiB): a larger one is refused before it is
#: read, wherever it comes from (a file, a results server).
MAX_RECORD = MAX_SEATS * MAX_ROUNDS * SEAT_ROUND
#: Entries a record of that size can hold, each at least a header and a body.
MAX_ENTRIES = MAX_RECORD // MIN_ENTRY
MAX_TABLE_NAME = 200


class RecordError(Exception):
    """A record file that cannot be read, or whose entries do not hold up: one line."""


@dataclass(frozen=True, slots=True)
class GameRecord:
    table_id: bytes
    host: bytes
    table: str
    saved_at: float
    entries: tuple[bytes, ...]


def record_of(replica: Replica, table: str, saved_at: float,
              journal: Iterable[Record] = ()) -> GameRecord:
    """Every signed entry of the game, of every author, in a canonical order.

    The replica holds only the last rounds' entries (it forgets finished
    rounds); its ``journal`` holds all it delivered, up to what was written.
    The two together are the whole game.
    """
    frames = {raw for log in replica.authors.values() for raw in log.entries.values()
              if raw[:len(MAGIC)] == MAGIC}
    frames.update(r.data for r in journal if r.kind is Kind.ENTRY and _sequenced(r.data))
    return GameRecord(replica.table_id, replica.host_key, table, saved_at,
                      tuple(sorted(frames, key=_order)))


def merged(record: GameRecord, more: Iterable[bytes]) -> GameRecord:
    """The record with entries it lacked (signed results that came after the game)."""
    frames = set(record.entries) | {raw for raw in more if raw[:len(MAGIC)] == MAGIC}
    return GameRecord(record.table_id, record.host, record.table, record.saved_at,
                      tuple(sorted(frames, key=_order)))


def encode(record: GameRecord) -> bytes:
    header = {"table_id": record.table_id, "host": record.host, "table": record.table,
              "saved_at": record.saved_at}
    data: bytes = msgpack.packb([FORMAT, VERSION, header, list(record.entries)],
                                use_bin_type=True)
    return data


def decode(data: bytes | bytearray) -> GameRecord:
    """Read a record file's bytes; raises RecordError saying what is wrong."""
    if len(data) > MAX_RECORD:
        raise RecordError("not a game record: the file is too large")
    # Unpacked from a stream, not in one piece: msgpack's one-piece reader copies
    # whatever follows a value into its error, a whole record's size more at once.
    unpacker = msgpack.Unpacker(_Reading(data), read_size=1 << 16, raw=False,
                                strict_map_key=True, max_buffer_size=4 * MAX_ENTRY,
                                max_bin_len=MAX_ENTRY, max_array_len=MAX_ENTRIES,
                                max_map_len=16, max_str_len=1024)
    try:
        obj = unpacker.unpack()
        trailing = unpacker.tell() != len(data)
    except (ValueError, TypeError, msgpack.UnpackException, msgpack.OutOfData):
        trailing = True
    if trailing:
        raise RecordError("not a game record: the file is not msgpack")
    if not isinstance(obj, list) or len(obj) != 4 or obj[0] != FORMAT:
        raise RecordError("not a game record")
    if obj[1] != VERSION:
        shown = obj[1] if type(obj[1]) is int else "?"
        raise RecordError(f"a game record of version {shown}: this nerts reads {VERSION}")
    header, entries = obj[2], obj[3]
    if not isinstance(header, dict) or set(header) != {"table_id", "host", "table",
                                                        "saved_at"}:
        raise RecordError("the record's header is damaged")
    table_id, host, table, saved_at = (header["table_id"], header["host"], header["table"],
                                       header["saved_at"])
    if (type(table_id) is not bytes or len(table_id) != TABLE_ID_LEN
            or type(host) is not bytes or len(host) != PUBLIC_KEY_LEN
            or type(table) is not str or len(table) > MAX_TABLE_NAME
            or not table.isprintable()
            or type(saved_at) not in (int, float)):
        raise RecordError("the record's header is damaged")
    if not isinstance(entries, list) or not all(type(e) is bytes for e in entries):
        raise RecordError("the record's entries are damaged")
    return GameRecord(table_id, host, table, float(saved_at), tuple(entries))


class _Reading:
    """A record's bytes as a file, handed out a read at a time."""

    def __init__(self, data: bytes | bytearray) -> None:
        self._data = memoryview(data)
        self._at = 0

    def read(self, n: int) -> bytes:
        chunk = bytes(self._data[self._at:self._at + n])
        self._at += len(chunk)
        return chunk


def _sequenced(raw: bytes) -> bool:
    """Whether a journaled frame (checked when it came) is a sequenced entry: the
    journal keeps some ephemeral ones too (ACKs, a snapshot taken up)."""
    body = msgpack.unpackb(raw[HEADER_LEN:], raw=False)
    return body[6] not in EPHEMERAL


def _order(raw: bytes) -> tuple[int, bytes, bytes]:
    """(Lamport time, author, frame) read from the body without trusting it: the
    order only makes files equal, the verifier does not depend on it."""
    try:
        body = msgpack.unpackb(raw[HEADER_LEN:], raw=False)
        lamport = body[5] if isinstance(body, list) and len(body) > 5 else 0
    except (ValueError, TypeError, msgpack.UnpackException):
        lamport = 0
    return (lamport if type(lamport) is int else 0, raw[len(MAGIC):len(MAGIC) + PUBLIC_KEY_LEN],
            raw)
