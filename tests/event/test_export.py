"""An event's export verifies on a machine that was not there, and any change to it is
refused: a changed seat, a forged registration, an edited result, a record left out."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p_nerts import cli
from p2p_nerts.event.book import EventBook
from p2p_nerts.event.entries import EventError, Registered, Seated, TableSeats, decode, encode
from p2p_nerts.event.export import export, is_export, verify_export
from p2p_nerts.protocol.envelope import HEADER_LEN, open_entry, seal
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import MsgType
from p2p_nerts.records.record import decode as decode_record
from p2p_nerts.records.record import encode as encode_record

from .eventkit import EVENT_ID, ORGANISER, event, play_all, players, seat


@functools.cache
def _evening() -> tuple[EventBook, bytes]:
    """Seven players, two games (the second drawn by standings), every table played."""
    book = event(7, games=2)
    for _game in range(2):
        seat(book)
        play_all(book)
    return book, export(book)


def _parts(data: bytes) -> tuple[list[bytes], list[bytes]]:
    _name, _version, entries, records = msgpack.unpackb(data, raw=False)
    return list(entries), list(records)


def _packed(entries: list[bytes], records: list[bytes]) -> bytes:
    data: bytes = msgpack.packb(["p2p-nerts event", 1, entries, records], use_bin_type=True)
    return data


def test_an_export_verifies_and_gives_the_books_standings() -> None:
    book, data = _evening()
    assert is_export(data) and not is_export(encode_record(decode_record(book.records[0])))
    verified = verify_export(data)
    assert verified.standings == book.standings()
    assert (verified.games, verified.tables, verified.records) == (2, 4, 4)
    assert book.games[2].seated.counted  # the second game was drawn from the first's results
    assert sum(r.games for r in verified.standings) == 14


def test_an_export_leaves_out_records_that_count_for_nothing() -> None:
    """A copy of a counted game, and a game of no table of the event, stay out."""
    from ..protocol.test_records import _record

    book, data = _evening()
    first, second = book.entries[8], book.entries[9]  # the two seatings
    again = event(7, games=2)
    again.apply(first)
    for record in book.records[:2]:
        assert again.add_record(record)
    assert not again.add_record(encode_record(_record()))
    copy = decode_record(book.records[0])
    assert not again.add_record(encode_record(type(copy)(
        copy.table_id, copy.host, "another keeper's name", copy.saved_at + 5, copy.entries)))
    again.apply(second)
    for record in book.records[2:]:
        assert again.add_record(record)
    assert len(again.records) == 6 and export(again) == data


def test_nerts_verify_reads_an_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    book, data = _evening()
    file = tmp_path / "evening.nerts-event"
    file.write_bytes(data)
    assert cli.main(["verify", str(file)]) == 0
    out, err = capsys.readouterr()
    assert "verified: event 'Friday Nerts'" in err and "4 game records verified" in err
    assert "each seed the one the opening committed to" in err
    for row in book.standings():
        assert f"{row.place:>2}. {row.name}" in out and row.fp in out


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes,
             why: str) -> None:
    with pytest.raises(EventError, match=re.escape(why)):
        verify_export(data)
    file = tmp_path / "tampered"
    file.write_bytes(data)
    assert cli.main(["verify", str(file)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and why in err
    assert "Traceback" not in err


def test_a_changed_seat_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _book, data = _evening()
    entries, records = _parts(data)
    i = next(k for k, raw in enumerate(entries) if isinstance(decode(raw).entry, Seated))
    seated = decode(entries[i]).entry
    assert isinstance(seated, Seated)
    a, b = seated.tables
    swapped = (TableSeats("A", a.host, (*a.seats[:-1], b.seats[-1])),
               TableSeats("B", b.host, (*b.seats[:-1], a.seats[-1])))
    # Changed in place, the signature gives it away; signed again, the draw does.
    body = msgpack.unpackb(entries[i][HEADER_LEN:], raw=False)
    body[8]["tables"] = [[t.letter, t.host, list(t.seats)] for t in swapped]
    changed = entries[i][:HEADER_LEN] + msgpack.packb(body, use_bin_type=True)
    _refused(tmp_path, capsys, _packed([*entries[:i], changed, *entries[i + 1:]], records),
             f"entry {i + 1}: an event entry's signature does not match")
    resigned = encode(Seated(EVENT_ID, 1, seated.seed, seated.players, swapped, seated.rules,
                             seated.counted), ORGANISER)
    _refused(tmp_path, capsys, _packed([*entries[:i], resigned, *entries[i + 1:]], records),
             f"entry {i + 1}: game 1's seating is not what its draw gives")


def test_a_forged_registration_is_refused(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The organiser adds a player who never registered: signed by the organiser, as no
    one else's key is at hand, the registration names a key it was not signed by."""
    _book, data = _evening()
    entries, records = _parts(data)
    ghost = Identity.from_seed(bytes(range(32)), "Ghost").public_key
    forged = seal(ORGANISER, table_id=EVENT_ID, round=0, seq=1, lamport=1, type=201,
                  payload={"player": ghost, "name": "Ghost", "code_proof": b""}).raw
    _refused(tmp_path, capsys, _packed([*entries[:2], forged, *entries[2:]], records),
             "entry 3: an event entry signed by another key than the one it names")


