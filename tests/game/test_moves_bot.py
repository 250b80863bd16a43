"""Move finding (targets, run moves, the waste cycle, stuck) and the bots' decisions."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from p2p_nerts.game.bot import SKILLS, Act, Action, Bot
from p2p_nerts.game.cards import make_face, shuffle_deck, stacks_on
from p2p_nerts.game.foundations import Fate, FoundationLog, Play, fold
from p2p_nerts.game.moves import (
    best_target,
    card_target,
    covered_jokers,
    cycle_cards,
    cycle_helps,
    first_move,
    foundation_target,
    hand_to_work,
    is_stuck,
    joker_targets,
    other_suit,
    perform,
    productive_move,
    run_moves,
    work_target,
)
from p2p_nerts.game.tableau import NERTS, SOURCES, WASTE, WORK0, Tableau, Target

from ..gamekit import c, cs, snap, tableau

W0, W1, W2, W3 = WORK0, WORK0 + 1, WORK0 + 2, WORK0 + 3
NONE = FoundationLog()


def started(*aces_and_plays: str) -> FoundationLog:
    """Foundations: ``started("AS 2S", "AH")``, one pile per string, of seats 7, 6, 5..."""
    plays = []
    t = 0
    for n, pile_text in enumerate(aces_and_plays):
        cards = cs(pile_text, 7 - n)
        for card in cards:
            t += 1
            plays.append(Play(t, 7, card, cards[0], NERTS))
    return fold(plays)


def stuck_tableau(**kw: object) -> Tableau:
    """Nothing fits anywhere: kings on the work piles, no aces, no foundations."""
    args: dict[str, object] = {"nerts": cs("5S"), "work": [cs("KS"), cs("KC"), cs("KH"),
                                                           cs("KD")],
                               "stock": cs("9S 9C 9H")}
    args.update(kw)
    return tableau(**args)  # type: ignore[arg-type]


# --------------------------------------------------------------- foundation_target
def test_an_ace_starts_a_pile_of_its_own() -> None:
    tab = tableau(nerts=cs("AH"))
    assert foundation_target(tab, NERTS, NONE) == Target(NERTS, pile=c("AH"))


def test_a_card_goes_on_the_lowest_pile_that_wants_it() -> None:
    fnd = started("AS 2S", "AH", "AS")
    tab = tableau(nerts=cs("3S"), waste=cs("2H"), work=[cs("4S"), cs("2S")])
    assert foundation_target(tab, NERTS, fnd) == Target(NERTS, pile=c("AS", 7))
    assert foundation_target(tab, WASTE, fnd) == Target(WASTE, pile=c("AH", 6))
    assert foundation_target(tab, W0, fnd) is None
    assert foundation_target(tab, W1, fnd) == Target(W1, pile=c("AS", 5))
    fnd.add(Play(9, 3, c("2S", 3), c("AS", 5), NERTS))
    assert foundation_target(tab, NERTS, fnd) == Target(NERTS, pile=c("AS", 5))  # lowest id
    assert foundation_target(tab, W2, fnd) is None  # empty pile


def test_a_joker_is_declared_as_the_lowest_wanted_face() -> None:
    fnd = started("AS 2S 3S 4S", "AH 2H", "AD")
    joker = c("J0")
    tab = tableau(nerts=[joker], waste=[c("J1")], jokers=True)
    assert foundation_target(tab, NERTS, fnd) == Target(
        NERTS, pile=c("AD", 5), declared=make_face(2, 2))
    # With nothing wanted it may start a pile as an ace, from any source.
    assert foundation_target(tab, NERTS, NONE) == Target(NERTS, pile=joker,
                                                          declared=make_face(0, 1))
    assert foundation_target(tab, WASTE, NONE) == Target(WASTE, pile=c("J1"),
                                                          declared=make_face(0, 1))


def test_a_joker_may_go_up_as_any_card_a_pile_wants_or_any_ace() -> None:
    """With piles wanting 2♣ and 9♥, both are offered (lowest rank first), then the
    four aces; from the waste and a work pile as from the Nerts pile."""
    fnd = started("AC", "AH 2H 3H 4H 5H 6H 7H 8H")
    j0, j1 = c("J0"), c("J1")
    aces = [make_face(suit, 1) for suit in range(4)]
    for src, tab in ((NERTS, tableau(nerts=[j0], jokers=True)),
                     (WASTE, tableau(waste=[j0], jokers=True)),
                     (W1, tableau(work=[cs("KS"), [c("5S"), j0]], jokers=True))):
        options = joker_targets(tab, src, j0, fnd)
        assert [t.declared for t in options] == [make_face(3, 2), make_face(1, 9), *aces]
        assert [t.pile for t in options] == [c("AC", 7), c("AH", 6), j0, j0, j0, j0]
        assert all(t.src == src for t in options)
        for target in options:  # each one is a move the tableau takes
            moved = tableau(nerts=tab.nerts, waste=tab.waste, work=tab.work, jokers=True)
            assert perform(moved, target, (1, 0)) == j0
    fixed = tableau(work=[[c("3D"), j1]], jokers=True)
    fixed.bound[j1] = make_face(3, 2)  # a 2♣ once something lay on it: no ace, no 9♥
    assert [t.declared for t in joker_targets(fixed, W0, j1, fnd)] == [make_face(3, 2)]


def test_a_fixed_joker_is_declared_only_as_what_it_stands_for() -> None:
    fnd = started("AS 2S 3S 4S", "AH 2H", "AD")
    joker = c("J0")
    tab = tableau(work=[[c("6C"), joker]], jokers=True)
    tab.bound[joker] = make_face(1, 5)  # as if a card had lain on it
    assert foundation_target(tab, W0, fnd) is None  # nobody wants a red 5
    tab.bound[joker] = make_face(1, 3)
    assert foundation_target(tab, W0, fnd) == Target(W0, pile=c("AH", 6),
                                                      declared=make_face(1, 3))
    tab.bound[joker] = make_face(0, 5)
    assert foundation_target(tab, W0, fnd) == Target(W0, pile=c("AS", 7),
                                                      declared=make_face(0, 5))


def test_covered_jokers_names_the_jokers_a_work_move_fixes_and_their_faces() -> None:
    j0, j1 = c("J0"), c("J1")
    tab = tableau(nerts=cs("3C"), waste=[j1], work=[[c("5S"), j0], cs("9H 8S"), [], cs("4D")],
                  jokers=True)
    assert covered_jokers(tab, Target(NERTS, work=0)) == [(j0, make_face(1, 4))]
    assert covered_jokers(tab, Target(NERTS, work=1)) == []  # 3C does not go on 8S
    assert covered_jokers(tab, Target(WASTE, work=1)) == []  # the joker lands on top: free
    assert covered_jokers(tab, Target(WASTE, work=1, slide=True)) == [(j1, make_face(0, 10))]
    assert covered_jokers(tab, Target(W0, work=3, index=1)) == []  # alone on the 4D: free
    assert covered_jokers(tab, Target(NERTS, work=2)) == []  # an empty pile
    assert other_suit(make_face(1, 4)) == make_face(2, 4)
    assert other_suit(make_face(3, 10)) == make_face(0, 10)
    for target in (Target(NERTS, work=0, covers=(make_face(2, 4),)),
                   Target(WASTE, work=1, slide=True, covers=(make_face(3, 10),))):
        perform(tab, target)
    assert tab.bound == {j0: make_face(2, 4), j1: make_face(3, 10)}


# ------------------------------------------------------------------ work_target
def test_work_target_prefers_a_built_pile_to_an_empty_one() -> None:
    tab = tableau(nerts=cs("6H"), waste=cs("QD"), work=[[], cs("8S"), cs("7C")])
    assert work_target(tab, NERTS) == Target(NERTS, work=2)
    assert work_target(tab, WASTE) == Target(WASTE, work=0)
    assert work_target(tab, WASTE, allow_empty=False) is None
    assert work_target(tab, W1) is None  # a work card never moves to an empty pile alone
    assert work_target(tab, W2) is None  # 7C does not go on 8S (both black)
    assert best_target(tab, NERTS, NONE) == Target(NERTS, work=2)


def test_best_target_prefers_a_foundation() -> None:
    tab = tableau(nerts=cs("2H"), work=[cs("3S")])
    assert best_target(tab, NERTS, started("AH")) == Target(NERTS, pile=c("AH", 7))


# -------------------------------------------------------------------- run moves
def test_run_move_that_empties_a_pile_for_the_nerts_top() -> None:
    tab = tableau(nerts=cs("2D"), work=[cs("9H 8S"), cs("10C"), cs("KS"), cs("KH")])
    assert run_moves(tab, NONE) == Target(W0, work=1, index=0)
    tab.nerts = []
    assert run_moves(tab, NONE) is None  # nothing would use the space


def test_run_move_that_exposes_a_foundation_card() -> None:
    tab = tableau(work=[cs("4S 3H 2S"), cs("3D"), cs("QH"), cs("QD")])
    assert run_moves(tab, NONE) is None
    assert run_moves(tab, started("AH 2H")) == Target(W0, work=1, index=2)


def test_run_move_that_exposes_a_card_for_the_nerts_top() -> None:
    tab = tableau(nerts=cs("9C"), work=[cs("JS 10H 9S"), cs("10D"), cs("KH"), cs("KD")])
    assert run_moves(tab, NONE) == Target(W0, work=1, index=2)
    tab.nerts = cs("9D")
    assert run_moves(tab, NONE) is None


def test_run_move_picks_the_run_that_fits_in_the_middle_of_a_pile() -> None:
    tab = tableau(nerts=cs("10H"), work=[cs("KS QH JS 10D 9C"), cs("JC"), cs("2S"), cs("2C")])
    assert run_moves(tab, NONE) == Target(W0, work=1, index=3)


def test_run_moves_with_jokers() -> None:
    joker = c("J0")
    tab = tableau(nerts=cs("9C"), work=[[c("JS"), c("10H"), joker], cs("10D"), cs("QH"),
                                        cs("QD")], jokers=True)
    # The free joker on 10H stands for a black 9: it may move onto 10D.
    assert run_moves(tab, NONE) == Target(W0, work=1, index=2)


# ------------------------------------------------------------- cycle and stuck
def test_cycle_cards_turn_three() -> None:
    tab = tableau(stock=cs("2S 3S 4S 5S 6S 7S 8S"))
    assert set(cycle_cards(tab)) == set(cs("4S 7S 8S"))
    tab.turn()
    assert set(cycle_cards(tab)) == set(cs("4S 7S 8S"))


def test_cycle_cards_lists_this_pass_then_a_whole_pass() -> None:
    tab = tableau(stock=cs("5S 6S 7S 8S"), waste=cs("2S 3S 4S"))
    # now 4S; this pass: 5 6 7 | 8; next pass: 2 3 4 | 5 6 7 | 8
    assert cycle_cards(tab) == cs("4S 7S 8S 4S 7S 8S")
    tab.stock_turn = 1
    assert cycle_cards(tab) == cs("4S 5S 6S 7S 8S 2S 3S 4S 5S 6S 7S 8S")


def test_cycle_cards_turn_one_sees_every_card() -> None:
    tab = tableau(stock=cs("2S 3S 4S"), waste=cs("5S 6S"), stock_turn=1)
    assert set(cycle_cards(tab)) == set(cs("2S 3S 4S 5S 6S"))


def test_cycle_cards_after_the_grouping_changes() -> None:
    """After a card left the waste, the next pass groups the cards differently."""
    tab = tableau(stock=cs("4S 5S 6S"), waste=cs("2S 3S"))
    assert set(cycle_cards(tab)) == set(cs("3S 6S 4S"))


def test_empty_stock_and_waste_cycle_nothing() -> None:
    assert cycle_cards(tableau()) == []


def test_stuck_when_nothing_fits_anywhere() -> None:
    tab = stuck_tableau()
    assert productive_move(tab, NONE) is None
    assert not cycle_helps(tab, NONE)
    assert is_stuck(tab, NONE)


def test_card_target_is_foundation_target_for_the_playable_card() -> None:
    fnd = started("AS 2S", "AH")
    tab = tableau(nerts=cs("3S"), waste=cs("2H"), work=[cs("AD"), cs("9C"), [], cs("3H")],
                  stock=cs("4S"))
    for src in SOURCES:
        card = tab.top(src)
        if card is not None:
            assert card_target(tab, src, card, fnd) == foundation_target(tab, src, fnd)
    assert card_target(tab, W0, c("AD"), fnd) == Target(W0, pile=c("AD"))


@pytest.mark.parametrize("why", ["foundation", "ace", "fits", "empty pile", "nerts up",
                                 "nerts on work", "joker"])
def test_not_stuck(why: str) -> None:
    fnd = NONE
    tab = stuck_tableau()
    if why == "foundation":  # a stock card can go up
        fnd = started("AH 2H 3H 4H 5H 6H 7H 8H")
    elif why == "ace":
        tab = stuck_tableau(stock=cs("9S 9H AC"))
    elif why == "fits":
        tab = stuck_tableau(stock=cs("9S 9H QH"))
    elif why == "empty pile":
        tab.work[3] = []
    elif why == "nerts up":
        fnd = started("AS 2S 3S 4S")
    elif why == "nerts on work":
        tab.nerts = cs("QD")
    elif why == "joker":
        tab = stuck_tableau(stock=[c("9S"), c("9H"), c("J0")], jokers=True)
    assert not is_stuck(tab, fnd)


def test_stuck_with_stock_turn_three_misses_buried_cards() -> None:
    # The QH is never on top of the waste when turning three at a time.
    tab = stuck_tableau(stock=cs("QH 9S 9C"))
    assert is_stuck(tab, NONE)
    tab.stock_turn = 1
    assert not is_stuck(tab, NONE)


# ---------------------------------------------------------------------- perform
def test_perform() -> None:
    tab = tableau(nerts=cs("2D AS"), waste=cs("10C"), work=[cs("3S"), cs("9H 8C"), []])
    assert perform(tab, Target(NERTS, pile=c("AS")), (4, 0)) == c("AS")
    assert tab.in_flight == {(4, 0): (c("AS"), NERTS)}
    before = snap(tab)
    with pytest.raises(ValueError):
        perform(tab, Target(NERTS, pile=c("AD")))
    with pytest.raises(ValueError):
        perform(tab, Target(NERTS))
    assert snap(tab) == before
    assert perform(tab, Target(NERTS, work=0)) is None
    assert tab.work[0] == cs("3S 2D")
    assert perform(tab, Target(WASTE, work=1, slide=True)) is None
    assert tab.work[1] == cs("10C 9H 8C")
    assert perform(tab, Target(W1, work=2, index=1)) is None
    assert tab.work[1:3] == [cs("10C"), cs("9H 8C")]


# -------------------------------------------------------------------------- bots
def bot(skill: str = "hard", *, lone_rotate: bool = False, seed: int = 1) -> Bot:
    return Bot(SKILLS[skill], random.Random(seed), lone_rotate=lone_rotate)


def test_bot_calls_nerts_as_soon_as_it_may() -> None:
    tab = tableau(work=[cs("2S")])
    assert bot().decide(tab, started("AS")).act is Act.CALL


def test_bot_plays_the_nerts_pile_first() -> None:
    tab = tableau(nerts=cs("2S"), waste=cs("AH"), work=[cs("AD"), cs("3H")])
    assert bot().decide(tab, started("AS")) == Action(Act.MOVE, Target(NERTS, pile=c("AS", 7)))
    assert bot().decide(tab, NONE) == Action(Act.MOVE, Target(W0, pile=c("AD")))
    tab.work = [cs("KS"), cs("3H"), cs("KH"), cs("KD")]
    tab.waste = cs("QD")
    assert bot().decide(tab, NONE) == Action(Act.MOVE, Target(NERTS, work=1))


def test_bot_uses_the_waste_when_nothing_else() -> None:
    tab = tableau(nerts=cs("9D"), waste=cs("QD AH"), work=[cs("KS"), cs("KC"), cs("KH"),
                                                           cs("KD")])
    b = bot()
    assert b.decide(tab, NONE) == Action(Act.MOVE, Target(WASTE, pile=c("AH")))
    tab.waste = cs("QD")
    assert b.decide(tab, NONE) == Action(Act.MOVE, Target(WASTE, work=0))
    tab.work[0] = []
    tab.nerts = []
    tab.in_flight[(1, 0)] = (c("9D"), NERTS)  # cannot call: its last card may come back
    assert b.decide(tab, NONE) == Action(Act.MOVE, Target(WASTE, work=1))  # KC before empty


def test_bot_turns_through_a_cycle_then_votes_stuck() -> None:
    tab = stuck_tableau()
    b = bot("medium")
    acts = []
    for _ in range(10):
        action = b.decide(tab, NONE)
        acts.append(action.act)
        if action.act is not Act.TURN:
            break
        tab.turn()
        b.applied(action)
    assert acts[-1] is Act.STUCK and acts[:-1] == [Act.TURN] * len(acts[:-1])
    assert 2 <= len(acts) - 1 <= 4  # about one cycle of turns (3 cards: 1 turn + turn-over)


def test_bot_waits_for_its_plays_before_voting_stuck() -> None:
    tab = stuck_tableau(stock=[])
    tab.in_flight[(1, 0)] = (c("AS"), NERTS)
    assert bot().decide(tab, NONE).act is Act.WAIT


def test_bot_keeps_turning_while_the_cycle_holds_a_playable_card() -> None:
    tab = stuck_tableau(stock=cs("9S 9H QH 9C 9D"))  # QH shows only on the second pass
    b = bot()
    for _ in range(12):
        action = b.decide(tab, NONE)
        if action.act is Act.MOVE:
            break
        assert action.act is Act.TURN
        tab.turn()
        b.applied(action)
    assert action == Action(Act.MOVE, Target(WASTE, work=0))


def test_lone_rotation_only_in_the_variant_and_for_bots_that_use_it() -> None:
    for skill, lone, expected in [("hard", True, Act.ROTATE), ("hard", False, Act.STUCK),
                                  ("medium", True, Act.STUCK)]:
        tab = stuck_tableau()
        b = bot(skill, lone_rotate=lone)
        b.idle_turns = 99
        assert b.decide(tab, NONE).act is expected


def test_lone_rotation_stops_after_a_full_round_of_rotations() -> None:
    tab = stuck_tableau()
    b = bot(lone_rotate=True)
    b.idle_turns = 99
    for _ in range(3):
        action = b.decide(tab, NONE)
        assert action.act is Act.ROTATE
        tab.rotate(alone=True)
        b.applied(action)
        b.idle_turns = 99
    assert b.decide(tab, NONE).act is Act.STUCK


@pytest.mark.parametrize("left", [0, 1])
def test_no_lone_rotation_with_fewer_than_two_stock_cards(left: int) -> None:
    tab = stuck_tableau(stock=cs("9S")[:left], waste=cs("9C 9H"))
    b = bot(lone_rotate=True)
    b.idle_turns = 99
    assert b.decide(tab, NONE).act is Act.STUCK


def test_applied_counts_idle_turns() -> None:
    b = bot()
    b.applied(Action(Act.TURN))
    b.applied(Action(Act.TURN))
    assert b.idle_turns == 2
    b.applied(Action(Act.ROTATE))
    assert (b.idle_turns, b.lone_rotations) == (0, 1)
    b.applied(Action(Act.TURN))
    b.applied(Action(Act.MOVE, Target(NERTS, work=0)))
    assert (b.idle_turns, b.lone_rotations) == (0, 0)


def test_think_time_is_around_the_skill_mean() -> None:
    for skill in SKILLS.values():
        b = Bot(skill, random.Random(3))
        for _ in range(50):
            t = b.think_time(Action(Act.TURN))
            assert 0.6 * skill.turn_ms / 1000 <= t <= 1.4 * skill.turn_ms / 1000
            t = b.think_time(Action(Act.MOVE))
            assert 0.6 * skill.think_ms / 1000 <= t <= 1.4 * skill.think_ms / 1000


def test_inattentive_bot_still_finds_the_move_after_a_cycle() -> None:
    """An easy bot may overlook a work card that could go up, but not forever."""
    fnd = started("AS")
    tab = stuck_tableau(stock=cs("9S 9C 9H"))
    tab.work[2] = cs("KH QS JD 10S 9D 8S 7H 6S 5H 4S 3H 2S")
    b = bot("easy", seed=5)
    for _ in range(20):
        action = b.decide(tab, fnd)
        if action.act is Act.MOVE:
            break
        assert action.act is Act.TURN
        tab.turn()
        b.applied(action)
    assert action == Action(Act.MOVE, Target(W2, pile=c("AS", 7)))


def test_decide_changes_nothing() -> None:
    tab = tableau(nerts=cs("2S"), waste=cs("AH"), work=[cs("AD"), cs("3H")])
    before = snap(tab)
    for skill in SKILLS:
        bot(skill).decide(tab, started("AS"))
    assert snap(tab) == before


def solitaire_positions(jokers: bool) -> Iterator[tuple[Tableau, FoundationLog]]:
    """Every position of medium bots' solitaire games, before each of their actions."""
    for seed in range(8):
        tab = Tableau(0, shuffle_deck(seed.to_bytes(4, "big"), 0, jokers=jokers), jokers=jokers)
        log, bot_ = FoundationLog(), Bot(SKILLS["medium"], random.Random(seed))
        for clock in range(1, 400):
            yield tab, log
            action = bot_.decide(tab, log)
            if action.act is Act.MOVE and action.target is not None:
                target = action.target
                card = perform(tab, target, (clock, 0))
                if card is not None and target.pile is not None:
                    log.add(Play(clock, 0, card, target.pile, target.src, target.declared))
                    tab.settle((clock, 0), stayed=log.fate((clock, 0)) is Fate.STAY)
            elif action.act is Act.TURN:
                tab.turn()
            elif action.act is Act.STUCK and len(tab.stock) + len(tab.waste) >= 2:
                tab.rotate(alone=False)
                bot_.idle_turns = 0
            else:
                break
            bot_.applied(action)


