"""The replay view in memory: keys step, pause and speed it; the screen shows the frame."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable

from prompt_toolkit.input import create_pipe_input

from p2p_nerts.game.cards import card_name
from p2p_nerts.records.replay import round_replay
from p2p_nerts.records.verify import replay
from p2p_nerts.testing.screen import FixedOutput, screen_lines
from p2p_nerts.ui.replay import SPEEDS, ReplayView, frame_text

from ..protocol.test_records import _record
from ..uikit import LEFT, RIGHT, SPACE, WAIT


async def _until(done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.001)


def test_keys_pause_step_back_and_forth_and_change_speed() -> None:
    rounds = replay(_record()).rounds
    chosen = round_replay(rounds[max(rounds)])

    async def scenario() -> None:
        with create_pipe_input() as keys:
            view = ReplayView(chosen, input=keys, output=FixedOutput(100, 30))
            running = asyncio.ensure_future(view.run())
            await _until(lambda: view.app.render_counter > 0, "the first frame")
            keys.send_text(SPACE)  # pause
            await _until(lambda: not view.playing, "a pause")
            at = view.index
            keys.send_text(RIGHT + RIGHT)
            await _until(lambda: view.index == at + 2, "two steps on")
            keys.send_text(LEFT)
            await _until(lambda: view.index == at + 1, "a step back")
            speed = view.speed
            keys.send_text("+")
            await _until(lambda: view.speed == speed + 1, "faster")
            keys.send_text("\x1b[F")  # End: the round's result
            await _until(lambda: view.index == len(chosen.frames) - 1, "the end")
            view.app.invalidate()
            await _until(lambda: "Scores" in "\n".join(screen_lines(view.app)), "the scores")
            screen = "\n".join(screen_lines(view.app))
            assert f"Round {chosen.round} replay" in screen
            assert f"{SPEEDS[view.speed]} a second" in screen
            for r in chosen.scores:
                assert f"{chosen.names[r.seat]} {r.score:+d}" in screen
            tops = [card_name(pile[-1]) for pile in chosen.frames[-1].foundations]
            assert all(top in screen for top in tops)
            keys.send_text("\x1b[H" + SPACE)  # Home, then play from the deal
            await _until(lambda: view.index > 0 and view.playing, "playing again")
            keys.send_text("q")
            await asyncio.wait_for(running, WAIT)

    asyncio.run(scenario())


def test_cards_never_run_into_a_count_a_label_or_each_other() -> None:
    """``Nerts 13`` then ``10♥`` is ``Nerts 13 10♥``, not ``Nerts 1310♥``; likewise
    ``work 10♥`` and ``9♣ 10♠``: every word with a suit in it is one card."""
    rounds = replay(_record()).rounds
    chosen = round_replay(rounds[max(rounds)])
    card = re.compile(r"(?:10|[2-9AJQK])[♠♥♦♣]")
    for index in range(len(chosen.frames)):
        text = "".join(part[1] for part in frame_text(chosen, index, 8, False))
        words = [w for w in text.split() if any(suit in w for suit in "♠♥♦♣")]
        assert words and all(card.fullmatch(w.rstrip(":,")) for w in words), (index, text)
