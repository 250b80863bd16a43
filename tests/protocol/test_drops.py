"""The drop sub-machine on its own: silence, the tally of DROP votes, the cut and
whether it stands, and the effects of my votes and of a drop (no network, no
replica)."""

from __future__ import annotations

import heapq
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import Fate, FoundationLog, Play
from p2p_nerts.game.scoring import SeatRound
from p2p_nerts.game.tableau import NERTS
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.messages import Audit, Drop, Go, MsgType, Nerts
from p2p_nerts.protocol.replica._base import SIT_OUT, Phase
from p2p_nerts.protocol.replica._drops import (
    Agreed,
    Fetch,
    Left,
    check,
    count,
    cut_after,
    drop_cut,
    drop_stands,
    gone_before,
    goodbye,
    leave,
    my_vote,
    next_vote,
    quiet,
    settled,
    silent,
    silent_votes,
    tally,
    void_play,
    vote_deadline,
    vote_out,
    withholding,
)
from p2p_nerts.protocol.replica._effects import Effect, Emit, Sign
from p2p_nerts.protocol.replica._state import Ordered, RoundState

from ..stepkit import steps_at

pytestmark = pytest.mark.fast

VICTIM = 2


def _round(seats: int = 3) -> RoundState:
    return RoundState(number=1, keys=tuple(bytes([k]) * 32 for k in range(seats)),
                      names=tuple(f"p{k}" for k in range(seats)), variants=Variants(),
                      me=0, live=set(range(seats)), log=FoundationLog(strict_ties=False),
                      stuck=[False] * seats)


def _votes(rs: RoundState, *votes: tuple[int, int, int, int, int]) -> None:
    """Queue DROP entries: (Lamport, voter, victim, upto, seq); upto 0 withdraws."""
    for vote in votes:
        heapq.heappush(rs.drop_queue, vote)


def _tally(rs: RoundState, *, known: int = 100, held: int | None = 10) -> list[Fetch | Agreed]:
    return tally(rs, 0, lambda _seat: known, lambda _seat: held)


def test_a_cut_needs_every_other_voting_seat_and_is_the_furthest_vote() -> None:
    rs = _round()
    assert drop_cut(rs, VICTIM, {0: 5}) is None
    assert drop_cut(rs, VICTIM, {0: 5, 1: 7}) == 7
    rs.live.discard(VICTIM)
    assert drop_cut(rs, VICTIM, {0: 5, 1: 7}) is None  # gone already
    alone = _round(1)
    assert drop_cut(alone, 0, {}) is None  # nobody to drop it


def test_votes_count_in_total_order_whatever_order_they_came_in() -> None:
    """A withdrawal between two votes undoes the first, in every arrival order."""
    votes = [(10, 0, VICTIM, 5, 1), (11, 0, VICTIM, 0, 2), (12, 1, VICTIM, 6, 1)]
    for order in (votes, votes[::-1], [votes[2], votes[0], votes[1]]):
        rs = _round()
        _votes(rs, *order)
        assert _tally(rs) == []
        assert rs.drop_votes == {VICTIM: {1: 6}} and not rs.dropping and not rs.drop_queue


def test_the_last_vote_agrees_the_drop_at_its_place_in_the_order() -> None:
    rs = _round()
    _votes(rs, (12, 1, VICTIM, 6, 3), (10, 0, VICTIM, 5, 1))
    assert _tally(rs) == [Agreed(VICTIM, 6, 12, 1, 3)]
    assert rs.dropping == {VICTIM: 6} and not rs.drop_queue


def test_a_vote_waits_until_nothing_earlier_can_come() -> None:
    """Due once every other voting seat has been heard past it."""
    rs = _round()
    _votes(rs, (10, 0, VICTIM, 5, 1))
    assert _tally(rs, known=9) == [] and len(rs.drop_queue) == 1 and not rs.drop_votes
    assert _tally(rs, known=10) == [] and rs.drop_votes == {VICTIM: {0: 5}}


