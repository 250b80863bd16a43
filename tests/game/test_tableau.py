"""One player's tableau: the deal and every move of docs/RULES.md, legal and illegal."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from p2p_nerts.game.cards import full_deck, make_face, shuffle_deck
from p2p_nerts.game.tableau import (
    NERTS,
    OP_FOUND,
    OP_NERTS,
    OP_ROTATE,
    OP_SETTLE,
    OP_SLIDE,
    OP_TURN,
    OP_WORK,
    ROTATE_ALL,
    ROTATE_ALONE,
    STAYED,
    WASTE,
    WORK0,
    IllegalMove,
    Tableau,
    replay,
    source_name,
)

from ..gamekit import c, cs, deck_for, snap, tableau, where

W0, W1, W2, W3 = WORK0, WORK0 + 1, WORK0 + 2, WORK0 + 3
KEY = (1, 0)


def illegal(tab: Tableau, move: Callable[[], object], reason: str = "") -> IllegalMove:
    """``move`` raises IllegalMove and leaves the tableau exactly as it was."""
    before = snap(tab)
    with pytest.raises(IllegalMove) as info:
        move()
    assert snap(tab) == before
    assert reason in info.value.reason
    return info.value


# ------------------------------------------------------------------------ deal
def test_deal_13_nerts_4_work_35_stock() -> None:
    deck = shuffle_deck(b"deal", 3)
    tab = Tableau(3, deck)
    assert tab.nerts == deck[:13] and len(tab.nerts) == 13
    assert tab.top(NERTS) == deck[12]
    assert tab.work == [[deck[13]], [deck[14]], [deck[15]], [deck[16]]]
    assert len(tab.stock) == 35 and tab.waste == []
    assert where(tab) == sorted(full_deck(3))
    tab.turn()
    assert tab.waste == deck[17:20] and tab.top(WASTE) == deck[19]


def test_deal_with_jokers_puts_37_in_the_stock() -> None:
    deck = shuffle_deck(b"deal", 1, jokers=True)
    tab = Tableau(1, deck, jokers=True)
    assert len(tab.nerts) == 13 and all(len(p) == 1 for p in tab.work)
    assert len(tab.stock) == 37
    assert where(tab) == sorted(full_deck(1, jokers=True))


def test_only_the_nerts_top_is_playable() -> None:
    deck = deck_for(nerts=cs("KS QS"), work=cs("2H 3H 4H 5H"))
    tab = Tableau(0, deck)
    assert tab.top(NERTS) == c("QS")
    tab.launch(NERTS, KEY, pile=c("AS"))  # (the log decides whether it stays)
    assert tab.top(NERTS) == c("KS") and len(tab.nerts) == 12
    illegal(tab, lambda: tab.move_to_work(NERTS, 0, index=0), "only the top card")


# ------------------------------------------------------------------ stock/waste
def test_turn_three_keeps_order_and_last_one_or_two_go_first() -> None:
    stock = full_deck(0)[17:]  # 35 cards in turn order
    tab = Tableau(0, full_deck(0))
    for k in range(11):
        tab.turn()
        assert tab.waste == stock[: 3 * (k + 1)]
    assert len(tab.stock) == 2
    tab.turn()  # the two left go onto the waste
    assert tab.stock == [] and tab.waste == stock and tab.top(WASTE) == stock[-1]
    tab.turn()  # waste turned over, no shuffle: same order again
    assert tab.waste == [] and tab.stock == list(reversed(stock))
    tab.turn()
    assert tab.waste == stock[:3]
    assert tab.log == [(OP_TURN,)] * 14


def test_one_card_left_goes_onto_the_waste() -> None:
    tab = tableau(stock=cs("2S 3S 4S 5S"))
    tab.turn()
    tab.turn()
    assert tab.waste == cs("2S 3S 4S 5S") and tab.stock == []


def test_turn_one_variant() -> None:
    stock = full_deck(0)[17:]
    tab = Tableau(0, full_deck(0), stock_turn=1)
    for k in range(35):
        tab.turn()
        assert tab.top(WASTE) == stock[k] and len(tab.waste) == k + 1
    tab.turn()
    assert tab.stock == list(reversed(stock))
    tab.turn()
    assert tab.waste == [stock[0]]


def test_recycling_keeps_order_after_cards_were_played_from_the_waste() -> None:
    tab = tableau(stock=cs("2S 3S 4S 5S 6S 7S"), work=[cs("8H")])
    tab.turn()  # 2 3 4
    tab.turn()  # 2 3 4 5 6 7
    tab.move_to_work(WASTE, 0)  # 7S onto 8H
    tab.turn()  # turn the waste over
    tab.turn()
    assert tab.waste == cs("2S 3S 4S")
    tab.turn()
    assert tab.waste == cs("2S 3S 4S 5S 6S")


def test_turn_with_nothing_left_is_illegal() -> None:
    tab = tableau()
    illegal(tab, tab.turn, "empty")


# ------------------------------------------------------------------- work piles
def test_build_down_alternating_colours() -> None:
    tab = tableau(nerts=cs("6H"), work=[cs("7S"), cs("7D"), cs("8S"), cs("6C")])
    illegal(tab, lambda: tab.move_to_work(NERTS, 1), "does not go on")  # red on red
    illegal(tab, lambda: tab.move_to_work(NERTS, 2), "does not go on")  # wrong rank
    illegal(tab, lambda: tab.move_to_work(NERTS, 3), "does not go on")  # going up
    tab.move_to_work(NERTS, 0)
    assert tab.work[0] == cs("7S 6H") and tab.nerts == []
    assert tab.log == [(OP_WORK, NERTS, 0, -1)]


def test_run_moves_all_cards_above_with_it() -> None:
    tab = tableau(work=[cs("9C 8H 7S 6D"), cs("8D"), cs("10H"), cs("5S")])
    tab.move_to_work(W0, 1, index=2)  # 7S 6D onto 8D
    assert tab.work[0] == cs("9C 8H") and tab.work[1] == cs("8D 7S 6D")
    tab.move_to_work(W0, 2, index=0)  # the whole pile onto 10H
    assert tab.work[0] == [] and tab.work[2] == cs("10H 9C 8H")
    tab.move_to_work(W2, 0, index=-1)  # negative index: the top card alone
    assert tab.work[0] == cs("8H") and tab.work[2] == cs("10H 9C")
    assert tab.log == [(OP_WORK, W0, 1, 2), (OP_WORK, W0, 2, 0), (OP_WORK, W2, 0, 2)]


def test_illegal_run_moves_change_nothing() -> None:
    tab = tableau(nerts=cs("3H"), waste=cs("4D"),
                  work=[cs("9C 8H 7S"), cs("8D"), cs("QH"), []])
    illegal(tab, lambda: tab.move_to_work(W0, 1, index=1), "does not go on")
    illegal(tab, lambda: tab.move_to_work(W0, 0, index=0), "already on that pile")
    illegal(tab, lambda: tab.move_to_work(W0, 4), "four work piles")
    illegal(tab, lambda: tab.move_to_work(W0, -1), "four work piles")
    illegal(tab, lambda: tab.move_to_work(W0, 1, index=3), "no card there")
    illegal(tab, lambda: tab.move_to_work(W0, 1, index=-4), "no card there")
    illegal(tab, lambda: tab.move_to_work(W3, 1), "empty")
    illegal(tab, lambda: tab.move_to_work(WASTE, 1, index=0), "only the top card")
    illegal(tab, lambda: tab.move_to_work(9, 1), "no such pile")
    illegal(tab, lambda: tab.move_to_work(W1, 2), "does not go on")
    assert tab.log == []


@pytest.mark.parametrize(("src", "card"), [(NERTS, "5H"), (WASTE, "6C"), (W1, "KD")])
def test_empty_pile_takes_nerts_waste_or_work_card(src: int, card: str) -> None:
    tab = tableau(nerts=cs("2S 5H"), waste=cs("3S 6C"),
                  work=[[], cs("KD"), cs("9S"), cs("QH JS")])
    tab.move_to_work(src, 0)
    assert tab.work[0] == [c(card)]


def test_empty_pile_takes_a_run() -> None:
    tab = tableau(work=[[], cs("KD QS JH"), cs("9S"), cs("QH")])
    tab.move_to_work(W1, 0, index=1)
    assert tab.work[0] == cs("QS JH") and tab.work[1] == cs("KD")


# ------------------------------------------------------------------ slide under
def test_slide_under_needs_an_empty_pile() -> None:
    tab = tableau(nerts=cs("10H"), work=[cs("9S 8D"), cs("3C"), cs("4C"), cs("5C")])
    illegal(tab, lambda: tab.slide_under(NERTS, 0), "needs an empty work pile")
    tab.work[3] = []
    tab.slide_under(NERTS, 0)
    assert tab.work[0] == cs("10H 9S 8D") and tab.nerts == []
    assert tab.log == [(OP_SLIDE, NERTS, 0)]


@pytest.mark.parametrize(("src", "expected"), [(WASTE, "10D"), (W2, "10H")])
def test_slide_under_from_waste_or_work(src: int, expected: str) -> None:
    tab = tableau(waste=cs("10D"), work=[cs("9C 8H"), [], cs("10H"), cs("2S")])
    tab.slide_under(src, 0)
    assert tab.work[0] == [c(expected), *cs("9C 8H")]


def test_illegal_slides_change_nothing() -> None:
    tab = tableau(nerts=cs("10C"), waste=cs("JH"),
                  work=[cs("9S 8D"), [], cs("9H"), cs("10D")])
    illegal(tab, lambda: tab.slide_under(NERTS, 0), "does not go on")  # same colour
    illegal(tab, lambda: tab.slide_under(WASTE, 0), "does not go on")  # two ranks up
    illegal(tab, lambda: tab.slide_under(NERTS, 1), "has cards")  # under the empty pile
    illegal(tab, lambda: tab.slide_under(W3, 3), "its own pile")
    illegal(tab, lambda: tab.slide_under(W1, 0), "empty")  # nothing to slide
    illegal(tab, lambda: tab.slide_under(NERTS, 7), "has cards")
    tab.nerts = []
    illegal(tab, lambda: tab.slide_under(NERTS, 2), "empty")


def test_slide_under_equals_fill_then_move() -> None:
    a = tableau(nerts=cs("JH QS"), work=[cs("JD 10S"), [], cs("2C"), cs("3C")])
    b = tableau(nerts=cs("JH QS"), work=[cs("JD 10S"), [], cs("2C"), cs("3C")])
    a.slide_under(NERTS, 0)
    b.move_to_work(NERTS, 1)
    b.move_to_work(W0, 1, index=0)
    assert sorted(map(tuple, a.work)) == sorted(map(tuple, b.work))


# ------------------------------------------------------------------ foundations
@pytest.mark.parametrize(("src", "card"), [(NERTS, "4H"), (WASTE, "5D"), (W1, "6S")])
def test_launch_from_nerts_waste_or_exposed_work_card(src: int, card: str) -> None:
    tab = tableau(nerts=cs("KS 4H"), waste=cs("2C 5D"), work=[cs("9D"), cs("7H 6S")])
    sent = tab.launch(src, (7, 0), pile=c("AS", 3))
    assert sent == c(card)
    assert tab.in_flight == {(7, 0): (c(card), src)}
    assert c(card) in where(tab)  # in the air is still ours until it is final
    assert tab.log == [(OP_FOUND, src, c(card), 7, c("AS", 3), 0)]


def test_an_ace_starts_its_own_pile() -> None:
    tab = tableau(nerts=cs("AS"), work=[cs("2H")])
    illegal(tab, lambda: tab.launch(NERTS, KEY, pile=c("AS", 1)), "an ace starts")
    illegal(tab, lambda: tab.launch(W0, KEY, pile=c("2H")), "an ace starts")
    tab.launch(NERTS, KEY, pile=c("AS"))
    assert tab.nerts == []


def test_illegal_launches_change_nothing() -> None:
    tab = tableau(nerts=cs("5S"), work=[cs("9D"), []])
    tab.launch(NERTS, KEY, pile=c("AS", 1))
    tab.nerts = cs("6S")
    illegal(tab, lambda: tab.launch(NERTS, KEY, pile=c("AS", 1)), "already in the air")
    illegal(tab, lambda: tab.launch(WASTE, (2, 0), pile=c("AS", 1)), "empty")
    illegal(tab, lambda: tab.launch(W1, (2, 0), pile=c("AS", 1)), "empty")
    illegal(tab, lambda: tab.launch(9, (2, 0), pile=c("AS", 1)), "no such pile")
    illegal(tab, lambda: tab.launch(W0, (2, 0), c("AS"), make_face(0, 9)), "only a joker")
    tab.launch(W0, (2, 0), c("AD", 1), declared=make_face(2, 9))  # its own face: allowed


def test_settle_stayed_forgets_the_card() -> None:
    tab = tableau(nerts=cs("KS 4H"))
    tab.launch(NERTS, (3, 0), pile=c("AH", 1))
    assert tab.settle((3, 0), stayed=True) is None
    assert tab.in_flight == {} and tab.nerts == cs("KS")
    assert tab.log[-1] == (OP_SETTLE, c("4H"), 3, STAYED)


def test_a_play_that_had_stayed_is_taken_back_as_a_bounce() -> None:
    tab = tableau(nerts=cs("KS 4H"), waste=cs("2C 4D"))
    tab.launch(NERTS, (3, 0), pile=c("AH", 1))
    tab.settle((3, 0), stayed=True)
    assert tab.take_back((3, 0)) == NERTS
    assert tab.nerts == cs("KS 4H") and tab.in_flight == {}
    assert tab.log[-1] == (OP_SETTLE, c("4H"), 3, NERTS)
    assert tab.take_back((3, 0)) is None  # once: it is back already
    assert tab.nerts == cs("KS 4H")


def test_a_play_the_table_holds_that_this_tableau_never_made_gives_up_its_card() -> None:
    """Back from a journal that lost its last moves: the card is on the foundations,
    so it leaves the pile that still holds it (once), and a drop that takes the
    play back out puts it on the waste."""
    tab = tableau(nerts=cs("KS 4H"), waste=cs("2C 4D"))
    assert tab.forfeit((3, 0), c("4H"))
    assert tab.nerts == cs("KS") and tab.log == []  # not a move of the player's
    assert not tab.forfeit((4, 0), c("4H"))  # held nowhere any more
    assert tab.take_back((3, 0)) == WASTE and tab.waste == cs("2C 4D 4H")
    assert tab.take_back((3, 0)) is None


def test_only_a_play_that_stayed_is_taken_back() -> None:
    tab = tableau(nerts=cs("KS 4H"), waste=cs("2C 4D"))
    tab.launch(WASTE, (5, 0), pile=c("AH", 1))
    assert tab.take_back((5, 0)) is None  # still in the air: settling takes it back
    assert tab.in_flight == {(5, 0): (c("4D"), WASTE)}
    tab.settle((5, 0), stayed=False)
    assert tab.take_back((5, 0)) is None and tab.waste == cs("2C 4D")  # bounced already
    assert tab.take_back((9, 0)) is None  # never played


@pytest.mark.parametrize("src", [NERTS, WASTE])
def test_bounce_goes_back_on_its_pile(src: int) -> None:
    tab = tableau(nerts=cs("KS 4H"), waste=cs("2C 4D"))
    card = tab.launch(src, (3, 0), pile=c("AH", 1))
    assert tab.settle((3, 0), stayed=False) == src
    assert tab.top(src) == card
    assert tab.log[-1] == (OP_SETTLE, card, 3, src)


def test_bounce_to_a_work_pile_when_still_legal_else_to_the_waste() -> None:
    tab = tableau(nerts=cs("8D"), waste=cs("3C"), work=[cs("9S 8H"), cs("QC JH"), cs("5S")])
    tab.launch(W0, (1, 0), pile=c("AH", 2))  # 8H
    tab.launch(W1, (2, 0), pile=c("AH", 2))  # JH
    tab.launch(W2, (3, 0), pile=c("AS", 2))  # 5S: its pile is now empty
    tab.move_to_work(NERTS, 0)  # 8D takes 8H's place on 9S
    assert tab.settle((1, 0), stayed=False) == WASTE
    assert tab.waste == cs("3C 8H")
    assert tab.settle((2, 0), stayed=False) == W1
    assert tab.work[1] == cs("QC JH")
    assert tab.settle((3, 0), stayed=False) == W2  # an empty pile takes anything
    assert tab.work[2] == cs("5S")


def test_nerts_call_needs_an_empty_pile_and_nothing_in_the_air() -> None:
    tab = tableau(nerts=cs("4H"))
    illegal(tab, lambda: tab.record_nerts_call(5), "empty Nerts pile")
    tab.launch(NERTS, (3, 0), pile=c("AH", 1))
    assert not tab.can_call_nerts()
    illegal(tab, lambda: tab.record_nerts_call(5), "in the air")
    tab.settle((3, 0), stayed=True)
    assert tab.can_call_nerts()
    tab.record_nerts_call(5)
    assert tab.log[-1] == (OP_NERTS, 5)


# --------------------------------------------------------------------- rotation
def test_all_stuck_rotation_moves_the_top_card_to_the_bottom() -> None:
    tab = tableau(waste=cs("2S 3S 4S 5S"))
    tab.rotate(alone=False)
    assert tab.waste == []
    tab.stock_turn = 1
    turned = []
    for _ in range(4):
        tab.turn()
        turned.append(tab.top(WASTE))
    assert turned == cs("3S 4S 5S 2S")
    assert tab.log[0] == (OP_ROTATE, ROTATE_ALL)


def test_all_stuck_rotation_with_cards_still_in_the_stock_keeps_the_turn_order() -> None:
    # Turn order before: stock 6S 7S, then (after turning over) waste 2S..5S.
    tab = tableau(stock=cs("6S 7S"), waste=cs("2S 3S 4S 5S"), stock_turn=1)
    tab.rotate(alone=False)
    order = []
    for _ in range(6):
        tab.turn()
        order.append(tab.top(WASTE))
    assert order == cs("7S 2S 3S 4S 5S 6S")
    assert tab.log[0] == (OP_ROTATE, ROTATE_ALL)


def test_lone_rotation_moves_only_the_top_stock_card_to_the_bottom() -> None:
    tab = tableau(stock=cs("6S 7S 8S"), waste=cs("2S 3S 4S 5S"), stock_turn=1)
    tab.rotate(alone=True)
    assert tab.waste == cs("2S 3S 4S 5S")  # the waste stays where it is
    order = []
    for _ in range(3):
        tab.turn()
        order.append(tab.top(WASTE))
    assert order == cs("7S 8S 6S")
    assert tab.log[0] == (OP_ROTATE, ROTATE_ALONE)


def test_rotation_needs_two_cards() -> None:
    tab = tableau(waste=cs("2S"))
    illegal(tab, lambda: tab.rotate(alone=False), "not enough")
    tab.waste = []
    illegal(tab, lambda: tab.rotate(alone=True), "not enough")
    tab = tableau(stock=cs("6S"), waste=cs("2S 3S 4S"))  # alone: the waste does not count
    illegal(tab, lambda: tab.rotate(alone=True), "turn the waste over first")


# ----------------------------------------------------------------------- jokers
J0, J1 = c("J0"), c("J1")
H6, H10, S5, S9 = make_face(1, 6), make_face(1, 10), make_face(0, 5), make_face(0, 9)


def test_a_joker_must_be_declared_before_it_goes_up() -> None:
    tab = tableau(nerts=[J0], jokers=True)
    illegal(tab, lambda: tab.launch(NERTS, KEY, pile=c("AS", 1)), "declare")
    illegal(tab, lambda: tab.launch(NERTS, KEY, c("AS", 1), c("5H", 1)), "declare")  # owner bits
    tab.launch(NERTS, KEY, pile=J0, declared=make_face(0, 1))  # a joker ace starts a pile
    assert tab.nerts == []


def test_a_joker_is_fixed_once_a_card_lies_on_it() -> None:
    tab = tableau(nerts=cs("5C"), waste=[J0], work=[cs("7S"), cs("6H"), [], cs("7C")],
                  jokers=True)
    tab.move_to_work(WASTE, 0)  # J0 on 7S: free while nothing lies on it
    assert tab.bound == {}
    tab.move_to_work(NERTS, 0)  # 5C on it: J0 is now a red 6
    assert tab.bound == {J0: H6}
    tab.move_to_work(W0, 3, index=1)  # J0 with 5C onto 7C
    tab.move_to_work(W3, 1)  # 5C onto 6H: J0 exposed again, and still a red 6
    assert tab.work[3] == [c("7C"), J0] and tab.bound == {J0: H6}
    illegal(tab, lambda: tab.move_to_work(W3, 1), "does not go on")
    illegal(tab, lambda: tab.launch(W3, KEY, c("AS", 1), make_face(0, 6)), "fixed")
    illegal(tab, lambda: tab.launch(W3, KEY, c("AH", 1), make_face(1, 7)), "fixed")
    tab.move_to_work(W3, 2)  # an empty pile takes it, still fixed
    assert tab.bound == {J0: H6}
    # Fixed in suit too: the first red suit, as the run said red and nothing said which.
    illegal(tab, lambda: tab.launch(W2, KEY, c("AD", 1), make_face(2, 6)), "fixed as 6♥")
    tab.launch(W2, KEY, c("AH", 1), H6)
    tab.settle(KEY, stayed=True)  # it reached a foundation: no longer the work pile's
    assert tab.bound == {}


def test_a_fixed_joker_that_bounces_comes_back_fixed() -> None:
    tab = tableau(nerts=cs("5C"), waste=[J0], work=[cs("7S"), cs("6D"), cs("KC"), cs("KH")],
                  jokers=True)
    tab.move_to_work(WASTE, 0)
    tab.move_to_work(NERTS, 0)  # 5C on J0: a 6♥
    tab.move_to_work(W0, 1)  # 5C onto 6D: J0 exposed, still a 6♥
    tab.launch(W0, KEY, c("AH", 1), H6)
    assert tab.settle(KEY, stayed=False) == W0  # it bounced: back on the 7S, still a 6♥
    assert tab.work[0] == [c("7S"), J0] and tab.bound == {J0: H6}
    illegal(tab, lambda: tab.launch(W0, (2, 0), c("AD", 1), make_face(2, 6)), "fixed as 6♥")
    tab.launch(W0, (2, 0), c("AH", 1), H6)
    tab.move_to_work(W1, 0, index=0)  # 6D 5C onto the 7S: the joker's place is taken
    assert tab.settle((2, 0), stayed=False) == WASTE
    assert tab.waste == [J0] and tab.bound == {J0: H6}  # fixed on the waste too
    illegal(tab, lambda: tab.launch(WASTE, (3, 0), c("AD", 1), make_face(2, 6)), "fixed")
    illegal(tab, lambda: tab.move_to_work(WASTE, 2), "does not")  # a red 6 is no queen


def test_free_joker_goes_anywhere_on_the_work_piles() -> None:
    tab = tableau(nerts=cs("4H"), waste=[J0, J1], work=[cs("7S"), cs("AH"), [], cs("2C")],
                  jokers=True)
    tab.move_to_work(WASTE, 0)
    assert tab.work[0] == [c("7S"), J1] and tab.bound == {}
    illegal(tab, lambda: tab.move_to_work(WASTE, 1), "king down to ace")  # nothing under an ace
    tab.move_to_work(WASTE, 0)  # a joker on a joker: J1 is fixed, J0 on top is not
    assert tab.bound == {J1: H6}
    illegal(tab, lambda: tab.move_to_work(W3, 0), "does not fit")  # 2C is not a black 5
    tab.move_to_work(NERTS, 0)
    assert tab.bound == {J1: H6, J0: S5}


def test_two_jokers_then_a_card_fix_both() -> None:
    tab = tableau(nerts=cs("4H"), waste=[J1, J0], work=[[], cs("2S")], jokers=True)
    tab.move_to_work(WASTE, 0)
    tab.move_to_work(WASTE, 0)
    tab.move_to_work(NERTS, 0)
    assert tab.bound == {J0: H6, J1: S5}


def test_slide_a_joker_under_a_pile() -> None:
    tab = tableau(waste=[J0], work=[cs("9S 8D"), []], jokers=True)
    tab.slide_under(WASTE, 0)
    assert tab.work[0] == [J0, *cs("9S 8D")] and tab.bound == {J0: H10}


def test_a_joker_cannot_stand_above_a_king() -> None:
    tab = tableau(waste=[J0], work=[cs("KS QH"), []], jokers=True)
    illegal(tab, lambda: tab.slide_under(WASTE, 0), "king down to ace")


def test_a_bounced_card_landing_on_a_free_joker_fixes_it() -> None:
    tab = tableau(waste=[J0], work=[cs("8H"), cs("9C"), cs("10H"), cs("KS")], jokers=True)
    tab.launch(W0, KEY, pile=c("AH", 1))
    tab.move_to_work(WASTE, 0)  # the free joker fills the emptied pile
    assert tab.settle(KEY, stayed=False) == W0
    assert tab.work[0] == [J0, c("8H")] and tab.bound == {J0: S9}
    tab.move_to_work(W0, 1)  # 8H onto 9C: J0 exposed, still a black 9
    illegal(tab, lambda: tab.launch(W0, (2, 0), c("AH", 1), make_face(1, 5)), "fixed")
    tab.move_to_work(W0, 2)  # a black 9 on the 10H
    assert tab.work[2] == [c("10H"), J0]


def test_a_bounced_card_that_does_not_fit_a_free_joker_goes_to_the_waste() -> None:
    tab = tableau(waste=[J0], work=[cs("10H 9S")], jokers=True)
    tab.launch(W0, KEY, pile=c("AS", 1))
    tab.move_to_work(WASTE, 0)  # J0 takes the 9S's place: a black 9 already
    assert tab.settle(KEY, stayed=False) == WASTE
    assert tab.waste == [c("9S")] and tab.bound == {}


def test_a_covered_joker_is_declared_any_suit_its_run_allows() -> None:
    """A red 4 may be declared 4♦ as well as 4♥, and goes up as the card declared."""
    D4, H4 = make_face(2, 4), make_face(1, 4)
    tab = tableau(nerts=cs("3C"), waste=[J0], work=[cs("5S"), [], cs("KH"), cs("KD")],
                  jokers=True)
    tab.move_to_work(WASTE, 0)
    illegal(tab, lambda: tab.move_to_work(NERTS, 0, covers=(make_face(0, 4),)), "4♠")
    illegal(tab, lambda: tab.move_to_work(NERTS, 0, covers=(make_face(2, 5),)), "5♦")
    illegal(tab, lambda: tab.move_to_work(NERTS, 0, covers=(D4, D4)), "4♦")  # one joker
    illegal(tab, lambda: tab.move_to_work(NERTS, 0, covers=(99,)), "face 99")
    illegal(tab, lambda: tab.move_to_work(W0, 1, covers=(D4,)), "no joker")  # covers none
    tab.move_to_work(NERTS, 0, covers=(D4,))
    assert tab.bound == {J0: D4} and tab.log[-1] == (OP_WORK, NERTS, 0, -1, D4)
    tab.move_to_work(W0, 1, index=2)  # 3C away: the joker stays a 4♦
    illegal(tab, lambda: tab.launch(W0, KEY, c("AH", 1), H4), "fixed as 4♦")
    tab.launch(W0, KEY, c("AD", 1), D4)
    assert tab.bound == {J0: D4}


def test_a_joker_slid_under_is_declared_too() -> None:
    S10 = make_face(3, 10)  # ♣: the black 10 need not be a spade
    tab = tableau(waste=[J0], work=[cs("9H 8S"), []], jokers=True)
    illegal(tab, lambda: tab.slide_under(WASTE, 0, covers=(H10,)), "10♥")
    tab.slide_under(WASTE, 0, covers=(S10,))
    assert tab.bound == {J0: S10} and tab.log[-1] == (OP_SLIDE, WASTE, 0, S10)


def test_two_jokers_fixed_by_one_move_are_declared_each() -> None:
    D6, C5 = make_face(2, 6), make_face(3, 5)
    tab = tableau(nerts=cs("4H"), waste=[J1, J0], work=[[], cs("2S")], jokers=True)
    tab.move_to_work(WASTE, 0)
    tab.move_to_work(WASTE, 0)
    tab.move_to_work(NERTS, 0, covers=(C5, D6))  # in any order: each by its rank
    assert tab.bound == {J0: D6, J1: C5}


def test_a_declaration_without_the_joker_variant_is_illegal() -> None:
    tab = tableau(nerts=cs("6H"), work=[cs("7S")])
    illegal(tab, lambda: tab.move_to_work(NERTS, 0, covers=(make_face(1, 6),)), "no joker")


def test_declared_covers_replay_and_stay_compatible_with_undeclared_logs() -> None:
    """A work move's declarations ride in its move-log entry; an entry without
    any (an older log) replays with the first suit of the colour, as before."""
    deck = deck_for(nerts=cs("3C"), work=cs("5S"), stock=[*cs("KH KD"), J0], jokers=True)
    D4, H4 = make_face(2, 4), make_face(1, 4)
    for covers, face in (((D4,), D4), ((), H4)):
        tab = Tableau(0, deck, jokers=True)
        tab.turn()  # KH KD J0: the joker on top
        tab.move_to_work(WASTE, 0)
        tab.move_to_work(NERTS, 0, covers=covers)
        again = replay(0, deck, tab.log, jokers=True)
        assert again.bound == {J0: face} == tab.bound
    false = [*tab.log[:-1], (OP_WORK, NERTS, 0, -1, make_face(0, 4))]
    with pytest.raises(IllegalMove, match=r"move 3 .*4♠"):
        replay(0, deck, false, jokers=True)
    with pytest.raises(IllegalMove, match="unknown move"):
        replay(0, deck, [*tab.log[:-1], (OP_WORK, NERTS, 0, -1, D4, H4, D4)], jokers=True)


# ----------------------------------------------------------------------- replay
def _scripted() -> tuple[list[int], Tableau]:
    """A short game on a hand-made deck, touching every kind of move."""
    deck = deck_for(nerts=cs("QD JS AS"), work=cs("5H 6S 9D 10C"),
                    stock=cs("7D 2S 8C 3H 4S 5C"))
    tab = Tableau(0, deck)
    tab.launch(NERTS, (1, 0), pile=c("AS"))
    tab.settle((1, 0), stayed=True)
    tab.move_to_work(W0, 1)  # 5H on 6S
    tab.move_to_work(W2, 3)  # 9D on 10C
    tab.turn()  # 7D 2S 8C
    tab.move_to_work(WASTE, 3)  # 8C on 9D
    tab.launch(WASTE, (2, 0), pile=c("AS"))  # 2S goes up...
    tab.move_to_work(WASTE, 3)  # 7D on 8C
    tab.settle((2, 0), stayed=False)  # ...and bounces back to the waste
    tab.move_to_work(NERTS, 0)  # JS fills an empty pile
    tab.slide_under(NERTS, 0)  # QD under it
    tab.turn()
    tab.rotate(alone=True)
    tab.move_to_work(W3, 2, index=1)  # 9D 8C 7D to the empty pile
    tab.launch(W1, (3, 0), pile=c("AH", 1))
    tab.settle((3, 0), stayed=False)  # back onto 6S
    return deck, tab


def test_replay_accepts_a_real_log() -> None:
    deck, tab = _scripted()
    assert tab.work == [cs("QD JS"), cs("6S 5H"), cs("9D 8C 7D"), cs("10C")]
    assert [m[0] for m in tab.log] == [OP_FOUND, OP_SETTLE, OP_WORK, OP_WORK, OP_TURN, OP_WORK,
                                       OP_FOUND, OP_WORK, OP_SETTLE, OP_WORK, OP_SLIDE, OP_TURN,
                                       OP_ROTATE, OP_WORK, OP_FOUND, OP_SETTLE]
    again = replay(0, deck, tab.log)
    assert snap(again) == snap(tab)
    assert where(again) == sorted(full_deck(0)[i] for i in range(52) if full_deck(0)[i] != c("AS"))


def _tampered(log: list[tuple[int, ...]]) -> list[list[tuple[int, ...]]]:
    found = log.index((OP_FOUND, WASTE, c("2S"), 2, c("AS"), 0))
    settle = log.index((OP_SETTLE, c("2S"), 2, WASTE))
    fill = log.index((OP_WORK, NERTS, 0, -1))
    return [
        [*log[:found], (OP_FOUND, WASTE, c("8C"), 2, c("AS"), 0), *log[found + 1:]],  # not on top
        [*log[:settle], (OP_SETTLE, c("2S"), 2, W0), *log[settle + 1:]],  # wrong landing
        [*log[:settle], (OP_SETTLE, c("2S"), 9, WASTE), *log[settle + 1:]],  # never in the air
        [*log[:settle + 1], log[settle], *log[settle + 1:]],  # settled twice
        [*log[:fill], *log[fill + 1:]],  # JS never left: QD cannot slide under an empty pile
        [*log[:4], log[5], log[4], *log[6:]],  # moves swapped
        [(OP_TURN,), *log],  # an extra turn shifts the waste
        [*log, (OP_NERTS, 40)],  # Nerts called with cards left
        [*log, (99,)],
        [*log, ()],
        [*log, (OP_TURN, 1)],
        [*log, (OP_WORK, W0, 1)],
        [*log, (OP_ROTATE, 2)],
        [*log, (OP_WORK, "x", 1, -1)],  # type: ignore[list-item]
    ]


def test_replay_rejects_tampered_logs() -> None:
    deck, tab = _scripted()
    for bad in _tampered(tab.log):
        with pytest.raises(IllegalMove, match=r"^move \d+ "):
            replay(0, deck, bad)


def test_replay_leaves_fates_to_the_audit() -> None:
    """A settle's claim (stayed or bounced) is checked against the foundation log, not here."""
    deck, tab = _scripted()
    settle = tab.log.index((OP_SETTLE, c("2S"), 2, WASTE))
    claimed_stay = [*tab.log[:settle], (OP_SETTLE, c("2S"), 2, STAYED), *tab.log[settle + 1:]]
    assert c("2S") not in where(replay(0, deck, claimed_stay))
    unsettled = [*tab.log[:settle], *tab.log[settle + 1:]]
    assert replay(0, deck, unsettled).in_flight == {(2, 0): (c("2S"), WASTE)}


def test_replay_from_another_deck_fails() -> None:
    _, tab = _scripted()
    with pytest.raises(IllegalMove):
        replay(0, shuffle_deck(b"other", 0), tab.log)


def test_replay_with_stock_turn_one_differs() -> None:
    deck, tab = _scripted()
    with pytest.raises(IllegalMove):
        replay(0, deck, tab.log, stock_turn=1)


def test_source_names() -> None:
    assert [source_name(s) for s in (NERTS, WASTE, W0, W3)] == [
        "Nerts pile", "waste", "work pile 1", "work pile 4"]
