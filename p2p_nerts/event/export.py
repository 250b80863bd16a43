"""An event in one file: every signed entry and every game record, checkable anywhere.

Format: one msgpack value ``["p2p-nerts event", 1, entries, records]``:
``entries`` the event's signed entries (``entries.py``) in the order the book
took them, ``records`` the game records (``docs/RECORD.md``) of its tables,
each a whole record file's bytes. Nothing else: no standings, no names
beyond what the entries sign. A verifier that was not there builds the book
again from the bytes (`verify_export`), which checks every signature, draws
each seating again from its inputs, verifies every record by replaying it
and matches it to its seat, and recomputes the standings; the first thing
that does not hold up is one line of `EventError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import msgpack

from ..protocol.identity import fingerprint_of
from ..records.record import MAX_RECORD, RecordError
from ..records.record import decode as decode_record
from .book import EventBook, MissingRecords, Row
from .entries import MAX_GAMES, MAX_PLAYERS, EventError, Opened

__all__ = ["FORMAT", "MAX_EXPORT", "Verified", "export", "is_export", "verify_export"]

FORMAT: Final = "p2p-nerts event"
VERSION: Final = 1
#: Records an export holds at most: a table a game, for the largest event.
_MAX_RECORDS: Final = MAX_GAMES * MAX_PLAYERS // 3
#: Entries: the opening, a registration per player, a seating and an end per game.
_MAX_ENTRIES: Final = 1 + MAX_PLAYERS + 2 * MAX_GAMES
#: The largest export read (1 GiB): far beyond an evening's (some 300 records of a
#: few hundred KiB); a larger file is refused before it is read.
MAX_EXPORT: Final = 1 << 30


@dataclass(frozen=True, slots=True)
class Verified:
    """What a verified export proves: the event, its seatings and its standings."""

    opened: Opened
    games: int
    tables: int
    records: int
    entries: int
    standings: list[Row]

    def lines(self) -> list[str]:
        """The standings as ``nerts verify`` prints them."""
        width = max((len(r.name) for r in self.standings), default=6)
        out = [f"  {'':3} {'Player':<{width}}  {'Games':>5} {'Wins':>4} {'Points':>6} "
               f"{'Opp.wins':>8}  Fingerprint"]
        out += [f"  {r.place:>2}. {r.name:<{width}}  {r.games:>5} {r.wins:>4} {r.points:>6} "
                f"{r.tiebreak:>8}  {r.fp}" for r in self.standings]
        return out

    def summary(self) -> str:
        seeds = ("each seed the one the opening committed to"
                 if self.opened.seed_commit is not None else "seeds of the organiser's choosing")
        return (f"event {self.opened.name!r} by {fingerprint_of(self.opened.organiser)}: "
                f"{self.entries} signed entries, {self.games} of {self.opened.games} games "
                f"seated at {self.tables} tables ({seeds}), {self.records} game records "
                "verified")


def export(book: EventBook) -> bytes:
    """The book's whole event as one file's bytes: its entries and one record of each
    game it counts (a record of no table of the event, or one that another record of
    its table contradicts, counts for nothing and is left out)."""
    counted = {(r.version.table_id, r.version.host) for r in book.results().values()}
    records: list[bytes] = []
    for data in book.records:
        header = decode_record(data)
        key = (header.table_id.hex(), header.host)
        if key in counted:
            records.append(data)
            counted.discard(key)
    packed: bytes = msgpack.packb([FORMAT, VERSION, list(book.entries), records],
                                  use_bin_type=True)
    return packed


def is_export(data: bytes | bytearray) -> bool:
    """Whether the bytes claim to be an event export (a cheap look at the start: a
    msgpack array of 4 whose first element is the format's name)."""
    name = msgpack.packb(FORMAT)
    return len(data) > 1 + len(name) and data[0] == 0x94 and data[1:1 + len(name)] == name


def verify_export(data: bytes | bytearray) -> Verified:
    """Check an export in full and recompute its standings; EventError (one line)
    naming the first thing that does not hold up."""
    entries, records = _read(data)
    book = EventBook()
    # Records first: a Swiss seating is checked against the standings it was drawn
    # from, whose records must be in the book when it comes.
    record_ids: list[tuple[str, bytes]] = []
    for number, raw in enumerate(records, start=1):
        try:
            record = decode_record(raw)
        except RecordError as exc:
            raise EventError(f"game record {number}: {exc}") from None
        before = len(book.refused())
        book.add_record(raw)
        if len(book.refused()) > before:
            raise EventError(f"game record {number} does not verify: {book.refused()[-1]}")
        record_ids.append((record.table_id.hex(), record.host))
    for number, raw in enumerate(entries, start=1):
        try:
            if book.apply(raw) is None:
                raise EventError("the same entry twice")
        except MissingRecords as exc:
            raise EventError(f"entry {number}: game {exc.game}'s seating was drawn from "
                             f"results the export lacks ({len(exc.table_ids)} game "
                             f"record{'' if len(exc.table_ids) == 1 else 's'})") from None
        except EventError as exc:
            raise EventError(f"entry {number}: {exc}") from None
    if book.opened is None:
        raise EventError("the export holds no opening of an event")
    results = book.results()
    matched = {(r.version.table_id, r.version.host) for r in results.values()}
    for number, key in enumerate(record_ids, start=1):
        if key not in matched:
            raise EventError(f"game record {number} is of no table this event seated "
                             "(or another record of that table says otherwise)")
    return Verified(book.opened, len(book.games),
                    sum(len(g.seated.tables) for g in book.games.values()), len(records),
                    len(entries), book.standings())


def _read(data: bytes | bytearray) -> tuple[list[bytes], list[bytes]]:
    if len(data) > MAX_EXPORT:
        raise EventError("not an event export: the file is too large")
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=True,
                                max_buffer_size=max(len(data), 1), max_bin_len=MAX_RECORD,
                                max_array_len=max(_MAX_RECORDS, _MAX_ENTRIES), max_map_len=0,
                                max_str_len=64)
    unpacker.feed(data)
    try:
        obj = unpacker.unpack()
        trailing = unpacker.tell() != len(data)
    except (ValueError, TypeError, msgpack.UnpackException, msgpack.OutOfData):
        trailing = True
    if trailing or not isinstance(obj, list) or len(obj) != 4 or obj[0] != FORMAT:
        raise EventError("not an event export")
    if obj[1] != VERSION:
        shown = obj[1] if type(obj[1]) is int else "?"
        raise EventError(f"an event export of version {shown}: this nerts reads {VERSION}")
    entries, records = obj[2], obj[3]
    if (not isinstance(entries, list) or not isinstance(records, list)
            or not all(type(e) is bytes for e in [*entries, *records])
            or len(entries) > _MAX_ENTRIES or len(records) > _MAX_RECORDS):
        raise EventError("the event export is damaged")
    return entries, records
