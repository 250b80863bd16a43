#!/usr/bin/env python3
"""The mesh's latency and footprint, with real peer processes on 127.0.0.1.

One run measures:

* baseline  - a bare asyncio TCP round trip (4-byte framed, 100-byte payload)
  between two processes: back to back, and one every 50 ms. The second is the
  fair floor: peers sit idle between plays, and waking an idle process costs
  far more than the hop itself on a VM (~350 µs one way here, ~50 µs hot).
  It is measured at the start and again just before and after each game, and
  each game's ratios are to the mean of those two: on these machines the idle
  round trip drifts between about 160 and 640 µs within an hour;
* applied   - a foundation play's latency from the moment its author makes it
  until it is applied (PlayAdded) on every other peer, with 2, 4 and 8 peers;
  "applied" is when the receiver's replica returns the PlayAdded, before its
  shell journals the batch and sends the ACK: as a floor's receiver notes a
  frame once it has checked it, before its ack. Its median is split in two:
  the author's part, from its move until its frames have gone out (signing,
  the journal's write, the send calls; the group commit's ``fsync`` follows
  them where the machine's boot can be told, and comes before them where it
  cannot), with how much of it was the author's own CPU (the rest it waited
  for one), and the rest;
* final     - the same play's latency until it is final on its author
  (PlayFinal: every other live peer has been heard past it, taken as the
  replica returns it, as a floor notes an ack as it comes), and how many
  plays took longer than SLOW_FINAL, with the slowest;
* floor     - the same fan-out with no protocol at all: as many bare asyncio
  processes, each sending a 200-byte frame to every other at the same pace,
  each receiver answering with a 16-byte ack and doing nothing else (but
  waking every 50 ms, as a peer's loop does for its tick). With 8
  processes on a 2-core machine the last receiver waits for the others' CPU
  turns, so this, not the round trip, is the floor a peer's work adds to;
* signed floor - the same, but every frame is a real signed entry (an Ed25519
  signature over a msgpack body, as the foundation log's): its author signs
  it, each receiver checks it (``open_entry``) before its ack. It is the
  least any peer of a signed log does for a play, and where it sits against
  the targets says how much room the rest of the protocol has (on the 2-core
  VM this was written on, 8 such processes took 1.1-1.4 ms to reach the last
  receiver, 4.2x-9.3x the idle round trip: above the 4x target by itself);
* durable signed floor - the signed floor with each author's frame appended to
  a file and ``fsync``-ed before it goes out, as a peer journaled what it
  signed before its ``fsync`` moved after the send (and still does where the
  machine's boot cannot be told): what durability on the way adds to the
  floor. Each floor also says its median process's CPU time per frame sent at
  the table (the system's part apart): the least CPU per play a process at a
  table of that size spends on the wake-ups, reads and writes alone (on a
  shared VM both it and a peer's figure grow with the machine's load: compare
  them within one run), and how often its event loop woke per play (the times
  it slept waiting, as the kernel counts them: each costs a process a trip
  through the kernel and the loop before any work);
* traffic   - the frames each game put on the wire per play made at the table,
  by entry type (a frame to every peer counts once per peer), and each peer's
  CPU time per play (the system's part apart), with the event loop's part
  of it (the rest: the worker thread replaying the finished game for the
  history) and its wake-ups per play (counted as the floors' are, over the
  whole game), how much of that went while rounds were played (from each
  round's start to its end; the rest deals, audits, scores and waits
  between rounds) and the bot's choosing
  of its moves (``Bot.decide``: a player at a screen does that in their head),
  and what is left without it;
* footprint - CPU share and peak resident memory of every peer during a fast
  8-bot game.

``--baseline DIR`` plays each latency game twice in turn, with the
``p2p_nerts`` of another checkout (the code before a change, or the compiled
build that ``scripts/compile_engine.py --out DIR`` makes) and with this
one's; ``--pairs N`` plays N such pairs, the baseline first in every other
one, and prints this checkout's ratios to the baseline pair by pair, with
their median. One pair says little: the second game of a pair ran a median
4 % faster than the first with the same code (every one of four pairs), and
a pair's ratio of the same code ranged over 0.93-1.07, so a change of under
about 10 % needs several pairs to show. ``--peers`` picks the table sizes.

With ``NERTS_BENCH_PROFILE=DIR`` in its environment, each peer of each game
runs its event loop under cProfile and leaves its profile in DIR (CPU time of
the loop's thread; its figures are then a profiled peer's, several times
slower). ``NERTS_BENCH_SAMPLE=DIR`` samples each peer's stack instead, at a
cost that leaves the figures nearly as they are (:class:`Sampler`), and
``--samples DIR`` sums up what every peer sampled.

``--spectators N`` measures instead what spectators (``NetSession.watch``) cost
the players: 4-player games with none and with N watching, alternating, each
pair with its own baseline; the players' applied and final latencies and
their CPU share, with the ratios of the watched games to the unwatched.

Every peer is a process with a NetSession (manual join, no mDNS), a journal
(a Store in a temporary directory, as the commands keep one) and a bot; a bot
draws no other seat's tableau, so no peer sends it a VIEW (``--screens N``: the
first N players draw them, as players at a screen do; spectators always do);
times are ``time.monotonic()``, one clock for every process of the host. The
bots play at ``--pace`` for the latency games (unhurried enough that the peers
do not fight for the CPU) and at ``--fast-pace`` for the footprint game.
Targets: applied median <= 4x baseline and p99 < 10x at 8 peers; final median
<= 8x baseline; < 80 MB per peer.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import math
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from types import FrameType
from typing import Any

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.net.framing import FrameDecoder, encode_frame
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import (
    LINK_MAGIC,
    MAGIC,
    TABLE_ID_LEN,
    EnvelopeError,
    open_entry,
    open_link_entry,
    seal,
)
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import MsgType
from p2p_nerts.protocol.replica import Command, Move, Outbound, Replica
from p2p_nerts.store import Store

try:
    from p2p_nerts.peer.headless import paced, run_headless
    from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
    from p2p_nerts.testing.peers import free_port
    try:
        from p2p_nerts.peer.alarm import SHELL_CHECKS
    except ImportError:  # a --baseline from before the shell's timer moved to peer.alarm
        from p2p_nerts.peer.shell import SHELL_CHECKS  # type: ignore[attr-defined,no-redef]
except ImportError:  # a --baseline from before the programs moved into p2p_nerts.peer
    from p2p_nerts.net.headless import (  # type: ignore[import-not-found,no-redef]
        paced,
        run_headless,
    )
    from p2p_nerts.net.node import TICK as SHELL_CHECKS  # type: ignore[import-not-found,no-redef]
    from p2p_nerts.net.node import (  # type: ignore[no-redef]
        Endpoint,
        NetSession,
        TableConfig,
    )
    from p2p_nerts.net.testing import free_port  # type: ignore[import-not-found,no-redef]

LOCAL = "127.0.0.1"
PINGS = 2000
#: A play final at its author only this long after it was made waited for
#: something besides the straight ACKs (a peer's heartbeat, 0.5 s to 1.5 s
#: away), or for the CPU: a game's p99 is set by its few slowest plays, so
#: how many took this long, and the slowest, tell a tail from one stall.
SLOW_FINAL = 0.1
#: Names a directory: each peer of a game then runs its event loop under cProfile
#: (timing its thread's CPU, not the wall clock) and leaves its profile there,
#: ``host<port>.prof`` or ``guest<port>.prof`` (read them with ``pstats``).
PROFILE_ENV = "NERTS_BENCH_PROFILE"
#: Names a directory: each peer samples its stack every SAMPLE_EVERY s of its CPU
#: and leaves the counts there as folded stacks (:class:`Sampler`);
#: ``bench_net.py --samples DIR`` sums them up.
SAMPLE_ENV = "NERTS_BENCH_SAMPLE"
SAMPLE_EVERY = 0.0005


class Sampler:
    """Where a process's CPU goes, by sampling: the main thread's Python stack every
    SAMPLE_EVERY s of the process's CPU time (``ITIMER_PROF``; the kernel delivers
    them at most once a tick), counted as folded
    stacks (``a;b;c N`` lines, as flame graph tools read them).

    Unlike cProfile it costs each call nothing, so a path of many small calls is
    not overstated (cProfile made the replica's share look several times larger).
    A C call counts for the Python frame that made it; a worker thread's CPU
    (the history's replay) lands on whatever the main thread was doing then,
    mostly waiting in ``select``.
    """

    def __init__(self) -> None:
        self.stacks: Counter[str] = Counter()

    def _sample(self, _signum: int, frame: FrameType | None) -> None:
        names: list[str] = []
        while frame is not None:
            code = frame.f_code
            names.append(f"{Path(code.co_filename).name}:{code.co_name}")
            frame = frame.f_back
        self.stacks[";".join(reversed(names))] += 1

    def start(self) -> None:
        signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, SAMPLE_EVERY, SAMPLE_EVERY)

    def stop(self, out: Path) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0.0)
        out.write_text("".join(f"{stack} {n}\n" for stack, n in self.stacks.items()))


def sampled(folder: Path, shown: int = 40) -> None:
    """Print what the peers' samples in ``folder`` say: each function's share of
    every sample, with what it called (inclusive) and in itself (leaf)."""
    inclusive: Counter[str] = Counter()
    leaf: Counter[str] = Counter()
    for path in folder.glob("*.txt"):
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            leaf[frames[-1]] += int(count)
            for name in set(frames):
                inclusive[name] += int(count)
    total = sum(leaf.values())
    # Asked every SAMPLE_EVERY s of CPU, they come at most once a kernel tick
    # (4 ms here): fewer than the CPU time would say, spread the same way.
    print(f"{total} samples")
    for title, counts in (("with what it called", inclusive), ("in itself", leaf)):
        print(title + ":")
        for name, n in counts.most_common(shown):
            print(f"  {n / total:6.1%}  {name}")


# ------------------------------------------------------------------ baseline
async def echo_server(port: int) -> None:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = FrameDecoder()
        while data := await reader.read(65536):
            for frame in decoder.feed(data):
                writer.write(encode_frame(frame))

    server = await asyncio.start_server(echo, LOCAL, port)
    async with server:
        await server.serve_forever()


async def ping(port: int, gap: float, count: int) -> list[float]:
    reader, writer = await asyncio.open_connection(LOCAL, port)
    decoder, payload, rtts = FrameDecoder(), bytes(100), []
    for _ in range(count):
        if gap:
            await asyncio.sleep(gap)
        start = time.monotonic()
        writer.write(encode_frame(payload))
        frames: list[bytes] = []
        while not frames:
            frames = decoder.feed(await reader.read(65536))
        rtts.append(time.monotonic() - start)
    writer.close()
    return rtts[count // 20:]  # warm-up


def baselines() -> tuple[float, float]:
    """Median round trips: back to back (hot), and one every 50 ms (the echo side idle)."""
    port = free_port()
    child = subprocess.Popen([sys.executable, __file__, "--echo", str(port)])
    try:
        for _ in range(100):
            try:
                hot = statistics.median(asyncio.run(ping(port, 0.0, PINGS)))
            except OSError:
                time.sleep(0.05)
                continue
            return hot, statistics.median(asyncio.run(ping(port, 0.05, 200)))
        raise RuntimeError("the echo process did not start")
    finally:
        child.kill()
        child.wait()


# ------------------------------------------------------------------ the floor
FLOOR_FRAME = 200  # about a PLAY and the VIEW riding with it
FLOOR_ACK = 16
FLOOR_SECONDS = 12.0


#: The floors, each the fan-out of one frame per play: bare bytes, a signed entry,
#: and a signed entry journaled with an fsync before it goes out.
FLOORS = ("bare", "signed", "durable")


async def floor_peer(index: int, ports: list[int], pace: float, out: Path, kind: str) -> None:
    """Send a bare (or a signed, or a signed and fsync-ed) frame to every other
    process now and then; note arrivals, and when each receiver's ack of my
    frames came back."""
    signed = kind != "bare"
    journal = open(out.with_suffix(".journal"), "ab") if kind == "durable" else None  # noqa: SIM115
    trace: list[tuple[int, int, float]] = []  # (author, seq, when): sent if author is me
    acked: list[tuple[int, float]] = []  # (seq, when) of each ack of mine
    acks: dict[int, asyncio.StreamWriter] = {}
    me = Identity.generate(f"floor{index}")

    async def receive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = FrameDecoder()
        while data := await reader.read(65536):
            for frame in decoder.feed(data):
                if len(frame) > FLOOR_ACK:  # a play: check it if signed, note it, ack it
                    if signed:
                        open_entry(frame[9:])
                    trace.append((frame[0], int.from_bytes(frame[1:9], "big"), time.monotonic()))
                    acks[frame[0]].write(encode_frame(frame[1:9] + bytes(FLOOR_ACK - 8)))
                else:
                    acked.append((int.from_bytes(frame[:8], "big"), time.monotonic()))

    server = await asyncio.start_server(receive, LOCAL, ports[index])
    for other, port in enumerate(ports):
        while other != index and other not in acks:
            try:
                acks[other] = (await asyncio.open_connection(LOCAL, port))[1]
            except OSError:
                await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)  # everyone connected
    # A peer's loop wakes at least every SHELL_CHECKS whatever happens (its own
    # checks), which keeps it warmer than a process that only sleeps between
    # plays: the floor's processes wake as often, doing nothing.
    ticker = asyncio.create_task(idle_ticks())
    began, slept = os.times(), sleeps()
    rng, seq, stop = random.Random(index), 0, time.monotonic() + FLOOR_SECONDS
    while time.monotonic() < stop:
        await asyncio.sleep(pace * rng.uniform(0.5, 1.5))
        seq += 1
        trace.append((index, seq, time.monotonic()))
        body = (seal(me, table_id=bytes(TABLE_ID_LEN), round=1, seq=seq, lamport=seq,
                     type=int(MsgType.PLAY), payload={"c": 1, "p": 1, "s": 1, "d": 0, "m": seq}).raw
                if signed else bytes(FLOOR_FRAME - 9))
        frame = encode_frame(bytes([index]) + seq.to_bytes(8, "big") + body)
        if journal is not None:  # on the disk before it leaves, as a seat's own entry
            journal.write(frame)
            journal.flush()
            os.fsync(journal.fileno())
        for writer in acks.values():
            writer.write(frame)
    await asyncio.sleep(1.0)
    ticker.cancel()
    spent, woke = os.times(), sleeps() - slept
    server.close()
    if journal is not None:
        journal.close()
    out.write_text(json.dumps({"trace": trace, "acked": acked, "sent": seq,
                               "user": spent.user - began.user,
                               "system": spent.system - began.system, "woke": woke}))


def sleeps() -> float:
    """How many times this process's main thread (its event loop) has gone to
    sleep waiting: each is a wake-up later, the cost a protocol pays per frame
    or timer it makes a process wait for (Linux; NaN elsewhere)."""
    try:
        with open("/proc/thread-self/status") as status:
            for line in status:
                if line.startswith("voluntary_ctxt_switches:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return math.nan


async def idle_ticks() -> None:
    while True:
        await asyncio.sleep(SHELL_CHECKS)


FloorRun = tuple[list[float], list[float], float, float, float]


def floor(players: int, pace: float, kind: str) -> FloorRun:
    """For each frame of a ``kind`` of FLOORS, its last receiver's latency and its
    last ack's back at its author (seconds): the floors of "applied" and "final";
    then the median process's CPU time per frame sent at the table, user and system
    (seconds): the floor of a peer's CPU per play; and its main thread's wake-ups
    per frame sent at the table."""
    ports = [free_port() for _ in range(players)]
    with tempfile.TemporaryDirectory() as tmp:
        outs = [Path(tmp) / f"floor{i}.json" for i in range(players)]
        procs = [subprocess.Popen([sys.executable, __file__, "--floor", str(i), str(pace),
                                   str(outs[i]), kind, *map(str, ports)],
                                  stderr=subprocess.DEVNULL)
                 for i in range(players)]
        for proc in procs:
            if proc.wait(timeout=120) != 0:
                raise RuntimeError(f"a floor process failed with status {proc.returncode}")
        written = [json.loads(out.read_text()) for out in outs]
    sent = {(a, s): at for i, w in enumerate(written) for a, s, at in w["trace"] if a == i}
    heard: dict[tuple[int, int], list[float]] = {}
    backs: dict[tuple[int, int], list[float]] = {}
    for i, w in enumerate(written):
        for a, s, at in w["trace"]:
            if a != i:
                heard.setdefault((a, s), []).append(at)
        for s, at in w["acked"]:
            backs.setdefault((i, s), []).append(at)
    plays = sum(w["sent"] for w in written)
    return (last_of_all(sent, heard, players - 1), last_of_all(sent, backs, players - 1),
            statistics.median(w["user"] for w in written) / plays,
            statistics.median(w["system"] for w in written) / plays,
            statistics.median(w["woke"] for w in written) / plays)


def last_of_all(sent: dict[tuple[int, int], float], heard: dict[tuple[int, int], list[float]],
                others: int) -> list[float]:
    """For each frame heard by all ``others``, how long after it was sent the last one had it."""
    return [max(ats) - sent[key] for key, ats in heard.items()
            if key in sent and len(ats) == others]


# ------------------------------------------------------------------ one peer
async def peer(role: str, port: int, host_port: int, players: int, pace: float,
               target: int, out: Path, views: bool) -> None:
    """Play one seat and write when each play was made, applied and final here.

    ``views``: it says it draws the other seats' tableaux, as a seat with a
    screen (or a spectator) does, and is sent their VIEWs; a bot is not."""
    config = TableConfig(variants=Variants(target=target), countdown=0.0, drop_after=5.0,
                         auto_start=players, auto_next=0.3, views=views)
    me = Identity.generate(f"{role}{port}")
    endpoint = Endpoint(LOCAL, port)
    trace: list[tuple[str, int, int, float]] = []
    acting = [0.0]  # when the replica was asked to make the play: its birth
    # When the frames of the last move made went out (NaN until they do): its play's,
    # if it made one (the seat applies its play once it is sent).
    sending = [math.nan]
    # The author's own CPU from its move until then: the rest it waited for a CPU.
    acting_cpu, sending_cpu = [0.0], [math.nan]
    # When the replica said a play was applied here (or final, at its author):
    # as it returns, before the shell journals and sends what came of it.
    came_out: dict[tuple[str, int, int], float] = {}

    def returned(out: Outbound) -> Outbound:
        now = time.monotonic()
        for event in out.events:
            if isinstance(event, ev.PlayAdded) and not event.mine:
                came_out.setdefault(("applied", event.play.lamport, event.play.author), now)
            elif isinstance(event, ev.PlayFinal) and event.mine:
                came_out.setdefault(("final", event.play.lamport, event.play.author), now)
        return out

    class TimedReplica(Replica):
        """The seat's replica, timed as its calls return. A subclass, not methods
        patched on the instance: the compiled build's has no instance dict, and
        lets Python subclasses override its methods (``--baseline DIR``)."""

        def handle(self, command: Command, now: float) -> Outbound:
            if isinstance(command, Move):
                acting[0], sending[0] = time.monotonic(), math.nan
                acting_cpu[0] = time.thread_time()
            return super().handle(command, now)

        def receive_batch(self, frames: Iterable[tuple[bytes, bytes | None]],
                          now: float) -> Outbound:
            return returned(super().receive_batch(frames, now))

        def tick(self, now: float) -> Outbound:
            return returned(super().tick(now))

    # Where seats make their replicas (p2p_nerts.peer.node; a --baseline's own).
    sys.modules[NetSession.__module__].Replica = TimedReplica  # type: ignore[attr-defined]
    # A journal, as `nerts host/join/bot` keep one: every frame is journaled
    # before its acknowledgement goes out.
    store = Store(out.with_suffix(".sqlite3"))
    if role == "host":
        session = await NetSession.host(me, config, endpoint, table_name="bench",
                                        interfaces=None, store=store)
    elif role == "spectator":
        session = await NetSession.watch(me, (LOCAL, host_port), config, endpoint)
    else:
        session = await NetSession.join(me, (LOCAL, host_port), config, endpoint,
                                        store=store)

    # The event loop's CPU while rounds are played (from each start to its end),
    # apart from the dealing, the audits and scores, and between rounds.
    in_play = [0.0, math.nan]  # the sum, and when the round under way started

    def record(event: ev.Event) -> None:
        now = time.monotonic()
        if isinstance(event, ev.RoundStarted):
            in_play[1] = time.thread_time()
            return
        if isinstance(event, ev.RoundOver) and not math.isnan(in_play[1]):
            in_play[0] += time.thread_time() - in_play[1]
            in_play[1] = math.nan
            return
        if isinstance(event, ev.PlayAdded):
            if event.mine:
                trace.append(("made", event.play.lamport, event.play.author, acting[0]))
                trace.append(("sent", event.play.lamport, event.play.author, sending[0]))
                trace.append(("sent_cpu", event.play.lamport, event.play.author,
                              sending_cpu[0]))
                return
            kind = "applied"
        elif isinstance(event, ev.PlayFinal) and event.mine:
            kind = "final"
        else:
            return
        key = (kind, event.play.lamport, event.play.author)
        trace.append((*key, came_out.pop(key, now)))

    mesh = session._mesh
    send_all = mesh.send_all
    sent: list[tuple[bytes, int]] = []  # each frame and how many peers it went to

    def counted(sends: Any) -> None:
        sends = list(sends)
        links = len(mesh.links)
        sent.extend((data, links if to is None else int(to in mesh.links)) for data, to in sends)
        send_all(sends)
        if math.isnan(sending[0]):
            sending[0] = time.monotonic()
            sending_cpu[0] = time.thread_time() - acting_cpu[0]

    mesh.send_all = counted  # type: ignore[method-assign]
    session.subscribe(record)
    # The bot's own choosing, apart: a player at a screen does that in their head.
    choosing = [0.0]
    decide = Bot.decide

    def timed_decide(bot: Bot, tab: Any, fnd: Any) -> Any:
        began = time.thread_time()
        try:
            return decide(bot, tab, fnd)
        finally:
            choosing[0] += time.thread_time() - began

    try:
        Bot.decide = timed_decide  # type: ignore[method-assign,assignment]
    except TypeError:  # the compiled build's class: not counted apart
        choosing[0] = float("nan")
    profiling = os.environ.get(PROFILE_ENV)
    profile = cProfile.Profile(time.thread_time) if profiling else None
    sampling = os.environ.get(SAMPLE_ENV)
    sampler = Sampler() if sampling else None
    wall, cpu, loop, slept = time.monotonic(), os.times(), time.thread_time(), sleeps()
    if profile is not None:
        profile.enable()
    if sampler is not None:
        sampler.start()
    await run_headless(session, bot=None if role == "spectator" else
                       Bot(paced(SKILLS["hard"], pace), random.Random(port)),
                       summary=None, linger=0.5)
    if profile is not None:
        profile.disable()
    if sampler is not None and sampling:
        sampler.stop(Path(sampling) / f"{role}{port}.txt")
    spent, looped, woke = os.times(), time.thread_time(), sleeps() - slept
    if profile is not None and profiling:
        profile.dump_stats(Path(profiling) / f"{role}{port}.prof")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    frames: dict[str, int] = {}
    for data, copies in sent:  # classified after the game, off the measured CPU
        kind = frame_type(data, me.public_key)
        frames[kind] = frames.get(kind, 0) + copies
    out.write_text(json.dumps({
        "trace": trace, "me": session.replica.view().my_seat, "wall": time.monotonic() - wall,
        "cpu": spent.user + spent.system - cpu.user - cpu.system, "loop_cpu": looped - loop,
        "bot_cpu": choosing[0], "in_play_cpu": in_play[0], "system_cpu": spent.system - cpu.system,
        "maxrss_mb": usage.ru_maxrss / 1024, "frames": frames, "woke": woke,
    }))


def frame_type(data: bytes, me: bytes) -> str:
    """The entry type of a frame we sent (its name), or "other" for transport frames."""
    try:
        if data[:len(MAGIC)] == MAGIC:
            return MsgType(open_entry(data).type).name
        if data[:len(LINK_MAGIC)] == LINK_MAGIC:
            return MsgType(open_link_entry(data, me).type).name
    except (EnvelopeError, ValueError):
        pass
    return "other"


def cpu_per_play(results: list[dict[str, Any]], plays: int) -> float:
    """The median peer's CPU time (all its threads, the system's part too) per play."""
    cpu: float = statistics.median(r["cpu"] for r in results)
    return cpu / plays


def traffic(results: list[dict[str, Any]], plays: int) -> str:
    """Frames per play by type, most first, and each peer's CPU per play: all of it,
    and the event loop's (the rest is worker threads': the game's replay for its
    history, ``GameKeeping._keep``)."""
    frames: dict[str, int] = {}
    for r in results:
        for kind, n in r["frames"].items():
            frames[kind] = frames.get(kind, 0) + n
    total = sum(frames.values())
    parts = " ".join(f"{kind} {n / plays:.1f}" for kind, n in
                     sorted(frames.items(), key=lambda item: -item[1]))
    cpu = cpu_per_play(results, plays)
    loop = statistics.median(r["loop_cpu"] for r in results) / plays
    bot = statistics.median(r.get("bot_cpu", math.nan) for r in results) / plays
    system = statistics.median(r.get("system_cpu", math.nan) for r in results) / plays
    in_play = statistics.median(r.get("in_play_cpu", math.nan) for r in results) / plays
    woke = statistics.median(r.get("woke", math.nan) for r in results) / plays
    return (f"frames per play {total / plays:.1f} ({parts}); CPU per peer per play "
            f"{cpu * 1e6:.0f} µs ({system * 1e6:.0f} µs of it system), "
            f"{loop * 1e6:.0f} µs of it on the event loop (waking {woke:.2f} times; "
            f"{in_play * 1e6:.0f} µs while "
            "rounds are played, the rest dealing, scoring and between rounds), "
            f"{bot * 1e6:.0f} µs of that the bot choosing its moves (the rest: "
            f"{(cpu - bot) * 1e6:.0f} µs)")


# ------------------------------------------------------------------ one game
def game(players: int, pace: float, target: int, spectators: int = 0,
         screens: int = 0, code: str | None = None) -> list[dict[str, Any]]:
    """One game's players' results (the spectators', if any, are left out). The first
    ``screens`` players, and every spectator, draw the others' tableaux. ``code``:
    a checkout whose ``p2p_nerts`` the peers run instead of this one's."""
    env = None if code is None else {**os.environ, "PYTHONPATH": code}
    ports = [free_port() for _ in range(players + spectators)]
    with tempfile.TemporaryDirectory() as tmp:
        outs = [Path(tmp) / f"peer{i}.json" for i in range(players + spectators)]
        procs = []
        # The spectators link up before the guests, to watch the game from its start.
        for i in [0, *range(players, players + spectators), *range(1, players)]:
            role = "host" if i == 0 else "spectator" if i >= players else "guest"
            procs.append(subprocess.Popen(
                [sys.executable, __file__, "--peer", role, str(ports[i]), str(ports[0]),
                 str(players), str(pace), str(target), str(outs[i]),
                 str(int(i < screens or i >= players))],
                stderr=subprocess.DEVNULL, env=env))
            if i == 0 or (spectators and i == players + spectators - 1):
                time.sleep(0.5)  # the host listening; the spectators linked
        for proc in procs:
            if proc.wait(timeout=600) != 0:
                raise RuntimeError(f"a peer failed with status {proc.returncode}")
        return [json.loads(out.read_text()) for out in outs[:players]]


def watched(players: int, spectators: int, pace: float, target: int, pairs: int) -> None:
    """Games of ``players`` with 0 and with ``spectators`` watching, alternating."""
    print(f"{players} players, {spectators} spectators against none, {pairs} pair(s) of games "
          f"(pace {pace:g}, target {target})")
    print(f"{'watched by':>10} {'plays':>6} {'applied med':>12} {'p99':>8} {'final med':>10} "
          f"{'p99':>8} {'cpu/player':>11} {'baseline':>9}")
    rows: dict[int, list[tuple[float, float, float, float, float]]] = {0: [], spectators: []}
    for _ in range(pairs):
        for n in (0, spectators):
            before = baselines()
            results = game(players, pace, target, n)
            after = baselines()
            rtt = (before[1] + after[1]) / 2
            applied, final = latencies(results)
            cpu = max(r["cpu"] / r["wall"] for r in results)
            row = (statistics.median(applied), pct(applied, 0.99), statistics.median(final),
                   pct(final, 0.99), cpu)
            rows[n].append(row)
            print(f"{n:>10} {len(applied):>6} {row[0] * 1e3:>10.2f}ms {row[1] * 1e3:>6.2f}ms "
                  f"{row[2] * 1e3:>8.2f}ms {row[3] * 1e3:>6.2f}ms {cpu:>10.0%} "
                  f"{rtt * 1e6:>7.0f}µs")
    mean = {n: [statistics.mean(column) for column in zip(*runs, strict=True)]
            for n, runs in rows.items()}
    names = ("applied median", "applied p99", "final median", "final p99", "cpu/player")
    print(f"with {spectators} spectators, against none: " + "; ".join(
        f"{name} {mean[spectators][i] / mean[0][i]:.2f}x" for i, name in enumerate(names)))


def latencies(results: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
    made: dict[tuple[int, int], float] = {}
    applied: dict[tuple[int, int], list[float]] = {}
    for r in results:
        for kind, lamport, author, at in r["trace"]:
            key = (lamport, author)
            if kind == "made":
                made[key] = at
            elif kind == "applied":
                applied.setdefault(key, []).append(at)
    return last_of_all(made, applied, len(results) - 1), finals(results, made)


def finals(results: list[dict[str, Any]], made: dict[tuple[int, int], float]) -> list[float]:
    """Each play's latency until it was final at its author."""
    final: list[float] = []
    for r in results:
        final += [at - made[(lam, au)] for kind, lam, au, at in r["trace"]
                  if kind == "final" and (lam, au) in made]
    return final


def sending(results: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
    """How long each play took at its author from its move to its frames' going out:
    the bot's step, signing, journaling (and the group commit's fsync, where it
    comes first) and the send calls; the rest of "applied" is the way to the last
    receiver. With how much of it was the author's own CPU (the rest, waiting for
    one: at 8 peers on 2 cores, the receivers of its frames take the CPU as the
    sends wake them)."""
    made = {(lam, au): at for r in results for kind, lam, au, at in r["trace"] if kind == "made"}
    took = [at - made[lam, au] for r in results for kind, lam, au, at in r["trace"]
            if kind == "sent" and not math.isnan(at)]
    cpu = [at for r in results for kind, _lam, _au, at in r["trace"]
           if kind == "sent_cpu" and not math.isnan(at)]
    return took, cpu


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pace", type=float, default=0.3, help="bot pace for latency games")
    parser.add_argument("--fast-pace", type=float, default=0.05, help="bot pace, footprint game")
    parser.add_argument("--target", type=int, default=40, help="score that ends each game")
    parser.add_argument("--spectators", type=int, metavar="N",
                        help="measure only what N spectators cost a 4-player table")
    parser.add_argument("--screens", type=int, default=0, metavar="N",
                        help="N players of each game draw the others' tableaux (a player "
                             "at a screen is sent their views; a bot is not)")
    parser.add_argument("--peers", type=int, nargs="+", choices=(2, 4, 8), default=[2, 4, 8],
                        help="the table sizes of the latency games (the footprint game "
                             "only with all three)")
    parser.add_argument("--baseline", metavar="DIR",
                        help="before each latency game, the same game with the p2p_nerts of "
                             "the checkout in DIR (the code before a change), in turn")
    parser.add_argument("--pairs", type=int, default=1,
                        help="with --baseline: pairs of latency games, the baseline first "
                             "in every other pair, and this checkout's ratios pair by pair; "
                             "with --spectators: pairs of games (0 and N watching)")
    parser.add_argument("--echo", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--peer", nargs=8, help=argparse.SUPPRESS)
    parser.add_argument("--floor", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=Path, metavar="DIR",
                        help=f"sum up the stacks the peers sampled into DIR (run with "
                             f"{SAMPLE_ENV}=DIR) and exit")
    args = parser.parse_args()
    if args.samples:
        sampled(args.samples)
        return 0
    if args.echo:
        asyncio.run(echo_server(args.echo))
        return 0
    if args.floor:
        index, pace, out, kind, *ports = args.floor
        asyncio.run(floor_peer(int(index), [int(p) for p in ports], float(pace), Path(out),
                               kind))
        return 0
    if args.peer:
        role, port, host_port, players, pace, target, out, views = args.peer
        asyncio.run(peer(role, int(port), int(host_port), int(players), float(pace),
                         int(target), Path(out), views == "1"))
        return 0

    if args.spectators is not None:
        if not 0 < args.spectators <= 16:
            parser.error("--spectators must be 1..16 (a host keeps at most 16)")
        watched(4, args.spectators, args.pace, args.target, args.pairs)
        return 0
    hot, rtt = baselines()
    print(f"baseline: asyncio TCP round trip between two processes, median {hot * 1e6:.0f} µs "
          f"back to back, {rtt * 1e6:.0f} µs one every 50 ms (the receiver idle, as peers "
          "are between plays); ratios are to the latter, each game's to its own, measured "
          "around it")
    floors: dict[tuple[int, str], FloorRun] = {}
    names = {"bare": "floor", "signed": "signed floor", "durable": "durable signed floor"}
    for kind in FLOORS:
        for n in args.peers:
            lat, acked, user, system, woke = floors[n, kind] = floor(n, args.pace, kind)
            fm, f99, km = statistics.median(lat), pct(lat, 0.99), statistics.median(acked)
            print(f"{names[kind]}, {n} {kind} processes: last receiver median "
                  f"{fm * 1e6:.0f} µs = {fm / rtt:.1f}x, "
                  f"p99 {f99 * 1e6:.0f} µs = {f99 / rtt:.1f}x; every ack back median "
                  f"{km * 1e6:.0f} µs = {km / rtt:.1f}x baseline; CPU per process per play "
                  f"{(user + system) * 1e6:.0f} µs ({system * 1e6:.0f} µs of it system), "
                  f"{woke:.2f} wake-ups")
    print(f"{'peers':>5} {'pace':>5} {'plays':>6} {'applied med':>12} {'p99':>8} "
          f"{'final med':>10} {'p99':>8} {'cpu/peer':>9} {'max rss':>8}")
    rows = [(n, args.pace) for n in args.peers]
    if set(args.peers) == {2, 4, 8}:
        rows.append((8, args.fast_pace))
    verdicts: list[str] = []
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    runs: list[tuple[int, float, str | None]] = []
    for n, pace in rows:
        if not (args.baseline and pace == args.pace):
            runs.append((n, pace, None))
            continue
        for turn in range(args.pairs):  # the baseline first in every other pair
            order = [args.baseline, None] if turn % 2 == 0 else [None, args.baseline]
            runs += [(n, pace, code) for code in order]
    #: Each table size's games, by checkout (None: this one): applied and final
    #: medians and CPU per peer per play, in the order played.
    paired: dict[tuple[int, str | None], list[tuple[float, float, float]]] = {}
    for players, pace, code in runs:
        if args.baseline:
            print(f"{'':>19}{'the baseline, ' + args.baseline if code else 'this checkout'}:")
        before = baselines()
        results = game(players, pace, args.target, screens=args.screens, code=code)
        after = baselines()
        hot, rtt = (before[0] + after[0]) / 2, (before[1] + after[1]) / 2
        applied, final = latencies(results)
        cpu = max(r["cpu"] / r["wall"] for r in results)
        rss = max(r["maxrss_mb"] for r in results)
        am, a99, fm, f99 = (statistics.median(applied), pct(applied, 0.99),
                            statistics.median(final), pct(final, 0.99))
        print(f"{players:>5} {pace:>5g} {len(applied):>6} {am * 1e3:>10.2f}ms "
              f"{a99 * 1e3:>6.2f}ms {fm * 1e3:>8.2f}ms {f99 * 1e3:>6.2f}ms "
              f"{cpu:>8.0%} {rss:>6.1f}MB")
        print(f"{'':>19}= {am / rtt:.1f}x / {a99 / rtt:.1f}x baseline; final {fm / rtt:.1f}x"
              + (f"; applied {am / statistics.median(floors[players, 'bare'][0]):.1f}x the "
                 f"floor, {am / statistics.median(floors[players, 'signed'][0]):.1f}x the signed "
                 f"floor (final {fm / statistics.median(floors[players, 'signed'][1]):.1f}x its "
                 f"acks), {am / statistics.median(floors[players, 'durable'][0]):.1f}x the "
                 f"durable signed floor, {am / hot:.1f}x the back-to-back round trip"
                 if pace == args.pace else ""))
        took, own = sending(results)
        out, own_cpu = statistics.median(took), statistics.median(own)
        print(f"{'':>19}of the applied median, the author's move to its frames' going out "
              f"(signed, journaled, sent) median {out * 1e6:.0f} µs ({own_cpu * 1e6:.0f} µs "
              f"of it the author's CPU), the way to the last receiver {(am - out) * 1e6:.0f} µs")
        print(f"{'':>19}{traffic(results, len(applied))}")
        if args.baseline and pace == args.pace:
            paired.setdefault((players, code), []).append(
                (am, fm, cpu_per_play(results, len(applied))))
        slow = sum(1 for f in final if f > SLOW_FINAL)
        print(f"{'':>19}final after more than {SLOW_FINAL * 1e3:.0f} ms: {slow} of "
              f"{len(final)} plays (the slowest {max(final) * 1e3:.0f} ms)")
        print(f"{'':>19}(baseline around this game: {before[1] * 1e6:.0f} µs before, "
              f"{after[1] * 1e6:.0f} µs after; back to back {hot * 1e6:.0f} µs)")
        if pace == args.pace and code is None:
            verdicts.append(f"{players} peers: applied median {am / rtt:.1f}x (target <= 4x): "
                            f"{'ok' if am <= 4 * rtt else 'MISSED'}; final median "
                            f"{fm / rtt:.1f}x (target <= 8x): "
                            f"{'ok' if fm <= 8 * rtt else 'MISSED'}")
        if players == 8 and pace == args.pace and code is None:
            verdicts.append(f"8 peers: applied p99 {a99 / rtt:.1f}x (target < 10x): "
                            f"{'ok' if a99 < 10 * rtt else 'MISSED'}")
            signed_am = statistics.median(floors[8, "signed"][0])
            signed_km = statistics.median(floors[8, "signed"][1])
            verdicts.append(f"8 peers: applied median {am / signed_am:.2f}x the signed floor "
                            f"(target <= 1.2x): {'ok' if am <= 1.2 * signed_am else 'MISSED'}; "
                            f"final median {fm / signed_km:.2f}x its acks (target <= 1.5x): "
                            f"{'ok' if fm <= 1.5 * signed_km else 'MISSED'}")
        if pace == args.fast_pace:
            verdicts.append(f"max rss {rss:.1f} MB (target < 80 MB): "
                            f"{'ok' if rss < 80 else 'MISSED'}")
    for players in args.peers if args.baseline and args.pairs > 1 else ():
        print(paired_ratios(players, paired[players, None], paired[players, args.baseline]))
    print("\n".join(verdicts))
    return 0


def paired_ratios(players: int, this: list[tuple[float, float, float]],
                  baseline: list[tuple[float, float, float]]) -> str:
    """This checkout's applied and final medians and CPU per play at ``players`` peers,
    each over the baseline's in the same pair, pair by pair and their median."""
    parts = []
    for i, name in enumerate(("applied median", "final median", "CPU per peer per play")):
        ratios = [t[i] / b[i] for t, b in zip(this, baseline, strict=True)]
        parts.append(f"{name} {' '.join(f'{x:.2f}' for x in ratios)} "
                     f"(median {statistics.median(ratios):.2f}x)")
    return f"{players} peers, this checkout over the baseline, pair by pair: " + "; ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
