"""The shuffle sub-machine on its own: when to reveal, when to deal, and what the
host's GO says (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import EnvelopeError
from p2p_nerts.protocol.fairness import commitment, deal_for, joint_value
from p2p_nerts.protocol.messages import Commit, Go, Reveal
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.protocol.replica._effects import Emit, SetPhase, Sign
from p2p_nerts.protocol.replica._shuffle import (
    GoCheck,
    deal,
    deal_due,
    deal_now,
    go,
    go_check,
    joint_of_live,
    live_joint,
    reveal,
    reveal_due,
    start_due,
)
from p2p_nerts.protocol.replica._state import RoundState

from ..stepkit import steps_at

pytestmark = pytest.mark.fast

TABLE = b"t" * 16
SHARES = [bytes([k]) * 32 for k in range(1, 4)]


def _round() -> RoundState:
    rs = RoundState(number=2, keys=tuple(bytes([k]) * 32 for k in range(3)),
                    names=("me", "a", "b"), variants=Variants(), me=0, live={0, 1, 2},
                    log=FoundationLog(strict_ties=False))
    rs.deck_secret, rs.share = b"d" * 32, SHARES[0]
    return rs


def _committed(rs: RoundState, *seats: int) -> None:
    for seat in seats:
        rs.commits[seat] = Commit(commitment(b"deck %d" % seat), commitment(SHARES[seat]))


def _revealed(rs: RoundState, *seats: int) -> None:
    for seat in seats:
        rs.reveals[seat] = SHARES[seat]


def test_i_reveal_once_every_live_seat_has_committed() -> None:
    rs = _round()
    _committed(rs, 0, 1)
    assert not reveal_due(rs)
    _committed(rs, 2)
    assert reveal_due(rs)
    rs.live.discard(2)
    rs.commits.pop(2)
    assert reveal_due(rs)  # a dropped seat's commitment is not waited for
    _revealed(rs, 0)
    assert not reveal_due(rs)


def test_the_deal_waits_for_every_live_share_and_for_an_agreed_drop() -> None:
    rs = _round()
    _revealed(rs, 0, 1)
    assert not deal_due(rs)
    _revealed(rs, 2)
    rs.dropping[2] = 4
    assert not deal_due(rs)  # its drop takes effect first
    rs.live.discard(2)
    assert deal_due(rs)
    assert live_joint(TABLE, rs) == joint_value(TABLE, 2, SHARES[:2])


def test_my_tableau_is_dealt_from_my_secret_and_the_joint_value() -> None:
    rs = _round()
    _revealed(rs, 0, 1, 2)
    joint = live_joint(TABLE, rs)
    deal(rs, joint)
    assert rs.joint == joint and not deal_due(rs)
    assert rs.tab is not None
    deck = deal_for(0, rs.deck_secret, joint, jokers=False)
    tab = rs.tab
    cards = tab.stock + tab.nerts + tab.waste + [c for pile in tab.work for c in pile]
    assert sorted(cards) == sorted(deck)


def test_a_go_from_the_live_seats_shares_deals_again_from_them() -> None:
    """Back from a crash, I dealt from every share; the host from the live ones."""
    rs = _round()
    _revealed(rs, 0, 1, 2)
    deal(rs, live_joint(TABLE, rs))
    rs.live.discard(2)
    rs.go_pending = Go(joint_value(TABLE, 2, SHARES[:2]))
    assert go_check(TABLE, rs, catching_up=False) is GoCheck.START
    assert rs.joint == rs.go_pending.joint
    assert joint_of_live(TABLE, rs)


def test_a_go_from_the_shares_of_a_seat_gone_here_before_the_deal_deals_from_them() -> None:
    """The drop took effect here before the deal, at the host after it: the host
    dealt from the left seat's share too, which I hold."""
    rs = _round()
    _revealed(rs, 0, 1, 2)
    rs.live.discard(2)
    deal(rs, live_joint(TABLE, rs))
    rs.go_pending = Go(joint_value(TABLE, 2, SHARES))
    assert go_check(TABLE, rs, catching_up=False) is GoCheck.START
    assert rs.joint == rs.go_pending.joint and rs.tab is not None
    deck = deal_for(0, rs.deck_secret, rs.joint, jokers=False)
    tab = rs.tab
    assert sorted(tab.stock + tab.nerts + tab.waste + [c for p in tab.work for c in p]) == sorted(
        deck)


