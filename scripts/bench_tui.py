#!/usr/bin/env python3
"""How long does the table screen take to draw, and to answer a key?

The table is a solo table of eight (seven hard bots) on a fake clock, dealt
and played for 12 s: mid-round, piles on the foundations, views from
everyone, a card selected. Each figure is measured for the screen as drawn
(``cached``: the UI's text blocks) and, in the same run, for the very same
fragments drawn by stock prompt_toolkit windows in one split (``stock``, how
the screen was drawn before the blocks); the two alternate frame by frame,
on two identical tables kept in step.

1. Whole frame: a full repaint (the renderer forgets its last screen),
   through a real VT100 output, at 100×32 and 200×60. Targets: p99 < 5 ms
   and < 8 ms. Its split: the layout alone (drawn into a screen buffer) and
   the rest (the screen diff writing escape codes); and the same with every
   block laid out afresh too, as after a resize.
2. Frame after plays: the table plays on for 50 ms, then the usual
   incremental frame; how many characters it writes says how well the
   screen diff finds what did not change.
3. Key to frame: the real app at 80×24, 120×36 and 200×60 (the sizes the
   table is tested at; from 120×36 every opponent's layout is drawn) with
   the bots playing in real time; each key goes through a pipe input and
   the latency runs until the frame after its handler is written. Target:
   p99 < 10 ms at each size. Its CPU time is what this process spent
   meanwhile (the key, its frame, and any of the table's work or other
   frames it waited behind): the wall time less the waits for a core on a
   busy machine. The deals (Enter, when a round is over) are not among
   these keys: a deal's latency, to the first frame of the round, is shown
   on its own line.

   With ``--baseline DIR`` (a checkout of the code to compare with, such as
   ``git worktree add ../base main``), the same keys are pressed at
   this code's table and at DIR's, each in fresh processes, taking turns in
   chunks so that both see the same load; the ratios are baseline / this.

Also shown: prompt_toolkit's bare full repaint of an empty screen of the
same size, the floor under any frame. Times are wall clock; on a busy
machine compare the ratios, measured side by side.

Usage: scripts/bench_tui.py [--keys N] [--frames N] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from prompt_toolkit.application import Application
from prompt_toolkit.application.current import set_app
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import DummyInput, create_pipe_input
from prompt_toolkit.layout import (
    ConditionalContainer,
    Container,
    Dimension,
    HSplit,
    Layout,
    VSplit,
    Window,
    walk,
)
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output.vt100 import Vt100_Output

from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.session import LocalTable
from p2p_nerts.testing.screen import render_screen
from p2p_nerts.ui.app import NertsApp, tidy_heap
from p2p_nerts.ui.config import Config
from p2p_nerts.ui.widgets import Text

SIZES = ((100, 32, 5.0), (200, 60, 8.0))  # columns, rows, whole-frame p99 target (ms)
KEY_TARGET_MS = 10.0
KEY_SIZES = (Size(rows=24, columns=80), Size(rows=36, columns=120), Size(rows=60, columns=200))
KEY_SECONDS = 20.0  # at most, for each run of keys
MID_ROUND = 12.0  # seconds of play before measuring (the round lasts about 20)
STEP = 0.05
#: Keys a player presses all the time (no lone Esc: it waits out the escape timeout by design).
KEYS = ("n", "n", " ", "1", "1", "\x1b[B", "\x1b[A", "2", "f", "w", "w", "3", "3", "4", "\x1b[C")


class Sink:
    """A terminal that counts what it is sent and throws it away."""

    encoding = "utf-8"

    def __init__(self) -> None:
        self.chars = 0

    def write(self, data: str) -> int:
        self.chars += len(data)
        return len(data)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def pct(samples: list[float], q: float) -> float:
    return sorted(samples)[min(len(samples) - 1, int(q * len(samples)))]


def stock(container: Container) -> Container:
    """The same fragments in stock prompt_toolkit windows, all rows in one split."""
    if isinstance(container, Text):
        height = container.height
        if height is None:
            dim = Dimension(min=1)
        else:
            dim = Dimension(min=height) if container.stretch else Dimension.exact(height)
        return Window(FormattedTextControl(container.fragments), height=dim,
                      width=container.width, dont_extend_height=height is None)
    if isinstance(container, ConditionalContainer):
        return ConditionalContainer(stock(container.content), container.filter)
    if isinstance(container, VSplit):
        return VSplit([stock(child) for child in container.children])
    if isinstance(container, HSplit):
        rows: list[Container] = []
        for child in map(stock, container.children):
            rows += child.children if isinstance(child, HSplit) else [child]
        return HSplit(rows)
    return container


class Rig:
    """One app at one table, mid-round, drawing to a counting terminal."""

    def __init__(self, size: Size, *, stock_windows: bool) -> None:
        self.now = 0.0
        self.table = LocalTable(Identity.from_seed(bytes(32), "Bench"), bots=7, skill="hard",
                                seed=3, countdown=0.0, clock=lambda: self.now)
        self.sink = Sink()
        output = Vt100_Output(self.sink, lambda: size)  # type: ignore[arg-type]
        self.ui = NertsApp(self.table, Config(), input=DummyInput(), output=output)
        if stock_windows:
            self.ui._screens["table"] = stock(self.ui._screens["table"])
        self.app = self.ui.app
        self.table.act(StartRound())
        self.play(MID_ROUND)
        self.ui.ctl.pile_key(2)  # a selection, as during play
        assert self.ui.ctl.view.phase is Phase.PLAYING, "the round ended before the bench"

    def play(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end:
            self.now += STEP
            self.table.step()

    def frame(self, *, full: bool, afresh: bool = False) -> tuple[float, float, int]:
        """One frame to the terminal: (wall ms, CPU ms, characters written).

        ``full``: the renderer forgets its last screen; ``afresh``: every block
        forgets its layout too, as after a resize.
        """
        before = self.sink.chars
        with set_app(self.app):
            if afresh:
                for container in walk(self.app.layout.container):
                    container.reset()
            if full:
                self.app.renderer.reset(leave_alternate_screen=False)
            self.app.render_counter += 1
            start, cpu = time.perf_counter(), time.thread_time()
            self.app.renderer.render(self.app, self.app.layout)
            wall, cpu = time.perf_counter() - start, time.thread_time() - cpu
        return wall * 1000, cpu * 1000, self.sink.chars - before

    def layout(self) -> tuple[float, float]:
        """The layout alone, drawn into a screen buffer: (wall ms, CPU ms)."""
        start, cpu = time.perf_counter(), time.thread_time()
        render_screen(self.app)
        return (time.perf_counter() - start) * 1000, (time.thread_time() - cpu) * 1000


def empty_repaint(size: Size, count: int) -> list[float]:
    """prompt_toolkit's full repaint of an empty window filling the screen: ms each."""
    app: Application[None] = Application(
        layout=Layout(Window()), full_screen=True, input=DummyInput(),
        output=Vt100_Output(Sink(), lambda: size))  # type: ignore[arg-type]
    times = []
    with set_app(app):
        for _ in range(count):
            app.renderer.reset(leave_alternate_screen=False)
            start = time.perf_counter()
            app.renderer.render(app, app.layout)
            times.append((time.perf_counter() - start) * 1000)
    return times


