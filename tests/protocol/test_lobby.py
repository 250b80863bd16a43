"""The lobby on its own: the host's answer to a JOIN, the roster as a round
closes, what a host may ask between rounds and when it deals by itself, and
what a ROSTER or SETTINGS sets (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.envelope import EnvelopeError
from p2p_nerts.protocol.messages import Seat, Settings
from p2p_nerts.protocol.replica import CommandError, Phase
from p2p_nerts.protocol.replica._base import SIT_DOWN_WAIT, settings_of
from p2p_nerts.protocol.replica._lobby import (
    EQUIVOCATOR,
    FULL,
    OVER,
    Refuse,
    Retell,
    SeatIt,
    Wait,
    answer_join,
    arranged,
    auto_deal_due,
    check_deal,
    host_between_rounds,
    reseat,
    roster_begins,
    variants_of,
)
from p2p_nerts.protocol.replica._state import RoundState

pytestmark = pytest.mark.fast

HOST, A, B, NEW = (bytes([k]) * 32 for k in range(1, 5))
SEATS = (Seat(HOST, "host"), Seat(A, "a"), Seat(B, "b"))


def _round() -> RoundState:
    return RoundState(number=1, keys=(HOST, A, B), names=("host", "a", "b"),
                      variants=Variants(), me=0, live={0, 1, 2},
                      log=FoundationLog(strict_ties=False))


def _answer(key: bytes, *, in_round: bool = False, over: bool = False, room: int = 4,
            waiting: dict[bytes, str] | None = None, proven: bool = False,
            rs: RoundState | None = None) -> object:
    return answer_join(key, rs=rs if rs is not None else _round(), in_round=in_round,
                       over=over, seated=frozenset(s.key for s in SEATS), taken=len(SEATS),
                       waiting=waiting or {}, proven=proven, room=room)


def test_between_rounds_a_newcomer_sits_unless_full_or_over() -> None:
    assert _answer(NEW) == SeatIt()
    assert _answer(NEW, room=3) == Refuse(FULL)
    assert _answer(NEW, over=True) == Refuse(OVER)
    assert _answer(A) == Retell()  # asked again: told the roster again
    assert _answer(NEW, proven=True) == Refuse(EQUIVOCATOR)


def test_mid_round_a_player_waits_for_the_round_to_close() -> None:
    rs = _round()
    assert _answer(A, in_round=True, rs=rs) is None  # live: it catches up by resends
    rs.live.discard(1)
    assert _answer(A, in_round=True, rs=rs) == Wait()  # dropped: back next round
    assert _answer(A, in_round=True, rs=rs, waiting={A: "a"}) is None  # waiting already
    assert _answer(NEW, in_round=True) == Wait()
    assert _answer(NEW, in_round=True, waiting={b"w" * 32: "w"}) == Refuse(FULL)
    assert _answer(NEW, in_round=True, proven=True) == Refuse(EQUIVOCATOR)


def test_as_a_round_closes_the_dropped_leave_and_those_waiting_sit() -> None:
    rs = _round()
    rs.live -= {0, 2}  # the host and b dropped
    assert reseat(rs, SEATS, {NEW: "new"}, set(), HOST, 8) == (
        Seat(HOST, "host"), Seat(A, "a"), Seat(NEW, "new"))  # the host stays
    assert reseat(rs, SEATS, {B: "b"}, set(), HOST, 8) == SEATS  # b asked back
    assert reseat(_round(), SEATS, {}, {A}, HOST, 8) == (Seat(HOST, "host"), Seat(B, "b"))
    assert reseat(_round(), SEATS, {NEW: "new"}, set(), HOST, 3) == SEATS  # no room


def test_only_the_host_changes_the_table_and_only_between_rounds() -> None:
    host_between_rounds(True, Phase.LOBBY, "deals", "not now")
    host_between_rounds(True, Phase.BETWEEN, "deals", "not now")
    with pytest.raises(CommandError, match="only the host deals"):
        host_between_rounds(False, Phase.LOBBY, "deals", "not now")
    for phase in (Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING, Phase.OVER):
        with pytest.raises(CommandError, match="not now"):
            host_between_rounds(True, phase, "deals", "not now")


def test_a_deal_needs_seats_the_rules_play() -> None:
    check_deal(SEATS, Variants())
    with pytest.raises(CommandError, match="nobody is seated"):
        check_deal((), Variants())
    with pytest.raises(CommandError, match="pairs need 4, 6 or 8 players"):
        check_deal(SEATS, Variants(teams="pairs"))


def test_seats_are_arranged_once_each() -> None:
    assert arranged(SEATS, (A, HOST, B)) == (SEATS[1], SEATS[0], SEATS[2])
    assert arranged(SEATS, (HOST, A, B)) is None  # as they are
    for order in ((A, HOST), (A, A, B), (A, HOST, NEW)):
        with pytest.raises(CommandError, match="exactly one seat"):
            arranged(SEATS, order)


def test_a_host_deals_by_itself_once_enough_sit_and_after_each_break() -> None:
    seated = frozenset({HOST, A})
    assert auto_deal_due(Phase.LOBBY, 2, 2, None, 0.0, (), seated)
    assert not auto_deal_due(Phase.LOBBY, 1, 2, None, 0.0, (), seated)
    assert not auto_deal_due(Phase.LOBBY, 5, None, None, 0.0, (), seated)
    assert not auto_deal_due(Phase.BETWEEN, 2, 2, 10.0, 9.0, (), seated)
    assert auto_deal_due(Phase.BETWEEN, 2, None, 10.0, 10.0, (), seated)
    assert not auto_deal_due(Phase.BETWEEN, 2, None, 10.0, 10.0, (A,), seated)  # catching up
    assert auto_deal_due(Phase.BETWEEN, 2, None, 10.0, 10.0 + SIT_DOWN_WAIT, (A,), seated)
    assert not auto_deal_due(Phase.PLAYING, 2, 2, 10.0, 20.0, (), seated)


def test_a_roster_for_the_next_round_begins_it_and_one_between_rounds_reseats() -> None:
    assert roster_begins(3, 2, Phase.BETWEEN, Variants(), SEATS)
    assert not roster_begins(2, 2, Phase.BETWEEN, Variants(), SEATS)
    with pytest.raises(EnvelopeError, match="wrong_round"):
        roster_begins(2, 2, Phase.PLAYING, Variants(), SEATS)
    with pytest.raises(EnvelopeError, match="wrong_round"):
        roster_begins(5, 2, Phase.BETWEEN, Variants(), SEATS)
    with pytest.raises(EnvelopeError, match="bad_field:roster"):
        roster_begins(3, 2, Phase.BETWEEN, Variants(), SEATS[:1])


def test_settings_set_the_rules_between_rounds_only() -> None:
    rules = Variants(stock_turn=1, jokers=True, target=50)
    assert variants_of(settings_of(rules, 3.0, 10.0), Phase.BETWEEN) == rules
    with pytest.raises(EnvelopeError, match="settings_mid_round"):
        variants_of(settings_of(rules, 3.0, 10.0), Phase.PLAYING)
    with pytest.raises(EnvelopeError, match="bad_field:settings"):
        variants_of(Settings(stock_turn=7), Phase.LOBBY)
