"""When every seat is stuck: rotate the stocks, or end the round in a deadlock.

The rule (docs/PROTOCOL.md, "Stuck"): the first time every seat is stuck,
everyone rotates. Stuck again after a rotation with no card played anywhere
since ends the round. "A card played" is a card that went up to a foundation
and stayed there: a card moved between a player's own piles changes nothing
for anyone else, and a bounced play came back. One definition, held by the
network replica and by ``nerts simulate`` alike, so that the same round ends
(or rotates again) in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class AllStuck(Enum):
    """What the table does when every seat is stuck."""

    ROTATE = "rotate"
    DEADLOCK = "deadlock"


@dataclass(slots=True)
class StuckRule:
    """Counts rotations and the cards that stayed up since the last one.

    The caller feeds it, in the round's order, each play that stayed
    (:meth:`card_played`) and each moment every seat is stuck (:meth:`all_stuck`).
    """

    rotations: int = 0
    played_since_rotation: int = 0

    def card_played(self) -> None:
        """A card went up to a foundation and stayed."""
        self.played_since_rotation += 1

    def all_stuck(self) -> AllStuck:
        """Every seat is stuck: rotate (counted here), or the round is deadlocked."""
        if self.rotations and not self.played_since_rotation:
            return AllStuck.DEADLOCK
        self.rotations += 1
        self.played_since_rotation = 0
        return AllStuck.ROTATE


__all__ = ["AllStuck", "StuckRule"]
