"""What the screen shows: help, too small, resizing, bounces, pending plays, countdown, quit."""

from __future__ import annotations

import asyncio
import unicodedata

import pytest
from prompt_toolkit.data_structures import Size
from wcwidth import wcwidth

from p2p_nerts.game.foundations import Fate, Play
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.ui.config import Config

from ..gamekit import c
from ..replica_harness import vote_anywhere
from ..uikit import ESC, F1, Harness


def test_help_overlay_opens_and_closes() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.deal()
            await h.press("?")
            assert "| Help |" in h.screen()
            assert "send the selected card where it fits best" in h.screen()
            await h.press(ESC)
            assert "Help" not in h.screen() and "Foundations" in h.screen()
            await h.press(F1)
            assert "Remap keys in" in h.screen()
            await h.press("?")
            assert "Help" not in h.screen()
    asyncio.run(main())


def test_help_fits_the_smallest_table() -> None:
    async def main() -> None:
        async with Harness(columns=80, rows=24) as h:
            await h.press("?")
            lines = h.lines()
            top = next(y for y, line in enumerate(lines) if "| Help |" in line)
            bottom = next(y for y, line in enumerate(lines) if "└" in line)
            assert "r or Tab: the rules · Esc, Enter or ? closes this" in lines[bottom - 1]
            assert 0 <= top < bottom < 24
    asyncio.run(main())


def test_help_turns_to_a_page_of_rules_that_fits_the_smallest_table() -> None:
    """r (or Tab) in the help shows the rules in short, with this table's variants in
    words and the player's own keys; again, back to the keys; closing forgets the page."""
    config = Config(keys={"stuck": ("x",), "rotate": ("t",)})
    variants = Variants(lone_rotate=True, target=50)

    async def main() -> None:
        async with Harness(columns=80, rows=24, config=config, variants=variants) as h:
            await h.press("?", "r")
            lines = h.lines()
            top = next(y for y, line in enumerate(lines) if "| Help |" in line)
            bottom = next(y for y, line in enumerate(lines) if "└" in line)
            assert 0 <= top < bottom < 24 and all(len(line) <= 80 for line in lines)
            assert "The rules in short (all of them: docs/RULES.md)" in h.screen()
            assert "No move left? x votes stuck" in h.screen()
            assert "Stuck alone: t puts your top stock card at the bottom" in h.screen()
            table = "This table: turn 3 · both stay on ties · −2 per Nerts card · to 50"
            assert table in h.screen()
            assert "  · stuck alone may rotate" in h.screen()
            assert "r or Tab: the keys" in lines[bottom - 1]
            await h.press("\t")
            assert "Remap keys in" in h.screen() and "The rules in short" not in h.screen()
            await h.press("r", ESC, "?")
            assert "Remap keys in" in h.screen()  # the help opens on its keys again
    asyncio.run(main())


def test_too_small_terminal_gets_a_message_and_the_table_after_resize() -> None:
    async def main() -> None:
        async with Harness(columns=70, rows=20) as h:
            assert "The terminal is 70×20" in h.screen()
            assert "Nerts needs at least 80×24" in h.screen()
            h.output.size = Size(rows=24, columns=80)
            await h.redrawn()
            assert "Enter deals the first round" in h.screen()
            await h.deal()
            assert "Foundations" in h.screen()
            assert all(len(line) <= 80 for line in h.lines())
            h.output.size = Size(rows=40, columns=120)
            await h.redrawn()
            assert len(h.lines()) == 40 and len(h.row("── You")) == 120
    asyncio.run(main())


def test_a_bounce_names_who_was_first() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.deal()
            rs = h.replica.rs
            assert rs is not None
            ada = rs.names.index("Ada")
            mine = Play(40, h.me, c("4H", h.me), c("AH", ada), 0)
            h.table.announce(ev.PlayFinal(1, mine, Fate.BOUNCE, True, "Ada"))
            assert "Your 4♥ bounced: Ada was first" in h.screen()
            bix = rs.names.index("Bix")
            theirs = Play(41, bix, c("5C", bix), c("AC", ada), 0)
            h.table.announce(ev.PlayFinal(1, theirs, Fate.BOUNCE, False, "Tess"))
            assert "Bix's 5♣ bounced: Tess was first" in h.screen()
            h.table.announce(ev.PlayFinal(1, theirs, Fate.CUT, False, ended="nerts"))
            assert "Bix's 5♣ came after the Nerts call: it does not count" in h.screen()
            # A tie of Lamport time lost by the draw is not a race lost (strict ties).
            h.table.announce(ev.PlayFinal(1, mine, Fate.BOUNCE, True, "Ada", tie=True))
            assert "Your 4♥ bounced: Ada played one at the same moment and won the draw" in (
                h.screen())
            h.table.announce(ev.PlayFinal(1, mine, Fate.CUT, True, tie=True, ended="nerts"))
            assert ("Your 4♥ came at the same moment as the Nerts call and lost the draw: "
                    "it does not count") in h.screen()
            # A round that ended with everyone stuck cuts at the deciding vote.
            h.table.announce(ev.PlayFinal(1, theirs, Fate.CUT, False, ended="deadlock"))
            assert "Bix's 5♣ came after everyone was stuck: it does not count" in h.screen()
            h.table.announce(ev.PlayFinal(1, mine, Fate.CUT, True, tie=True, ended="deadlock"))
            assert ("Your 4♥ came at the same moment as the last stuck vote and lost the draw"
                    in h.screen())
    asyncio.run(main())


