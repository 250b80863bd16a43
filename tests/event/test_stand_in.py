"""A table whose host never came: a later seat stands in under the table's id, and the
book counts its game where most of the table played it; a seat that opens a rival table
can neither split nor steal the table's game (the rule is at the top of
``event/book.py``)."""

from __future__ import annotations

import functools

import pytest

from p2p_nerts.event.book import EventBook, stand_in_quorum, table_id_for
from p2p_nerts.event.entries import EventError, TableSeats
from p2p_nerts.event.export import export, verify_export

from .eventkit import EVENT_ID, event, seat, table_game


@functools.cache
def _seated() -> tuple[EventBook, TableSeats]:
    """Four players at one table of four."""
    book = event(4, games=2)
    seat(book)
    [table] = book.games[1].seated.tables
    return book, table


def _game(hosted_by: int, *others: int, seed: int = 1, table_id: bytes | None = None
          ) -> bytes:
    """The game of the table's seats ``hosted_by`` (its host) and ``others``."""
    _book, table = _seated()
    keys = tuple(table.seats[i] for i in (hosted_by, *others))
    return table_game(keys, table_id or table_id_for(EVENT_ID, 1, "A"), seed)


def _book_with(*records: bytes) -> EventBook:
    book = event(4, games=2)
    book.apply(_seated()[0].entries[-1])
    for data in records:
        book.add_record(data)
    return book


def _played(book: EventBook) -> set[bytes]:
    return {row.player for row in book.standings() if row.games}


def _seats(*indices: int) -> set[bytes]:
    return {_seated()[1].seats[i] for i in indices}


def _either_order(*records: bytes) -> list[EventBook]:
    return [_book_with(*records), _book_with(*reversed(records))]


def test_a_stand_ins_game_counts_for_those_who_came_and_its_export_verifies() -> None:
    book = _book_with(_game(1, 2, 3))
    [result] = book.results().values()
    assert result.version.host == _seated()[1].seats[1]
    assert _played(book) == _seats(1, 2, 3)  # the host who never came has no game
    verified = verify_export(export(book))
    assert verified.records == 1 and verified.standings == book.standings()


def test_a_rival_table_opened_under_a_later_seat_neither_splits_nor_steals_the_game() -> None:
    """Seats 2 and 3 open a table of their own under the table's id (seat 2 hosting)
    while the first seat hosts the real one: the first seat's game counts whole, and
    the rivals' game counts for nothing, whichever record comes first, and before the
    real one comes (the table is not taken for played while it is being played)."""
    honest, rival = _game(0, 1), _game(2, 3, seed=2)
    assert _book_with(rival).results() == {}
    for book in _either_order(honest, rival):
        [result] = book.results().values()
        assert result.version.host == _seated()[1].seats[0]
        assert _played(book) == _seats(0, 1)
        data = export(book)
        assert verify_export(data).records == 1  # the rival's record is left out
    with pytest.raises(EventError, match="game record 2 is of no table this event seated"):
        verify_export(_with_record(data, rival))


def test_a_stand_in_counts_where_most_of_the_table_played_and_not_where_half_did() -> None:
    """A game of ``stand_in_quorum`` players counts, one fewer does not: the number a
    stand-in host waits for at its turn-up time before it deals (``deal_with``)."""
    _book, table = _seated()
    assert stand_in_quorum(table) == 3
    assert _played(_book_with(_game(2, 1, 3))) == _seats(1, 2, 3)
    assert _book_with(_game(1, 2)).results() == {}
    assert _book_with(_game(3, 2)).results() == {}
    keys = [bytes([k]) * 32 for k in range(5)]
    assert [stand_in_quorum(TableSeats("A", keys[0], tuple(keys[:n]))) for n in (3, 4, 5)
            ] == [2, 3, 3]


def test_of_two_stand_ins_games_the_earlier_seats_counts() -> None:
    """The first seat never came; the second stands in with the third and fourth; the
    third opens a table too and plays the second and fourth there as well (both sat
    at two tables): the second seat's game counts."""
    for book in _either_order(_game(1, 2, 3), _game(2, 1, 3, seed=3)):
        [result] = book.results().values()
        assert result.version.host == _seated()[1].seats[1]


def test_a_silent_first_seat_that_plays_later_outranks_its_stand_in_as_its_host_could(
        ) -> None:
    """The first seat keeps quiet, the second stands in with the others, then the first
    plays a game of its own with the fourth: the first seat's game counts (it hosts
    the table; as host it could have let in the fourth alone all the same)."""
    for book in _either_order(_game(1, 2, 3), _game(0, 3, seed=4)):
        assert _played(book) == _seats(0, 3)


def test_two_games_under_the_earliest_host_leave_the_table_uncounted() -> None:
    for book in _either_order(_game(1, 2, 3, seed=5), _game(1, 2, 3, seed=6),
                              _game(2, 1, 3, seed=7)):
        assert book.results() == {}


def test_a_stand_in_counts_only_under_the_tables_own_id() -> None:
    """Matched by keys alone (another table id), a game fits only with the first seat as
    its host: a stand-in's game must carry the id the seating gave the table."""
    assert _book_with(_game(1, 2, 3, table_id=bytes(range(50, 66)))).results() == {}
    assert _played(_book_with(_game(0, 2, table_id=bytes(range(50, 66))))) == _seats(0, 2)


def _with_record(data: bytes, record: bytes) -> bytes:
    import msgpack

    name, version, entries, records = msgpack.unpackb(data, raw=False)
    packed: bytes = msgpack.packb([name, version, entries, [*records, record]],
                                  use_bin_type=True)
    return packed
