"""The organiser's journal: what it replays is the book it wrote, a torn last write is
dropped, damage elsewhere refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2p_nerts.event.entries import EventError
from p2p_nerts.event.journal import MAGIC, EventJournal

from .eventkit import event, play_all, seat


def _journaled(path: Path) -> list[bytes]:
    book = event(7)
    seat(book)
    records = play_all(book)
    with EventJournal.open(path) as journal:
        for raw in book.entries:
            journal.append(raw)
        for data in records:
            journal.append(data, sync=False)
    return [*book.entries, *records]


def test_a_replay_gives_the_same_book(tmp_path: Path) -> None:
    path = tmp_path / "event.journal"
    written = _journaled(path)
    with EventJournal.open(path) as journal:
        assert [data for _kind, data in journal.items()] == written
        book = journal.replay()
    original = event(7)
    seat(original)
    play_all(original)
    assert book.wall() == original.wall() and book.entries == original.entries
    assert book.records == original.records


@pytest.mark.parametrize("cut", [1, 3, 6, 200])
def test_a_torn_last_write_is_dropped_and_appends_follow_whole_items(tmp_path: Path,
                                                                    cut: int) -> None:
    path = tmp_path / "event.journal"
    written = _journaled(path)
    data = path.read_bytes()
    path.write_bytes(data[:-cut])
    with EventJournal.open(path) as journal:
        assert [d for _k, d in journal.items()] == written[:-1]
        journal.append(written[-1])
    with EventJournal.open(path) as journal:
        assert [d for _k, d in journal.items()] == written
    assert path.read_bytes() == data


def test_damage_before_the_end_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "event.journal"
    _journaled(path)
    data = bytearray(path.read_bytes())
    data[len(MAGIC) + 40] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(EventError, match=r"damaged at byte 6 \(item 1\)"):
        EventJournal.open(path)
    assert path.read_bytes() == bytes(data)


def test_not_a_journal(tmp_path: Path) -> None:
    path = tmp_path / "other"
    path.write_bytes(b"hello, this is something else")
    with pytest.raises(EventError, match="not an event journal"):
        EventJournal.open(path)
    with pytest.raises(EventError, match="cannot open"):
        EventJournal.open(tmp_path / "missing" / "dir" / "j")
