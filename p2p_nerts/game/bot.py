"""Computer players: decide the next move using exactly the moves a human has.

A bot is a pure decision function plus a little memory (how long it has been
turning the stock without finding anything). It never reads a clock: the
caller asks :meth:`Bot.think_time` how long the bot "thinks" before each move
and schedules it, in simulated time (``nerts simulate``) or real time (solo
play, ``nerts bot``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from enum import Enum
from typing import Final, final

from .foundations import FoundationLog
from .moves import cycle_helps, first_move, productive_move
from .tableau import Tableau, Target


@dataclass(frozen=True, slots=True)
class Skill:
    """How a bot plays: how fast, how attentive, how clever."""

    name: str
    think_ms: float  # mean pause before a card move
    turn_ms: float  # mean pause before a stock turn
    attention: float  # chance to notice a work-pile card that could go up
    plans_runs: bool  # looks for run moves before turning the stock
    rotates_alone: bool  # uses the lone-stuck rotation when the variant allows


SKILLS: dict[str, Skill] = {
    "easy": Skill("easy", think_ms=1400, turn_ms=900, attention=0.6, plans_runs=False,
                  rotates_alone=False),
    "medium": Skill("medium", think_ms=800, turn_ms=500, attention=0.9, plans_runs=True,
                    rotates_alone=False),
    "hard": Skill("hard", think_ms=420, turn_ms=260, attention=1.0, plans_runs=True,
                  rotates_alone=True),
}
DEFAULT_SKILL = "medium"


def paced(skill: Skill, pace: float) -> Skill:
    """``skill`` thinking ``pace`` times as long (0.05 makes test games fast)."""
    return replace(skill, think_ms=skill.think_ms * pace, turn_ms=skill.turn_ms * pace)


class Act(Enum):
    MOVE = "move"  # play ``target``
    TURN = "turn"
    CALL = "call"  # call Nerts
    ROTATE = "rotate"  # lone-stuck rotation
    STUCK = "stuck"  # vote stuck and wait
    WAIT = "wait"  # nothing to do until own plays settle

# The acts the hot paths compare with, as Final constants: on Python 3.11 an
# enum member read off its class goes through the enum metaclass's __getattr__
# hook, and a bot compares its act several times an action.
_MOVE: Final = Act.MOVE
_TURN_ACT: Final = Act.TURN
_ROTATE_ACT: Final = Act.ROTATE


@final
class Action:
    """What a bot does next: an act, and the target of a move.

    Immutable and compared by value, like a frozen dataclass, but written out:
    a bot makes one for nearly every card it moves, and compiled code builds a
    class with its own ``__init__`` natively (a dataclass's generated one stays
    interpreted).
    """

    __slots__ = ("act", "target")

    def __init__(self, act: Act, target: Target | None = None) -> None:
        self.act: Final = act
        self.target: Final = target

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Action) and self.act is other.act
                and self.target == other.target)

    def __hash__(self) -> int:
        return hash((self.act, self.target))

    def __repr__(self) -> str:
        return f"Action({self.act}, {self.target!r})"


_TURN: Final = Action(Act.TURN)
_CALL: Final = Action(Act.CALL)
_ROTATE: Final = Action(Act.ROTATE)
_STUCK: Final = Action(Act.STUCK)
_WAIT: Final = Action(Act.WAIT)


class Bot:
    """One computer player's brain for one seat."""

    def __init__(self, skill: Skill, rng: random.Random, *, lone_rotate: bool = False) -> None:
        self.skill = skill
        self.rng = rng
        self._random = rng.random  # (bound once: a bot draws several times an action)
        self.lone_rotate = lone_rotate and skill.rotates_alone
        self.idle_turns = 0
        self.lone_rotations = 0

    def think_time(self, action: Action) -> float:
        """Seconds the bot pauses before doing ``action``."""
        base = self.skill.turn_ms if action.act is _TURN_ACT else self.skill.think_ms
        return base * (0.6 + 0.8 * self._random()) / 1000.0

    def decide(self, tab: Tableau, fnd: FoundationLog) -> Action:
        """The next thing this bot does (nothing changes until the caller applies it)."""
        if not tab.nerts and tab.can_call_nerts():  # (asked only once the pile is empty)
            return _CALL
        # Cards up (the work piles' as it notices them), then onto the work piles.
        skill = self.skill
        target = first_move(tab, fnd, self._random, skill.attention, skill.plans_runs)
        if target is not None:
            return Action(_MOVE, target)
        cycle = -(-(len(tab.stock) + len(tab.waste)) // tab.stock_turn) + 1
        if (tab.stock or tab.waste) and self.idle_turns <= cycle:
            return _TURN
        target = productive_move(tab, fnd)
        if target is not None:
            # Inattention let something slip by during the cycle: find it now.
            return Action(_MOVE, target)
        if cycle_helps(tab, fnd):  # not stuck: keep turning
            return _TURN
        if tab.in_flight:
            return _WAIT
        cards = len(tab.stock)
        if self.lone_rotate and cards >= 2 and self.lone_rotations < cards:
            return _ROTATE  # (one stock card or none: rotating would change nothing)
        return _STUCK

    def applied(self, action: Action) -> None:
        """Tell the bot its action was carried out (it keeps count of idle turns)."""
        if action.act is _TURN_ACT:
            self.idle_turns += 1
        elif action.act is _ROTATE_ACT:
            self.lone_rotations += 1
            self.idle_turns = 0
        elif action.act is _MOVE:
            self.idle_turns = 0
            self.lone_rotations = 0
