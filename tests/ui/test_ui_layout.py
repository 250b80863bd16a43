"""The table fits the terminal it has: every opponent on screen at 80×24, every
opponent's layout drawn from 120×36 up, the news giving way first, and where a
card just landed or bounced marked for a moment."""

from __future__ import annotations

import asyncio
import re

import pytest
from prompt_toolkit.data_structures import Size

from p2p_nerts.game.cards import card_name
from p2p_nerts.game.foundations import Fate
from p2p_nerts.game.tableau import NERTS, WORK_PILES
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.messages import View
from p2p_nerts.ui.state import MARK_SECONDS

from ..gamekit import c
from ..uikit import Harness

SIZES = ((80, 24), (120, 36), (200, 60))
PILE = re.compile(r"\[(?:10|[2-9AJQK])[♠♥♦♣]\][…*! ]?")


def views(h: Harness) -> dict[int, View]:
    rnd = h.ui.ctl.view.round if h.ui is not None else None
    assert rnd is not None
    return dict(rnd.views)


def names(h: Harness) -> list[str]:
    rs = h.replica.rs
    assert rs is not None
    return [name for seat, name in enumerate(rs.names) if seat != h.me]


def fan(view: View, pile: int) -> str:
    """A work pile as a box draws it (a short one: every card)."""
    return f" {pile + 1} " + " ".join(card_name(card).rjust(3) for card in view.work[pile])


@pytest.mark.parametrize(("columns", "rows"), SIZES)
def test_every_opponent_is_named_on_screen_at_every_size(columns: int, rows: int) -> None:
    async def main() -> None:
        async with Harness(bots=7, columns=columns, rows=rows, skill="medium") as h:
            await h.deal()
            h.advance(4.0)
            await h.redrawn()
            assert len(views(h)) == 7  # every bot has shown its tableau
            screen = "\n".join(h.lines()[1:])  # not the header, which names everyone too
            assert all(len(line) <= columns for line in h.lines())
            for name in names(h):
                assert re.search(rf"(─ |  ){name}\b", screen), f"{name} is not on screen"
            assert "── You: Tess" in screen and "  4 │ " in screen  # and my own layout whole
    asyncio.run(main())


@pytest.mark.parametrize(("columns", "rows"), SIZES)
def test_opponents_work_piles_are_drawn_from_120x36_up(columns: int, rows: int) -> None:
    async def main() -> None:
        async with Harness(bots=7, columns=columns, rows=rows, skill="medium") as h:
            await h.deal()
            h.advance(4.0)
            await h.redrawn()
            shown = views(h)
            rs = h.replica.rs
            assert rs is not None
            screen = h.screen()
            for seat, view in shown.items():
                boxed = f"─ {rs.names[seat]} up" in screen
                assert boxed == (columns >= 120), rs.names[seat]
                if not boxed:
                    continue
                # The box's rows, in its own columns: each work pile as the VIEW has it.
                x, y = h.find(f"─ {rs.names[seat]} up")
                lines = h.lines()
                box = [lines[y + row][x:x + 38] for row in range(2 + WORK_PILES)]
                assert f"Stock {view.stock:>2}" in box[1] and f"({view.nerts:>2})" in box[1]
                for pile in range(WORK_PILES):
                    if len(view.work[pile]) <= 7:
                        assert box[2 + pile].startswith(fan(view, pile)), (box, view)
    asyncio.run(main())


def test_the_news_gives_way_and_repeats_are_counted_at_80x24() -> None:
    """The issue's case: seven bots, an empty waste selected six times."""
    async def main() -> None:
        async with Harness(bots=7, columns=80, rows=24) as h:
            await h.deal()
            h.advance(2.0)
            h.set_tableau(nerts="AS", work=("KS", "8D", "7C", "3H"))
            await h.press(*"wwwwww")
            screen = "\n".join(h.lines()[1:])
            assert screen.count("Your waste is empty") == 1
            assert "Your waste is empty ×6" in screen
            for name in names(h):
                assert f"  {name} " in screen, f"{name} went off screen"
            assert len(h.lines()) == 24 and h.lines()[-1].startswith(" n w 1234 select")
            await h.press("n")  # something else said in between: the count goes on
            await h.press("w")
            assert "Your waste is empty ×7" in h.screen()
    asyncio.run(main())


def test_resizing_lays_the_table_out_again_at_once() -> None:
    async def main() -> None:
        async with Harness(bots=7, columns=80, rows=24) as h:
            await h.deal()
            h.advance(3.0)
            await h.redrawn()
            assert "── Players" in h.screen() and "─ Ada up" not in h.screen()
            h.output.size = Size(rows=36, columns=120)
            await h.redrawn()
            assert "── Players" not in h.screen() and "─ Ada up" in h.screen()
            h.output.size = Size(rows=30, columns=120)  # too low for three bands of boxes
            await h.redrawn()
            assert "── Players" in h.screen() and "─ Ada up" not in h.screen()
    asyncio.run(main())


