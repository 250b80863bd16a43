"""Closing a round on its own: when it is scored, the verdicts, whose summary
disagrees, and the effects each step asks of the facade (no network, no
replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import Fate, FoundationLog, Play
from p2p_nerts.game.moves import foundation_target, perform
from p2p_nerts.game.scoring import Match, SeatRound, forfeit_score, round_score
from p2p_nerts.game.tableau import NERTS, NERTS_SIZE, Tableau
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.audit import AuditResult
from p2p_nerts.protocol.fairness import commitment
from p2p_nerts.protocol.messages import Audit, Commit, Result, Summary, Verdict
from p2p_nerts.protocol.proof import ForkProof
from p2p_nerts.protocol.replica._base import Phase
from p2p_nerts.protocol.replica._closing import (
    audits,
    close,
    close_due,
    counted_audits,
    disagreeing,
    end_round,
    flag,
    flag_key,
    forked,
    nerts_bound,
    reckon,
    score_due,
    scored,
    scores,
    unscore,
    verdicts,
    void_call,
)
from p2p_nerts.protocol.replica._effects import Emit, SetPhase, Sign
from p2p_nerts.protocol.replica._game import Game
from p2p_nerts.protocol.replica._state import RoundState

from ..gamekit import c, cs, tableau

pytestmark = pytest.mark.fast

AUDIT = Audit(b"s" * 32, ())


def _round() -> RoundState:
    return RoundState(number=1, keys=tuple(bytes([k]) * 32 for k in range(3)),
                      names=("me", "a", "b"), variants=Variants(), me=0, live={0, 1, 2},
                      log=FoundationLog(strict_ties=False))


def _game(match: Match, phase: Phase) -> Game:
    """The game as a round being scored finds it: ``match`` played so far."""
    game = Game()
    game.take_standing({}, match, phase)
    return game


def _clean(*seats: int) -> dict[int, AuditResult]:
    return {seat: AuditResult(seat, True, nerts_left=3) for seat in seats}


def test_a_round_is_scored_once_it_ended_and_every_live_audit_is_in() -> None:
    rs = _round()
    rs.audits = {0: AUDIT, 1: AUDIT, 2: AUDIT}
    assert not score_due(rs)  # still playing
    rs.end = "nerts"
    assert score_due(rs)
    del rs.audits[2]
    assert not score_due(rs)
    rs.live.discard(2)  # dropped: its audit is not waited for
    assert score_due(rs)
    rs.results = (SeatRound(0, 0, 0, 0, called=False),)
    assert not score_due(rs)  # once


def test_an_audit_past_its_seats_agreed_drop_cut_does_not_count() -> None:
    """Its plays past the cut have left the log: it waits for the drop's effect."""
    rs = _round()
    rs.audits = {0: AUDIT, 1: AUDIT, 2: AUDIT}
    rs.audit_seq = {0: 9, 1: 9, 2: 9}
    rs.end = "nerts"
    rs.dropping[2] = 9
    assert score_due(rs)  # its audit is within the cut
    rs.dropping[2] = 8
    assert not score_due(rs) and counted_audits(rs).keys() == {0, 1}
    rs.live.discard(2)  # the drop takes effect
    assert score_due(rs)


def test_a_seat_gone_for_a_fork_is_judged_an_equivocator_and_scores_the_forfeit() -> None:
    rs = _round()
    rs.forks[2] = ForkProof(rs.keys[2], 4, b"", b"")
    assert forked(rs) == set()  # live still: its FORK has not had its turn
    rs.live.discard(2)
    gone = forked(rs)
    assert gone == {2}
    results, verdicts = reckon(rs, _clean(0, 1), gone)
    assert verdicts == ("", "", "equivocation")
    assert results[2].void and not results[0].void
    assert results[2].score == forfeit_score(rs.variants) == -26


def test_a_missing_audit_or_a_false_call_costs_that_seat_the_forfeit_and_no_other_seat() -> None:
    rs = _round()
    results, verdicts = reckon(rs, _clean(0, 1), set())
    assert verdicts[2] and results[2].void and not results[1].void
    assert results[2].score == -26 and results[1].score == round_score(0, 3, rs.variants)
    rs.call = (9, 1)
    bad = _clean(0, 2) | {1: AuditResult(1, False, "impossible move", 5)}
    results, verdicts = reckon(rs, bad, set())
    assert verdicts == ("", "impossible move", "")
    assert [r.void for r in results] == [False, True, False]
    assert [r.score for r in results] == [-6, -26, -6]  # the honest seats' rounds as played
    nopenalty = Variants(penalty=False)  # the worst honest round: no card up
    assert forfeit_score(nopenalty) == 0


def test_the_nerts_bound_counts_only_nerts_cards_that_stayed() -> None:
    rs = _round()
    assert nerts_bound(rs, 1) == NERTS_SIZE
    ace = (1 << 6) | 1  # seat 1's ace of the first suit
    play = Play(3, 1, ace, ace, NERTS, 0)
    rs.log.add(play)
    rs.plays_by_seat[1] = [play]
    assert nerts_bound(rs, 1) == NERTS_SIZE - 1


