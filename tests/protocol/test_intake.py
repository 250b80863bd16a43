"""Intake on its own: which entries wait, and which PLAYs are refused (no network,
no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.tableau import NERTS
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.envelope import GENESIS, Entry, EnvelopeError
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import (
    Nerts,
    Payload,
    Play,
    Ready,
    Result,
    Roster,
    Seat,
    Summary,
    seal_message,
)
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.protocol.replica._intake import check_play, deliverable
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


@pytest.mark.parametrize(("play", "reason"), [
    (Play(make_card(0, 0, 1), make_card(0, 0, 1), NERTS, 0, 0), "bad_field:card"),  # not its own
    (Play(make_card(SEAT, 0, 1), make_card(SEAT, 0, 1), 9, 0, 0), "bad_field:src"),
    (Play(make_card(SEAT, 0, 1), make_card(SEAT, 0, 1), NERTS, 5, 0), "bad_field:decl"),
    (Play(make_card(SEAT, 0, 0), make_card(SEAT, 0, 0), NERTS, 0, 0), "bad_field:decl"),
    (Play(make_card(SEAT, 0, 1), make_card(0, 0, 1), NERTS, 0, 0), "bad_field:pile"),  # an ace
    (Play(make_card(SEAT, 0, 2), make_card(SEAT, 0, 2), NERTS, 0, 0), "bad_field:pile"),
])
def test_a_play_no_honest_seat_signs_is_refused(play: Play, reason: str) -> None:
    rs = _round()
    rs.variants = Variants(jokers=True)
    with pytest.raises(EnvelopeError, match=reason):
        check_play(rs, SEAT, play)


def test_a_well_formed_play_passes() -> None:
    rs = _round()
    check_play(rs, SEAT, Play(make_card(SEAT, 0, 1), make_card(SEAT, 0, 1), NERTS, 0, 0))
    check_play(rs, SEAT, Play(make_card(SEAT, 0, 2), make_card(0, 0, 1), NERTS, 0, 3))
