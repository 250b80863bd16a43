"""Whatever bytes arrive, an event entry is read whole or refused with one line: no
other exception, and a book that refuses one is as it was."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from p2p_nerts.event.entries import EventError, decode

from .eventkit import event, opened, player, registered, seat

SETTINGS = settings(max_examples=300, deadline=None)


def _valid() -> list[bytes]:
    book = event(5)
    seat(book)
    return [opened(), registered(player(9)), book.entries[-1]]


VALID = _valid()


@SETTINGS
@given(which=st.sampled_from(range(len(VALID))), at=st.integers(0, 10**6),
       value=st.integers(0, 255), cut=st.integers(0, 10**6))
def test_a_changed_or_cut_entry_is_refused_in_one_line(which: int, at: int, value: int,
                                                       cut: int) -> None:
    raw = bytearray(VALID[which])
    raw[at % len(raw)] = value
    data = bytes(raw[:max(1, len(raw) - cut % 8)])
    if data == VALID[which]:
        return
    try:
        decode(data)
    except EventError as exc:
        assert "\n" not in str(exc) and str(exc)
    book = event(5)
    before = (list(book.entries), dict(book.registrations), dict(book.games))
    try:
        book.apply(data)
    except EventError:
        assert (book.entries, book.registrations, book.games) == before


@SETTINGS
@given(st.binary(max_size=400))
def test_random_bytes_are_refused_in_one_line(data: bytes) -> None:
    try:
        decode(data)
    except EventError as exc:
        assert "\n" not in str(exc)
