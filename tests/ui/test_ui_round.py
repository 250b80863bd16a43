"""A whole solo round against bots, played only through key presses, read off the screen."""

from __future__ import annotations

import asyncio
import re

from p2p_nerts.game.moves import best_target
from p2p_nerts.game.tableau import NERTS, WASTE, WORK0
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.replica import LeaveTable, Phase
from p2p_nerts.testing.memnet import bot_table
from p2p_nerts.ui.scores import next_round

from ..replica_harness import play_round as play_round_of
from ..uikit import ENTER, ESC, SPACE, Harness

PILE_KEYS = (("n", NERTS), ("w", WASTE), ("1", WORK0), ("2", WORK0 + 1), ("3", WORK0 + 2),
             ("4", WORK0 + 3))


async def play_round(h: Harness, max_steps: int = 5000) -> int:
    """A simple key-level player; returns how many keys it pressed.

    Every 0.1 s of table time: call Nerts when possible, else press a pile key
    and the send key for the first card that can go somewhere useful, else
    turn the stock; after a whole dry cycle of the stock, vote stuck and wait.
    """
    assert h.ui is not None
    state = h.ui.ctl.state
    pressed = dry = rotations = 0
    for _ in range(max_steps):
        h.advance(0.1)
        r = h.replica
        if r.phase is not Phase.PLAYING:
            return pressed
        rs = r.rs
        if rs is None or not r.view().can_move():
            continue
        if rs.rotations != rotations:
            rotations, dry = rs.rotations, 0
        tab = h.tab
        keys: tuple[str, ...] = ()
        if tab.can_call_nerts():
            keys = ("!",)
        else:
            for key, src in PILE_KEYS:
                target = best_target(tab, src, rs.log)
                if target is not None and (src < WORK0 or target.pile is not None):
                    keys, dry = (key, "f"), 0
                    break
            else:
                if dry <= (len(tab.stock) + len(tab.waste)) // tab.stock_turn + 2:
                    keys, dry = (SPACE,), dry + 1
                elif not h.replica.view().voted:
                    keys = ("s",)
        if state.selection is not None:
            keys = (ESC, *keys)
        await h.press(*keys)
        pressed += len(keys)
    raise AssertionError("the round did not end")


def test_a_whole_round_by_keys_ends_in_the_score_table() -> None:
    async def main() -> None:
        async with Harness(bots=2, seed=5, skill="easy") as h:
            assert "Enter deals the first round" in h.screen()
            await h.press(ENTER)
            h.advance(0.2)
            assert "round 1" in h.lines()[0]
            assert "Foundations" in h.screen() and "You: Tess" in h.screen()

            assert await play_round(h) > 50
            h.advance(1.0)
            rs, match = h.replica.rs, h.replica.match
            assert rs is not None and rs.results and match is not None
            assert "Round 1 is over" in h.screen()
            for res in rs.results:
                numbers = re.findall(r"-?\d+", h.row(rs.names[res.seat]))
                assert numbers == [str(res.foundation_cards), str(res.nerts_left),
                                   str(res.score), str(match.totals[res.seat])]
                assert "ok" in h.row(rs.names[res.seat]).split()  # clean audit
            assert "Enter deal the next round" in h.screen()
            # The bots say afresh that they are ready, each at its next step (the
            # round may close well before); the host deals, so is not asked.
            h.advance(0.5)
            await h.redrawn()
            assert "Ready for the next round: Ada, Bix (2 of 2)" in h.screen()
            assert " r ready" not in h.lines()[-1]

            await h.press(ENTER)
            h.advance(0.2)
            assert "round 2" in h.lines()[0]
            assert "Foundations" in h.screen()
    asyncio.run(main())


def test_reaching_the_target_ends_the_game_with_the_winner() -> None:
    async def main() -> None:
        async with Harness(bots=2, seed=5, skill="easy", variants=Variants(target=10)) as h:
            await h.deal()
            await play_round(h)
            h.advance(1.0)
            match, rs = h.replica.match, h.replica.rs
            assert match is not None and rs is not None and h.replica.phase is Phase.OVER
            winner = rs.names[max(range(len(rs.names)), key=lambda s: match.totals[s])]
            assert f"Game over: {winner} wins!" in h.screen()
            assert "deal the next round" not in h.lines()[-1]
            assert "n play again" in h.lines()[-1]
            await h.press(ENTER)
            assert "The game is over: n plays again at this table, q leaves" in h.screen()
    asyncio.run(main())


def test_after_the_game_n_plays_again_at_the_table_and_q_leaves_without_asking() -> None:
    async def main() -> None:
        async with Harness(bots=2, seed=5, skill="easy", variants=Variants(target=10)) as h:
            await h.deal()
            await play_round(h)
            h.advance(1.0)
            assert h.replica.phase is Phase.OVER
            seats = h.replica.view().seats
            await h.press("n")  # a new game: the same seats, its first deal, no totals
            h.advance(0.2)
            view = h.replica.view()
            assert view.phase is Phase.PLAYING and view.seats == seats
            assert h.replica.match is not None and not any(h.replica.match.totals)
            await h.until(lambda: "round 2" in h.lines()[0] and "Foundations" in h.screen(),
                          "round 2's table")  # drawn in the frame after the deal
            await play_round(h)
            h.advance(1.0)
            assert h.replica.phase is Phase.OVER
            await h.press("q")
            assert "Leave the table?" not in h.screen()
            await h.until(lambda: not h.app.is_running, "the app to end")
    asyncio.run(main())


def test_n_before_the_game_is_over_says_when_it_plays_again() -> None:
    async def main() -> None:
        async with Harness(bots=2, seed=5, skill="easy") as h:
            await h.press("n")
            assert "n plays again once the game is over" in h.screen()
            assert h.replica.phase is Phase.LOBBY
    asyncio.run(main())


def test_between_rounds_a_host_left_alone_is_told_the_table_waits_for_a_player() -> None:
    """The line under the scores counts the others who are ready; once every other
    seat has left it says so, and why no round can be dealt, instead of "0 of 0"."""
    net = bot_table(2, seed=5)
    play_round_of(net)
    host, guest = net.replicas

    def said() -> str:
        return "".join(text for _, text, *_ in next_round(host.view()))

    assert host.phase is Phase.BETWEEN
    assert re.fullmatch(r"\n  Ready for the next round: (nobody yet|\S+) \([01] of 1\)",
                        said())
    net.output(1, guest.handle(LeaveTable(), net.now))
    assert net.run(lambda: len(host.view().seats) == 1, limit=net.now + 30)
    assert said() == ("\n  Nobody else is seated now: the next round waits for a player "
                      "to join.\n  Cannot deal yet: a table seats 2 to 8 players, not 1.")
