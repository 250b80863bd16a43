"""Why a move command is refused, for what the round says, and what my own
commands do on my tableau (``Moves``): what they journal and sign (no network,
no replica)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.moves import foundation_target
from p2p_nerts.game.tableau import OP_FOUND, OP_NERTS, OP_TURN, WORK0, Tableau, Target
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.clock import LamportClock
from p2p_nerts.protocol.journal import Record, move_record
from p2p_nerts.protocol.messages import Hello, Join, Nerts, Play, Stuck, View
from p2p_nerts.protocol.proof import ForkProof
from p2p_nerts.protocol.replica import (
    CallNerts,
    CommandError,
    Move,
    Phase,
    RotateAlone,
    Turn,
    VoteStuck,
)
from p2p_nerts.protocol.replica._commands import Moves, refused, rotate_alone
from p2p_nerts.protocol.replica._effects import Sign
from p2p_nerts.protocol.replica._recovery import Recovery
from p2p_nerts.protocol.replica._state import RoundState
from p2p_nerts.protocol.resume import Resume

from ..gamekit import cs, tableau

pytestmark = pytest.mark.fast


def _playing() -> RoundState:
    rs = RoundState(number=1, keys=(b"m" * 32, b"o" * 32), names=("me", "o"),
                    variants=Variants(), me=0, live={0, 1},
                    log=FoundationLog(strict_ties=False))
    rs.tab = Tableau(0, [make_card(0, s, r) for s in range(4) for r in range(1, 14)])
    rs.started = True
    return rs


def test_a_seat_moves_only_while_its_round_is_played_and_it_is_in_it() -> None:
    assert refused(_playing(), Phase.PLAYING, False) is None
    assert refused(_playing(), Phase.PLAYING, True) == (
        "you are watching this table: a spectator does not play")
    assert refused(None, Phase.LOBBY, False) == "no round is being played"
    assert refused(_playing(), Phase.SCORING, False) == "no round is being played"
    cases: dict[str, Callable[[RoundState], object]] = {
        "wait for the countdown": lambda rs: setattr(rs, "started", False),
        "the round is over": lambda rs: setattr(rs, "end", "nerts"),
        "you called Nerts: the round is ending": lambda rs: setattr(rs, "i_called", True),
        "you were dropped from this round; you play again next round":
            lambda rs: rs.dropping.update({0: 3}),
        "you left this round; you play again next round": lambda rs: rs.left.update({0: 4}),
        "this seat signed two different entries under one number: it sits out":
            lambda rs: rs.forks.update({0: ForkProof(b"m" * 32, 2, b"a", b"b")}),
    }
    for reason, change in cases.items():
        rs = _playing()
        change(rs)
        assert refused(rs, Phase.PLAYING, False) == reason
    gone = _playing()
    gone.live.discard(0)
    assert refused(gone, Phase.PLAYING, False) == (
        "you were dropped from this round; you play again next round")
    gone.left[0] = 4  # it said GOODBYE, and so left the live seats
    assert refused(gone, Phase.PLAYING, False) == "you left this round; you play again next round"


def test_a_seat_back_from_a_restart_moves_once_it_has_heard_the_table_out() -> None:
    rs = _playing()
    assert refused(rs, Phase.PLAYING, False, behind=True) == "catching up with the table"
    assert refused(rs, Phase.PLAYING, False, behind=False) is None
    rs.end = "nerts"  # the round's own reason first
    assert refused(rs, Phase.PLAYING, False, behind=True) == "the round is over"


def test_the_lone_rotation_is_for_a_table_that_plays_it_and_a_player_with_no_move() -> None:
    rs = _playing()
    assert rs.tab is not None
    with pytest.raises(CommandError, match="without the lone rotation"):
        rotate_alone(rs, rs.tab)
    rs.variants = Variants(lone_rotate=True)
    with pytest.raises(CommandError, match="you can still play"):
        rotate_alone(rs, rs.tab)  # this deal still has a move
    assert not rs.tab.log


HOST = b"h" * 32


def _moves(time: int = 6) -> Moves:
    return Moves("me", HOST, LamportClock(time), Recovery())


def test_a_card_to_a_foundation_is_in_the_air_under_the_time_its_play_will_carry() -> None:
    moves, rs = _moves(time=6), _playing()
    assert rs.tab is not None
    target = foundation_target(rs.tab, WORK0, rs.log)  # the ace dealt to work pile 1
    assert target is not None and target.pile is not None
    effects = moves.decide(Move(target), rs, Phase.PLAYING, watching=False, drawn=True,
                           now=5.0)
    card = make_card(0, 1, 1)
    assert rs.tab.in_flight.keys() == {(7, 0)} and rs.tab.work[0] == []
    assert rs.tab.log == [(OP_FOUND, WORK0, card, 7, target.pile, 0)]
    journal, play, view = effects
    assert journal == move_record(1, rs.tab.log[0])
    # Signed at that very time, and applied to myself only on the next call.
    assert play == Sign(Play(card, target.pile, WORK0, 0, 0), expect_lamport=7, unapplied=True)
    assert isinstance(view, Sign) and isinstance(view.payload, View)  # after the play
    assert moves.clock.time == 6  # the facade's signing ticks it, not the move
    assert rs.journaled == 1


def test_no_view_rides_with_a_play_where_nobody_draws_the_tableaux() -> None:
    moves, rs = _moves(), _playing()
    assert rs.tab is not None
    target = foundation_target(rs.tab, WORK0, rs.log)
    assert target is not None
    effects = moves.decide(Move(target), rs, Phase.PLAYING, watching=False, drawn=False,
                           now=5.0)
    assert [type(e) for e in effects] == [Record, Sign]


def test_a_move_within_my_tableau_is_journaled_and_signs_nothing() -> None:
    moves, rs = _moves(), _playing()
    assert rs.tab is not None
    effects = moves.decide(Turn(), rs, Phase.PLAYING, watching=False, drawn=True, now=5.0)
    assert rs.tab.log == [(OP_TURN,)] and effects == [move_record(1, (OP_TURN,))]
    rs.tab.work[0].clear()
    effects = moves.decide(Move(Target(WORK0 + 1, work=0)), rs, Phase.PLAYING,
                           watching=False, drawn=True, now=5.0)
    assert rs.tab.work[0] == [make_card(0, 1, 2)] and not rs.tab.work[1]
    assert effects == [move_record(1, rs.tab.log[1])]
    assert moves.decide(Turn(), rs, Phase.PLAYING, watching=False, drawn=True,
                        now=5.0) == [move_record(1, (OP_TURN,))]  # the new one only


def test_a_stuck_vote_names_how_far_the_foundations_went_and_needs_no_move_left() -> None:
    moves, rs = _moves(), _playing()
    with pytest.raises(CommandError, match="no move left"):  # an ace to play: not stuck
        moves.decide(VoteStuck(True), rs, Phase.PLAYING, watching=False, drawn=True, now=5.0)
    rs.tab = tableau(nerts=cs("KS"), work=[cs("5H"), cs("9C"), cs("3D"), cs("7S")],
                     stock=cs("QD QC JD 10C 10H 6C"), waste=cs("KH"))  # stuck
    assert moves.decide(VoteStuck(True), rs, Phase.PLAYING, watching=False, drawn=True,
                        now=5.0) == [Sign(Stuck(True, 0))]
    assert not rs.tab.log  # no move: nothing journaled
    rs.tab.nerts = cs("4S")  # a move again: the vote may still be taken back
    assert moves.decide(VoteStuck(False), rs, Phase.PLAYING, watching=False, drawn=True,
                        now=5.0) == [Sign(Stuck(False, 0))]


def test_my_nerts_call_is_keyed_by_its_entrys_time_and_ends_my_moves() -> None:
    moves, rs = _moves(time=9), _playing()
    assert rs.tab is not None
    rs.tab.nerts.clear()
    effects = moves.decide(CallNerts(), rs, Phase.PLAYING, watching=False, drawn=True, now=5.0)
    assert effects == [move_record(1, (OP_NERTS, 10)),
                       Sign(Nerts(), expect_lamport=10)]
    assert rs.i_called
    assert moves.blocked(rs, Phase.PLAYING, False) == "you called Nerts: the round is ending"


def test_a_refused_command_changes_nothing() -> None:
    moves, rs = _moves(), _playing()
    assert rs.tab is not None
    with pytest.raises(CommandError, match="spectator"):
        moves.decide(Turn(), rs, Phase.PLAYING, watching=True, drawn=True, now=5.0)
    with pytest.raises(CommandError, match="no round is being played"):
        moves.decide(CallNerts(), None, Phase.LOBBY, watching=False, drawn=True, now=5.0)
    with pytest.raises(CommandError, match="lone rotation"):
        moves.decide(RotateAlone(), rs, Phase.PLAYING, watching=False, drawn=True, now=5.0)
    assert not rs.tab.log and rs.journaled == 0 and not rs.i_called


def test_my_moves_wait_until_a_seat_back_at_the_table_has_heard_it_out() -> None:
    moves, rs = _moves(), _playing()
    moves.recovery.catching_up = True
    assert moves.blocked(rs, Phase.PLAYING, False) == "catching up with the table"
    moves.recovery.catching_up = False
    moves.recovery.resume = Resume({HOST}, 0.0, 3)
    with pytest.raises(CommandError, match="catching up with the table"):
        moves.decide(Turn(), rs, Phase.PLAYING, watching=False, drawn=True, now=5.0)
    moves.recovery.resume = None
    assert moves.blocked(rs, Phase.PLAYING, False) is None


def test_a_guest_new_here_asks_where_its_chain_ends_before_it_asks_for_a_seat() -> None:
    moves = _moves()
    effects = moves.open(0, 4.0)
    assert effects == [Sign(Hello("me", 1)), Sign(Join("me", None))]
    resume = moves.recovery.resume  # begun before the JOIN is signed: it holds it back
    assert resume is not None and resume.waiting == {HOST}
    assert (resume.since, resume.journal_seq) == (4.0, 0)
    assert moves.open(0, 5.0) == [Sign(Join("me", None))]  # asking already
    assert moves.recovery.resume is resume
    assert _moves().open(3, 4.0) == [Sign(Join("me", None))]  # signed here: it knows
