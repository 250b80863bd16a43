"""The event's book: entries checked against what it holds, seatings re-drawn, standings
counted from real signed records matched to their seats."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p_nerts.event.book import (
    CheckedRecord,
    EventBook,
    MissingRecords,
    check_code,
    table_id_for,
)
from p2p_nerts.event.entries import EventError, Finished, Opened, Seated, TableSeats, decode, encode
from p2p_nerts.protocol.identity import fingerprint_of
from p2p_nerts.records.record import decode as decode_record
from p2p_nerts.records.record import encode as encode_record

from .eventkit import (
    EVENT_ID,
    ORGANISER,
    event,
    opened,
    play,
    play_all,
    player,
    players,
    registered,
    seat,
    seeds,
)


def test_a_book_takes_an_opening_then_registrations_once_each() -> None:
    book = EventBook()
    with pytest.raises(EventError, match="not opened"):
        book.apply(registered(player(0)))
    book.apply(opened())
    assert book.apply(registered(player(0))) is not None
    assert book.apply(registered(player(0))) is None  # the same entry again: nothing new
    with pytest.raises(EventError, match="already open"):
        book.apply(opened(games=2))
    assert list(book.registrations) == [player(0).public_key]


def test_a_code_is_checked_by_the_organisers_book() -> None:
    organiser = EventBook(code="4711")
    organiser.apply(opened(code="4711"))
    with pytest.raises(EventError, match="wrong code"):
        organiser.apply(registered(player(1), code="1234"))
    with pytest.raises(EventError, match="without the event's code"):
        organiser.apply(registered(player(1)))
    organiser.apply(registered(player(1), code="4711"))
    opening = decode(opened(code="4711")).entry
    assert isinstance(opening, Opened)
    assert check_code(opening, "4711") and not check_code(opening, "1234")


def test_the_first_seating_mixes_13_players_into_four_tables() -> None:
    book = event(13)
    seat(book)
    seated = book.games[1].seated
    assert [len(t.seats) for t in seated.tables] == [4, 3, 3, 3]
    assert [t.letter for t in seated.tables] == ["A", "B", "C", "D"]
    assert sorted(k for t in seated.tables for k in t.seats) == sorted(book.registrations)
    assert book.state() == "seating"


def test_a_seating_that_is_not_its_draw_is_refused_and_changes_nothing() -> None:
    book = event(8)
    seated = book.next_seating(book.registrations, seeds(4)[1])
    a, b = seated.tables
    moved = Seated(EVENT_ID, 1, seated.seed, seated.players,
                   (TableSeats("A", a.seats[0], (a.seats[0], a.seats[1], a.seats[2], b.seats[1])),
                    TableSeats("B", b.seats[0], (b.seats[0], a.seats[3], *b.seats[2:]))),
                   seated.rules, ())
    with pytest.raises(EventError, match="not what its draw gives"):
        book.apply(encode(moved, ORGANISER))
    assert book.games == {} and len(book.entries) == 9


def test_only_the_organiser_seats_and_only_registered_players() -> None:
    book = event(6)
    seated = book.next_seating(book.registrations, seeds(4)[1])
    with pytest.raises(EventError, match="only the organiser"):
        book.apply(encode(seated, player(0)))
    stranger = player(40).public_key
    bad = Seated(EVENT_ID, 1, seated.seed, (*seated.players, stranger), seated.tables,
                 seated.rules, ())
    with pytest.raises(EventError, match="did not register"):
        book.apply(encode(bad, ORGANISER))
    with pytest.raises(EventError, match="never seated"):
        book.apply(encode(Finished(EVENT_ID, 1), ORGANISER))


def test_standings_come_from_the_records_matched_to_their_seats() -> None:
    book = event(7)
    seat(book)
    records = play_all(book)
    assert book.state() == "playing"
    rows = book.standings()
    assert len(rows) == 7 and all(r.games == 1 for r in rows)
    assert sum(r.wins for r in rows) >= 2  # a winner at each table
    assert rows[0].place == 1 and rows == sorted(rows, key=lambda r: r.place)
    again = event(7)
    seat(again)
    for data in reversed(records):
        again.add_record(data)
    assert again.standings() == rows  # in any order


def test_a_record_of_a_table_not_in_the_seating_counts_for_nothing() -> None:
    book = event(6)
    seat(book)
    seated = book.games[1].seated
    other = Seated(EVENT_ID, 1, seated.seed, seated.players,
                   (TableSeats("A", seated.tables[1].seats[0],
                               (seated.tables[1].seats[0], *seated.tables[0].seats[:2])),),
                   {}, ())
    data = play(other, "A", table_id=bytes(16))
    assert not book.add_record(data)
    assert all(r.games == 0 for r in book.standings())


def test_a_player_who_did_not_turn_up_is_left_out_of_that_game() -> None:
    book = event(8)
    seat(book)
    seated = book.games[1].seated
    absent = seated.tables[0].seats[-1]
    assert book.add_record(play(seated, "A", without=[absent]))
    rows = {r.player: r for r in book.standings()}
    assert rows[absent].games == 0
    assert sum(r.games for r in rows.values()) == 3
    assert book.wall()["missing"] == []


def test_swiss_games_need_the_results_they_were_drawn_from() -> None:
    book = event(6, games=2)
    seat(book)
    records = play_all(book)
    raw = seat(book)
    seated = book.games[2].seated
    assert len(seated.counted) == 2
    player_book = event(6, games=2)
    player_book.apply(book.entries[7])
    with pytest.raises(MissingRecords) as info:
        player_book.apply(raw)
    assert len(info.value.table_ids) == 2
    for data in records:
        player_book.add_record(data)
    player_book.apply(raw)
    assert player_book.games[2].seated == seated


def test_the_wall_snapshot() -> None:
    book = event(7)
    seat(book)
    play_all(book)
    wall = book.wall()
    assert wall["event"] == {"name": "Friday Nerts", "game": 1, "games": 4,
                             "state": "playing"}
    assert [t["table"] for t in wall["tables"]] == ["A", "B"]
    assert all(t["state"] == "over" for t in wall["tables"])
    fps = {fingerprint_of(p.public_key) for p in players(7)}
    assert {r["fp"] for r in wall["standings"]} == fps
    assert wall["next"]["game"] == 1


def test_a_table_opened_under_another_id_counts_by_its_host_and_seats() -> None:
    book = event(6)
    seat(book)
    seated = book.games[1].seated
    assert book.add_record(play(seated, "B", table_id=bytes(range(50, 66))))
    [(game, table)] = book.results()
    assert (game, table) == (1, "B")
    assert {r.player for r in book.standings() if r.games} == set(seated.tables[1].seats)


def test_a_forged_copy_of_a_table_is_ignored_and_the_real_game_counts() -> None:
    """A stranger re-signs a table's game under keys of their own: the seating says
    whose table it is, so the copy fits no table and the real game counts, in either
    order (``nerts event``, which knows no seating, counts neither)."""
    from ..replica_harness import resigned

    book = event(6)
    seat(book)
    seated = book.games[1].seated
    real = play(seated, "A")
    forged = encode_record(resigned(decode_record(real), salt=3))
    for order in ([real, forged], [forged, real]):
        again = event(6)
        again.apply(book.entries[-1])
        for data in order:
            again.add_record(data)
        [result] = again.results().values()
        assert result.version.host == seated.tables[0].host
        assert {r.player for r in again.standings() if r.games} == set(seated.tables[0].seats)


def test_two_games_its_own_players_signed_for_one_table_leave_it_uncounted() -> None:
    """The table's very keys signed two different games under its id: which is the
    table's is anyone's guess, so neither counts (in either order)."""
    from .eventkit import _played

    book = event(6)
    seat(book)
    seated = book.games[1].seated
    table = seated.tables[0]
    tid = table_id_for(EVENT_ID, 1, "A")
    one, other = (_played(table.seats, tid, seed) for seed in (1, 2))
    assert one != other
    for order in ([one, other], [other, one]):
        again = event(6)
        again.apply(book.entries[-1])
        for data in order:
            again.add_record(data)
        assert again.results() == {} and len(again.records) == 2


def test_a_tables_id_is_as_docs_record_md_says() -> None:
    import hashlib

    expected = hashlib.sha256(b"p2p-nerts/event-table\x00" + EVENT_ID + b"\x00\x02AB").digest()
    assert table_id_for(EVENT_ID, 2, "AB") == expected[:16]


@settings(max_examples=25, deadline=None)
@given(st.permutations(range(4)), st.lists(st.integers(0, 3), max_size=3))
def test_standings_are_the_same_whatever_order_the_records_come_in(
        order: list[int], again: list[int]) -> None:
    """Records come from whoever kept them, in any order, some twice (each verified once
    for all examples: what is tried here is how the book takes them)."""
    reference, checked = _thirteen()
    book = event(13)
    book.apply(reference.entries[-1])
    for i in [*order, *again]:
        book.take_record(checked[i])
    assert book.standings() == reference.standings() and book.wall() == reference.wall()
    assert len(book.records) == 4


@functools.cache
def _thirteen() -> tuple[EventBook, list[CheckedRecord]]:
    book = event(13)
    seat(book)
    records = play_all(book)
    return book, [book.check_record(data) for data in records]


def test_a_record_is_verified_apart_from_the_book_and_taken_after() -> None:
    """The slow half (verifying) touches nothing: a book may be read, and take other
    records, meanwhile; the quick half then counts it."""
    book = event(7)
    seat(book)
    seated = book.games[1].seated
    a, b = (play(seated, t.letter) for t in seated.tables)
    checked = book.check_record(a)
    assert book.results() == {} and book.records == []
    assert book.add_record(b)
    assert book.take_record(checked) and not book.take_record(checked)
    assert len(book.results()) == 2 and book.records == [b, a]
    garbage = book.check_record(b"not a record")
    assert not book.take_record(garbage) and book.refused() == ["not a game record: the file "
                                                                "is not msgpack"]


def test_each_seed_is_the_one_the_opening_committed_to() -> None:
    """Committed before anyone registered, the seeds cannot be picked to suit who came:
    each game's shows itself the next link of the chain."""
    book = event(8, games=3)
    assert book.opened is not None and book.opened.seed_commit == seeds(3)[0]
    for seed in (bytes(32), seeds(3)[2], seeds(4)[1]):
        with pytest.raises(EventError, match="not the one the opening committed to"):
            book.apply(encode(book.next_seating(book.registrations, seed), ORGANISER))
    seat(book)
    with pytest.raises(EventError, match="game 2's seed is not"):
        book.apply(encode(book.next_seating(book.registrations, seeds(3)[1]), ORGANISER))
    seat(book)
    assert [book.games[g].seated.seed for g in (1, 2)] == seeds(3)[1:3]


def test_an_event_may_leave_its_seeds_to_the_organiser() -> None:
    book = event(8, committed=False)
    assert book.opened is not None and book.opened.seed_commit is None
    book.apply(encode(book.next_seating(book.registrations, bytes(range(32))), ORGANISER))
    assert book.games[1].seated.seed == bytes(range(32))
