"""Event entries: signed in the protocol's envelope by the right key, read back whole,
and anything else refused with one line."""

from __future__ import annotations

import msgpack
import pytest

from p2p_nerts.event.entries import (
    EventError,
    Finished,
    Opened,
    Registered,
    Seated,
    TableSeats,
    decode,
    encode,
    letter,
)
from p2p_nerts.protocol.envelope import HEADER_LEN, open_entry, seal

from .eventkit import EVENT_ID, ORGANISER, opened, player, registered


def _seated() -> Seated:
    keys = [player(i).public_key for i in range(7)]
    return Seated(EVENT_ID, 1, bytes(range(32)), tuple(keys),
                  (TableSeats("A", keys[0], tuple(keys[:4])),
                   TableSeats("B", keys[4], tuple(keys[4:]))),
                  {"target": 50, "stock_turn": 3, "teams": "none"}, ())


def test_every_entry_reads_back_as_it_was_signed() -> None:
    for entry, who in [(decode(opened()).entry, ORGANISER),
                       (Registered(EVENT_ID, player(1).public_key, "P01", b""), player(1)),
                       (_seated(), ORGANISER), (Finished(EVENT_ID, 1), ORGANISER)]:
        raw = encode(entry, who)
        signed = decode(raw)
        assert signed.entry == entry and signed.author == who.public_key and signed.raw == raw
        assert open_entry(raw).table_id == EVENT_ID  # the protocol's own envelope


def test_a_registration_is_signed_by_its_player_and_an_opening_by_its_organiser() -> None:
    with pytest.raises(EventError, match="must be signed by"):
        encode(Registered(EVENT_ID, player(1).public_key, "P01", b""), ORGANISER)
    opening = decode(opened()).entry
    assert isinstance(opening, Opened)
    with pytest.raises(EventError, match="must be signed by"):
        encode(opening, player(2))


def test_a_registration_signed_by_another_key_is_refused() -> None:
    """Sealed by hand as a forger would: the body names one player, the key is another's."""
    raw = seal(ORGANISER, table_id=EVENT_ID, round=0, seq=1, lamport=1, type=201,
               payload={"player": player(3).public_key, "name": "P03", "code_proof": b""}).raw
    with pytest.raises(EventError, match="signed by another key"):
        decode(raw)


def test_a_changed_byte_breaks_the_signature() -> None:
    raw = bytearray(registered(player(1)))
    raw[-3] ^= 1
    with pytest.raises(EventError, match="signature does not match"):
        decode(bytes(raw))


@pytest.mark.parametrize("payload", [
    {"player": b"short", "name": "P01", "code_proof": b""},
    {"player": bytes(32), "name": "", "code_proof": b""},
    {"player": bytes(32), "name": "a\x1b[2J", "code_proof": b""},
    {"player": bytes(32), "name": "P01"},
    {"player": bytes(32), "name": "P01", "code_proof": b"", "extra": 1},
    {"player": bytes(32), "name": "P01", "code_proof": b"x"},
])
def test_malformed_registrations_are_refused_in_one_line(payload: dict[str, object]) -> None:
    raw = seal(player(1), table_id=EVENT_ID, round=0, seq=1, lamport=1, type=201,
               payload=payload).raw
    with pytest.raises(EventError) as info:
        decode(raw)
    assert "\n" not in str(info.value)


def test_a_seating_with_tables_out_of_order_or_a_key_twice_is_refused() -> None:
    good = msgpack.unpackb(encode(_seated(), ORGANISER)[HEADER_LEN:], raw=False)[8]
    swapped = dict(good, tables=[good["tables"][1], good["tables"][0]])
    twice = dict(good, players=good["players"] + good["players"][:1])
    for payload, why in [(swapped, "not lettered"), (twice, "a key twice")]:
        raw = seal(ORGANISER, table_id=EVENT_ID, round=1, seq=2, lamport=2, type=202,
                   payload=payload).raw
        with pytest.raises(EventError, match=why):
            decode(raw)


def test_an_entry_out_of_its_place_in_the_chain_is_refused() -> None:
    raw = seal(ORGANISER, table_id=EVENT_ID, round=1, seq=7, lamport=7, type=203,
               payload={}).raw
    with pytest.raises(EventError, match="place in its author's chain"):
        decode(raw)


@pytest.mark.parametrize("data", [b"", b"NZ" + bytes(200), b"hello world" * 20])
def test_garbage_is_not_an_event_entry(data: bytes) -> None:
    with pytest.raises(EventError):
        decode(data)


def test_table_letters() -> None:
    assert [letter(i) for i in (0, 1, 25, 26, 27, 49)] == ["A", "B", "Z", "AA", "AB", "AX"]
