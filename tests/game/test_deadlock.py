"""The deadlock rule: stuck again after a rotation with no card up since ends the round."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from p2p_nerts.game.bot import SKILLS, Act, Action, Bot
from p2p_nerts.game.deadlock import AllStuck, StuckRule
from p2p_nerts.game.moves import card_target, work_target
from p2p_nerts.game.simulate import RoundSim, SimConfig
from p2p_nerts.game.tableau import NERTS, Tableau, Target
from p2p_nerts.game.variants import Variants

from ..gamekit import ENGINE_COMPILED, c, deck_for

#: (The pure tier runs these.)
_SUBCLASSES_BOT = pytest.mark.skipif(
    ENGINE_COMPILED, reason="ScriptBot subclasses Bot, which a compiled engine does not allow")


def test_first_all_stuck_rotates_and_again_without_a_card_up_deadlocks() -> None:
    rule = StuckRule()
    assert rule.all_stuck() is AllStuck.ROTATE
    assert rule.all_stuck() is AllStuck.DEADLOCK
    assert rule.rotations == 1


def test_a_card_up_since_the_rotation_rotates_again() -> None:
    rule = StuckRule()
    assert rule.all_stuck() is AllStuck.ROTATE
    rule.card_played()
    assert rule.all_stuck() is AllStuck.ROTATE
    assert (rule.rotations, rule.played_since_rotation) == (2, 0)
    assert rule.all_stuck() is AllStuck.DEADLOCK


Step = Callable[[Tableau, RoundSim], Target]


class ScriptBot(Bot):
    """Makes the moves it is given, one each time it is asked, then votes stuck."""

    def __init__(self, script: list[Step]) -> None:
        super().__init__(SKILLS["hard"], random.Random(0))
        self.script = script
        self.sim: RoundSim | None = None
        self.woken = 0

    def decide(self, tab: Tableau, fnd: object) -> Action:
        self.woken += 1
        # The first decision is before any rotation; the script runs after it.
        if self.woken > 1 and self.script and self.sim is not None:
            return Action(Act.MOVE, self.script.pop(0)(tab, self.sim))
        return Action(Act.STUCK)


def _work_move(tab: Tableau, _sim: RoundSim) -> Target:
    target = work_target(tab, NERTS)
    assert target is not None
    return target


def _ace_up(tab: Tableau, sim: RoundSim) -> Target:
    target = card_target(tab, NERTS, tab.nerts[-1], sim.seats[0].view)
    assert target is not None and target.pile is not None
    return target


def _scripted_sim(deck: list[int], script: list[Step]) -> RoundSim:
    cfg = SimConfig(players=2, seed=1, variants=Variants())
    sim = RoundSim(cfg, 1, random.Random(1))
    bot = ScriptBot(script)
    bot.sim = sim
    sim.seats[0].tab = Tableau(0, deck)
    sim.seats[0].bots = [bot]
    sim.seats[1].bots = [ScriptBot([])]
    return sim


@_SUBCLASSES_BOT
def test_simulate_ends_the_round_when_only_a_work_move_came_after_the_rotation() -> None:
    """A card moved between one's own piles is no card played: the replica's rule."""
    deck = deck_for(0, nerts=[c("5H")], work=[c("6S")])
    report = _scripted_sim(deck, [_work_move]).run()
    assert (report.end, report.rotations, report.plays) == ("deadlock", 1, 0)


@_SUBCLASSES_BOT
def test_simulate_rotates_again_after_a_card_went_up() -> None:
    deck = deck_for(0, nerts=[c("AS")])
    report = _scripted_sim(deck, [_ace_up]).run()
    assert (report.end, report.rotations, report.plays) == ("deadlock", 2, 1)