def test_a_summary_that_differs_names_its_seat_and_asks_nothing_of_the_player() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.deal()
            rs = h.replica.rs
            assert rs is not None
            h.table.announce(ev.Divergence(1, (rs.names.index("Bix"),)))
            assert ("Bix reported other results for this round (a fault or a cheat); "
                    "the scores here are your own count") in h.screen()
    asyncio.run(main())


def test_a_play_is_marked_pending_until_final() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.deal()
            h.set_tableau(nerts="AS", work=("KS", "8D", "7C", "3H"))
            await h.press("n", "f")
            rs = h.replica.rs
            assert rs is not None
            ace = next(p for p in rs.log.plays() if p.card == c("AS", h.me))
            # A slow network: the play is known but not final yet.
            h.table.announce(ev.PlayAdded(ace, True))
            assert "[A♠]…" in h.row("♠ │")
            h.table.announce(ev.PlayFinal(1, ace, Fate.STAY, True))
            assert "[A♠]" in h.row("♠ │") and "…" not in h.row("♠ │")
            assert "Foundations · 1 pile · 0 complete" in h.screen()  # one, not "1 piles"
    asyncio.run(main())


def test_countdown_before_the_round() -> None:
    async def main() -> None:
        async with Harness(countdown=3.0) as h:
            await h.deal()
            assert "Round 1 starts in 3…" in h.screen()
            h.advance(1.2)
            assert "Round 1 starts in 2…" in h.screen()
            await h.press("n")
            assert "Wait for the countdown" in h.screen()
            h.advance(2.0)
            assert "Round 1 starts in" not in h.screen() and "Round 1: go!" in h.screen()
    asyncio.run(main())


def test_stuck_vote_toggles_and_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    vote_anywhere(monkeypatch)  # voted at the deal, where nobody is stuck yet

    async def main() -> None:
        async with Harness() as h:
            await h.deal()
            await h.press("s")
            assert "You voted stuck (s withdraws)" in h.screen()
            h.advance(1.0)  # final once every peer has been heard past it
            assert "You voted stuck (1/3 stuck)" in h.screen()
            await h.press("s")
            h.advance(1.0)
            assert "(s withdraws)" not in h.screen()
            assert "You withdrew the stuck vote (0/3 stuck)" in h.screen()
    asyncio.run(main())


def test_quit_asks_first() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.press("q")
            assert "Leave the table? y: yes" in h.screen()
            await h.press("n")
            assert "Leave the table?" not in h.screen()
            await h.press("q", "y")
            await h.until(lambda: h.app.is_done, "the app to quit")
    asyncio.run(main())


def test_config_problems_and_remaps_show_on_screen() -> None:
    async def main() -> None:
        config = Config(keys={"send": ("e",), "nerts": ("zz",)})
        async with Harness(config=config, notes=("config.toml: line 3: bad value",)) as h:
            assert "config.toml: line 3: bad value" in h.screen()
            assert "keys.nerts: 'zz' is not a key I know" in h.screen()
            await h.deal()
            assert " e send " in h.lines()[-1]
            h.set_tableau(nerts="AS", work=("KS", "8D", "7C", "3H"))
            await h.press("n", "e")
            assert "A♠" in h.row("♠ │")
    asyncio.run(main())


def test_every_glyph_on_screen_is_one_cell_wide() -> None:
    async def main() -> None:
        async with Harness(bots=7, skill="hard") as h:
            await h.deal()
            h.advance(30.0)
            await h.press("?")
            for screen in (h.screen(), (await _closed_help(h))):
                for ch in set(screen) - {"\n"}:
                    assert wcwidth(ch) == 1, f"{ch!r} ({unicodedata.name(ch, '?')})"
                    assert not 0x1F000 <= ord(ch) <= 0x1FAFF, ch
    asyncio.run(main())


async def _closed_help(h: Harness) -> str:
    await h.press(ESC)
    return h.screen()


def test_the_header_keeps_every_total_and_the_target_with_eight_players_at_80_columns() -> None:
    async def main() -> None:
        async with Harness(bots=7, columns=80, rows=24) as h:
            await h.deal()
            match = h.replica.match
            rs = h.replica.rs
            assert match is not None and rs is not None and len(rs.names) == 8
            for totals in ([0] * 8, [104, -26, 99, 100, 7, 88, 123, 5]):
                match.totals = totals
                await h.redrawn()
                header = h.lines()[0]
                assert len(header) <= 80 and header.rstrip().endswith("→100"), header
                shown = header.split()
                for name, total in zip(rs.names, totals, strict=True):
                    at = next(i for i, word in enumerate(shown) if name.startswith(word))
                    assert shown[at + 1] == str(total), header
    asyncio.run(main())
