"""Property tests: nothing is lost, foundations stay legal, the log is order-independent."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable
from functools import cache

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from p2p_nerts.game.bot import SKILLS, Act, Bot
from p2p_nerts.game.cards import ACE, full_deck, shuffle_deck
from p2p_nerts.game.foundations import Fate, FoundationLog, Play, PlayKey, fold, order
from p2p_nerts.game.moves import best_target, perform, productive_move, run_moves
from p2p_nerts.game.simulate import RoundSim, SimConfig
from p2p_nerts.game.tableau import (
    NERTS,
    SOURCES,
    WORK_PILES,
    IllegalMove,
    Tableau,
    Target,
    replay,
)
from p2p_nerts.game.variants import Variants

from ..gamekit import snap

SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------ invariants
def assert_piles_legal(log: FoundationLog) -> None:
    """Each pile's staying plays: its ace, then the same suit one rank up at a time;
    an equal rank only for a play at the same Lamport time as the pile's top (default rule)."""
    for pile_id, pile in log.piles.items():
        stays = pile.stays
        if not stays:
            continue
        first = stays[0]
        assert first.card == pile_id and first.face & 15 == ACE
        suit = first.face >> 4
        for below, above in itertools.pairwise(stays):
            assert above.face >> 4 == suit
            assert order(below.key) < order(above.key)
            rank, prev = above.face & 15, below.face & 15
            tie = rank == prev and above.lamport == below.lamport and not log.strict_ties
            assert rank == prev + 1 or tie, (pile_id, below, above)
        for play in stays:
            assert log.fate(play.key) is Fate.STAY
            assert log.cutoff is None or order(play.key) <= order(log.cutoff)


def assert_accounted(tabs: list[Tableau], decks: list[list[int]], log: FoundationLog) -> None:
    """Every card of every deck is in exactly one place: on its tableau (or in the air
    from it), or settled on a foundation."""
    settled: list[Counter[int]] = [Counter() for _ in tabs]
    for card in log.staying_cards():
        settled[card >> 6][card] += 1
    for s, tab in enumerate(tabs):
        for key, (card, _src) in tab.in_flight.items():
            if log.fate(key) is Fate.STAY:
                settled[s][card] -= 1  # it counts once: in the air, still ours
        held = Counter(tab.cards()) + settled[s]
        assert held == Counter(decks[s]), f"seat {s}"


# ------------------------------------------------------------ (a) and (b): play
KINDS = (["bot"] * 8 + ["helper"] * 2 + ["raw"] * 2 + ["settle"] * 4
         + ["turn", "tick", "rotate", "call"])