def test_a_go_may_add_only_the_shares_of_seats_gone_never_leave_out_a_live_one() -> None:
    rs = _round()
    _revealed(rs, 0, 1, 2)
    rs.live.discard(2)
    deal(rs, live_joint(TABLE, rs))
    rs.go_pending = Go(joint_value(TABLE, 2, [SHARES[0], SHARES[2]]))  # without live seat 1
    assert go_check(TABLE, rs, catching_up=False) is GoCheck.MISMATCH
    assert rs.joint == live_joint(TABLE, rs)


def test_a_go_naming_another_deal_is_void_unless_a_drop_may_explain_it() -> None:
    rs = _round()
    _revealed(rs, 0, 1, 2)
    deal(rs, live_joint(TABLE, rs))
    assert go_check(TABLE, rs, catching_up=False) is None  # no GO yet
    rs.go_pending = Go(b"x" * 32)
    assert go_check(TABLE, rs, catching_up=True) is GoCheck.WAIT
    rs.drop_votes[1] = {2: 3}
    assert go_check(TABLE, rs, catching_up=False) is GoCheck.WAIT
    rs.drop_votes.clear()
    assert go_check(TABLE, rs, catching_up=False) is GoCheck.MISMATCH
    rs.go_pending = Go(rs.joint or b"")
    assert go_check(TABLE, rs, catching_up=False) is GoCheck.START
    rs.play_from = 1.0
    assert go_check(TABLE, rs, catching_up=False) is None  # play has started


def test_the_host_s_go_starts_play_after_the_countdown_or_voids_the_round_here() -> None:
    rs = _round()
    _revealed(rs, 0, 1, 2)
    deal(rs, live_joint(TABLE, rs))
    assert go(TABLE, rs, catching_up=False, now=5.0, countdown=3.0) == []  # no GO yet
    rs.go_pending = Go(b"x" * 32)
    assert go(TABLE, rs, catching_up=True, now=5.0, countdown=3.0) == []  # may be a drop
    assert go(TABLE, rs, catching_up=False, now=5.0, countdown=3.0) is None  # void here
    steps, table = steps_at(b"\x01" * 32, rs, Phase.SHUFFLE)
    with pytest.raises(EnvelopeError, match="go_mismatch"):  # told, then refused
        steps.go(rs)
    assert table.done == [Emit(ev.Notice("the host dealt from another joint value; round void"))]
    rs.go_pending = Go(rs.joint or b"")
    assert go(TABLE, rs, catching_up=False, now=5.0, countdown=3.0) == [
        SetPhase(Phase.PLAYING), Emit(ev.RoundStarting(2, 3.0))]
    assert rs.play_from == 8.0 and not rs.started
    assert start_due(rs, 7.9) == []  # the countdown runs
    assert start_due(rs, 8.0) == [Emit(ev.RoundStarted(2))] and rs.started
    assert start_due(rs, 9.0) == []  # said once
    at_once = _round()
    _revealed(at_once, 0, 1, 2)
    deal(at_once, live_joint(TABLE, at_once))
    at_once.go_pending = Go(at_once.joint or b"")
    assert go(TABLE, at_once, catching_up=False, now=5.0, countdown=0.0) == [
        SetPhase(Phase.PLAYING), Emit(ev.RoundStarting(2, 0.0)), Emit(ev.RoundStarted(2))]
    assert at_once.started


def test_my_reveal_is_signed_once_due_and_only_then() -> None:
    rs = _round()
    _committed(rs, 0, 1)
    assert reveal(rs) == []
    _committed(rs, 2)
    assert reveal(rs) == [Sign(Reveal(SHARES[0]))]


def test_the_deal_is_made_once_due_and_the_host_signs_its_go() -> None:
    rs = _round()
    _revealed(rs, 0, 1)
    assert deal_now(TABLE, rs, is_host=True) is None and rs.joint is None
    _revealed(rs, 2)
    joint = joint_value(TABLE, 2, SHARES)
    assert deal_now(TABLE, rs, is_host=True) == [Sign(Go(joint))]
    assert rs.joint == joint and rs.tab is not None
    assert deal_now(TABLE, rs, is_host=True) is None  # dealt once
    guest = _round()
    _revealed(guest, 0, 1, 2)
    assert deal_now(TABLE, guest, is_host=False) == []
