"""Selecting and moving cards: pile keys, the send key, the cursor, the mouse.

Each test deals a round, puts the player's tableau in a known position, drives
the real app through its input pipe and checks the rendered screen.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from p2p_nerts.game.variants import Variants
from p2p_nerts.ui.config import Config

from ..uikit import DOWN, ENTER, ESC, RIGHT, UP, Harness

# Nerts pile bottom to top (Q♥ is the face-up card), work piles, stock in turn order.
POSITION: dict[str, Any] = {"nerts": "9S AS QH", "work": ("KS", "8D", "7C", "3H"),
                            "stock": "2C 5D 6S 4C 10D JH"}


def pile(h: Harness, number: int) -> list[str]:
    """The cards drawn on work pile ``number``'s row."""
    return h.row(f"{number} │").split("│", 1)[1].split()


def stock_count(h: Harness) -> int:
    match = re.search(r"Stock (\d+) cards?\b", h.screen())
    assert match, h.screen()
    return int(match.group(1))


def test_pile_keys_select_walk_the_run_move_and_slide_under() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.deal()
            h.set_tableau(**POSITION)
            await h.press("n")
            assert "Selected Q♥" in h.screen()
            await h.press("1")
            assert pile(h, 1) == ["K♠", "Q♥"]
            assert "Selected" not in h.screen()

            await h.press("3", "2")  # 7♣ onto 8♦
            assert pile(h, 2) == ["8♦", "7♣"] and pile(h, 3) == ["·", "(empty)"]

            await h.press("2")
            assert "Selected 7♣" in h.screen()
            await h.press("2")  # again: up the run
            assert "Selected 8♦ and 1 above" in h.screen()
            await h.press("3")  # the run to the empty pile
            assert pile(h, 3) == ["8♦", "7♣"] and pile(h, 2) == ["·", "(empty)"]

            await h.press("n", "w")  # reselect: the waste is empty
            assert "Your waste is empty" in h.screen()
            await h.press(ESC, "n", "3")  # A♠ does not go under 8♦ ...
            assert "does not go on" in h.screen() and pile(h, 3) == ["8♦", "7♣"]
            await h.press("n", "f")  # ... it goes up
            assert "A♠" in h.row("♠ │")
            await h.press("n", "3")  # 9♠ slides under 8♦ (pile 2 is empty)
            assert pile(h, 3) == ["9♠", "8♦", "7♣"]
            assert "(0)" in h.row("n Nerts")
    asyncio.run(main())


def test_send_plays_to_a_foundation_first_then_a_work_pile() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.deal()
            h.set_tableau(nerts="2S QH AS", work=("KS", "3D", "9C", "8H"))
            await h.press("n", "f")  # A♠: a foundation
            assert "A♠" in h.row("♠ │")
            await h.press("n", "f")  # Q♥: onto K♠
            assert pile(h, 1) == ["K♠", "Q♥"]
            await h.press("f")  # nothing selected: the card under the cursor (Nerts: 2♠)
            assert "2♠" in h.row("♠ │") and "A♠" not in h.row("♠ │")
            await h.press("4", "f")  # 8♥ onto 9♣
            assert pile(h, 3) == ["9♣", "8♥"]
            await h.press("2", "f")
            assert "3♦ has nowhere to go" in h.screen() and "Selected" not in h.screen()
    asyncio.run(main())


def test_turn_stock_and_call_nerts_by_keys() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.deal()
            h.set_tableau(nerts="AS", work=("KS", "8D", "7C", "3H"), stock="2C 5D 6S 4C")
            await h.press(" ")
            assert stock_count(h) == 1 and "6♠" in h.row("n Nerts")
            assert "Stock 1 card " in h.row("n Nerts")  # not "1 cards"
            await h.press("!")
            assert "Call Nerts only with an empty Nerts pile" in h.screen()
            await h.press("n", "f")
            assert "Your Nerts pile is empty: ! calls Nerts!" in h.screen()
            assert "the round is ending" not in h.row("── You:")
            await h.press("!")
            # My keys do nothing now, and my section says so before one is tried.
            assert "You: Tess · you called Nerts: the round is ending · up 1 · 0 in your " \
                "Nerts pile" in h.row("── You:")
            h.advance(0.5)
            assert "Round 1 is over: Tess called Nerts!" in h.screen()
    asyncio.run(main())


