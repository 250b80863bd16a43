#!/usr/bin/env python3
"""How fast does the table screen answer a key, and how long does one frame take?

1. Key to frame: the real app plays a solo table with 7 bots in real time
   (their plays arrive as session events and redraw too), drawing through a
   real VT100 output into /dev/null at 100×32. Each key is sent through a
   pipe input; the latency runs until the frame that follows the key's
   handler is written. Target: p99 < 16 ms (one 60 Hz frame).
2. Full-table render, mid-game with eight players: the layout drawn into a
   screen buffer, and a whole frame to the terminal (layout plus a full
   repaint's escape codes). Target: median and p99 < 5 ms.

Usage: scripts/bench_tui.py [--keys N] [--renders N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from p2p_nerts.protocol.identity import Identity
from p2p_nerts.session import LocalTable
from p2p_nerts.ui.app import NertsApp, tidy_heap
from p2p_nerts.ui.config import Config
from p2p_nerts.ui.headless import render_screen

KEY_TARGET_MS = 16.0
RENDER_TARGET_MS = 5.0
SIZE = Size(rows=32, columns=100)
#: Keys a player presses all the time (no lone Esc: it waits out the escape timeout by design).
KEYS = ("n", "n", " ", "1", "1", "\x1b[B", "\x1b[A", "2", "f", "w", "w", "3", "3", "4", "\x1b[C")


def pct(samples: list[float], q: float) -> float:
    return sorted(samples)[min(len(samples) - 1, int(q * len(samples)))]


async def key_latencies(count: int, sink: object) -> tuple[list[float], int]:
    table = LocalTable(Identity.generate("Bench"), bots=7, skill="hard", seed=7, countdown=0.0)
    output = Vt100_Output(sink, lambda: SIZE, term="xterm-256color")  # type: ignore[arg-type]
    with create_pipe_input() as pipe:
        ui = NertsApp(table, Config(), input=pipe, output=output)
        latencies: list[float] = []
        pending: list[tuple[int, float]] = []  # (handled count to reach, sent at)

        def rendered(_app: object) -> None:
            if pending and ui.ctl.handled >= pending[0][0]:
                latencies.append((time.perf_counter() - pending.pop()[1]) * 1000)

        ui.app.after_render += rendered
        runner = asyncio.create_task(ui.run())
        await asyncio.sleep(0.2)
        pipe.send_text("\r")  # deal
        await asyncio.sleep(0.5)
        for i in range(count):
            target = ui.ctl.handled + 1
            pending.append((target, time.perf_counter()))
            pipe.send_text(KEYS[i % len(KEYS)])
            while pending:
                await asyncio.sleep(0.0005)
            await asyncio.sleep(0.01)  # the table plays on between keys
        frames = ui.app.render_counter
        ui.app.exit()
        await runner
    return latencies, frames


def render_times(count: int) -> tuple[list[float], list[float]]:
    """(layout into a screen, whole frame written out) in ms, ``count`` of each."""
    async def main() -> tuple[list[float], list[float]]:
        t = [0.0]
        table = LocalTable(Identity.generate("Bench"), bots=7, skill="hard", seed=3,
                           countdown=0.0, clock=lambda: t[0])
        with create_pipe_input() as pipe:
            output = Vt100_Output(open(os.devnull, "w"), lambda: SIZE)  # noqa: SIM115
            ui = NertsApp(table, Config(), input=pipe, output=output)
            runner = asyncio.create_task(ui.app.run_async())
            await asyncio.sleep(0.1)
            table.act(lambda r, now: r.start_round(now))
            tidy_heap()  # as NertsApp.run does when a round is dealt
            while t[0] < 40.0:  # mid-game: piles on the foundations, views from everyone
                t[0] += 0.05
                table.step()
            ui.ctl.pile_key(2)  # a selection, as during play
            layout, frames = [], []
            for _ in range(count):
                start = time.perf_counter()
                render_screen(ui.app)
                layout.append((time.perf_counter() - start) * 1000)
                ui.app.renderer.reset()  # forget the last frame: repaint everything
                start = time.perf_counter()
                ui.app.renderer.render(ui.app, ui.app.layout)
                frames.append((time.perf_counter() - start) * 1000)
            ui.app.exit()
            await runner
        return layout, frames
    return asyncio.run(main())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=300)
    parser.add_argument("--renders", type=int, default=500)
    args = parser.parse_args()

    with open(os.devnull, "w") as sink:
        keys, frames = asyncio.run(key_latencies(args.keys, sink))
    layout, full = render_times(args.renders)
    k99 = pct(keys, 0.99)
    print(f"key to frame   ({len(keys)} keys, {frames} frames, 8 players, 100x32): "
          f"p50 {statistics.median(keys):.2f} ms  p99 {k99:.2f} ms  max {max(keys):.2f} ms  "
          f"(target p99 < {KEY_TARGET_MS:.0f} ms)")
    for what, times in (("table layout", layout), ("whole frame ", full)):
        print(f"{what}   ({len(times)} renders): median {statistics.median(times):.2f} ms  "
              f"p99 {pct(times, 0.99):.2f} ms  (target < {RENDER_TARGET_MS:.0f} ms)")
    ok = k99 < KEY_TARGET_MS and all(pct(t, 0.99) < RENDER_TARGET_MS for t in (layout, full))
    print("OK" if ok else "SLOWER THAN TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
