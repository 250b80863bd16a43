"""Why a move command is refused, for what the round says (no network, no replica)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.tableau import Tableau
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.proof import ForkProof
from p2p_nerts.protocol.replica import CommandError, Phase
from p2p_nerts.protocol.replica._commands import refused, rotate_alone
from p2p_nerts.protocol.replica._state import RoundState

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
