"""Whole simulated rounds: determinism, nothing lost, audits that pass, scores, the match."""

from __future__ import annotations

import random

import pytest

from p2p_nerts.game.cards import full_deck, shuffle_deck
from p2p_nerts.game.foundations import Fate, order
from p2p_nerts.game.scoring import Match, round_score
from p2p_nerts.game.simulate import (
    RoundReport,
    RoundSim,
    SimConfig,
    check_accounting,
    deck_seed,
    simulate,
)
from p2p_nerts.game.tableau import (
    OP_FOUND,
    OP_NERTS,
    OP_ROTATE,
    OP_SETTLE,
    ROTATE_ALL,
    ROTATE_ALONE,
    STAYED,
    IllegalMove,
    replay,
)
from p2p_nerts.game.variants import Variants

from ..gamekit import snap

VARIANTS = {
    "classic": Variants(),
    "turn1": Variants(stock_turn=1),
    "strict": Variants(strict_ties=True),
    "lone": Variants(lone_rotate=True),
    "nopenalty": Variants(penalty=False),
    "jokers": Variants(jokers=True),
    "jokers-turn1-lone": Variants(jokers=True, stock_turn=1, lone_rotate=True),
    "pairs": Variants(teams="pairs"),
}


def run_round(cfg: SimConfig, round_no: int = 1) -> tuple[RoundSim, RoundReport]:
    sim = RoundSim(cfg, round_no, random.Random(cfg.seed))
    return sim, sim.run()


def audit(sim: RoundSim) -> None:
    """What every peer checks at the end: each seat's log replays from its deck,
    and every settle it recorded agrees with the final foundation log."""
    v = sim.cfg.variants
    cutoff = min(sim.calls) if sim.calls else None
    for s, seat in enumerate(sim.seats):
        deck = shuffle_deck(deck_seed(sim.cfg.seed, sim.round_no, s), s, jokers=v.jokers)
        again = replay(s, deck, seat.tab.log, stock_turn=v.stock_turn, jokers=v.jokers)
        assert snap(again) == snap(seat.tab)
        assert again.in_flight == {}
        launched = {}
        for move in seat.tab.log:
            if move[0] == OP_FOUND:
                launched[move[3]] = move[2]
            elif move[0] == OP_SETTLE:
                _, card, lamport, landed = move
                assert launched.pop(lamport) == card
                fate = sim.truth.fate((lamport, s))
                assert (landed == STAYED) == (fate is Fate.STAY), (s, move, fate)
            elif move[0] == OP_NERTS:
                assert (move[1], s) in sim.calls
        assert launched == {}
        for play in sim.truth.plays():
            if cutoff is not None and order(play.key) > order(cutoff):
                assert sim.truth.fate(play.key) is Fate.CUT


@pytest.mark.parametrize(("name", "players"), [
    (name, players) for name in sorted(VARIANTS) for players in (2, 4)
    if players == 4 or VARIANTS[name].teams != "pairs"  # pairs: two teams or more
])
def test_rounds_under_every_variant_audit_clean(name: str, players: int) -> None:
    for seed in range(3):
        cfg = SimConfig(players=players, variants=VARIANTS[name], seed=seed,
                        skills=("easy", "medium", "hard"))
        sim, rep = run_round(cfg)
        audit(sim)
        assert rep.end in ("nerts", "deadlock")
        assert rep.plays == len(sim.truth)
        for r in rep.results:
            assert r.score == round_score(r.foundation_cards, r.nerts_left, cfg.variants)
            assert r.foundation_cards == sim.truth.cards_of(r.seat)
            assert r.called == (r.seat == rep.caller)
        if rep.end == "nerts":
            assert rep.caller is not None and rep.results[rep.caller].nerts_left == 0
        else:
            assert rep.caller is None


def test_share_a_deck_seats_two_bots_per_tableau() -> None:
    cfg = SimConfig(players=6, variants=Variants(teams="share"), seed=4)
    sim, rep = run_round(cfg)
    assert cfg.seats == 3 and len(sim.seats) == 3 and len(rep.results) == 3
    assert all(len(seat.bots) == 2 for seat in sim.seats)
    audit(sim)


def test_simulation_is_deterministic_for_a_seed() -> None:
    cfg = SimConfig(players=4, seed=11)
    assert list(simulate(cfg, rounds=3)) == list(simulate(cfg, rounds=3))
    other = list(simulate(SimConfig(players=4, seed=12), rounds=3))
    assert other != list(simulate(cfg, rounds=3))


def test_every_card_is_accounted_for() -> None:
    cfg = SimConfig(players=5, seed=2, variants=Variants(jokers=True))
    sim, _ = run_round(cfg)
    for s, seat in enumerate(sim.seats):
        mine = sorted([*seat.tab.cards(), *(x for x in sim.truth.staying_cards() if x >> 6 == s)])
        assert mine == sorted(full_deck(s, jokers=True))


def test_check_accounting_notices_a_lost_card() -> None:
    sim, _ = run_round(SimConfig(players=2, seed=3))
    tab = sim.seats[0].tab
    check_accounting(0, tab, sim.truth, False)
    pile = next(p for p in (tab.stock, tab.waste, *tab.work, tab.nerts) if p)
    pile.append(pile[-1])  # a duplicate
    with pytest.raises(AssertionError, match="seat 0"):
        check_accounting(0, tab, sim.truth, False)
    pile.pop()
    pile.pop()  # a loss
    with pytest.raises(AssertionError, match="seat 0"):
        check_accounting(0, tab, sim.truth, False)