class Table:
    """A few tableaux and one foundation log, driven by random legal and illegal moves.

    Each seat has its own Lamport clock; a play is settled only once it is final
    (every seat's next play would be ordered after it), as the protocol does.
    """

    def __init__(self, seed: int, seats: int, v: Variants) -> None:
        self.v = v
        self.decks = [shuffle_deck(seed.to_bytes(8, "big"), s, jokers=v.jokers)
                      for s in range(seats)]
        self.tabs = [Tableau(s, d, stock_turn=v.stock_turn, jokers=v.jokers)
                     for s, d in enumerate(self.decks)]
        self.log = FoundationLog(strict_ties=v.strict_ties)
        self.clock = [0] * seats
        self.called = False
        self.bots = [Bot(SKILLS["hard"], random.Random(seed + s)) for s in range(seats)]

    def send(self, s: int, src: int, pile: int, declared: int) -> None:
        key = (self.clock[s] + 1, s)
        card = self.tabs[s].launch(src, key, pile, declared)
        self.clock[s] += 1
        self.log.add(Play(key[0], s, card, pile, src, declared))

    def final(self, key: PlayKey) -> bool:
        return all(order((t + 1, s)) > order(key) for s, t in enumerate(self.clock))

    def settle(self, s: int, key: PlayKey) -> None:
        self.tabs[s].settle(key, stayed=self.log.fate(key) is Fate.STAY)

    def step(self, rng: random.Random) -> None:
        s = rng.randrange(len(self.tabs))
        tab = self.tabs[s]
        kind = rng.choice(KINDS)
        target: Target | None = None
        if kind == "bot":
            action = self.bots[s].decide(tab, self.log)
            if action.act is Act.MOVE and action.target is not None:
                kind, target = "helper", action.target
            elif action.act is Act.TURN:
                tab.turn()
            elif action.act is Act.CALL:
                kind = "call"
            self.bots[s].applied(action)
        if kind == "helper":
            helpers: list[Callable[[], Target | None]] = [
                lambda: productive_move(tab, self.log),
                lambda: run_moves(tab, self.log),
                lambda: best_target(tab, rng.choice(SOURCES), self.log),
            ]
            target = target or rng.choice(helpers)()
            if target is None:
                return
            if target.pile is not None:
                self.send(s, target.src, target.pile, target.declared)
            else:
                perform(tab, target)
        elif kind == "raw":
            self.raw_move(rng, s, tab)
        elif kind == "turn":
            self.attempt(tab, tab.turn)
        elif kind == "rotate":
            self.attempt(tab, lambda: tab.rotate(alone=rng.random() < 0.5))
        elif kind == "tick":
            self.clock[s] = max(self.clock) + rng.randrange(3)
        elif kind == "settle":
            final = sorted(k for k in tab.in_flight if self.final(k))
            if final:
                self.settle(s, rng.choice(final))
        if kind == "call" and tab.can_call_nerts():
            key = (self.clock[s] + 1, s)
            tab.record_nerts_call(key[0])
            self.log.set_cutoff(key)
            self.called = True

    def raw_move(self, rng: random.Random, s: int, tab: Tableau) -> None:
        """Any move at all: legal ones happen, illegal ones must change nothing."""
        src = rng.randint(-1, 6)
        dst = rng.randint(-1, WORK_PILES)
        index = rng.randint(-3, 14)
        what = rng.choice(["work", "slide", "launch"])
        if what == "work":
            self.attempt(tab, lambda: tab.move_to_work(src, dst, index))
        elif what == "slide":
            self.attempt(tab, lambda: tab.slide_under(src, dst))
        else:
            card = tab.top(src) if src in SOURCES else None
            piles = [*self.log.piles, *([card] if card is not None else [])]
            pile = rng.choice(piles) if piles else 0
            declared = rng.randrange(64) if card is not None and card & 15 == 0 else 0
            self.attempt(tab, lambda: self.send(s, src, pile, declared))

    def attempt(self, tab: Tableau, move: object) -> None:
        before = snap(tab)
        plays = len(self.log)
        try:
            move()  # type: ignore[operator]
        except IllegalMove:
            assert snap(tab) == before and len(self.log) == plays

    def finish(self) -> None:
        """The round ends: every play becomes final and goes home or stays."""
        for s in range(len(self.clock)):
            self.clock[s] = max(self.clock) + 1
        for s, tab in enumerate(self.tabs):
            for key in sorted(tab.in_flight):
                self.settle(s, key)


variants = st.builds(Variants, stock_turn=st.sampled_from([1, 3]), strict_ties=st.booleans(),
                     jokers=st.booleans())


@pytest.mark.sweep
@SETTINGS
@given(seed=st.integers(0, 2**32), seats=st.integers(1, 3), v=variants,
       steps=st.sampled_from([10, 100, 400, 800]))
def test_no_card_is_ever_lost_and_piles_stay_legal(seed: int, seats: int, v: Variants,
                                                   steps: int) -> None:
    """Random legal and illegal moves (choices from a seeded RNG: a failure names its seed)."""
    table = Table(seed, seats, v)
    rng = random.Random(seed)
    for _ in range(steps):
        table.step(rng)
        assert_accounted(table.tabs, table.decks, table.log)
        assert_piles_legal(table.log)
        if table.called:
            break
    fates = Counter(table.log.fate(p.key).name for p in table.log.plays())
    event(f"plays: {min(len(table.log), 40) // 10 * 10}+")
    for name in fates:
        event(f"some {name}")
    event(f"called: {table.called}")
    table.finish()
    assert_accounted(table.tabs, table.decks, table.log)
    assert_piles_legal(table.log)
    for s, tab in enumerate(table.tabs):
        assert tab.in_flight == {}
        assert sorted([*tab.cards(), *(c for c in table.log.staying_cards() if c >> 6 == s)]) \
            == sorted(full_deck(s, jokers=v.jokers))
        # The move log is a faithful record: it replays from the deck to the same place.
        again = replay(s, table.decks[s], tab.log, stock_turn=v.stock_turn, jokers=v.jokers)
        assert snap(again) == snap(tab)


