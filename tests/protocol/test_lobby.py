"""The host's lobby on its own: its answer to a JOIN, and the roster as a round
closes (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.messages import Seat
from p2p_nerts.protocol.replica._lobby import (
    EQUIVOCATOR,
    FULL,
    OVER,
    Refuse,
    Retell,
    SeatIt,
    Wait,
    answer_join,
    reseat,
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
