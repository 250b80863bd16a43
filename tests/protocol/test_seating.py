"""The seating on its own: who sits and under which options, changed only by its
own methods and the lobby's effects, and the read view the lobby decides from
(no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.messages import AckMark, Seat
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.protocol.replica._base import SIT_DOWN_WAIT, settings_of
from p2p_nerts.protocol.replica._effects import Emit
from p2p_nerts.protocol.replica._lobby import Reseated, closing_roster, start_round
from p2p_nerts.protocol.replica._seating import Seating
from p2p_nerts.protocol.replica._state import RoundState

pytestmark = pytest.mark.fast

HOST, A, B, NEW = (bytes([k]) * 32 for k in range(1, 5))
SEATS: tuple[Seat, ...] = (Seat(HOST, "host"), Seat(A, "a"), Seat(B, "b"))


def _seating(*, auto_next: float | None = None) -> Seating:
    s = Seating(HOST, HOST, variants=Variants(), countdown=3.0, drop_after=10.0,
                auto_start=None, auto_next=auto_next, max_seats=8)
    s.seats = SEATS
    return s


def test_clocks_every_peer_would_refuse_are_refused_at_once() -> None:
    with pytest.raises(ValueError, match="countdown"):
        Seating(HOST, HOST, variants=Variants(), countdown=-1.0, drop_after=10.0,
                auto_start=None, auto_next=None, max_seats=8)
    with pytest.raises(ValueError, match="silent seat"):
        Seating(HOST, HOST, variants=Variants(), countdown=3.0, drop_after=0.0,
                auto_start=None, auto_next=None, max_seats=8)


def test_a_roster_sets_the_seats_and_their_keys_together() -> None:
    s = _seating()
    assert s.seats == SEATS and s.seated == {HOST, A, B}
    s.seats = SEATS[:1]
    assert s.seats == SEATS[:1] and s.seated == {HOST}


def test_a_place_is_a_seat_a_place_in_the_round_or_on_the_waiting_list() -> None:
    s = _seating()
    gone = bytes([9]) * 32
    assert s.holds_place(A, None) and s.holds_place(HOST, None)
    assert not s.holds_place(NEW, None) and not s.holds_place(gone, None)
    s.joined(NEW, "new", in_line=None, waits=True)
    rs = RoundState(number=1, keys=(HOST, gone), names=("host", "gone"), variants=Variants(),
                    me=0, live={0, 1}, log=FoundationLog(strict_ties=False))
    assert s.holds_place(NEW, None) and s.holds_place(gone, rs)  # waiting; dealt in
    assert not s.holds_place(gone, None)


def test_the_waiting_list_fills_empties_and_is_seated() -> None:
    s = _seating()
    s.joined(NEW, "new", in_line=None, waits=True)
    s.joined(B, "b", in_line=None, waits=True)
    assert s.waiting == {NEW: "new", B: "b"}
    s.left(B, unqueue=False)
    s.left(B, unqueue=False)  # gone already: nothing to do
    assert s.waiting == {NEW: "new"}
    s.waiting_seated()
    assert s.waiting == {}


def test_rules_and_clocks_are_set_together_and_said_as_one_settings() -> None:
    s = _seating()
    rules = Variants(target=50, jokers=True)
    s.set_rules(rules, settings_of(rules, 0.5, 4.0))
    assert (s.variants, s.countdown, s.drop_after) == (rules, 0.5, 4.0)
    assert s.settings == settings_of(rules, 0.5, 4.0)


def test_ready_is_said_per_key_and_afresh_for_each_round() -> None:
    s = _seating()
    s.readied(A, True)
    s.readied(B, True)
    s.readied(B, False)
    assert s.ready == {A: True, B: False}
    s.sitting_down_since({NEW}, 7)
    s.joined(NEW, "new", in_line=None, waits=True)
    s.new_round()
    assert s.ready == {} and s.sitting_down == {}
    assert s.waiting == {NEW: "new"} and s.seats == SEATS  # the rest stays


def test_a_newcomer_sits_down_once_it_holds_the_roster_that_seated_it() -> None:
    s = _seating()
    s.sitting_down_since({NEW, B}, 7)  # the ROSTER: my seq 7
    assert s.sitting_down == {NEW: 7, B: 7}
    s.acked(NEW, (AckMark(HOST, 6),))  # not that far yet
    s.acked(NEW, (AckMark(A, 9),))  # another author's chain says nothing of mine
    s.acked(A, (AckMark(HOST, 9),))  # not a newcomer
    assert s.sitting_down == {NEW: 7, B: 7}
    s.acked(NEW, (AckMark(A, 1), AckMark(HOST, 7)))
    assert s.sitting_down == {B: 7}


def test_the_lobby_reads_the_seating_as_it_stands() -> None:
    s = _seating()
    s.joined(NEW, "new", in_line=None, waits=True)
    s.readied(A, True)
    t = s.table(Phase.BETWEEN, 2, {B})
    assert (t.me, t.host_key, t.phase, t.number, set(t.proven)) == (
        HOST, HOST, Phase.BETWEEN, 2, {B})
    assert (t.seats, t.variants, t.countdown, t.drop_after, t.max_seats) == (
        SEATS, Variants(), 3.0, 10.0, 8)
    assert t.waiting == {NEW: "new"} and t.ready == {A: True} and t.settings == s.settings


def test_the_lobby_s_closing_roster_seats_the_waiting_and_waits_for_the_newcomers() -> None:
    s = _seating()
    s.joined(NEW, "new", in_line=None, waits=True)
    rs = RoundState(number=2, keys=(HOST, A, B), names=("host", "a", "b"),
                    variants=Variants(), me=0, live={0, 1, 2},
                    log=FoundationLog(strict_ties=False))
    reseated = closing_roster(s.table(Phase.SCORING, 2, ()), rs)
    assert reseated == Reseated((*SEATS, Seat(NEW, "new")), frozenset({NEW}))
    s.waiting_seated()
    s.sitting_down_since(reseated.newcomers, 12)  # the ROSTER signed as my seq 12
    assert s.waiting == {} and s.sitting_down == {NEW: 12}
    s.waiting_seated()  # no one waiting: the seats stay as they are
    assert closing_roster(s.table(Phase.SCORING, 2, ()), rs) == Reseated(None, frozenset())


def test_a_host_dealing_by_itself_waits_for_the_break_and_the_newcomers() -> None:
    s = _seating(auto_next=5.0)
    s.round_closed(5.0)  # the next round is dealt 5 s after
    assert s.next_round_at == 10.0
    s.sitting_down_since({B}, 3)  # seated as the round closed
    t = s.table(Phase.BETWEEN, 2, ())
    assert s.auto_deal(t, 9.0) == []  # the break is not over
    assert s.auto_deal(t, 10.0) == []  # B has not caught up
    deal = start_round(t)
    assert s.auto_deal(t, 10.0 + SIT_DOWN_WAIT) == deal  # waited long enough
    assert s.next_round_at is None and s.auto_deal(t, 99.0) == []  # dealt: over
    s.round_closed(5.0)
    s.acked(B, (AckMark(HOST, 3),))
    assert s.auto_deal(t, 10.0) == deal


def test_a_deal_a_host_cannot_make_by_itself_is_said_once_and_left_to_a_person() -> None:
    s = _seating(auto_next=5.0)
    s.seats = SEATS[:1]
    s.round_closed(5.0)
    t = s.table(Phase.BETWEEN, 2, ())
    said = s.auto_deal(t, 10.0)
    assert len(said) == 1 and isinstance(said[0], Emit)
    notice = said[0].event
    assert isinstance(notice, ev.Notice) and "cannot deal automatically" in notice.text
    assert (s.auto_start, s.auto_next, s.next_round_at) == (None, None, None)
    s.round_closed(20.0)  # a person deals from now on
    assert s.next_round_at is None and s.auto_deal(t, 99.0) == []


def test_the_line_for_a_seat_keeps_the_place_first_taken_until_seated_or_gone() -> None:
    s = _seating()
    s.joined(NEW, "new", in_line=True, waits=False)
    s.joined(B, "b", in_line=True, waits=False)
    s.joined(NEW, "renamed", in_line=True, waits=False)  # asked again: its place kept
    assert list(s.queue.items()) == [(NEW, "new"), (B, "b")]
    s.joined(B, "b", in_line=None, waits=False)  # refused for another reason: as it was
    assert B in s.queue
    s.joined(NEW, "new", in_line=False, waits=True)  # seated as the round closes
    assert list(s.queue) == [B] and s.waiting == {NEW: "new"}
    s.left(B, unqueue=False)  # a LEAVE: off the waiting list only
    assert list(s.queue) == [B]
    s.left(B, unqueue=True)  # its link lost
    assert not s.queue and s.waiting == {NEW: "new"}