def test_summaries_close_the_round_and_a_different_one_is_named() -> None:
    rs = _round()
    rs.results = tuple(SeatRound(s, 1, 0, -26 if s == 2 else 5 * s, called=False,
                                 void=s == 2) for s in range(3))
    assert scores(rs.results) == (0, 5, -26)  # a forfeit is stated as it counts
    digest = rs.log.state_hash()
    rs.summaries = {0: Summary(digest, (0, 5, -26)), 1: Summary(digest, (0, 5, -26))}
    assert not close_due(rs)
    rs.summaries[2] = Summary(digest, (0, 5, 10))
    assert close_due(rs) and disagreeing(rs, digest) == (2,)
    rs.summaries[2] = Summary(digest, (0, 5, -26))
    assert disagreeing(rs, digest) == ()
    assert disagreeing(rs, b"x" * 32) == (0, 1, 2)


def test_a_result_taken_back_leaves_the_totals_as_before_it() -> None:
    rs = _round()
    match = Match.new(rs.variants, 3)
    match.totals = [5, 7, 9]
    rs.results = (SeatRound(0, 4, 0, 4, True), SeatRound(1, 0, 2, -4, False),
                  SeatRound(2, 6, 0, -26, False, void=True))
    rs.verdicts = ("", "", "lied")
    game = _game(match, Phase.SCORING)
    game.scored(rs)
    assert match.totals == [9, 3, -17]
    unscore(rs, game)
    assert (match.totals, match.rounds) == ([5, 7, 9], 0)
    assert not rs.results and not rs.verdicts


def test_a_round_ends_where_the_order_says_and_my_plays_in_the_air_settle() -> None:
    rs = _round()
    deck = [make_card(0, 1, r) for r in range(2, 14)] + [make_card(0, 0, 1)]  # Nerts top: an ace
    deck += [make_card(0, s, r) for s in (2, 3) for r in range(1, 14)]
    rs.tab = Tableau(0, deck)
    target = foundation_target(rs.tab, NERTS, rs.log)
    assert target is not None
    card = perform(rs.tab, target, (4, 0))
    assert card is not None and rs.tab.in_flight
    rs.log.add(Play(4, 0, card, card, NERTS, 0))
    end_round(rs, "nerts", (9, 1), 12.5)
    assert (rs.end, rs.ended_at, rs.log.cutoff) == ("nerts", 12.5, (9, 1))
    assert not rs.tab.in_flight and rs.log.fate((4, 0)) is Fate.STAY


def test_a_deadlock_without_a_cutoff_keeps_every_play() -> None:
    rs = _round()
    end_round(rs, "deadlock", None, 3.0)
    assert (rs.end, rs.log.cutoff) == ("deadlock", None)


def test_every_audit_but_a_forked_seats_is_replayed() -> None:
    rs = _round()
    rs.joint = b"j" * 32
    for seat in (1, 2):
        rs.commits[seat] = Commit(commitment(b"another secret"), commitment(b"share"))
        rs.audits[seat] = AUDIT
    outcomes = audits(rs, {2})
    assert list(outcomes) == [1] and not outcomes[1].ok
    assert "commitment" in outcomes[1].reason


def test_a_call_the_audit_shows_invalid_is_told_with_the_callers_forfeit() -> None:
    rs = _round()
    rs.verdicts = ("", "", "")
    assert void_call(rs) is None  # no call: a deadlock
    rs.call = (9, 1)
    assert void_call(rs) is None  # a clean call
    rs.verdicts = ("", "impossible move", "")
    rs.results = tuple(SeatRound(s, 0, 13, -26, called=s == 1, void=s == 1) for s in range(3))
    assert void_call(rs) == ("round 1: a's Nerts call does not hold up (impossible move); "
                             "the others' scores stand, a scores -26")


def test_a_play_of_mine_the_log_does_not_hold_yet_stays_in_the_air_as_the_round_ends() -> None:
    """Back from a journal that lost its entry, the move is in my tableau and the
    entry still to come back from the table: it settles at its turn, as it comes."""
    rs = _round()
    rs.tab = tab = tableau(nerts=cs("KS AH"))
    card = tab.launch(NERTS, (5, 0), pile=c("AH"))
    end_round(rs, "nerts", (9, 1), 20.0)
    assert rs.end == "nerts" and tab.in_flight == {(5, 0): (card, NERTS)}


def test_the_round_ended_sends_my_audit() -> None:
    rs = _round()
    assert end_round(rs, "deadlock", None, 3.0) == [SetPhase(Phase.SCORING)]
    rs = _round()
    rs.tab = tab = tableau(nerts=cs("KS AH"))
    tab.launch(NERTS, (5, 0), pile=c("AH"))
    assert end_round(rs, "nerts", (9, 1), 4.0) == [
        SetPhase(Phase.SCORING), Sign(Audit(rs.deck_secret, tuple(tab.log)))]