def line(what: str, times: list[float], extra: str = "", cpu: list[float] | None = None) -> str:
    cpu_part = "" if cpu is None else (f"   CPU median {statistics.median(cpu):5.2f}"
                                       f"  p99 {pct(cpu, 0.99):5.2f}")
    return (f"  {what:<34} median {statistics.median(times):6.2f} ms  "
            f"p99 {pct(times, 0.99):6.2f} ms{cpu_part}{extra}")


def frames_at(columns: int, rows: int, target: float, count: int) -> bool:
    size = Size(rows=rows, columns=columns)
    rigs = {"stock": Rig(size, stock_windows=True), "cached": Rig(size, stock_windows=False)}
    tidy_heap()  # as NertsApp.run does when a round is dealt
    # name -> figure -> (wall ms, CPU ms) of each frame
    times: dict[str, dict[str, tuple[list[float], list[float]]]] = {
        k: {f: ([], []) for f in ("whole", "layout", "after", "afresh")} for k in rigs}
    written: dict[str, list[int]] = {k: [] for k in rigs}

    def keep(name: str, figure: str, wall: float, cpu: float) -> None:
        times[name][figure][0].append(wall)
        times[name][figure][1].append(cpu)

    for i in range(count):
        order = list(rigs.items()) if i % 2 else list(reversed(rigs.items()))
        for name, rig in order:
            keep(name, "layout", *rig.layout())
            keep(name, "whole", *rig.frame(full=True)[:2])
            keep(name, "afresh", *rig.frame(full=True, afresh=True)[:2])
        # The frames after plays: both tables play the same 50 ms (they are
        # identical), then draw; a few rounds' worth of steps, then back to the start.
        for name, rig in order:
            rig.play(STEP)
            wall, cpu, chars = rig.frame(full=False)
            keep(name, "after", wall, cpu)
            written[name].append(chars)
        if i % 150 == 149:  # before the round ends
            for name in rigs:
                rigs[name] = Rig(size, stock_windows=name == "stock")
    floor = empty_repaint(size, count)
    print(f"{columns}x{rows}, {count} frames each, eight players mid-round:")
    for name in rigs:
        whole, layout, after = (times[name][f] for f in ("whole", "layout", "after"))
        print(line(f"whole frame, {name}", whole[0], cpu=whole[1]))
        print(line(f"  of which layout, {name}", layout[0], cpu=layout[1]))
        rest_wall, rest_cpu = ([w - lay for w, lay in zip(a, b, strict=True)]
                               for a, b in zip(whole, layout, strict=True))
        print(line(f"  the rest (screen diff), {name}", rest_wall, cpu=rest_cpu))
        afresh = times[name]["afresh"]
        print(line(f"  laid out afresh too, {name}", afresh[0], cpu=afresh[1]))
        print(line(f"frame after plays, {name}", after[0],
                   f"   {statistics.median(written[name]):.0f} chars written", after[1]))
    print(line("empty screen, full repaint (floor)", floor))
    ratio = statistics.median(times["stock"]["whole"][0]) / statistics.median(
        times["cached"]["whole"][0])
    p99 = pct(times["cached"]["whole"][0], 0.99)
    print(f"  whole frame: {ratio:.2f}x faster than stock (medians); "
          f"p99 {p99:.2f} ms against the target {target:.0f} ms: "
          f"{'met' if p99 < target else 'MISSED'}")
    return p99 < target


