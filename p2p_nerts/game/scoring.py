"""Round scores, running totals, teams and the end of a game."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .tableau import NERTS_SIZE
from .variants import Variants

PENALTY_PER_CARD = 2


def round_score(foundation_cards: int, nerts_left: int, variants: Variants) -> int:
    """+1 per own card on the foundations, −2 per card left in the Nerts pile."""
    penalty = PENALTY_PER_CARD * nerts_left if variants.penalty else 0
    return foundation_cards - penalty


def forfeit_score(variants: Variants) -> int:
    """What a seat whose round is found false scores (a failed or missing audit, a
    false Nerts call, a proven fork): the worst it could have scored playing
    honestly, no card up and its whole Nerts pile left (−2 × 13 = −26; 0 on a
    table that plays without the penalty). Misbehaving never scores better
    than the worst honest play, so it never pays."""
    return round_score(0, NERTS_SIZE, variants)


def team_of(seat: int, variants: Variants) -> int:
    """Which team a seat scores for: partners are seats 2k and 2k+1 under "pairs"."""
    return seat // 2 if variants.teams == "pairs" else seat


def team_names(names: Sequence[str], variants: Variants) -> list[str]:
    """Each team as its players read it, "Ana + Ben", by team number (a lone seat's
    own name without teams): how a winner, a total or a pairing is named."""
    teams: dict[int, list[str]] = {}
    for seat, name in enumerate(names):
        teams.setdefault(team_of(seat, variants), []).append(name)
    return [" + ".join(members) for _team, members in sorted(teams.items())]


def partners(a: int, b: int, variants: Variants) -> bool:
    """Whether two different seats score together."""
    return a != b and team_of(a, variants) == team_of(b, variants)


@dataclass(frozen=True, slots=True)
class SeatRound:
    """One seat's round: what the score table shows."""

    seat: int
    foundation_cards: int
    nerts_left: int
    score: int
    called: bool
    #: Its round found false (flagged by the audit): ``score`` is the forfeit
    #: (:func:`forfeit_score`), whatever it got up; it counts like any score.
    void: bool = False


@dataclass(slots=True)
class Match:
    """Running totals over rounds, until someone reaches the target."""

    variants: Variants
    seats: int
    totals: list[int]
    rounds: int = 0

    @classmethod
    def new(cls, variants: Variants, seats: int) -> Match:
        variants.check_players(seats)
        return cls(variants, seats, [0] * seats)

    def add_round(self, results: Sequence[SeatRound]) -> None:
        for r in results:
            self.totals[r.seat] += r.score
        self.rounds += 1

    def named_totals(self, names: Sequence[str]) -> list[tuple[str, int]]:
        """Each team's name (see team_names) and total, in team order."""
        totals = self.team_totals()
        return [(name, totals[team])
                for team, name in enumerate(team_names(names, self.variants))]

    def team_totals(self) -> dict[int, int]:
        teams: dict[int, int] = {}
        for seat, total in enumerate(self.totals):
            team = team_of(seat, self.variants)
            teams[team] = teams.get(team, 0) + total
        return teams

    def winner(self) -> int | None:
        """The winning team once one has reached the target alone at the top; else None.

        A tie at the top plays another round: "the highest total wins".
        """
        teams = self.team_totals()
        best = max(teams.values())
        leaders = [t for t, v in teams.items() if v == best]
        if best >= self.variants.target and len(leaders) == 1:
            return leaders[0]
        return None
