#!/usr/bin/env python3
"""Speed of the rules engine: tableau moves, bot actions, whole simulated rounds.

(a) raw tableau moves: the move logs of real simulated rounds, replayed from
    their decks (every move validated and applied, as the audit does);
(b) bot actions: one medium bot playing solitaire, deciding and acting (its
    foundation plays settle at once; all-stuck rotations as in a round);
(c) simulated four-player rounds (``RoundSim(SimConfig(players=4, ...)).run()``),
    with the bot actions per round and the cost of one action, beside pounce's
    TypeScript simulator (its ``scripts/benchmarkSimulation.ts``, 4 players):
    measured in the same run with ``--pounce DIR``, else a stated reference;
(d) whether a bot action costs more late in a long round than early: the mean
    cost of the last quarter of the actions against the first (target ≤ 1.2×).

The engine measured is the one this Python imports: pure, or the compiled
build (``NERTS_COMPILE=1``; ``scripts/compile_engine.py --out DIR`` builds it
into DIR). ``--compiled DIR`` also times (c) in child
processes, the pure engine and the one compiled in DIR in turn, and prints the
ratio of each pair (so a drift of the machine's speed cancels out); each
``--baseline DIR`` (another checkout's package, pure or compiled, such as the
code before a change) joins the turn, first, and the ratios are against it.
``--pounce DIR`` runs pounce's simulator in the same turn (each engine's
"× pounce" is then the median of its ratios to pounce run by run). DIR is a
checkout of github.com/alexrcoleman/pounce where ``npm install`` has run (its
typescript, ts-node and rand-seed are all the simulator needs); node runs it.

Each rate is the median of several runs, with the slowest and fastest run.
Rates count the process's CPU time, not the wall clock: the engine runs on
one core, and on a shared machine the wall clock also counts other work.
pounce's timer is made to read node's CPU time too (``process.cpuUsage``, a
``--require``d hook on ``performance.now``); its own wall-clock rate is printed
beside it.
Usage: ``scripts/bench_engine.py [--runs N] [--quick] [--compiled DIR] [--baseline DIR]
[--pounce DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import p2p_nerts.game.simulate as simulate_module
from p2p_nerts.game.bot import SKILLS, Act, Bot
from p2p_nerts.game.cards import shuffle_deck
from p2p_nerts.game.foundations import Fate, FoundationLog, Play
from p2p_nerts.game.moves import perform
from p2p_nerts.game.simulate import RoundSim, SimConfig, deck_seed
from p2p_nerts.game.tableau import Tableau, replay

GROWTH_LIMIT = 1.2
#: pounce's simulator, 4 players, measured on this machine kind: the reference
#: printed when it is not run here (``--pounce``).
POUNCE_ROUNDS_PER_S = 484
POUNCE_US_PER_STEP = 3.8
#: Goals, × pounce's rounds/s: the engine a plain install runs, and the compiled one.
PURE_GOAL = 1.0
COMPILED_GOAL = 3.0
POUNCE_SCRIPT = "scripts/benchmarkSimulation.ts"
#: pounce's games (4 players) a run, after its warm-up games (JIT); fewer with --quick.
POUNCE_GAMES = 500
POUNCE_WARMUP = 50
#: Required into node before pounce's benchmark: its timer (performance.now, read
#: at the start and the end) reads this process's CPU time, as the engine's rates
#: do; the wall clock between its first and last reading goes to stderr.
POUNCE_CPU_CLOCK = """\
const perf = require("perf_hooks").performance;
const wall = perf.now.bind(perf);
const walls = [];
perf.now = () => {
  walls.push(wall());
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};
process.on("exit", () => {
  process.stderr.write(JSON.stringify({ wallMs: walls[walls.length - 1] - walls[0] }) + "\\n");
});
"""


def rate(work: Callable[[], int], runs: int) -> tuple[float, float, float]:
    """(median, min, max) of units per second over ``runs`` runs of ``work``."""
    rates = []
    for _ in range(runs):
        t0 = time.process_time()
        units = work()
        rates.append(units / (time.process_time() - t0))
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
def simulated_rounds(rounds: int) -> tuple[float, int]:
    """Seconds for ``rounds`` four-player rounds, and the bot actions they took."""
    cfg = SimConfig(players=4, seed=7)
    rng = random.Random(cfg.seed)
    actions = 0
    t0 = time.process_time()
    for n in range(1, rounds + 1):
        sim = RoundSim(cfg, n, rng)
        sim.run()
        actions += sim.actions
    return time.process_time() - t0, actions


def round_figures(rounds: int, runs: int) -> tuple[tuple[float, float, float], float]:
    """(median, min, max) rounds/s over ``runs`` runs, and actions per round."""
    rates = []
    actions = 0
    for _ in range(runs):
        seconds, actions = simulated_rounds(rounds)
        rates.append(rounds / seconds)
    return (statistics.median(rates), min(rates), max(rates)), actions / rounds


def compiled() -> bool:
    return not simulate_module.__file__.endswith(".py")


def child_rate(rounds: int, path: Path | None, *, expect: str | None) -> tuple[float, float]:
    """Rounds/s of (c) in a fresh process and the bot actions a round, importing
    the engine from ``path`` (or, with None, the pure sources beside this script);
    ``expect`` ("pure", "compiled" or None for either) is what must be found there."""
    env = dict(os.environ, PYTHONPATH=str(path or Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, __file__, "--child", str(rounds)], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    if expect == "compiled" and out[2] != "compiled":
        raise SystemExit(f"bench_engine: {path} holds no compiled engine "
                         "(run scripts/compile_engine.py --out DIR)")
    if expect == "pure" and out[2] != "pure":
        raise SystemExit("bench_engine: the sources hold compiled modules "
                         "(delete the *.so files under p2p_nerts)")
    return float(out[0]), float(out[1])


def pounce_rate(directory: Path, games: int, clock: Path) -> tuple[float, float, float]:
    """pounce's simulator in ``directory`` (4 players, ``games`` games after its
    warm-up): rounds/s by CPU time, by its own wall clock, and µs a step (CPU)."""
    env = dict(os.environ, PLAYERS="4", MODE="fixed", GAMES=str(games),
               WARMUP_GAMES=str(min(POUNCE_WARMUP, games)))
    command = ["node", "-r", "ts-node/register/transpile-only", "-r", str(clock),
               POUNCE_SCRIPT]
    try:
        done = subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True,
                              check=True)
        out = json.loads(done.stdout)
        wall_ms = float(json.loads(done.stderr.strip().splitlines()[-1])["wallMs"])
        seconds = float(out["elapsedMs"]) / 1000
        return games / seconds, games / (wall_ms / 1000), 1e6 * seconds / int(out["totalMoves"])
    except FileNotFoundError:
        raise SystemExit("bench_engine: --pounce needs node on the PATH") from None
    except subprocess.CalledProcessError as exc:
        lines = exc.stderr.strip().splitlines() or ["no output"]
        why = next((line for line in lines if "Error" in line), lines[-1]).strip()
        raise SystemExit(f"bench_engine: pounce's simulator failed in {directory} ({why}); "
                         "run npm install there") from None
    except (ValueError, KeyError, IndexError, TypeError, ZeroDivisionError):
        raise SystemExit(f"bench_engine: pounce's simulator in {directory} printed no "
                         "result this script reads") from None


def compare(engines: list[tuple[str, Path | None, str | None]], rounds: int,
            runs: int, pounce: Path | None, pounce_games: int) -> None:
    """Time (c) for each engine in turn, and pounce's simulator with them when
    given, ``runs`` times, so that each round of runs sees one machine speed;
    ratios are to the first engine, and to pounce, pair by pair."""
    rates: list[list[float]] = [[] for _ in engines]
    per_round = [0.0] * len(engines)
    pounce_rates: list[float] = []
    pounce_walls: list[float] = []
    pounce_steps: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        clock = Path(tmp) / "cpu_clock.js"
        clock.write_text(POUNCE_CPU_CLOCK)
        for _ in range(runs):
            for n, (_label, path, expect) in enumerate(engines):
                rate_n, per_round[n] = child_rate(rounds, path, expect=expect)
                rates[n].append(rate_n)
            if pounce is not None:
                cpu, wall, step = pounce_rate(pounce, pounce_games, clock)
                pounce_rates.append(cpu)
                pounce_walls.append(wall)
                pounce_steps.append(step)
    print(f"\n(c) in fresh processes, {runs} runs of each in turn (ratios run by run, "
          f"against {engines[0][0]}{' and against pounce' if pounce else ''}):")
    if pounce is None:
        print(f"    × pounce: against the reference {POUNCE_ROUNDS_PER_S} rounds/s, "
              "NOT measured in this run (--pounce DIR)")
    print(f"    {'engine':34} {'rounds/s':>9} {'µs/action':>10} {'ratio':>17} "
          f"{'× pounce':>17}")
    verdicts = []
    for n, (label, _path, expect) in enumerate(engines):
        med = statistics.median(rates[n])
        ratios = [b / a for a, b in zip(rates[0], rates[n], strict=True)]
        if pounce_rates:
            to_pounce = [r / p for r, p in zip(rates[n], pounce_rates, strict=True)]
            versus = (f"{statistics.median(to_pounce):5.2f} "
                      f"[{min(to_pounce):4.2f}–{max(to_pounce):4.2f}]")
            times = statistics.median(to_pounce)
        else:
            times = med / POUNCE_ROUNDS_PER_S
            versus = f"{times:5.2f} (reference)"
        print(f"    {label:34} {med:9,.0f} {1e6 / (med * per_round[n]):10.1f} "
              f"{statistics.median(ratios):5.2f} [{min(ratios):4.2f}–{max(ratios):4.2f}] "
              f"{versus}")
        goal = {"pure": PURE_GOAL, "compiled": COMPILED_GOAL}.get(expect or "")
        if goal is not None:
            verdicts.append(f"{expect} ≥ {goal:.1f}× pounce: "
                            f"{'met' if times >= goal else 'NOT MET'} ({times:.2f}×)")
    if pounce is not None:
        print(f"    {'pounce, measured (' + str(pounce) + ')':34} "
              f"{statistics.median(pounce_rates):9,.0f} {'':10} ({len(pounce_rates)} runs of "
              f"{pounce_games} games; {statistics.median(pounce_steps):.1f} µs a step; "
              f"its own wall clock: {statistics.median(pounce_walls):,.0f} rounds/s)")
    if verdicts:
        print(f"    goals{'' if pounce else ' (against the reference)'}: "
              + "; ".join(verdicts))


# ----------------------------------------------------------------- (d) growth
class _TimedRound(RoundSim):
    """A round that records how long each bot action takes (benchmark only)."""

    def __init__(self, cfg: SimConfig, round_no: int, rng: random.Random) -> None:
        super().__init__(cfg, round_no, rng)
        self.costs: list[int] = []

    def _act(self, s: int, b: int) -> None:
        t0 = time.perf_counter_ns()
        super()._act(s, b)
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
    parser.add_argument("--compiled", type=Path, metavar="DIR",
                        help="also compare (c) against the engine compiled in DIR")
    parser.add_argument("--baseline", type=Path, action="append", default=[], metavar="DIR",
                        help="also time (c) with the p2p_nerts package in DIR (another "
                             "checkout, pure or compiled), in turn with the others")
    parser.add_argument("--pounce", type=Path, metavar="DIR",
                        help="also run pounce's simulator from its checkout in DIR "
                             "(npm install done there) in turn with the engines")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        seconds, actions = simulated_rounds(args.child)
        print(args.child / seconds, actions / args.child, "compiled" if compiled() else "pure")
        return 0
    for directory in (*args.baseline, *([args.compiled] if args.compiled else [])):
        if not (directory / "p2p_nerts" / "game").is_dir():
            parser.error(f"{directory} holds no p2p_nerts/game package")
    if args.pounce is not None and not (args.pounce / POUNCE_SCRIPT).is_file():
        parser.error(f"{args.pounce} holds no {POUNCE_SCRIPT} (a pounce checkout)")
    runs = max(5, args.runs)
    scale = 1 if args.quick else 3

    rounds, per_round = round_figures(50 * scale, runs)
    rows = [
        ("(a) tableau moves replayed", "moves/s", rate(move_workload(10 * scale), runs)),
        ("(b) bot actions (solitaire)", "actions/s", rate(action_workload(20 * scale), runs)),
        ("(c) 4-player rounds simulated", "rounds/s", rounds),
    ]
    engine = "compiled by mypyc" if compiled() else "pure Python"
    print(f"rules engine ({engine}), median of {runs} runs (python {sys.version.split()[0]})")
    print(f"{'workload':32} {'unit':10} {'median':>10} {'min':>10} {'max':>10}")
    for name, unit, (med, lo, hi) in rows:
        print(f"{name:32} {unit:10} {med:10,.0f} {lo:10,.0f} {hi:10,.0f}")
    us_per_action = 1e6 / (rounds[0] * per_round)
    print(f"    {per_round:.0f} bot actions a round, {us_per_action:.1f} µs an action "
          "(deciding, acting, and the round's four foundation views, delays and finality)")
    if args.pounce is None:
        print(f"    pounce's simulator, a reference NOT measured here (--pounce DIR): "
              f"{POUNCE_ROUNDS_PER_S} rounds/s, {POUNCE_US_PER_STEP} µs a step → here "
              f"{rounds[0] / POUNCE_ROUNDS_PER_S:4.2f}× pounce's rounds/s")
    else:
        print("    pounce's simulator: measured in turn with the engines below")
    engines: list[tuple[str, Path | None, str | None]] = [
        (f"baseline {d}", d, None) for d in args.baseline]
    engines.append(("pure (these sources)", None, "pure"))
    if args.compiled is not None:
        engines.append((f"compiled ({args.compiled})", args.compiled, "compiled"))
    if len(engines) > 1 or args.pounce is not None:
        compare(engines, 50 * scale, runs, args.pounce,
                POUNCE_GAMES if scale > 1 else POUNCE_GAMES // 3)

    if compiled():  # (d) subclasses the round, which a compiled class does not allow
        print("\n(d) measured on the pure engine only")
        return 0
    early, late, n_rounds, shortest = growth(40 * scale)
    ratio = late / early
    verdict = "ok" if ratio <= GROWTH_LIMIT else "TOO SLOW LATE"
    print(f"\n(d) bot action cost in the {n_rounds} longest rounds (≥ {shortest} actions each):")
    print(f"    first quarter {early:6.2f} µs   last quarter {late:6.2f} µs   "
          f"ratio {ratio:4.2f} (limit {GROWTH_LIMIT})  {verdict}")
    return 0 if ratio <= GROWTH_LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
