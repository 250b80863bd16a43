"""The organiser's journal of an event: every entry and record the book took, in order.

An append-only file, so a crash (kill -9, a power cut) loses at most the item
being written: ``nerts event open --resume`` replays it into the very book
the organiser had. Layout::

    MAGIC b"NZEVJ\\x01" | item*
    item: kind (1: b"E" an event entry, b"R" a game record) | length (4, big-endian)
          | the bytes | CRC-32 of kind, length and bytes (4, big-endian)

Only what the book took is appended (the caller applies, then journals), so a
replay takes every item again. A last item cut short or garbled is a write
the crash interrupted: it is dropped, and the file cut back to the items
before it, so later appends follow whole items. Damage anywhere else is not
a torn write: the journal is refused with one line, and left as it is.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Final

from ..protocol.envelope import MAGIC as ENTRY_MAGIC
from ..records.record import MAX_RECORD
from .book import EventBook
from .entries import EventError

__all__ = ["EventJournal"]

MAGIC: Final = b"NZEVJ\x01"
ENTRY, RECORD = b"E", b"R"
_HEAD: Final = 5
_TAIL: Final = 4


class EventJournal:
    """An open journal file; `append` adds an item, `replay` reads them all back."""

    def __init__(self, path: Path, fd: int, items: list[tuple[bytes, bytes]]) -> None:
        self.path = path
        self._fd = fd
        self._items = items

    @classmethod
    def open(cls, path: Path) -> EventJournal:
        """Open (or create) the journal at ``path``; a torn last item is cut off.
        EventError when it cannot be opened or is not a whole journal."""
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError as exc:
            raise EventError(f"cannot open the event journal {path}: "
                             f"{exc.strerror or exc}") from None
        try:
            with open(fd, "rb", closefd=False) as f:
                data = f.read()
            if not data:
                os.write(fd, MAGIC)
                os.fsync(fd)
                return cls(path, fd, [])
            items, good = _read(path, data)
            if good < len(data):
                os.ftruncate(fd, good)
                os.fsync(fd)
            return cls(path, fd, items)
        except EventError:
            os.close(fd)
            raise
        except OSError as exc:
            os.close(fd)
            raise EventError(f"cannot read the event journal {path}: "
                             f"{exc.strerror or exc}") from None

    def append(self, data: bytes, *, sync: bool = True) -> None:
        """Add an entry's or a record's bytes (told apart by their first bytes) as
        one item; ``sync``: on the disk before this returns."""
        kind = ENTRY if data[:len(ENTRY_MAGIC)] == ENTRY_MAGIC else RECORD
        head = kind + len(data).to_bytes(4, "big")
        item = head + data + zlib.crc32(data, zlib.crc32(head)).to_bytes(4, "big")
        try:
            os.write(self._fd, item)
            if sync:
                os.fsync(self._fd)
        except OSError as exc:
            raise EventError(f"cannot write the event journal {self.path}: "
                             f"{exc.strerror or exc}") from None
        self._items.append((kind, bytes(data)))

    def items(self) -> list[tuple[bytes, bytes]]:
        """Every (kind, bytes) in the journal, in order."""
        return list(self._items)

    def replay(self, code: str | None = None) -> EventBook:
        """The book the journal's items make, taken in order (``code``: the event's,
        as the organiser's book knows it)."""
        book = EventBook(code)
        for number, (kind, data) in enumerate(self._items, start=1):
            if kind == ENTRY:
                try:
                    book.apply(data)
                except EventError as exc:
                    raise EventError(f"the event journal {self.path}: item {number} is "
                                     f"refused: {exc}") from None
            else:
                book.add_record(data)
        return book

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> EventJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read(path: Path, data: bytes) -> tuple[list[tuple[bytes, bytes]], int]:
    """The whole items of ``data`` and where the last ends (a torn tail after it)."""
    if not data.startswith(MAGIC):
        if MAGIC.startswith(data):  # the header itself was torn
            raise EventError(f"{path} is an empty event journal cut short: remove it")
        raise EventError(f"{path} is not an event journal")
    items: list[tuple[bytes, bytes]] = []
    at = len(MAGIC)
    while at < len(data):
        head = data[at:at + _HEAD]
        length = int.from_bytes(head[1:], "big") if len(head) == _HEAD else 0
        end = at + _HEAD + length + _TAIL
        whole = len(head) == _HEAD and head[:1] in (ENTRY, RECORD) and length <= MAX_RECORD
        if whole and end <= len(data):
            body = data[at + _HEAD:end - _TAIL]
            if zlib.crc32(body, zlib.crc32(head)).to_bytes(4, "big") == data[end - _TAIL:end]:
                items.append((head[:1], body))
                at = end
                continue
        if (whole and end >= len(data)) or len(data) - at < _HEAD:
            return items, at  # the last write, torn
        raise EventError(f"the event journal {path} is damaged at byte {at} "
                         f"(item {len(items) + 1})")
    return items, at