# ---------------------------------------------------------- (c) order-independence
@cache
def real_plays(config: int) -> tuple[Play, ...]:
    """The foundation plays of one real simulated round (a few table shapes)."""
    cfgs = [SimConfig(players=4, seed=1), SimConfig(players=6, seed=2, skills=("hard",)),
            SimConfig(players=3, seed=3, variants=Variants(jokers=True, stock_turn=1)),
            SimConfig(players=8, seed=4, skills=("easy", "hard"))]
    sim = RoundSim(cfgs[config], 1, random.Random(config))
    sim.run()
    return tuple(sorted(sim.truth.plays(), key=lambda p: p.key))


@st.composite
def play_sets(draw: st.DrawFn) -> list[Play]:
    """Real plays (a prefix or all of a round) plus synthetic rivals that collide with them:
    the same face from another seat at the same, an earlier or a later Lamport time."""
    plays = list(real_plays(draw(st.integers(0, 3))))
    plays = plays[: draw(st.integers(1, len(plays)))]
    keys = {p.key for p in plays}
    rivals = draw(st.lists(st.tuples(st.integers(0, len(plays) - 1), st.integers(-1, 1),
                                     st.integers(0, 7)), max_size=25))
    for i, dt, author in rivals:
        model = plays[i]
        key = (max(1, model.lamport + dt), author)
        if key in keys or author == model.author:
            continue
        keys.add(key)
        card = author << 6 | (model.card & 63)
        pile = model.pile if model.card != model.pile else card  # a rival ace starts its own
        plays.append(Play(key[0], author, card, pile, NERTS, model.declared))
    return plays


def summary(log: FoundationLog) -> tuple[bytes, dict[PlayKey, Fate], list[int]]:
    return (log.state_hash(), {p.key: log.fate(p.key) for p in log.plays()},
            [log.cards_of(s) for s in range(8)])


@SETTINGS
@given(plays=play_sets(), data=st.data(), strict=st.booleans())
def test_fold_is_independent_of_arrival_order(plays: list[Play], data: st.DataObject,
                                              strict: bool) -> None:
    shuffled = data.draw(st.permutations(plays))
    reference = fold(sorted(plays, key=lambda p: p.key), strict_ties=strict)
    for pile in reference.piles.values():
        if any(a.face == b.face for a, b in itertools.pairwise(pile.stays)):
            event("a same-time tie stayed")
    assert summary(fold(shuffled, strict_ties=strict)) == summary(reference)
    assert_piles_legal(reference)

    cutoff = data.draw(st.sampled_from([p.key for p in plays]))
    cut_ref = fold(plays, strict_ties=strict, cutoff=cutoff)
    assert summary(fold(shuffled, strict_ties=strict, cutoff=cutoff)) == summary(cut_ref)
    assert_piles_legal(cut_ref)
    assert all(cut_ref.fate(p.key) is Fate.CUT for p in plays if order(p.key) > order(cutoff))

    # Incrementally, with the cut-off arriving anywhere in the stream, and every add
    # reporting exactly the plays whose fate it changed.
    log = FoundationLog(strict_ties=strict)
    when = data.draw(st.integers(0, len(shuffled)))
    fates: dict[PlayKey, Fate] = {}
    for n, play in enumerate(shuffled):
        if n == when:
            changed = log.set_cutoff(cutoff)
            assert {p.key for p in changed} == _diff(fates, log)
            fates = {p.key: log.fate(p.key) for p in log.plays()}
        changed = log.add(play)
        assert changed[0] == play
        assert {p.key for p in changed} == _diff(fates, log) | {play.key}
        fates = {p.key: log.fate(p.key) for p in log.plays()}
        assert log.add(play) == []
    if when == len(shuffled):
        log.set_cutoff(cutoff)
    assert summary(log) == summary(cut_ref)


def _diff(before: dict[PlayKey, Fate], log: FoundationLog) -> set[PlayKey]:
    return {k for k, f in before.items() if log.fate(k) is not f}