def test_votes_ordered_after_an_entry_being_delivered_wait_for_it() -> None:
    """Its author's acks may say it is heard past later votes while the entry (a DROP
    of its own, say) is not in the queue yet: only the votes before it count."""
    rs = _round()
    _votes(rs, (10, 0, VICTIM, 5, 1), (14, 0, VICTIM, 0, 2))
    assert tally(rs, 0, lambda _seat: 100, lambda _seat: 10, (12, 1)) == []
    assert rs.drop_votes == {VICTIM: {0: 5}} and rs.drop_queue == [(14, 0, VICTIM, 0, 2)]
    _votes(rs, (12, 1, VICTIM, 6, 3))
    assert _tally(rs) == [Agreed(VICTIM, 6, 12, 1, 3)]  # before the withdrawal, as elsewhere


def test_the_deciding_vote_waits_for_the_victims_entries_up_to_the_cut() -> None:
    rs = _round()
    _votes(rs, (10, 0, VICTIM, 5, 1), (12, 1, VICTIM, 6, 1))
    assert _tally(rs, held=4) == [Fetch(VICTIM, 6)]
    assert len(rs.drop_queue) == 1 and not rs.dropping  # looked at again as they come
    assert _tally(rs, held=6) == [Agreed(VICTIM, 6, 12, 1, 1)]


def test_votes_past_their_voters_cut_or_about_a_seat_gone_are_passed_over() -> None:
    rs = _round()
    rs.dropping[1] = 3
    _votes(rs, (10, 1, VICTIM, 5, 4), (11, 0, 1, 5, 1))
    assert _tally(rs) == [] and not rs.drop_queue and not rs.drop_votes


def test_of_the_last_two_the_senior_stays_unless_it_said_goodbye() -> None:
    rs = _round(2)
    rs.go_seq = 1
    assert not drop_stands(rs, 0, 5, host=0)
    assert drop_stands(rs, 1, 5, host=0)
    rs.left[0] = 4
    assert drop_stands(rs, 0, 5, host=0)
    assert not drop_stands(_round(2), 0, 5, host=None)  # no host seat: the lower is senior


def test_a_host_dropped_before_its_go_counts_is_waited_for() -> None:
    rs = _round()
    assert not drop_stands(rs, 0, 5, host=0)
    rs.go_seq = 6
    assert not drop_stands(rs, 0, 5, host=0)
    rs.go_seq = 5
    assert drop_stands(rs, 0, 5, host=0)


def test_silence_counts_from_the_rounds_start() -> None:
    rs = _round()
    rs.begun = 100.0
    assert not silent(rs, 90.0, 104.0, 5.0)
    assert silent(rs, 90.0, 106.0, 5.0)
    assert not silent(rs, None, 106.0, 5.0)  # never heard of: its timeout starts now


def test_a_seat_withholding_its_audit_or_summary_is_voted_out_as_if_silent() -> None:
    rs = _round()
    assert not withholding(rs, 1, 50.0, 5.0, others_silent=False)  # the round runs
    rs.ended_at = 40.0
    assert not withholding(rs, 1, 45.0, 5.0, others_silent=False)  # not yet
    assert withholding(rs, 1, 46.0, 5.0, others_silent=False)
    assert not withholding(rs, 1, 46.0, 5.0, others_silent=True)
    rs.audit_seq[1] = 7  # sent: its turn may wait on the seat holding the round up
    assert not withholding(rs, 1, 46.0, 5.0, others_silent=False)
    rs.results = (SeatRound(0, 0, 0, 0, called=False),)
    assert withholding(rs, 1, 46.0, 5.0, others_silent=False)
    rs.summary_seq[1] = 8
    assert not withholding(rs, 1, 46.0, 5.0, others_silent=False)


def test_a_vote_that_can_complete_no_drop_does_not_wait_on_a_silent_seat() -> None:
    """Seen in a soak: seat 1 saw the round end and voted 0 and 3 out for holding
    back their audits, then took both back; seat 2 (the cheat) had fallen silent
    meanwhile, and everyone voted it out. The first vote, waiting to hear seat 2
    past it, held up every vote after it: the round never ended. Seat 3 had no
    vote out against 0 (nor 0 against 3), so that vote could complete nothing
    whatever seat 2 said: it is counted, and seat 2's drop is agreed."""
    rs = _round(4)
    _votes(rs, (135, 1, 0, 27, 9), (136, 1, 2, 6, 10), (137, 1, 3, 16, 11),
           (141, 1, 0, 0, 12), (142, 1, 3, 0, 13), (144, 0, 2, 6, 28), (145, 3, 2, 6, 17))
    decisions = tally(rs, 0, lambda seat: 56 if seat == 2 else 820, lambda _seat: 6)
    assert decisions == [Agreed(2, 6, 145, 3, 17)]
    assert rs.dropping == {2: 6} and not rs.drop_queue
    assert rs.drop_votes[0] == {} and rs.drop_votes[3] == {}