async def key_latencies(count: int, size: Size, *, stock_windows: bool) -> tuple[
        list[float], list[float], int, list[float]]:
    """Each key's latency to its frame: (wall ms, CPU ms of this process meanwhile), the
    frames drawn in all, and each deal's latency to the round's first frame (wall ms)."""
    table = LocalTable(Identity.generate("Bench"), bots=7, skill="hard", seed=7, countdown=0.0)
    output = Vt100_Output(Sink(), lambda: size)  # type: ignore[arg-type]
    with create_pipe_input() as pipe:
        ui = NertsApp(table, Config(), input=pipe, output=output)
        if stock_windows:
            ui._screens["table"] = stock(ui._screens["table"])
        latencies: list[float] = []
        cpu: list[float] = []
        pending: list[tuple[int, float, float]] = []  # (handled count to reach, sent at, CPU)
        deals: list[float] = []
        dealing: list[float] = []  # when the deal's Enter was sent

        def rendered(_app: object) -> None:
            if dealing and ui.ctl.view.phase is Phase.PLAYING:
                deals.append((time.perf_counter() - dealing.pop()) * 1000)
            if pending and ui.ctl.handled >= pending[0][0]:
                _count, sent_at, cpu_at = pending.pop()
                latencies.append((time.perf_counter() - sent_at) * 1000)
                cpu.append((time.thread_time() - cpu_at) * 1000)

        ui.app.after_render += rendered
        runner = asyncio.create_task(ui.run())
        await until(lambda: ui.app.render_counter > 0)
        sent = 0
        deadline = time.monotonic() + KEY_SECONDS
        while len(latencies) < count and time.monotonic() < deadline:
            if ui.ctl.view.phase is not Phase.PLAYING:
                # Deal (again, once a round is over and agreed) and let the bots get going.
                dealing[:] = [time.perf_counter()]
                pipe.send_text("\r")
                await until(lambda: not dealing, 0.5)
                dealing.clear()  # not dealt yet (the round is not agreed): Enter again
                await asyncio.sleep(0.3)
                continue
            pending[:] = [(ui.ctl.handled + 1, time.perf_counter(), time.thread_time())]
            pipe.send_text(KEYS[sent % len(KEYS)])
            sent += 1
            # A key the round's end made void is never handled: let it go.
            await until(lambda: not pending or ui.ctl.view.phase is not Phase.PLAYING, 1.0)
            pending.clear()
            await asyncio.sleep(0.01)  # the table plays on between keys
        frames = ui.app.render_counter
        ui.app.exit()
        await runner
    return latencies, cpu, frames, deals


