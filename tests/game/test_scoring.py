"""Scores of a round, running totals, teams, the target and the winner."""

from __future__ import annotations

import pytest

from p2p_nerts.game.scoring import (
    Match,
    SeatRound,
    forfeit_score,
    partners,
    round_score,
    team_names,
    team_of,
)
from p2p_nerts.game.variants import VariantError, Variants

CLASSIC = Variants()


@pytest.mark.parametrize(("middle", "left", "score"), [
    (12, 0, 12),  # 12 in the middle, empty Nerts pile
    (10, 4, 2),  # 10 − 8
    (14, 0, 14),
    (11, 4, 3),
    (0, 13, -26),  # nothing played at all
])
def test_examples_from_the_rules(middle: int, left: int, score: int) -> None:
    assert round_score(middle, left, CLASSIC) == score


def test_no_penalty_variant() -> None:
    kids = Variants(penalty=False)
    assert round_score(10, 4, kids) == 10
    assert round_score(0, 13, kids) == 0


def _round(*scores: int, void: tuple[int, ...] = ()) -> list[SeatRound]:
    return [SeatRound(seat=s, foundation_cards=max(v, 0), nerts_left=0, score=v,
                      called=False, void=s in void) for s, v in enumerate(scores)]


def test_totals_accumulate_until_the_target() -> None:
    m = Match.new(Variants(target=30), 3)
    m.add_round(_round(12, 2, -4))
    assert m.totals == [12, 2, -4] and m.rounds == 1 and m.winner() is None
    m.add_round(_round(14, 20, 3))
    assert m.totals == [26, 22, -1] and m.winner() is None
    m.add_round(_round(5, 3, 0))
    assert m.totals == [31, 25, -1] and m.winner() == 0


def test_highest_total_wins_not_the_first_past_the_target() -> None:
    m = Match.new(Variants(target=20), 2)
    m.add_round(_round(21, 25))
    assert m.winner() == 1


def test_a_tie_at_the_top_plays_another_round() -> None:
    m = Match.new(Variants(target=10), 3)
    m.add_round(_round(12, 12, 3))
    assert m.winner() is None
    m.add_round(_round(1, 0, 0))
    assert m.winner() == 0


def test_a_round_found_false_counts_its_forfeit_the_worst_honest_round() -> None:
    assert forfeit_score(CLASSIC) == round_score(0, 13, CLASSIC) == -26
    assert forfeit_score(Variants(penalty=False)) == 0
    for up in range(53):  # no honest round scores below it
        for left in range(14):
            assert round_score(up, left, CLASSIC) >= forfeit_score(CLASSIC)
    m = Match.new(CLASSIC, 2)
    m.add_round(_round(forfeit_score(CLASSIC), 7, void=(0,)))
    assert m.totals == [-26, 7] and m.rounds == 1


def test_pairs_add_partners_scores() -> None:
    pairs = Variants(teams="pairs", target=40)
    assert [team_of(s, pairs) for s in range(6)] == [0, 0, 1, 1, 2, 2]
    assert [team_of(s, CLASSIC) for s in range(3)] == [0, 1, 2]
    m = Match.new(pairs, 4)
    m.add_round(_round(12, 10, 25, -2))
    assert m.team_totals() == {0: 22, 1: 23} and m.winner() is None
    m.add_round(_round(10, 8, 0, -5))
    assert m.team_totals() == {0: 40, 1: 18} and m.winner() == 0
    assert team_names(["Ana", "Ben", "Cy", "Di"], pairs)[0] == "Ana + Ben"  # the winner
    assert m.named_totals(["Ana", "Ben", "Cy", "Di"]) == [("Ana + Ben", 40), ("Cy + Di", 18)]


def test_partners_and_team_names_follow_the_seats() -> None:
    pairs = Variants(teams="pairs")
    names = ["Ana", "Ben", "Cy", "Di", "Ed"]
    assert team_names(names, pairs) == ["Ana + Ben", "Cy + Di", "Ed"]
    assert team_names(names, CLASSIC) == names
    assert partners(0, 1, pairs) and partners(3, 2, pairs)
    assert not partners(1, 2, pairs) and not partners(1, 1, pairs)
    assert not any(partners(a, b, CLASSIC) for a in range(4) for b in range(4))


def test_match_checks_the_player_count() -> None:
    with pytest.raises(VariantError):
        Match.new(Variants(teams="pairs"), 3)
    with pytest.raises(VariantError):
        Match.new(CLASSIC, 9)


def test_default_target_is_100() -> None:
    m = Match.new(CLASSIC, 2)
    m.add_round(_round(99, 0))
    assert m.winner() is None
    m.add_round(_round(1, 0))
    assert m.winner() == 0
