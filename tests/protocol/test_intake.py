"""Intake on its own: a frame's envelope, whose entries are heard, which entries
wait, and which PLAYs are refused (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.tableau import NERTS
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.envelope import GENESIS, Entry, EnvelopeError
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import (
    Ack,
    Hello,
    Join,
    Nerts,
    Payload,
    Play,
    Ready,
    Resend,
    Result,
    Roster,
    Seat,
    Summary,
    link_message,
    seal_message,
)
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.protocol.replica._base import MAX_LAMPORT_JUMP
from p2p_nerts.protocol.replica._intake import Places, deliverable, open_frame
from p2p_nerts.protocol.replica._state import RoundState

pytestmark = pytest.mark.fast

AUTHOR = Identity.from_seed(b"\x05" * 32, "a")
SEAT = 1


def _round(number: int = 2) -> RoundState:
    return RoundState(number=number, keys=(b"\x01" * 32, AUTHOR.public_key),
                      names=("me", "a"), variants=Variants(), me=0, live={0, 1},
                      log=FoundationLog(strict_ties=False))


def _entry(payload: Payload, round_no: int) -> Entry:
    return seal_message(AUTHOR, payload, table_id=b"t" * 16, round=round_no, seq=1,
                        lamport=1, prev=GENESIS)


def test_round_entries_wait_for_their_round_and_plays_for_the_deal() -> None:
    rs = _round()
    ace = make_card(SEAT, 0, 1)
    play = _entry(Play(ace, ace, NERTS, 0, 0), 2)
    assert not deliverable(None, Phase.LOBBY, play)
    assert not deliverable(rs, Phase.SHUFFLE, play)  # not dealt yet
    rs.joint = b"j" * 32
    assert deliverable(rs, Phase.PLAYING, play)
    assert not deliverable(rs, Phase.PLAYING, _entry(Nerts(), 3))  # the next round's
    assert deliverable(rs, Phase.SCORING, _entry(Summary(b"d" * 32, (0, 0)), 1))  # judged late
    assert deliverable(rs, Phase.PLAYING, _entry(Ready(True), 0))


def test_the_next_rounds_roster_and_a_closing_result_wait_for_this_round_to_close() -> None:
    rs = _round()
    roster = _entry(Roster((Seat(AUTHOR.public_key, "a"),)), 3)
    result = _entry(Result((1, 2), b"d" * 32), 2)
    for phase in (Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING):
        assert not deliverable(rs, phase, roster) and not deliverable(rs, phase, result)
    assert deliverable(rs, Phase.BETWEEN, roster) and deliverable(rs, Phase.OVER, result)


TABLE = b"t" * 16


def _refused(raw: bytes, via: bytes | None = None, clock: int = 0) -> str:
    with pytest.raises(EnvelopeError) as exc:
        open_frame(raw, via, TABLE, clock)
    return exc.value.reason


def test_a_frame_is_opened_and_decoded() -> None:
    entry = seal_message(AUTHOR, Ready(True), table_id=TABLE, round=0, seq=1, lamport=3,
                         prev=GENESIS)
    opened, payload = open_frame(entry.raw, None, TABLE, 0)
    assert (opened.author, opened.seq, payload) == (AUTHOR.public_key, 1, Ready(True))


def test_a_frame_for_another_table_or_from_too_far_ahead_is_refused() -> None:
    other = seal_message(AUTHOR, Ready(True), table_id=b"u" * 16, round=0, seq=1, lamport=3,
                         prev=GENESIS)
    assert _refused(other.raw) == "wrong_table"
    jump = seal_message(AUTHOR, Ready(True), table_id=TABLE, round=0, seq=1,
                        lamport=MAX_LAMPORT_JUMP + 11, prev=GENESIS)
    assert _refused(jump.raw, clock=10) == "lamport_jump"
    assert open_frame(jump.raw, None, TABLE, 11)[1] == Ready(True)


def test_an_unsigned_frame_needs_its_authors_link_and_a_link_type() -> None:
    ack = link_message(AUTHOR.public_key, Ack(()), table_id=TABLE, round=0, seq=1, lamport=1,
                       prev=GENESIS)
    assert open_frame(ack, AUTHOR.public_key, TABLE, 0)[1] == Ack(())
    assert _refused(ack) == "unlinked"
    hello = link_message(AUTHOR.public_key, Hello("a", 1), table_id=TABLE, round=0, seq=1,
                         lamport=1, prev=GENESIS)
    assert _refused(hello, AUTHOR.public_key) == "unsigned_type"  # a HELLO is always signed


def _signed(payload: Payload) -> Entry:
    return seal_message(AUTHOR, payload, table_id=TABLE, round=0, seq=1, lamport=1,
                        prev=GENESIS)


def test_a_host_hears_a_stranger_ask_for_a_seat_and_nothing_else() -> None:
    places, seated = Places(), frozenset({b"\x01" * 32})
    for asks in (Hello("a", 1), Join("a", None)):
        assert places.heard_of(_signed(asks), is_host=True, seated=seated)
    assert not places.heard_of(_signed(Ready(True)), is_host=True, seated=seated)
    places.placed.add(AUTHOR.public_key)  # once it had a place, it is heard
    assert places.heard_of(_signed(Ready(True)), is_host=True, seated=seated)


def test_a_guest_that_knows_no_seats_yet_hears_everyone() -> None:
    places = Places()
    assert places.heard_of(_signed(Ready(True)), is_host=False, seated=frozenset())
    assert not places.heard_of(_signed(Ready(True)), is_host=False,
                               seated=frozenset({b"\x01" * 32}))


def test_whoever_asks_for_entries_is_a_watcher() -> None:
    places = Places()
    asks = _signed(Resend(b"\x01" * 32, 1, 4))
    assert places.heard_of(asks, is_host=False, seated=frozenset({b"\x01" * 32}))
    assert places.watchers == {AUTHOR.public_key}
