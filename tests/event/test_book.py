"""The event's book: entries checked against what it holds, seatings re-drawn, standings
counted from real signed records matched to their seats."""

from __future__ import annotations

import pytest

from p2p_nerts.event.book import EventBook, MissingRecords, check_code
from p2p_nerts.event.entries import EventError, Finished, Seated, TableSeats, decode, encode
from p2p_nerts.protocol.identity import fingerprint_of

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
    assert check_code(opening, "4711") and not check_code(opening, "1234")  # type: ignore[arg-type]


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
    seated = book.next_seating(book.registrations, bytes(32))
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
    seated = book.next_seating(book.registrations, bytes(32))
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
