"""The audit's check of stuck votes and lone rotations: each must be made with no
move in hand, as the seat's own move log shows it (whatever the foundations
held), and an honest one never fails it."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import FoundationLog, Play
from p2p_nerts.game.moves import is_stuck, move_in_hand
from p2p_nerts.game.tableau import (
    NERTS,
    OP_FOUND,
    OP_ROTATE,
    OP_TURN,
    ROTATE_ALONE,
    WASTE,
    Tableau,
)
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.audit import StuckVotes, audit_seat
from p2p_nerts.protocol.fairness import commitment, deal_for
from p2p_nerts.testing.memnet import bot_table

from ..gamekit import c, cs, tableau
from ..replica_harness import check_round, play_round

pytestmark = pytest.mark.fast

SECRET, JOINT = b"s" * 32, b"j" * 32


def _stuck() -> Tableau:
    """No move in hand: nothing fits a work pile, no ace or joker anywhere in reach."""
    return tableau(nerts=cs("KS"), work=[cs("5H"), cs("9C"), cs("3D"), cs("7S")],
                   stock=cs("QD QC JD 10C 10H 6C"), waste=cs("KH"))


def test_a_move_in_hand_is_one_whatever_the_foundations_hold() -> None:
    stuck = _stuck()
    assert not move_in_hand(stuck) and is_stuck(stuck, FoundationLog())
    up = FoundationLog()  # a foundation wants the Nerts top: not stuck, no move in hand
    for rank, card in enumerate(cs("AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS", 1)):
        up.add(Play(rank + 1, 1, card, c("AS", 1), WASTE, 0))
    assert up.pile_for(c("KS") & 63) is not None
    assert not move_in_hand(stuck) and not is_stuck(stuck, up)
    for free in (tableau(nerts=cs("AH"), work=[cs("5H")]),  # an ace starts a pile
                 tableau(nerts=cs("4S"), work=[cs("5H")]),  # the Nerts top fits
                 tableau(nerts=cs("KS"), work=[cs("5H")], waste=cs("4C")),  # the waste top fits
                 tableau(nerts=cs("KS"), work=[cs("9C")], stock=cs("QD QC 8H"))):  # the cycle
        assert move_in_hand(free)
        for fnd in (FoundationLog(), up):
            assert not is_stuck(free, fnd)


def _launch(lamport: int) -> tuple[int, ...]:
    return (OP_FOUND, NERTS, c("AS"), lamport, c("AS"), 0)


def test_a_vote_holds_if_anywhere_it_may_have_been_cast_shows_no_move_in_hand() -> None:
    moves = [_launch(10), (OP_TURN,), (OP_TURN,), _launch(20)]
    stuck, free = _stuck(), tableau(nerts=cs("AH"))
    held = StuckVotes(moves, [15])  # cast after the launch at 10, before the one at 20
    assert held.open == {15: (1, 3)}
    for point, tab in enumerate((free, free, stuck, free, free)):
        held.look(point, tab)
    assert held.false() is None
    false = StuckVotes(moves, [15, 25])
    for point in range(len(moves) + 1):
        false.look(point, stuck if point == 0 else free)  # stuck only before the vote
    assert false.false() == 15 and false.open == {15: (1, 3), 25: (4, 4)}


def _audit(moves: list[tuple[int, ...]], votes: tuple[int, ...] = (),
           variants: Variants | None = None) -> str:
    result = audit_seat(0, deck_secret=SECRET, deck_commitment=commitment(SECRET), joint=JOINT,
                        variants=variants or Variants(lone_rotate=True), moves=moves, plays=[],
                        log=FoundationLog(), calls=[], rotations=0, votes=votes)
    return result.reason


def test_the_audit_flags_a_vote_or_a_lone_rotation_with_a_move_in_hand() -> None:
    dealt = Tableau(0, deal_for(0, SECRET, JOINT, jokers=False))
    assert move_in_hand(dealt), "this deal shows a move at once"
    assert _audit([]) == ""
    assert _audit([(OP_TURN,)], votes=(7,)) == "voted stuck at Lamport time 7 with a move in hand"
    assert _audit([(OP_ROTATE, ROTATE_ALONE)]) == (
        "impossible move: move 1 (5, 0): rotated the stock alone with a move in hand")


def test_the_audit_accepts_a_vote_cast_where_no_move_was_in_hand(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the tableau shows no move (here: every moment of a log of turns, as the
    check reads it), a vote and a rotation alone are sound."""
    import p2p_nerts.protocol.audit as audit_module
    monkeypatch.setattr(audit_module, "move_in_hand", lambda tab: False)
    assert _audit([(OP_TURN,), (OP_ROTATE, ROTATE_ALONE)], votes=(3,)) == ""
    # Only at some moments: the vote holds if one of those it may have been cast at.
    seen: list[int] = []

    def only_at_first(tab: Tableau) -> bool:
        seen.append(len(tab.waste))
        return len(seen) > 1

    monkeypatch.setattr(audit_module, "move_in_hand", only_at_first)
    assert _audit([(OP_TURN,), (OP_TURN,)], votes=(3,)) == ""


def test_honest_bots_votes_and_lone_rotations_pass_the_audit_on_every_peer() -> None:
    """Bots vote stuck and rotate alone only with no move left: at a table that
    plays the lone rotation, every peer finds every seat's round sound."""
    net = bot_table(3, seed=2, variants=Variants(lone_rotate=True))
    for driver in net.drivers.values():
        driver.bot.lone_rotate = True  # (a bot at a memnet table is told the variant here)
    number = play_round(net)
    over = check_round(net, number, honest={0, 1, 2})
    rs = net.replicas[0].rs
    assert rs is not None and rs.votes_by_seat, "nobody voted stuck in this deal"
    alone = [m for r in net.replicas if r.rs is not None and r.rs.tab is not None
             for m in r.rs.tab.log if m[0] == OP_ROTATE and m[1] == ROTATE_ALONE]
    assert alone, "nobody rotated alone in this deal"
    assert not any(r.void for r in over.results)