def test_a_vote_that_could_complete_a_drop_waits_for_every_seat() -> None:
    """Seat 3 is silent. The vote of 0 against 1 cannot complete 1's drop (seat 2
    has none out), so it counts now; seat 2's vote could, were seat 3's (sent
    before it, not heard yet) also out: it waits for seat 3's word."""
    rs = _round(4)
    _votes(rs, (10, 0, 1, 5, 1), (11, 2, 1, 5, 1))
    assert tally(rs, 0, lambda seat: 3 if seat == 3 else 50, lambda _seat: 5) == []
    assert rs.drop_votes == {1: {0: 5}} and rs.drop_queue == [(11, 2, 1, 5, 1)]
    assert tally(rs, 0, lambda _seat: 50, lambda _seat: 5) == []  # seat 3 voted nothing
    assert rs.drop_votes == {1: {0: 5, 2: 5}} and not rs.drop_queue


def test_my_vote_goes_out_on_a_silent_seat_and_comes_back_when_it_is_heard() -> None:
    rs = _round()
    heard = {rs.keys[1]: 10.0, rs.keys[VICTIM]: 1.0}
    silent_now = quiet(rs, heard, 12.0, drop_after=5.0)
    assert silent_now == {VICTIM}  # never me, whenever I was heard
    assert my_vote(rs, VICTIM, silent_now, 12.0, 5.0) is True
    assert my_vote(rs, 1, silent_now, 12.0, 5.0) is None
    rs.my_drop_votes.add(VICTIM)
    assert my_vote(rs, VICTIM, silent_now, 12.0, 5.0) is None  # voted already
    assert my_vote(rs, VICTIM, set(), 12.0, 5.0) is False  # heard again: take it back
    rs.left[VICTIM] = 4
    assert my_vote(rs, VICTIM, set(), 12.0, 5.0) is None  # it said GOODBYE: the vote stands


def test_what_a_dropped_seat_sent_past_its_cut_is_taken_back_out() -> None:
    rs = _round()
    kept = Play(3, VICTIM, make_card(VICTIM, 0, 1), make_card(VICTIM, 0, 1), NERTS)
    late = Play(5, VICTIM, make_card(VICTIM, 1, 1), make_card(VICTIM, 1, 1), NERTS)
    for play, seq in ((kept, 2), (late, 4)):
        rs.log.add(play)
        rs.play_seq[play.key] = seq
        rs.plays_by_seat.setdefault(VICTIM, []).append(play)
        heapq.heappush(rs.ordered, Ordered(play.lamport, VICTIM, 0, Nerts(), seq))
    heapq.heappush(rs.ordered, Ordered(6, 1, 0, Drop(rs.keys[VICTIM], 3), 9))
    assert rs.forget_after(VICTIM, 3)
    assert list(rs.play_seq) == [kept.key] and rs.plays_by_seat[VICTIM] == [kept]
    assert rs.log.cards_of(VICTIM) == 1
    assert sorted((o.seat, o.seq) for o in rs.ordered) == [(1, 9), (VICTIM, 2)]
    assert not rs.forget_after(VICTIM, 3)  # nothing more to take back