async def until(done: Callable[[], bool], seconds: float = 5.0) -> None:
    """Wait for ``done``, for ``seconds`` at most."""
    end = time.monotonic() + seconds
    while not done() and time.monotonic() < end:
        await asyncio.sleep(0.0005)


CHUNKS = 3  # turns each code takes at the keys when compared with a baseline


def keys_in(code: str, size: Size, count: int) -> tuple[list[float], list[float]]:
    """Key to frame latencies (wall ms, CPU ms) at a table run by the code in ``code``,
    in a fresh process of its own."""
    run = subprocess.run(
        [sys.executable, __file__, "--key-run", f"{size.columns}x{size.rows}",
         "--keys", str(count)],
        env={**os.environ, "PYTHONPATH": os.path.abspath(code)},
        capture_output=True, text=True, check=True)
    wall, cpu = json.loads(run.stdout)
    return wall, cpu


def against_baseline(size: Size, count: int, baseline: str) -> None:
    """This code's keys and the baseline's, taking turns, and how they compare."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    codes = {"this code": here, "baseline": baseline}
    keys: dict[str, list[float]] = {name: [] for name in codes}
    cpu: dict[str, list[float]] = {name: [] for name in codes}
    for chunk in range(CHUNKS):
        order = list(codes.items()) if chunk % 2 else list(reversed(codes.items()))
        for name, code in order:
            wall, spent = keys_in(code, size, -(-count // CHUNKS))
            keys[name] += wall
            cpu[name] += spent
    for name in codes:
        print(line(f"{name}, fresh processes", keys[name],
                   f"  max {max(keys[name]):6.2f} ms  ({len(keys[name])} keys)", cpu[name]))
    base, this = keys["baseline"], keys["this code"]
    ratio = statistics.median(base) / statistics.median(this)
    print(f"  against the baseline: median {ratio:.2f}x, "
          f"p99 {pct(base, 0.99) / pct(this, 0.99):.2f}x (baseline / this code)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=300)
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--baseline", metavar="DIR",
                        help="a checkout of the code to compare key to frame with")
    parser.add_argument("--key-run", metavar="COLSxROWS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.key_run:  # one run of keys, for against_baseline: the latencies as JSON
        columns, rows = map(int, args.key_run.split("x"))
        keys, cpu, _frames, _deals = asyncio.run(key_latencies(
            args.keys, Size(rows=rows, columns=columns), stock_windows=False))
        print(json.dumps([keys, cpu]))
        return 0

    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average {load} on {os.cpu_count()} cores "
          "(wall times include waiting for a core; CPU times do not)")
    ok = all([frames_at(columns, rows, target, args.frames) for columns, rows, target in SIZES])
    for size in KEY_SIZES:
        print(f"key to frame (bots playing, {size.columns}x{size.rows}):")
        for name in ("stock", "cached"):
            keys, cpu, frames, deals = asyncio.run(key_latencies(
                args.keys, size, stock_windows=name == "stock"))
            print(line(name, keys,
                       f"  max {max(keys):6.2f} ms  ({len(keys)} keys, {frames} frames)", cpu))
            print(f"    {name}, deal to frame: "
                  + ", ".join(f"{d:.0f}" for d in deals) + f" ms ({len(deals)} deals)")
        k99 = pct(keys, 0.99)
        print(f"  key to frame p99 {k99:.2f} ms against the target {KEY_TARGET_MS:.0f} ms: "
              f"{'met' if k99 < KEY_TARGET_MS else 'MISSED'}")
        ok = ok and k99 < KEY_TARGET_MS
        if args.baseline:
            against_baseline(size, args.keys, args.baseline)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average {load} at the end")
    print("OK" if ok else "SLOWER THAN TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
