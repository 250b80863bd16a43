"""Whatever bytes arrive, an event entry is read whole or refused with one line: no
other exception, and a book that refuses one is as it was."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from p2p_nerts.event.entries import EventError, Seated, TableSeats, decode, encode, letter

from .eventkit import EVENT_ID, ORGANISER, event, opened, player, registered, seat, seeds

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


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_seating_the_organiser_signs_is_taken_whole_or_refused_in_one_line(
        data: st.DataObject) -> None:
    """Well-formed and signed, but seating anyone anywhere: refused with one line (or,
    where it happens to be the draw's, taken), never another error."""
    book = event(9, games=3)
    keys = [*book.registrations, player(30).public_key]
    chosen = data.draw(st.lists(st.sampled_from(keys), unique=True, max_size=10))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(chosen)), max_size=4)))
    tables = [chosen[a:b] for a, b in zip([0, *cuts], [*cuts, len(chosen)], strict=True)]
    seated = Seated(EVENT_ID, data.draw(st.integers(1, 3)), seeds(3)[1],
                    tuple(data.draw(st.permutations(chosen))),
                    tuple(TableSeats(letter(i), t[0] if t else keys[0], tuple(t))
                          for i, t in enumerate(tables)),
                    {}, tuple(data.draw(st.lists(st.binary(min_size=16, max_size=16),
                                                 max_size=2))))
    before = (list(book.entries), dict(book.games))
    try:
        book.apply(encode(seated, ORGANISER))
    except EventError as exc:
        assert "\n" not in str(exc) and (list(book.entries), dict(book.games)) == before