def test_collisions_and_bounces_happen_and_are_audited() -> None:
    bounced = collided = 0
    for seed in range(6):
        sim, rep = run_round(SimConfig(players=6, seed=seed, skills=("hard",)))
        audit(sim)
        bounced += rep.bounces
        collided += rep.collisions
    assert bounced > 0 and collided > 0


def test_a_tampered_simulated_log_fails_its_audit() -> None:
    cfg = SimConfig(players=3, seed=5)
    sim, _ = run_round(cfg)
    log = sim.seats[1].tab.log
    deck = shuffle_deck(deck_seed(cfg.seed, 1, 1), 1)
    n = next(i for i, m in enumerate(log) if m[0] == OP_FOUND)
    src, card = log[n][1], log[n][2]
    forged = (OP_FOUND, src, card ^ 1, *log[n][3:])  # another card from the same source
    with pytest.raises(IllegalMove):
        replay(1, deck, [*log[:n], forged, *log[n + 1:]])


def test_a_match_runs_to_the_target() -> None:
    cfg = SimConfig(players=3, seed=8, variants=Variants(target=40))
    out = list(simulate(cfg))
    match = out[-1]
    assert isinstance(match, Match)
    reports = [r for r in out if isinstance(r, RoundReport)]
    assert len(reports) == match.rounds == len(out) - 1
    assert [r.round for r in reports] == list(range(1, len(reports) + 1))
    for seat in range(3):
        assert match.totals[seat] == sum(r.results[seat].score for r in reports)
    winner = match.winner()
    assert winner is not None and match.totals[winner] >= 40
    assert all(max(match.totals) > t for i, t in enumerate(match.totals) if i != winner)


def test_a_fixed_number_of_rounds() -> None:
    out = list(simulate(SimConfig(players=2, seed=1), rounds=2))
    assert len(out) == 3 and isinstance(out[-1], Match) and out[-1].rounds == 2


@pytest.mark.parametrize("kwargs", [
    {"players": 0}, {"players": 1}, {"players": 9}, {"skills": ("genius",)},
    {"players": 10, "variants": Variants(teams="share")},
    {"players": 2, "variants": Variants(teams="pairs")},
    {"players": 4, "variants": Variants(teams="share")},
    {"players": 7, "variants": Variants(teams="share")},
    {"players": 3, "variants": Variants(teams="pairs")},
    {"min_delay": 0.2, "max_delay": 0.1}, {"min_delay": -0.1},
])
def test_bad_configs_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        SimConfig(**kwargs)  # type: ignore[arg-type]


def test_deck_seeds_differ_per_round_and_seat() -> None:
    seeds = {deck_seed(1, r, s) for r in range(3) for s in range(4)}
    assert len(seeds) == 12 and deck_seed(1, 1, 1) == deck_seed(1, 1, 1)


def test_all_stuck_rotations_and_deadlock() -> None:
    """Everyone stuck: all rotate; stuck again with no play since: the round ends."""
    rotated = deadlocked = 0
    for seed in range(12):
        sim, rep = run_round(SimConfig(players=2, seed=seed, skills=("easy",)))
        audit(sim)
        alls = [m for seat in sim.seats for m in seat.tab.log if m == (OP_ROTATE, ROTATE_ALL)]
        assert not any(m == (OP_ROTATE, ROTATE_ALONE) for seat in sim.seats
                       for m in seat.tab.log)  # not without the variant
        rotated += rep.rotations
        if rep.end == "deadlock":
            deadlocked += 1
            assert rep.rotations >= 1 and alls
    assert rotated > 0 and deadlocked > 0


def test_lone_rotation_variant_is_used_by_hard_bots() -> None:
    alone = 0
    for seed in range(6):
        sim, _ = run_round(SimConfig(players=2, seed=seed, skills=("hard",),
                                     variants=Variants(lone_rotate=True)))
        audit(sim)
        alone += sum(m == (OP_ROTATE, ROTATE_ALONE) for seat in sim.seats for m in seat.tab.log)
    assert alone > 0


def test_two_calls_at_one_time_name_the_caller_the_cut_off_chose() -> None:
    """Two Nerts calls with the same Lamport time: the draw of ``order`` picks the one
    that cuts the round off, and the report names that seat, not the lower one."""
    cfg = SimConfig(players=3, skills=("hard",), seed=4, max_delay=1.5)
    rng = random.Random(cfg.seed)
    for round_no in (1, 2, 3):  # as simulate() plays them: one rng through the rounds
        sim = RoundSim(cfg, round_no, rng)
        report = sim.run()
    times = {lamport for lamport, _seat in sim.calls}
    assert len(sim.calls) == 2 and len(times) == 1  # the case this test is about
    first = min(sim.calls, key=order)
    assert first != min(sim.calls)  # the draw and the seat order disagree here
    assert report.caller == first[1]
    assert [r.seat for r in report.results if r.called] == [first[1]]
    assert sim.truth.cutoff == first