def test_a_seated_player_who_never_registered_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _book, data = _evening()
    entries, records = _parts(data)
    dropped = next(k for k, raw in enumerate(entries)
                   if isinstance(decode(raw).entry, Registered))
    _refused(tmp_path, capsys, _packed(entries[:dropped] + entries[dropped + 1:], records),
             "who did not register")


def _edited_result(record: bytes) -> bytes:
    """The record with one seat's final totals raised and signed again by that seat:
    a player who lies about the result under their own key."""
    rec = decode_record(record)
    entries = list(rec.entries)
    i = next(k for k, raw in enumerate(entries) if open_entry(raw).type == MsgType.RESULT)
    entry = open_entry(entries[i])
    author = next(p for p in players(7) if p.public_key == entry.author)
    payload = dict(entry.payload)
    totals = payload["t"]
    assert isinstance(totals, list)
    payload["t"] = [totals[0] + 50, *totals[1:]]
    entries[i] = seal(author, table_id=entry.table_id, round=entry.round, seq=entry.seq,
                      lamport=entry.lamport, type=entry.type, payload=payload,
                      prev=entry.prev).raw
    assert all(open_entry(e).prev != entry.signature for e in entries)  # its last entry
    return encode_record(type(rec)(rec.table_id, rec.host, rec.table, rec.saved_at,
                                   tuple(entries)))


def test_an_edited_result_is_refused(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    _book, data = _evening()
    entries, records = _parts(data)
    _refused(tmp_path, capsys, _packed(entries, [_edited_result(records[0]), *records[1:]]),
             "game record 1 does not verify: ")
    flipped = bytearray(records[1])
    flipped[-40] ^= 1
    _refused(tmp_path, capsys, _packed(entries, [records[0], bytes(flipped), *records[2:]]),
             "game record 2 does not verify: ")


def test_a_record_left_out_of_a_swiss_draw_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _book, data = _evening()
    entries, records = _parts(data)
    _refused(tmp_path, capsys, _packed(entries, records[1:]),
             "entry 10: game 2's seating was drawn from results the export lacks (1 game record)")


def test_a_record_of_no_table_of_the_event_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ..protocol.test_records import _record

    _book, data = _evening()
    entries, records = _parts(data)
    _refused(tmp_path, capsys, _packed(entries, [*records, encode_record(_record())]),
             "game record 5 is of no table this event seated")


@pytest.mark.parametrize("data", [
    b"", b"\x94\xafp2p-nerts event", _packed([], []), _packed([b"x"], []),
    msgpack.packb(["p2p-nerts event", 2, [], []]), msgpack.packb(["p2p-nerts event", 1, 3, []])])
def test_a_malformed_export_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       data: bytes) -> None:
    with pytest.raises(EventError) as info:
        verify_export(data)
    assert "\n" not in str(info.value)



@settings(max_examples=12, deadline=None)
@given(at=st.integers(0, 2**40), bit=st.integers(0, 7))
def test_no_changed_bit_changes_the_standings_unseen(at: int, bit: int) -> None:
    """Any bit of an export flipped: refused in one line, or (a record's unsigned header:
    its keeper's name for the table, the time it was saved) the very same standings."""
    book, data = _evening()
    changed = bytearray(data)
    changed[at % len(changed)] ^= 1 << bit
    try:
        verified = verify_export(bytes(changed))
    except EventError as exc:
        assert "\n" not in str(exc)
    else:
        assert verified.standings == book.standings()
