#!/usr/bin/env python3
"""Speed of the rules engine: tableau moves, bot actions, whole simulated rounds.

(a) raw tableau moves: the move logs of real simulated rounds, replayed from
    their decks (every move validated and applied, as the audit does);
(b) bot actions: one medium bot playing solitaire, deciding and acting (its
    foundation plays settle at once; all-stuck rotations as in a round);
(c) simulated four-player rounds (``RoundSim(SimConfig(players=4, ...)).run()``);
(d) whether a bot action costs more late in a long round than early: the mean
    cost of the last quarter of the actions against the first (target ≤ 1.2×).

Each rate is the median of several runs, with the slowest and fastest run.
Usage: ``scripts/bench_engine.py [--runs N] [--quick]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable

from p2p_nerts.game.bot import SKILLS, Act, Bot
from p2p_nerts.game.cards import shuffle_deck
from p2p_nerts.game.foundations import Fate, FoundationLog, Play
from p2p_nerts.game.moves import perform
from p2p_nerts.game.simulate import RoundSim, SimConfig, deck_seed
from p2p_nerts.game.tableau import Tableau, replay

GROWTH_LIMIT = 1.2


def rate(work: Callable[[], int], runs: int) -> tuple[float, float, float]:
    """(median, min, max) of units per second over ``runs`` runs of ``work``."""
    rates = []
    for _ in range(runs):
        t0 = time.perf_counter()
        units = work()
        rates.append(units / (time.perf_counter() - t0))
    return statistics.median(rates), min(rates), max(rates)


# ------------------------------------------------------------------ (a) moves
def move_workload(rounds: int) -> Callable[[], int]:
    """Replay the move logs of ``rounds`` simulated four-player rounds."""
    cfg = SimConfig(players=4, seed=101)
    rng = random.Random(cfg.seed)
    logs = []
    for n in range(1, rounds + 1):
        sim = RoundSim(cfg, n, rng)
        sim.run()
        for s, seat in enumerate(sim.seats):
            logs.append((s, shuffle_deck(deck_seed(cfg.seed, n, s), s), list(seat.tab.log)))

    def work() -> int:
        for seat, deck, log in logs:
            replay(seat, deck, log)
        return sum(len(log) for _, _, log in logs)

    return work


# ---------------------------------------------------------------- (b) actions
def solo_game(seed: int, timings: list[int] | None = None) -> int:
    """One medium bot alone until Nerts or deadlock; returns the number of actions."""
    deck = shuffle_deck(seed.to_bytes(4, "big"), 0)
    tab, log = Tableau(0, deck), FoundationLog()
    bot = Bot(SKILLS["medium"], random.Random(seed))
    clock, actions, progress = 0, 0, True
    clock_ns = time.perf_counter_ns
    while True:
        t0 = clock_ns() if timings is not None else 0
        action = bot.decide(tab, log)
        act = action.act
        if act is Act.MOVE and action.target is not None:
            target = action.target
            if target.pile is not None:
                clock += 1
                card = perform(tab, target, (clock, 0))
                assert card is not None
                log.add(Play(clock, 0, card, target.pile, target.src, target.declared))
                tab.settle((clock, 0), stayed=log.fate((clock, 0)) is Fate.STAY)
            else:
                perform(tab, target)
            progress = True
        elif act is Act.TURN:
            tab.turn()
        elif act is Act.STUCK:
            if not progress or len(tab.stock) + len(tab.waste) < 2:
                return actions
            tab.rotate(alone=False)
            bot.idle_turns = bot.lone_rotations = 0
            progress = False
        else:  # CALL (nothing is ever left in the air here)
            return actions
        bot.applied(action)
        actions += 1
        if timings is not None:
            timings.append(clock_ns() - t0)


def action_workload(games: int) -> Callable[[], int]:
    def work() -> int:
        return sum(solo_game(seed) for seed in range(games))

    return work


# ----------------------------------------------------------------- (c) rounds
def round_workload(rounds: int) -> Callable[[], int]:
    cfg = SimConfig(players=4, seed=7)

    def work() -> int:
        rng = random.Random(cfg.seed)
        for n in range(1, rounds + 1):
            RoundSim(cfg, n, rng).run()
        return rounds

    return work


# ----------------------------------------------------------------- (d) growth
class _TimedRound(RoundSim):
    """A round that records how long each bot action takes (benchmark only)."""

    def __init__(self, cfg: SimConfig, round_no: int, rng: random.Random) -> None:
        super().__init__(cfg, round_no, rng)
        self.costs: list[int] = []

    def _act(self, s: int, b_obj: object) -> None:
        t0 = time.perf_counter_ns()
        super()._act(s, b_obj)
        self.costs.append(time.perf_counter_ns() - t0)


def growth(rounds: int) -> tuple[float, float, int, int]:
    """Mean µs per action in the first and last quarter of the longest quarter of rounds."""
    results = []
    for players, skills in ((4, ("medium",)), (4, ("easy",)), (6, ("easy", "hard"))):
        cfg = SimConfig(players=players, skills=skills, seed=3)
        rng = random.Random(cfg.seed)
        for n in range(1, rounds + 1):
            sim = _TimedRound(cfg, n, rng)
            sim.run()
            results.append(sim.costs)
    results.sort(key=len)
    longest = results[-max(1, len(results) // 4):]
    first: list[int] = []
    last: list[int] = []
    for costs in longest:
        q = len(costs) // 4
        first += costs[:q]
        last += costs[-q:]
    return _trimmed_mean(first) / 1000, _trimmed_mean(last) / 1000, len(longest), min(
        len(c) for c in longest)


def _trimmed_mean(xs: list[int]) -> float:
    """Mean without the slowest 1% (scheduler hiccups on a shared machine)."""
    xs = sorted(xs)
    return statistics.fmean(xs[: max(1, len(xs) * 99 // 100)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per figure (median of them)")
    parser.add_argument("--quick", action="store_true", help="smaller workloads")
    args = parser.parse_args()
    runs = max(5, args.runs)
    scale = 1 if args.quick else 3

    rows = [
        ("(a) tableau moves replayed", "moves/s", rate(move_workload(10 * scale), runs)),
        ("(b) bot actions (solitaire)", "actions/s", rate(action_workload(20 * scale), runs)),
        ("(c) 4-player rounds simulated", "rounds/s", rate(round_workload(50 * scale), runs)),
    ]
    print(f"rules engine, median of {runs} runs (python {sys.version.split()[0]})")
    print(f"{'workload':32} {'unit':10} {'median':>10} {'min':>10} {'max':>10}")
    for name, unit, (med, lo, hi) in rows:
        print(f"{name:32} {unit:10} {med:10,.0f} {lo:10,.0f} {hi:10,.0f}")

    early, late, n_rounds, shortest = growth(40 * scale)
    ratio = late / early
    verdict = "ok" if ratio <= GROWTH_LIMIT else "TOO SLOW LATE"
    print(f"\n(d) bot action cost in the {n_rounds} longest rounds (≥ {shortest} actions each):")
    print(f"    first quarter {early:6.2f} µs   last quarter {late:6.2f} µs   "
          f"ratio {ratio:4.2f} (limit {GROWTH_LIMIT})  {verdict}")
    return 0 if ratio <= GROWTH_LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