def test_a_play_past_the_cut_goes_at_its_turn_and_the_next_on_its_pile_is_judged_without_it(
) -> None:
    rs = _round()
    ace = make_card(VICTIM, 0, 1)
    late = Play(5, VICTIM, ace, ace, NERTS)
    two = Play(6, 1, make_card(1, 0, 2), ace, NERTS)  # on the pile the late ace began
    for play, seq in ((late, 4), (two, 3)):
        rs.log.add(play)
        rs.play_seq[play.key] = seq
        rs.plays_by_seat.setdefault(play.key[1], []).append(play)
    assert rs.log.fate(two.key) is Fate.STAY
    rs.dropping[VICTIM] = 3
    void_play(rs, late.key)
    assert rs.log.fate(two.key) is Fate.BOUNCE
    assert late.key not in rs.log and list(rs.play_seq) == [two.key]
    assert rs.plays_by_seat[VICTIM] == []
    void_play(rs, late.key)  # once only
    assert not rs.forget_after(VICTIM, 3)  # nothing left that a result counted


def test_an_audit_past_the_cut_goes_too() -> None:
    rs = _round()
    rs.audits[VICTIM], rs.audit_seq[VICTIM] = Audit(b"s" * 32, ()), 8
    assert not rs.forget_after(VICTIM, 8) and VICTIM in rs.audits
    assert rs.forget_after(VICTIM, 7) and VICTIM not in rs.audits


def _held(rs: RoundState, seat: int, upto: int) -> dict[bytes, AuthorLog]:
    log = AuthorLog(rs.keys[seat])
    log.delivered = upto
    return {rs.keys[seat]: log}


def test_an_agreed_drop_joins_the_total_order_and_a_missing_entry_is_fetched() -> None:
    rs = _round()
    _votes(rs, (12, 1, VICTIM, 6, 3), (10, 0, VICTIM, 5, 1))
    assert count(rs, 0, lambda _seat: 100, _held(rs, VICTIM, 4).get) == [(rs.keys[VICTIM], 6)]
    assert not rs.ordered and not rs.dropping  # waits for the victim's entries
    assert count(rs, 0, lambda _seat: 100, _held(rs, VICTIM, 6).get) == []
    assert rs.ordered == [Ordered(12, 1, MsgType.DROP, Drop(rs.keys[VICTIM], 6), 3)]


def test_my_vote_is_signed_once_cut_where_i_hold_the_seat_unless_asked_again() -> None:
    rs = _round()
    authors = _held(rs, VICTIM, 7)
    assert vote_out(rs, VICTIM, authors) == [Sign(Drop(rs.keys[VICTIM], 7))]
    assert vote_out(rs, VICTIM, authors) == []  # voted already
    assert vote_out(rs, VICTIM, authors, again=True) == [Sign(Drop(rs.keys[VICTIM], 7))]
    assert vote_out(rs, 1, {}) == [Sign(Drop(rs.keys[1], 1))]  # 0 would withdraw
    rs.me = None  # watching: no vote of mine
    assert vote_out(rs, VICTIM, authors, again=True) == []


def test_a_silent_seat_gets_my_vote_and_one_heard_again_gets_it_back() -> None:
    rs = _round()
    authors = _held(rs, VICTIM, 3)
    assert check(rs, VICTIM, {VICTIM}, 12.0, 5.0, authors) == [Sign(Drop(rs.keys[VICTIM], 3))]
    assert rs.my_drop_votes == {VICTIM}
    assert check(rs, VICTIM, {VICTIM}, 12.0, 5.0, authors) == []
    assert check(rs, 0, {0}, 12.0, 5.0, authors) == []  # never on myself
    assert check(rs, VICTIM, set(), 12.0, 5.0, authors) == [Sign(Drop(rs.keys[VICTIM], 0))]
    assert not rs.my_drop_votes


def _bye(rs: RoundState | None, seat: int, seq: int, lamport: int, *, phase: Phase,
         authors: dict[bytes, AuthorLog], signed_in: int = 1,
         key: bytes | None = None) -> list[Effect]:
    if key is None:
        assert rs is not None
        key = rs.keys[seat]
    return goodbye(rs, key, "bye", seq, lamport, signed_in=signed_in, phase=phase,
                   authors=authors)