def test_cursor_and_enter_work_without_pile_keys() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.deal()
            h.set_tableau(**POSITION)
            await h.press(ENTER)  # the cursor starts on the Nerts pile
            assert "Selected Q♥" in h.screen()
            await h.press(DOWN, ENTER)  # work pile 1: move there
            assert pile(h, 1) == ["K♠", "Q♥"]
            await h.press(DOWN, DOWN, ENTER, UP, ENTER)  # 7♣ (pile 3) onto 8♦ (pile 2)
            assert pile(h, 2) == ["8♦", "7♣"]
            await h.press(UP, UP, RIGHT, ENTER)  # the stock: turn
            assert stock_count(h) == 3
    asyncio.run(main())


def test_mouse_selects_sends_moves_and_turns() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.deal()
            h.set_tableau(nerts="9S AS QH", work=("KS", "8D", "7C", "3H"),
                          stock="2C 5D 6S 4C 10D JH")
            await h.click_text("Q♥", "Nerts")
            assert "Selected Q♥" in h.screen()
            await h.click_text("K♠", "1 │")
            assert pile(h, 1) == ["K♠", "Q♥"]
            await h.click_text("A♠", "Nerts")
            assert "Selected A♠" in h.screen()
            await h.click_text("A♠", "Nerts")  # the same card again: send it
            assert "A♠" in h.row("♠ │")
            await h.click_text("7♣", "3 │")
            await h.click_text("8♦", "2 │")
            assert pile(h, 2) == ["8♦", "7♣"]
            await h.click_text("Stock")
            assert stock_count(h) == 3
            await h.click_text("9♠", "Nerts")  # select, then click the foundations: refused
            await h.click_text("♣ │")
            assert "9♠ cannot go up to a foundation now" in h.screen()
            await h.click_text("9♠", "Nerts")
            await h.click_text("(empty)", "3 │")  # a click on an empty pile moves there
            assert pile(h, 3) == ["9♠"]
    asyncio.run(main())


def test_lone_rotation_only_where_the_table_allows_it() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.deal()
            assert " r rotate" not in h.lines()[-1]
            await h.press("r")
            assert "This table plays without the lone rotation" in h.screen()
        async with Harness(variants=Variants(lone_rotate=True)) as h:
            await h.deal()
            assert " r rotate" in h.lines()[-1]
            h.set_tableau(nerts="AS", work=("KS", "8D", "7C", "3H"), stock="2C 5D 6S 4C")
            await h.press("r")  # the ace can go up: not stuck
            assert "The lone rotation is for a player with no move left" in h.screen()
            assert stock_count(h) == 4
            h.set_tableau(nerts="5S", work=("KS", "KC", "KH", "KD"), stock="9S 9C 9H 9D")
            await h.press("r")  # nothing fits: the top stock card goes to the bottom
            assert stock_count(h) == 4 and h.row("n Nerts").endswith("Waste   ·")
            await h.press(" ")
            assert "9♦" in h.row("n Nerts") and "Stock 1 card " in h.row("n Nerts")
    asyncio.run(main())


def test_a_stuck_player_that_others_wait_on_is_told_the_key() -> None:
    """The others voted stuck and the game sees no move for me: the status line says
    so, with my own key for the vote; it goes once I vote, and never shows while I
    still have a move."""
    async def main() -> None:
        async with Harness(bots=2, config=Config(keys={"stuck": ("x",)})) as h:
            await h.deal()
            rs = h.replica.rs
            assert rs is not None
            h.set_tableau(nerts="AS", work=("KS", "KC", "KH", "KD"), stock="9S 9C 9H")
            others = [seat for seat in rs.live if seat != h.me]
            for seat in others:
                rs.stuck[seat] = True
            await h.redrawn()
            assert "No move left" not in h.screen()  # the ace can go up
            h.set_tableau(nerts="5S", work=("KS", "KC", "KH", "KD"), stock="9S 9C 9H")
            await h.redrawn()
            assert "No move left: x votes stuck (2 players waiting on you)" in h.screen()
            await h.press("x")
            assert "You voted stuck (x withdraws)" in h.screen()
            assert "No move left" not in h.screen()
    asyncio.run(main())