@pytest.mark.parametrize("jokers", [False, True])
def test_hand_to_work_is_the_nerts_top_then_the_waste_top(jokers: bool) -> None:
    """hand_to_work answers in one pass what the two work_target calls answer."""
    both = 0
    for tab, _log in solitaire_positions(jokers):
        expected = work_target(tab, NERTS) or work_target(tab, WASTE, allow_empty=not tab.nerts)
        assert hand_to_work(tab) == expected
        both += bool(tab.nerts and tab.waste and expected)
    assert both > 20  # positions where both tops were at hand and one had a move


@pytest.mark.parametrize("jokers", [False, True])
def test_first_move_is_the_foundations_then_hand_to_work_then_run_moves(jokers: bool) -> None:
    """A player's look, in one pass over the work piles (and without jokers
    ruling out the run moves from the tops at once), answers as the looks one
    by one: each source's card up in turn, hand_to_work, run_moves; and a bot's
    inattention skips just the work piles it did not notice."""
    order = (NERTS, *range(WORK0, WORK0 + 4), WASTE)
    pattern = [0.9, 0.1, 0.9, 0.1]  # a draw for each work pile with cards: 2nd, 4th noticed
    runs = skipped = 0
    for tab, log in solitaire_positions(jokers):
        ups = [t for src in order if (t := foundation_target(tab, src, log))]
        hand = hand_to_work(tab)
        run = run_moves(tab, log)
        assert first_move(tab, log) == (ups[0] if ups else hand or run)
        assert first_move(tab, log, runs=False) == (ups[0] if ups else hand)
        filled = [WORK0 + n for n, pile in enumerate(tab.work) if pile]
        noticed = {NERTS, WASTE} | {src for src, d in zip(filled, pattern, strict=False)
                                    if d < 0.5}
        seen = [t for t in ups if t.src in noticed]
        expected = seen[0] if seen else hand or run
        assert first_move(tab, log, iter(pattern).__next__, 0.5) == expected
        runs += not ups and hand is None and run is not None
        skipped += bool(ups) and expected != ups[0]
    assert runs > 5 and skipped > 5  # positions where only a run move, or only an unnoticed up


def test_run_moves_finds_the_first_productive_run_move_of_all_pairs() -> None:
    """run_moves (plain cards), against every pair of work piles and every index
    tried in turn, each move's progress as its docstring defines it."""
    found = 0
    for tab, log in solitaire_positions(jokers=False):
        expected = None
        for a, b in ((a, b) for a in range(4) for b in range(4) if a != b):
            pile, onto = tab.work[a], tab.work[b]
            for i in range(len(pile)) if onto else ():
                if not stacks_on(pile[i], onto[-1]):
                    continue
                if i == 0:
                    useful = bool(tab.nerts or tab.waste)
                else:
                    exposed = pile[i - 1]
                    useful = (log.pile_for(exposed & 63) is not None
                              or any(top and stacks_on(top[-1], exposed)
                                     for top in (tab.nerts, tab.waste)))
                if useful and expected is None:
                    expected = Target(WORK0 + a, work=b, index=i)
        assert run_moves(tab, log) == expected
        found += expected is not None
    assert found > 5