def test_a_goodbye_marks_the_seat_leaving_the_round_it_was_signed_in() -> None:
    """Marked whatever the phase it finds (alike everywhere), voted out again in play."""
    rs = _round()
    authors = _held(rs, VICTIM, 9)
    rs.my_drop_votes.add(VICTIM)
    told = Emit(ev.Notice("p2 left: bye"))
    assert _bye(rs, VICTIM, 9, 30, signed_in=0, phase=Phase.PLAYING, authors=authors) == [told]
    assert not rs.left  # signed in the round before: not this round's leaving
    assert _bye(rs, VICTIM, 9, 30, phase=Phase.BETWEEN, authors=authors) == [told]
    assert rs.left == {VICTIM: 9} and rs.left_at == {VICTIM: 30}
    rs = _round()
    rs.my_drop_votes.add(VICTIM)
    assert _bye(rs, VICTIM, 9, 30, phase=Phase.PLAYING, authors=authors) == [
        told, Sign(Drop(rs.keys[VICTIM], 9))]
    assert rs.left == {VICTIM: 9} and rs.left_at == {VICTIM: 30}
    assert _bye(rs, 0, 4, 31, phase=Phase.SCORING, authors=authors) == [
        Emit(ev.Notice("p0 left: bye"))]  # mine: no vote on myself
    assert _bye(rs, 0, 1, 32, key=b"x" * 32, phase=Phase.PLAYING, authors=authors) == []
    assert _bye(None, 0, 9, 33, key=rs.keys[VICTIM], phase=Phase.LOBBY, authors=authors) == []


def test_a_goodbye_its_author_signed_past_is_not_news() -> None:
    """A host that left and came back with ``--resume`` signed on after its GOODBYE:
    a newcomer catching up on the round is not told it left (it is there), though
    the seat is marked leaving the round as on every peer. One that sits the round
    out signs on too, and is told."""
    rs = _round()
    authors = _held(rs, VICTIM, 8)
    authors[rs.keys[VICTIM]].claimed = 12  # entries past its GOODBYE (9) came in
    assert _bye(rs, VICTIM, 9, 30, phase=Phase.BETWEEN, authors=authors) == []
    assert rs.left == {VICTIM: 9}
    rs = _round()
    sat_out = goodbye(rs, rs.keys[VICTIM], SIT_OUT, 9, 30, signed_in=1, phase=Phase.BETWEEN,
                      authors=authors)
    assert sat_out == [Emit(ev.Notice(f"p2 left: {SIT_OUT}"))]
    assert rs.sitting_out == {VICTIM}


def test_a_goodbye_votes_out_again_every_seat_that_left_before_it() -> None:
    """My vote on the first to leave may have been counted before the second's
    GOODBYE, when the second still had a say: it goes again, past both."""
    rs = _round(4)
    authors = {**_held(rs, 2, 7), **_held(rs, 3, 5)}
    playing = Phase.PLAYING
    assert _bye(rs, 3, 5, 20, phase=playing, authors=authors)[1:] == [Sign(Drop(rs.keys[3], 5))]
    authors[rs.keys[3]].delivered = 6  # (a seat's entries after its GOODBYE count for nothing)
    assert _bye(rs, 2, 7, 21, phase=playing, authors=authors)[1:] == [
        Sign(Drop(rs.keys[2], 7)), Sign(Drop(rs.keys[3], 6))]
    rs.dropping[3] = 6  # agreed: no vote on it again
    assert _bye(rs, 1, 2, 22, phase=playing, authors={**authors, **_held(rs, 1, 2)})[1:] == [
        Sign(Drop(rs.keys[1], 2)), Sign(Drop(rs.keys[2], 7))]
    rs = _round(4)
    _bye(rs, 0, 9, 20, phase=playing, authors=authors)  # I left
    assert _bye(rs, 3, 5, 21, phase=playing, authors=authors)[1:] == []


def test_two_seats_that_left_are_dropped_by_the_votes_of_those_still_there() -> None:
    """Seats 2 and 3 of four leave in one round: neither has a say about the other
    after its GOODBYE, so the two left drop both; a vote counted before a
    GOODBYE still needs that seat's word, and the votes after it agree."""
    rs = _round(4)
    rs.said_goodbye(2, 7, 20, sits_out=False)
    rs.said_goodbye(3, 5, 24, sits_out=False)
    _votes(rs, (21, 0, 2, 7, 1), (22, 1, 2, 7, 1),  # 3 had not left yet: no drop
           (25, 0, 3, 5, 2), (26, 1, 3, 5, 2))       # 2 had left: 3 is dropped
    assert _tally(rs) == [Agreed(3, 5, 26, 1, 2)]
    assert rs.dropping == {3: 5} and rs.drop_votes[2] == {0: 7, 1: 7}
    _votes(rs, (27, 0, 2, 7, 3), (28, 1, 2, 7, 3))  # again, after 3's GOODBYE
    assert _tally(rs) == [Agreed(2, 7, 27, 0, 3)]  # 3 is agreed dropped: 0 and 1 are enough