def test_foundation_piles_never_read_as_one_run() -> None:
    async def main() -> None:
        async with Harness(bots=7, columns=120, rows=36, skill="hard") as h:
            await h.deal()
            h.advance(6.0)
            await h.redrawn()
            crowded = 0
            for suit in "♠♥♦♣":
                cells = h.row(f"{suit} │").split("│", 1)[1].split("  ")[0]
                piles = PILE.findall(cells)
                # Every card on the row is one pile's top, each in its own brackets.
                assert "".join(piles).replace(" ", "") == cells.replace(" ", ""), cells
                crowded += len(piles) > 1
            assert crowded  # the point: some suit has two piles side by side
    asyncio.run(main())


def test_a_card_that_lands_is_marked_where_it_happened_for_a_moment() -> None:
    async def main() -> None:
        async with Harness(bots=1, columns=120, rows=36) as h:
            await h.deal()
            h.set_tableau(nerts="KD AS", work=("KS", "8D", "7C", "3H"))
            await h.press("n", "f")
            h.advance(0.2)  # final once the other seat has been heard past it
            assert "[A♠]*" in h.row("♠ │")
            assert "Nerts  K♦*" in h.row("n Nerts")  # where it came from
            assert "Up: you A♠" in h.screen()
            h.advance(MARK_SECONDS)
            assert "[A♠]*" not in h.row("♠ │") and "[A♠]" in h.row("♠ │")
            assert "Nerts  K♦ " in h.row("n Nerts")
    asyncio.run(main())


def test_a_bounce_is_marked_on_the_foundation_and_the_owners_layout() -> None:
    async def main() -> None:
        async with Harness(bots=2, columns=120, rows=36) as h:
            await h.deal()
            h.set_tableau(nerts="KD AS", work=("KS", "8D", "7C", "3H"))
            await h.press("n", "f")
            h.advance(0.2)
            rs = h.replica.rs
            assert rs is not None
            ace = next(p for p in rs.log.plays() if p.card == c("AS", h.me))
            bix = rs.names.index("Bix")
            # Bix's 2♠ lost the race for my ace to someone else's: marked on my ace's
            # pile and on Bix's Nerts pile it came back to, and named in the news.
            theirs = type(ace)(ace.lamport + 1, bix, c("2S", bix), ace.pile, NERTS)
            h.table.announce(ev.PlayFinal(1, theirs, Fate.BOUNCE, False, "Ada"))
            await h.redrawn()
            assert "[A♠]!" in h.row("♠ │")
            x, y = h.find("─ Bix up")
            assert "!(" in h.lines()[y + 1][x:x + 38]  # after the Nerts card, before its count
            assert "Bix's 2♠ bounced: Ada was first" in h.screen()
            h.advance(MARK_SECONDS)
            await h.redrawn()
            assert "!" not in h.row("♠ │") and "!(" not in h.lines()[y + 1][x:x + 38]
    asyncio.run(main())


def test_a_computer_partner_at_a_shared_tableau_is_named_and_its_moves_are_news() -> None:
    async def main() -> None:
        async with Harness(bots=2, variants=Variants(teams="share"), skill="hard") as h:
            await h.deal()
            h.advance(6.0)
            said = [line.text for line in h.ui.ctl.state.lines] if h.ui is not None else []
            # Ada and Bix hold the other tableaux: the partner is named after them.
            moves = [text for text in said
                     if re.match(r"Cleo (put|moved) .+ from (the|work pile)", text)]
            assert moves, said
            assert any(" up from " in text for text in moves)  # a card gone up
    asyncio.run(main())


def test_a_long_name_is_cut_so_that_its_row_still_fits_80_columns() -> None:
    async def main() -> None:
        async with Harness(bots=2, columns=80, rows=24) as h:
            await h.deal()
            rs = h.replica.rs
            assert rs is not None
            ada = rs.names.index("Ada")
            rs.names = tuple("Adalberta Maximiliana of Greater" if seat == ada else name
                             for seat, name in enumerate(rs.names))
            h.advance(1.0)
            await h.redrawn()
            row = h.row("Adalberta")
            assert row.rstrip().endswith(" ok") and len(row) <= 80, row
    asyncio.run(main())


def test_a_wide_screen_seats_the_nearest_players_beside_the_middle_of_the_table() -> None:
    """At 200×60 the seven sit round: two up the left side (the one after me nearest
    me), three across, two down the right side (the one before me nearest me)."""
    async def main() -> None:
        async with Harness(bots=7, columns=200, rows=60) as h:
            await h.deal()
            h.advance(2.0)
            await h.redrawn()
            rs = h.replica.rs
            assert rs is not None
            count = len(rs.names)
            order = [rs.names[(h.me + step) % count] for step in range(1, count)]
            lines = h.lines()

            def at(name: str) -> tuple[int, int]:
                x, y = h.find(f"─ {name} up")
                return x, y

            foundations = next(y for y, line in enumerate(lines) if "── Foundations" in line)
            left, across, right = order[:2], order[2:5], order[5:]
            assert at(left[1])[1] < at(left[0])[1] and at(left[0])[0] == 0  # up the left
            assert all(at(name)[1] < foundations for name in across)  # across the table
            assert [at(name)[0] for name in across] == sorted(at(name)[0] for name in across)
            assert at(right[0])[1] < at(right[1])[1] and at(right[0])[0] > 150  # down the right
            for name in (*left, *right):
                assert at(name)[1] >= foundations  # beside the foundations and my layout
            assert all(len(line) <= 200 for line in lines)
    asyncio.run(main())