def test_a_seat_is_flagged_once_with_the_first_reason() -> None:
    rs = _round()
    assert flag(rs, 1, "impossible move") == [Emit(ev.Flagged(1, "a", "impossible move"))]
    assert flag(rs, 1, "lied") == [] and rs.flagged == {1: "impossible move"}
    assert flag_key(rs, rs.keys[2], "x") == [Emit(ev.Flagged(2, "b", "x"))]
    assert flag_key(rs, b"?" * 32, "x") == [] and flag_key(None, rs.keys[0], "x") == []


def test_a_failed_audit_is_flagged_and_judged_before_the_round_is_reckoned() -> None:
    rs = _round()
    assert not score_due(rs)  # not ended
    rs.end, rs.joint = "nerts", b"j" * 32
    rs.commits = {seat: Commit(commitment(b"another secret"), commitment(b"share"))
                  for seat in range(3)}
    rs.audits = {1: AUDIT, 2: AUDIT}
    assert not score_due(rs)  # my own audit is not in yet
    rs.audits[0] = AUDIT
    assert score_due(rs) and forked(rs) == set()
    outcomes = audits(rs, set())
    assert sorted(outcomes) == [0, 1, 2] and not any(r.ok for r in outcomes.values())
    reason = outcomes[1].reason
    assert verdicts(rs, outcomes) == [e for seat in range(3) for e in (
        Emit(ev.Flagged(seat, rs.names[seat], reason)), Sign(Verdict(seat, False, reason)))]


def test_a_seat_less_replica_flags_but_signs_no_verdict() -> None:
    rs = _round()
    rs.me, rs.end, rs.joint = None, "nerts", b"j" * 32
    rs.commits = {1: Commit(commitment(b"another secret"), commitment(b"share"))}
    rs.live = {1}
    rs.audits = {1: AUDIT}
    assert [type(e) for e in verdicts(rs, audits(rs, set()))] == [Emit]


def test_a_round_reckoned_adds_up_tells_and_sums_up() -> None:
    rs = _round()
    rs.end = "deadlock"
    match = Match.new(rs.variants, 3)
    match.totals = [10, 20, 30]
    game = _game(match, Phase.SCORING)
    effects = scored(rs, game, _clean(0, 1), frozenset())
    assert rs.verdicts[2] and rs.results[2].void and match.rounds == 1
    assert game.totals == dict(zip(rs.keys, match.totals, strict=True))  # added to the game
    digest = rs.log.state_hash()
    assert effects == [
        Emit(ev.RoundOver(1, "deadlock", rs.results, tuple(match.totals), digest, rs.verdicts,
                          rs.names)),
        Sign(Summary(digest, scores(rs.results)))]


def test_a_call_that_does_not_hold_up_is_told_as_the_round_is_reckoned() -> None:
    rs = _round()
    rs.end, rs.call = "nerts", (9, 1)
    rs.me = None  # watching: no summary of mine
    match = Match.new(rs.variants, 3)
    effects = scored(rs, _game(match, Phase.SCORING),
                     _clean(0, 2) | {1: AuditResult(1, False, "lied", 5)}, frozenset())
    assert effects[0] == Emit(ev.Notice("round 1: a's Nerts call does not hold up (lied); "
                                        "the others' scores stand, a scores -26"))
    assert [type(e) for e in effects[1:]] == [Emit]
    assert match.totals == [-6, -26, -6]  # the honest seats' rounds as played (3 left each)


def _summed_up(total: int) -> tuple[RoundState, Match]:
    rs = _round()
    rs.end = "nerts"
    rs.results = tuple(SeatRound(s, 1, 0, 5, called=False) for s in range(3))
    digest = rs.log.state_hash()
    rs.summaries = {s: Summary(digest, (5, 5, 5)) for s in range(3)}
    match = Match.new(rs.variants, 3)
    match.totals = [total, 5, 5]
    return rs, match


def test_agreed_summaries_close_into_the_break() -> None:
    rs, match = _summed_up(5)
    assert close(rs, match, Phase.BETWEEN) == []
    assert close(rs, match, Phase.SCORING) == [Emit(ev.RoundAgreed(1)), SetPhase(Phase.BETWEEN)]
    del rs.summaries[2]
    assert close(rs, match, Phase.SCORING) == []


def test_a_summary_that_differs_is_named_and_a_winner_ends_the_game_with_my_result() -> None:
    target = Variants().target
    rs, match = _summed_up(target)
    rs.summaries[1] = Summary(b"x" * 32, (5, 5, 5))
    digest = rs.log.state_hash()
    effects = close(rs, match, Phase.SCORING)
    assert effects == [Emit(ev.Divergence(1, (1,))), SetPhase(Phase.OVER),
                       Emit(ev.GameOver("me", (target, 5, 5))),
                       Sign(Result((target, 5, 5), digest))]
    rs.live.discard(0)  # dropped: no result of mine
    assert Sign(Result((target, 5, 5), digest)) not in close(
        rs, match, Phase.SCORING)