def test_a_vote_after_its_voters_goodbye_counts_for_nothing() -> None:
    rs = _round(4)
    rs.said_goodbye(3, 5, 20, sits_out=False)
    _votes(rs, (19, 3, 1, 4, 4), (21, 3, 2, 6, 6))
    assert _tally(rs) == [] and rs.drop_votes == {1: {3: 4}} and not rs.drop_queue


def test_who_left_before_a_vote_is_ordered_by_lamport_then_seat() -> None:
    rs = _round(4)
    rs.said_goodbye(1, 3, 20, sits_out=False)
    rs.said_goodbye(3, 5, 20, sits_out=False)
    voting = set(rs.live)
    assert gone_before(rs, voting, 20, 2) == {1}
    assert gone_before(rs, voting, 21, 0) == {1, 3}
    assert gone_before(rs, voting, 19, 0) == set()
    assert gone_before(rs, voting - {3}, 21, 0) == {1}  # dropped: no longer voting


def test_my_silent_votes_go_a_seat_at_a_time_in_seat_order() -> None:
    rs = _round(4)
    rs.my_drop_votes.add(1)  # heard again since
    heard = {rs.keys[0]: 1.0, rs.keys[1]: 11.0, rs.keys[2]: 1.0, rs.keys[3]: 2.0}
    authors = _held(rs, 2, 5)
    assert list(silent_votes(rs, heard, 12.0, 5.0, authors)) == [
        Sign(Drop(rs.keys[1], 0)), Sign(Drop(rs.keys[2], 5)), Sign(Drop(rs.keys[3], 1))]
    assert rs.my_drop_votes == {2, 3}
    rs = _round(4)
    votes = silent_votes(rs, heard, 12.0, 5.0, authors)
    assert not rs.my_drop_votes  # nothing decided before it is asked for
    assert next(votes) == Sign(Drop(rs.keys[2], 5))
    rs.my_drop_votes.add(3)  # what the first vote led to is seen by the next seat's
    assert list(votes) == []


def test_a_seat_leaving_looks_again_at_what_waited_for_it_in_order() -> None:
    rs = _round()
    rs.stuck = [False] * 3
    assert leave(rs, VICTIM, now=3.0) == Left(go_again=False, all_stuck=None)
    assert VICTIM not in rs.live and rs.ended_at is None
    rs = _round()
    rs.stuck = [False] * 3
    rs.go_pending, rs.ended_at = Go(b"j" * 32), 1.0  # a GO that may name the others' deal
    assert leave(rs, VICTIM, now=3.0).go_again and rs.ended_at == 3.0
    rs = _round()
    rs.stuck = [False] * 3
    steps, table = steps_at(rs.keys[0], rs, Phase.PLAYING)
    rs.audits[VICTIM], rs.audit_seq[VICTIM] = Audit(b"s" * 32, ()), 9
    steps.leave(rs, VICTIM, 4, (7, 1))  # taken out past its cut, told, then what waited
    assert VICTIM not in rs.audits and table.done == [Emit(ev.PeerDropped(VICTIM, "p2"))]


def test_a_seat_leaving_while_every_other_is_stuck_takes_the_stuck_rules_turn_there() -> None:
    rs = _round()
    rs.stuck = [True, True, False]
    assert leave(rs, VICTIM, now=3.0).all_stuck == 0
    rs = _round()
    rs.stuck = [True, True, False]
    steps, table = steps_at(rs.keys[0], rs, Phase.PLAYING)
    steps.leave(rs, VICTIM, 4, (7, 1))
    assert table.done[-1] == Emit(ev.Rotated(1)) and rs.stuck == [False] * 3
    rs = _round()
    rs.stuck, rs.end = [True, True, False], "nerts"
    assert leave(rs, VICTIM, now=3.0).all_stuck is None


