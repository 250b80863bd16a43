"""A round's entries on their own: what each records, what it makes due, and which
are refused (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import Play as FoundationPlay
from p2p_nerts.game.scoring import Match
from p2p_nerts.game.tableau import NERTS, WASTE
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import GENESIS, Entry, EnvelopeError
from p2p_nerts.protocol.fairness import commitment
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import secrets_record
from p2p_nerts.protocol.messages import (
    Audit,
    Commit,
    Drop,
    Fork,
    Go,
    Nerts,
    Payload,
    Play,
    Ready,
    Result,
    Reveal,
    Seat,
    Stuck,
    Summary,
    Verdict,
    seal_message,
)
from p2p_nerts.protocol.proof import ForkProof
from p2p_nerts.protocol.replica._base import Phase
from p2p_nerts.protocol.replica._effects import Emit, Sign
from p2p_nerts.protocol.replica._rounds import (
    Added,
    Cheat,
    Look,
    Proven,
    Tell,
    begin,
    check_play,
    commit,
    new_round,
    seat_for,
    standing,
    stuck_final,
    take,
)
from p2p_nerts.protocol.replica._state import RoundState

from ..stepkit import steps_at

pytestmark = pytest.mark.fast

HOST = Identity.from_seed(b"\x01" * 32, "host")
AUTHOR = Identity.from_seed(b"\x05" * 32, "a")
TABLE = b"t" * 16
SEAT = 1


def _round() -> RoundState:
    seats = (Seat(HOST.public_key, "host"), Seat(AUTHOR.public_key, "a"))
    return new_round(2, seats, HOST.public_key, Variants(), 7.0)


def _entry(payload: Payload, seq: int = 1, lamport: int = 5, who: Identity = AUTHOR,
           number: int = 2) -> Entry:
    return seal_message(who, payload, table_id=TABLE, round=number, seq=seq, lamport=lamport,
                        prev=GENESIS)


def _take(rs: RoundState, payload: Payload, seat: int = SEAT, *, seq: int = 1,
          lamport: int = 5, who: Identity = AUTHOR) -> object:
    entry = _entry(payload, seq=seq, lamport=lamport, who=who)
    return take(rs, seat, entry, payload, table_id=TABLE, host_key=HOST.public_key)


def test_a_new_round_seats_everyone_live_and_finds_mine() -> None:
    rs = _round()
    assert (rs.number, rs.me, rs.live, rs.stuck, rs.begun) == (2, 0, {0, 1}, [False, False], 7.0)
    assert rs.names == ("host", "a") and rs.keys[SEAT] == AUTHOR.public_key
    watching = new_round(2, (Seat(AUTHOR.public_key, "a"),), HOST.public_key, Variants(), 0.0)
    assert watching.me is None


def test_only_an_entry_of_this_round_from_a_seat_is_taken() -> None:
    rs = _round()
    assert seat_for(rs, _entry(Nerts())) == SEAT
    for entry, reason in ((_entry(Nerts(), number=1), "late"), (_entry(Nerts(), number=3),
                          "wrong_round"), (_entry(Nerts(), who=Identity.from_seed(
                              b"\x09" * 32, "x")), "not_seated")):
        with pytest.raises(EnvelopeError, match=reason):
            seat_for(rs, entry)
    with pytest.raises(EnvelopeError, match="wrong_round"):
        seat_for(None, _entry(Nerts()))


def test_the_shuffle_entries_make_the_next_step_due() -> None:
    rs = _round()
    commit = Commit(commitment(b"d" * 32), commitment(b"s" * 32))
    assert _take(rs, commit) is Look.REVEAL and rs.commits[SEAT] == commit
    with pytest.raises(EnvelopeError, match="second_commit"):
        _take(rs, commit, seq=2)
    assert _take(rs, Reveal(b"x" * 32), seq=2) == Cheat(
        SEAT, "revealed a share it had not committed to", "bad_reveal")
    assert _take(rs, Reveal(b"s" * 32), seq=2) is Look.DEAL and rs.reveals[SEAT] == b"s" * 32
    with pytest.raises(EnvelopeError, match="not_host"):
        _take(rs, Go(b"j" * 32), seq=3)
    assert _take(rs, Go(b"j" * 32), seat=0, who=HOST, seq=4) is Look.GO
    assert (rs.go_pending, rs.go_seq) == (Go(b"j" * 32), 4)


def test_a_play_enters_the_log_and_waits_its_turn() -> None:
    rs = _round()
    ace = make_card(SEAT, 0, 1)
    step = _take(rs, Play(ace, ace, NERTS, 0, 0), seq=3, lamport=9)
    play = FoundationPlay(9, SEAT, ace, ace, NERTS, 0)
    assert step == Added(play, False)
    assert rs.play_seq[play.key] == 3 and rs.plays_by_seat[SEAT] == [play]
    assert [(o.lamport, o.seat, o.seq) for o in rs.ordered] == [(9, SEAT, 3)]


def test_votes_and_calls_wait_their_turn_and_mine_is_remembered() -> None:
    rs = _round()
    assert _take(rs, Nerts(), lamport=4) is Look.NOTHING and rs.calls_by_seat[SEAT] == [(1, 4)]
    assert _take(rs, Stuck(True, 0), seat=0, who=HOST, lamport=6) is Look.NOTHING
    assert (rs.my_vote, rs.my_vote_at) == (True, 6) and len(rs.ordered) == 2


def test_a_drop_vote_is_queued_for_the_tally_never_against_oneself() -> None:
    rs = _round()
    assert _take(rs, Drop(HOST.public_key, 4), lamport=8, seq=5) is Look.TALLY
    assert rs.drop_queue == [(8, SEAT, 0, 4, 5)]
    with pytest.raises(EnvelopeError, match="bad_field:who"):
        _take(rs, Drop(AUTHOR.public_key, 4), seq=6)


def test_a_checked_fork_is_held_and_waits_its_turn() -> None:
    rs = _round()
    a = _entry(Ready(True), who=HOST, number=0)
    b = _entry(Ready(False), who=HOST, number=0)
    step = _take(rs, Fork(a.raw, b.raw), seq=2, lamport=11)
    assert step == Proven(ForkProof(HOST.public_key, 1, a.raw, b.raw))
    assert [o.seat for o in rs.ordered] == [SEAT]
    with pytest.raises(EnvelopeError, match="bad_proof"):  # nobody accuses itself
        take(rs, 0, _entry(Fork(a.raw, b.raw), who=HOST, seq=3), Fork(a.raw, b.raw),
             table_id=TABLE, host_key=HOST.public_key)


def test_the_closing_entries_wait_for_their_turn_in_the_total_order() -> None:
    rs = _round()
    audit, summary = Audit(b"d" * 32, ()), Summary(b"h" * 32, (1, 2))
    assert _take(rs, audit, seq=4) is Look.NOTHING and rs.audit_seq[SEAT] == 4
    assert _take(rs, summary, seq=5) is Look.NOTHING and rs.summary_seq[SEAT] == 5
    assert not rs.audits and not rs.summaries  # counted at their turns, not as they come
    assert sorted((o.seq, o.payload) for o in rs.ordered) == [(4, audit), (5, summary)]
    assert _take(rs, audit, seat=0, who=HOST, seq=3) is Look.NOTHING  # mine
    assert rs.audit_seq[0] == 3 and len(rs.ordered) == 3  # waiting for its turn all the same
    assert _take(rs, Result((1, 2), b"h" * 32), seq=6) is Look.NOTHING
    with pytest.raises(EnvelopeError, match="second_result"):
        _take(rs, Result((1, 2), b"h" * 32), seq=7)


def test_a_verdict_we_did_not_reach_is_told() -> None:
    rs = _round()
    assert _take(rs, Verdict(0, False, "lied")) is Look.NOTHING  # not scored yet
    rs.verdicts = ("", "")
    assert _take(rs, Verdict(0, False, "lied"), seq=2) == Tell("a flags host (lied); we did not")
    rs.verdicts = ("lied", "")
    assert _take(rs, Verdict(0, False, "lied"), seq=3) is Look.NOTHING


def test_nothing_past_a_seats_cut_counts() -> None:
    rs = _round()
    rs.dropping[SEAT] = 3
    with pytest.raises(EnvelopeError, match="dropped"):
        _take(rs, Nerts(), seq=4)
    rs = _round()
    rs.forks[SEAT] = ForkProof(AUTHOR.public_key, 3, b"", b"")
    with pytest.raises(EnvelopeError, match="void"):
        _take(rs, Nerts(), seq=3)
    assert _take(rs, Nerts(), seq=2) is Look.NOTHING


@pytest.mark.parametrize(("play", "reason"), [
    (Play(make_card(0, 0, 1), make_card(0, 0, 1), NERTS, 0, 0), "bad_field:card"),  # not its own
    (Play(make_card(SEAT, 0, 1), make_card(SEAT, 0, 1), 9, 0, 0), "bad_field:src"),
    (Play(make_card(SEAT, 0, 1), make_card(SEAT, 0, 1), NERTS, 5, 0), "bad_field:decl"),
    (Play(make_card(SEAT, 0, 0), make_card(SEAT, 0, 0), NERTS, 0, 0), "bad_field:decl"),
    (Play(make_card(SEAT, 0, 1), make_card(0, 0, 1), NERTS, 0, 0), "bad_field:pile"),  # an ace
    (Play(make_card(SEAT, 0, 2), make_card(SEAT, 0, 2), NERTS, 0, 0), "bad_field:pile"),
    # A joker declared no card (rank 14), an ace that joins a pile, a 5 that starts one.
    (Play(make_card(SEAT, 1, 0), make_card(SEAT, 1, 0), WASTE, 14, 0), "bad_field:decl"),
    (Play(make_card(SEAT, 1, 0), make_card(0, 0, 1), WASTE, 0x21, 0), "bad_field:pile"),
    (Play(make_card(SEAT, 1, 0), make_card(SEAT, 1, 0), WASTE, 0x15, 0), "bad_field:pile"),
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
    rs.variants = Variants(jokers=True)  # a joker starts a pile as the A♦, from the waste
    check_play(rs, SEAT, Play(make_card(SEAT, 1, 0), make_card(SEAT, 1, 0), WASTE, 0x21, 4))




def test_a_stuck_vote_taking_effect_rotates_once_every_live_seat_is_stuck() -> None:
    rs = _round()
    assert rs.tab is None  # (no tableau: nothing of mine to rotate)
    assert stuck_final(rs, 0, True, (3, 0)) == ([Emit(ev.StuckChanged((True, False)))], False)
    rs.my_vote, rs.my_vote_at = True, 3
    assert stuck_final(rs, 1, True, (4, 1)) == ([Emit(ev.StuckChanged((True, True))),
                                                 Emit(ev.Rotated(1))], False)
    assert rs.stuck == [False, False] and not rs.my_vote  # every vote before it ends
    stuck_final(rs, 0, True, (5, 0))
    # Stuck again with nothing played since the rotation: the round ends there.
    assert stuck_final(rs, 1, True, (6, 1)) == ([Emit(ev.StuckChanged((True, True)))], True)


def test_a_round_begins_with_each_seat_s_total_so_far_or_a_new_game() -> None:
    keys = (HOST.public_key, AUTHOR.public_key)
    before = Match.new(Variants(), 2)
    before.rounds = 4
    totals = {AUTHOR.public_key: 12, b"gone" * 8: 30}
    kept, match = standing(keys, Variants(), totals, before, over=False)
    assert kept is totals and match.totals == [0, 12] and match.rounds == 4
    kept, match = standing(keys, Variants(), totals, before, over=True)
    assert kept == {} and match.totals == [0, 0] and match.rounds == 0
    assert standing(keys, Variants(), {}, None, over=False)[1].rounds == 0


def test_my_secrets_come_from_the_journal_or_are_journaled_before_my_commit() -> None:
    rs = _round()
    known = (b"d" * 32, b"s" * 32)
    assert commit(rs, known, lambda n: b"x" * n) == [
        Sign(Commit(commitment(b"d" * 32), commitment(b"s" * 32)))]
    fresh = _round()
    assert commit(fresh, None, lambda n: b"r" * n) == [
        secrets_record(2, b"r" * 32, b"r" * 32),
        Sign(Commit(commitment(b"r" * 32), commitment(b"r" * 32)))]
    assert (fresh.deck_secret, fresh.share) == (b"r" * 32, b"r" * 32)


def test_what_follows_a_round_entry_is_the_look_it_asks_for() -> None:
    rs = _round()
    steps, table = steps_at(HOST.public_key, rs, Phase.SHUFFLE)
    nothing: list[object] = []
    for look, done in ((Look.TALLY, nothing), (Look.NOTHING, nothing),
                       (Look.REVEAL, nothing), (Look.DEAL, nothing), (Look.GO, nothing),
                       (Tell("a flags b"), [Emit(ev.Notice("a flags b"))])):
        table.done = []
        steps.after(rs, look)
        assert table.done == done, look
    commit_ = Commit(commitment(b"d" * 32), commitment(b"s" * 32))
    rs.share, rs.commits = b"s" * 32, {0: commit_, 1: commit_}
    table.done = []
    steps.after(rs, Look.REVEAL)  # due now: my REVEAL
    assert table.done == [Sign(Reveal(b"s" * 32))]
    proof = ForkProof(AUTHOR.public_key, 3, b"f" * 64, b"s" * 64)
    steps.after(rs, Proven(proof))
    assert rs.forks == {SEAT: proof}  # held (told already: not published again)
    table.done = []
    with pytest.raises(EnvelopeError, match="bad_reveal"):
        steps.after(rs, Cheat(1, "lied", "bad_reveal"))
    assert table.done == [Emit(ev.Flagged(1, rs.names[1], "lied"))]  # flagged, then refused


def test_a_round_begins_in_its_state_with_the_games_standing() -> None:
    seats = (Seat(HOST.public_key, "host"), Seat(AUTHOR.public_key, "a"))
    before = Match.new(Variants(), 2)
    before.rounds = 3
    totals = {AUTHOR.public_key: 9}
    rs, kept, begun = begin(4, seats, AUTHOR.public_key, Variants(), 6.0, totals=totals,
                            match=before, over=False)
    assert (rs.number, rs.me, rs.keys, rs.begun) == (4, 1, (HOST.public_key,
                                                          AUTHOR.public_key), 6.0)
    assert kept is totals and begun.totals == [0, 9]
    assert begun.rounds == 3 and begun is not before


def test_a_round_i_do_not_sit_in_has_no_seat_of_mine_and_after_a_game_a_new_game() -> None:
    other = Identity.from_seed(b"\x07" * 32, "b").public_key
    seats = (Seat(HOST.public_key, "host"), Seat(other, "b"))
    rs, totals, match = begin(1, seats, AUTHOR.public_key, Variants(), 0.0,
                              totals={HOST.public_key: 50}, match=Match.new(Variants(), 2),
                              over=True)
    assert rs.me is None
    assert totals == {} and match.totals == [0, 0] and match.rounds == 0
