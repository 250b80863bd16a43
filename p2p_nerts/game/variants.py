"""The optional rules of ``docs/RULES.md`` as one frozen value agreed by the table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Teams = Literal["none", "pairs", "share"]
TEAMS: tuple[Teams, ...] = ("none", "pairs", "share")


class VariantError(ValueError):
    """A variant setting that cannot be played (bad CLI flag, config, or wire value)."""


@dataclass(frozen=True, slots=True)
class Variants:
    """Every variant, defaults first as in docs/RULES.md.

    ``stock_turn``: cards turned from stock to waste at once (3 or 1).
    ``strict_ties``: two plays with the same Lamport time onto the same place —
    default both stay; strict lets only the first in ``foundations.order`` stay
    (a draw that every peer makes alike, fair between any two seats).
    ``lone_rotate``: a player stuck alone may move the top stock card to the
    bottom instead of waiting for everyone.
    ``penalty``: −2 per card left in the Nerts pile (off: the children's game).
    ``target``: rounds are played until someone reaches this total.
    ``teams``: "pairs" adds partners' scores; "share" seats two players at one
    tableau (a seat is then a team: over the network, one peer with two players
    at its keyboard, or a player and a bot). ``jokers``: each deck adds its two
    jokers.
    """

    stock_turn: int = 3
    strict_ties: bool = False
    lone_rotate: bool = False
    penalty: bool = True
    target: int = 100
    teams: Teams = "none"
    jokers: bool = False

    def __post_init__(self) -> None:
        if self.stock_turn not in (1, 3):
            raise VariantError(f"stock turn must be 1 or 3 cards, not {self.stock_turn!r}")
        if not isinstance(self.target, int) or not 1 <= self.target <= 10_000:
            raise VariantError(f"target score must be 1..10000, not {self.target!r}")
        if self.teams not in TEAMS:
            raise VariantError(f"teams must be one of {', '.join(TEAMS)}, not {self.teams!r}")

    def __deepcopy__(self, memo: dict[int, object]) -> Variants:
        """A value never changes, so a deep copy is the value itself (the copy a
        frozen class compiled by mypyc cannot rebuild field by field)."""
        return self

    def summary(self) -> str:
        """The rules in short, for a table's mDNS record (48 characters at most there):
        ``"turn3 ties:both pen tgt100"``; :meth:`words` says the same in words."""
        parts = [
            f"turn{self.stock_turn}",
            "ties:strict" if self.strict_ties else "ties:both",
            "pen" if self.penalty else "nopen",
            f"tgt{self.target}",
        ]
        if self.lone_rotate:
            parts.append("lone")
        if self.jokers:
            parts.append("jokers")
        if self.teams != "none":
            parts.append(self.teams)
        return " ".join(parts)

    @property
    def most_seats(self) -> int:
        """The most tableaux these rules play: 8, or 4 at share-a-deck (8 players)."""
        return 4 if self.teams == "share" else 8

    def words(self) -> str:
        """The rules in plain words, as the table shows them:
        ``"turn 3 · both stay on ties · −2 per Nerts card · to 100"``."""
        parts = [
            f"turn {self.stock_turn}",
            "one stays on ties" if self.strict_ties else "both stay on ties",
            "−2 per Nerts card" if self.penalty else "no penalty",
            f"to {self.target}",
        ]
        if self.lone_rotate:
            parts.append("stuck alone may rotate")
        if self.jokers:
            parts.append("jokers")
        if self.teams == "pairs":
            parts.append("pairs")
        elif self.teams == "share":
            parts.append("two at each tableau")
        return " · ".join(parts)

    def check_players(self, seats: int) -> None:
        """Raise VariantError unless ``seats`` tableaux make a table these rules allow.

        Nerts is for 2 to 8 players. Pairs need two teams or more, so 4, 6 or 8
        players. Share-a-deck puts two players at each tableau and needs 6 or 8
        players: 3 or 4 tableaux.
        """
        if self.teams == "share":
            if not 3 <= seats <= self.most_seats:
                raise VariantError("share-a-deck needs 6 or 8 players (3 or 4 tableaux)")
            return
        if not 2 <= seats <= self.most_seats:
            raise VariantError(f"a table seats 2 to 8 players, not {seats}")
        if self.teams == "pairs" and (seats % 2 or seats < 4):
            raise VariantError("pairs need 4, 6 or 8 players (two teams or more)")