def test_a_result_counted_with_entries_past_the_cut_is_taken_back_while_scoring() -> None:
    rs = _round()
    rs.audits[VICTIM], rs.audit_seq[VICTIM] = Audit(b"s" * 32, ()), 8
    rs.results = (SeatRound(0, 0, 0, 0, called=False),)
    assert not cut_after(rs, VICTIM, 8, scoring=True)  # within the cut: nothing goes
    assert not cut_after(rs, VICTIM, 7, scoring=False) and VICTIM not in rs.audits
    rs.audits[VICTIM] = Audit(b"s" * 32, ())
    assert cut_after(rs, VICTIM, 7, scoring=True)


# ------------------------------------------- my votes' deadline, the quick way
_TIMES = st.sampled_from([0.0, 0.5, 1.0, 2.0, 4.5, 5.0, 6.0, 7.5, 10.0, 12.0])


Schedule = tuple[Callable[[], RoundState], dict[bytes, float], float, float]


@st.composite
def _vote_schedules(draw: st.DrawFn) -> Schedule:
    """A round at some moment of its silences: seats heard (or never) at times of a
    small grid, so that bounds meet ``now`` exactly; some of my votes out, seats
    gone or leaving, the round ended or not, audits and summaries in or not.

    The round comes as a function that makes it afresh each call, so that a test
    can walk two equal copies (a copy by ``deepcopy`` fails on the compiled build's
    frozen classes)."""
    seats = draw(st.integers(2, 8))
    seat = st.integers(0, seats - 1)
    me = draw(st.none() | seat)
    live = draw(st.sets(seat, min_size=1))
    begun = draw(_TIMES)
    ended_at = draw(st.none() | _TIMES)
    my_votes = draw(st.sets(seat, max_size=2))
    dropping = draw(st.sets(seat, max_size=2))
    left = draw(st.sets(seat, max_size=2))
    audited = draw(st.sets(seat))
    summed = draw(st.sets(seat))
    results = draw(st.booleans())

    def made() -> RoundState:
        rs = _round(seats)
        rs.me = me
        rs.live = set(live)
        rs.begun = begun
        rs.ended_at = ended_at
        rs.my_drop_votes = set(my_votes)
        rs.dropping = dict.fromkeys(dropping, 3)
        rs.left = dict.fromkeys(left, 4)
        rs.audit_seq = dict.fromkeys(audited, 5)
        rs.summary_seq = dict.fromkeys(summed, 6)
        if results:
            rs.results = (SeatRound(0, 0, 0, 0, called=False),)
        return rs

    keys = made().keys
    heard = {keys[k]: t for k, t in draw(st.dictionaries(seat, _TIMES)).items()}
    return made, heard, draw(_TIMES), draw(st.sampled_from([0.0, 1.0, 5.0]))


@settings(max_examples=600, deadline=None)
@given(_vote_schedules())
def test_next_vote_is_what_every_seats_vote_says(schedule: Schedule) -> None:
    """The one walk of the common case (nobody silent, no vote of mine out, the
    round not ended) gives the deadline looking at every seat's vote gives."""
    made, heard, now, drop_after = schedule
    rs = made()
    assert next_vote(rs, heard, now, drop_after) == vote_deadline(
        rs, quiet(rs, heard, now, drop_after), now, drop_after, heard)


@settings(max_examples=600, deadline=None)
@given(_vote_schedules())
def test_silent_votes_passed_over_only_when_no_seat_would_get_one(schedule: Schedule) -> None:
    """A settled round yields no vote; otherwise the votes are every seat's check."""
    made, heard, now, drop_after = schedule
    rs, walked = made(), made()
    authors = {key: AuthorLog(key) for key in rs.keys}
    silent_now = quiet(walked, heard, now, drop_after)
    every = [effect for seat in sorted(walked.live)
             for effect in check(walked, seat, silent_now, now, drop_after, authors)]
    if settled(rs, silent_now, now, drop_after):
        assert every == []
    assert list(silent_votes(rs, heard, now, drop_after, authors)) == every
    assert rs.my_drop_votes == walked.my_drop_votes
