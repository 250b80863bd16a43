"""Test and benchmark helpers for the mesh: peer processes and a fault-injecting relay.

In the spirit of ``trio.testing``: code the test suite and ``scripts/`` share,
kept in the package so it is type-checked with the rest. Nothing here is used
by ``nerts`` itself.

:class:`Relay` is a TCP proxy in front of one peer. It understands the 4-byte
length framing, so it can hold frames back (a random delay per frame, FIFO
within a direction, which reorders frames *between* connections as a real
network does), send a frame twice, flip one byte of a signed entry, or cut the
connection. A peer is put behind its relay by starting it with
``--port P --advertise-port R``: everyone who dials it then goes through ``R``.

The relay listens on 127.0.0.1 and only ever connects to its target: it never
rewrites addresses, and it only tampers with signed entries (whose bytes are
covered by a signature), never with the peers frames that carry addresses.

:class:`PeerTable` starts a whole table of ``nerts`` processes on 127.0.0.1,
each behind its own relay when faults are asked for, and can crash a peer
and bring it back with ``--resume``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import secrets
import signal
import socket
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..net.framing import MAX_FRAME, FrameDecoder, FrameError, encode_frame
from ..net.interfaces import ENV_VAR
from ..net.wire import WireError, decode_info
from ..protocol.envelope import MAGIC

__all__ = ["Faults", "PeerProcess", "PeerTable", "Relay", "RelayStats", "free_port",
           "nerts_command", "shared_lines", "wait_all"]

LOOPBACK = "127.0.0.1"
_EPHEMERAL_LOW = 32768  # Linux's default, when /proc does not say
_OPENING = 4
"""Frames each way that open a connection (info, code exchange, HELLO, AUTH): never
cut, so a newcomer's first connection gets through as it would on a real LAN,
where cuts come from long-lived links (Wi-Fi roaming, a sleeping laptop)."""
_CUT = b""  # in a relay queue: cut the connection here (None: the sender closed)


_PORTS = random.SystemRandom()
"""Not the global generator, which a seeded test could make repeat itself."""
_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now, below the kernel's ephemeral range.

    A peer is told its port before it starts; a port from the ephemeral range
    could meanwhile be taken by any outgoing connection or port-0 listener (a
    relay's, another peer's), which a table of 8 peers and 8 relays does hit.
    """
    low = _EPHEMERAL_LOW
    with contextlib.suppress(OSError, ValueError, IndexError):
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for _ in range(200):
        port = _PORTS.randrange(10_000, max(low, 10_001))
        if port in _HANDED_OUT:
            continue  # free now, but promised to a peer that has not bound it yet
        with socket.socket() as sock:
            try:
                sock.bind((LOOPBACK, port))
            except OSError:
                continue
            _HANDED_OUT.add(port)
            return port
    raise OSError("no free TCP port below the ephemeral range")


@dataclass(frozen=True, slots=True)
class Faults:
    """What a relay does to each frame (chances are per frame)."""

    min_delay: float = 0.0
    max_delay: float = 0.0
    duplicate: float = 0.0  # a signed entry is sent twice
    tamper: float = 0.0  # one byte of a signed entry is flipped
    cut: float = 0.0  # the connection is cut after this frame (once it is open)
    #: Once this many frames have passed the relay, its next signed entry (of a
    #: connection past its opening) is tampered with and the connection cut after
    #: it, whatever the chances say: a test that needs every fault to have
    #: happened does not depend on the dice (0: the chances alone).
    sure_after: int = 0


@dataclass(slots=True)
class RelayStats:
    connections: int = 0
    frames: int = 0
    delayed: int = 0
    duplicated: int = 0
    tampered: int = 0
    cut: int = 0
    partitioned: int = 0  # connections cut because the dialer is on the other side


@dataclass(eq=False, slots=True)
class _Connection:
    cut: asyncio.Event = field(default_factory=asyncio.Event)
    dialer_port: int | None = None  # the port the dialer advertises, once its info frame is read


class Relay:
    """A fault-injecting TCP proxy to ``target`` (see the module docstring).

    With ``record`` it keeps every byte it carries, both ways, in ``captured``:
    what a passive listener on the network would see. :meth:`isolate` cuts
    off the peers that advertise the given ports (it reads the port from the
    dialer's info frame, which is sent in the clear even at a table with a
    code), so relays in front of every peer can split a table in two.
    """

    def __init__(self, target: tuple[str, int], faults: Faults, rng: random.Random, *,
                 record: bool = False) -> None:
        self.target = target
        self.faults = faults
        self.rng = rng
        self.stats = RelayStats()
        self.captured: bytearray | None = bytearray() if record else None
        self.port = 0
        self._isolated: frozenset[int] = frozenset()
        self._sure_done = not faults.sure_after  # the one sure fault (Faults.sure_after)
        self._connections: set[_Connection] = set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._accept, LOOPBACK, 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    def isolate(self, ports: Iterable[int]) -> None:
        """Cut every connection from a peer advertising one of ``ports``, now and until
        :meth:`heal` (an empty set heals too)."""
        self._isolated = frozenset(ports)
        for conn in self._connections:
            if conn.dialer_port in self._isolated and not conn.cut.is_set():
                self.stats.partitioned += 1
                conn.cut.set()

    def heal(self) -> None:
        self.isolate(())

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self.stats.connections += 1
        conn = _Connection()
        self._connections.add(conn)
        pumps = [self._spawn(self._pump(reader, up_writer, conn, from_dialer=True)),
                 self._spawn(self._pump(up_reader, writer, conn, from_dialer=False))]
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await conn.cut.wait()
        finally:
            self._connections.discard(conn)
            for task in pumps:
                task.cancel()
            for w in (writer, up_writer):
                w.transport.abort()

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _cut_off(self, conn: _Connection, frame: bytes) -> bool:
        """Read the dialer's port from its first frame; True if that peer is isolated."""
        try:
            conn.dialer_port = decode_info(frame).port
        except WireError:
            conn.dialer_port = 0
        if conn.dialer_port in self._isolated:
            self.stats.partitioned += 1
            return True
        return False

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    conn: _Connection, *, from_dialer: bool) -> None:
        """Frames one way: read, decide their fate, release them in order after a delay."""
        decoder = FrameDecoder(MAX_FRAME)
        queue: asyncio.Queue[tuple[float, bytes | None]] = asyncio.Queue()
        sender = self._spawn(self._release(queue, writer, conn.cut))
        loop = asyncio.get_running_loop()
        last = 0.0
        count = 0
        try:
            while data := await reader.read(65536):
                if self.captured is not None:
                    self.captured += data
                for frame in decoder.feed(data):
                    if from_dialer and conn.dialer_port is None and self._cut_off(conn, frame):
                        conn.cut.set()
                        return
                    f = self.faults
                    self.stats.frames += 1
                    count += 1
                    delay = self.rng.uniform(f.min_delay, f.max_delay)
                    self.stats.delayed += delay > 0
                    last = max(last, loop.time() + delay)
                    out = frame
                    signed = frame[:len(MAGIC)] == MAGIC  # link entries are tagged per link
                    copies = 2 if signed and self.rng.random() < f.duplicate else 1
                    self.stats.duplicated += copies - 1
                    sure = (signed and count > _OPENING and not self._sure_done
                            and self.stats.frames > f.sure_after)
                    self._sure_done = self._sure_done or sure
                    if signed and (self.rng.random() < f.tamper or sure):
                        self.stats.tampered += copies  # frames sent that no peer may accept
                        spot = self.rng.randrange(2, len(frame))
                        out = frame[:spot] + bytes([frame[spot] ^ 0x20]) + frame[spot + 1:]
                    for _ in range(copies):
                        queue.put_nowait((last, encode_frame(out)))
                    if count > _OPENING and (self.rng.random() < f.cut or sure):
                        queue.put_nowait((last, _CUT))
        except (OSError, FrameError):
            pass
        await queue.put((last, None))
        await sender

    async def _release(self, queue: asyncio.Queue[tuple[float, bytes | None]],
                       writer: asyncio.StreamWriter, cut: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        while True:
            at, frame = await queue.get()
            if at > loop.time():
                await asyncio.sleep(at - loop.time())
            if frame is None or frame is _CUT or writer.is_closing():
                self.stats.cut += frame is _CUT
                cut.set()
                return
            writer.write(frame)


# ----------------------------------------------------------------- peer processes
def nerts_command(*args: str) -> list[str]:
    """How to run ``nerts`` from this interpreter (no installed script needed)."""
    return [sys.executable, "-m", "p2p_nerts.cli", *args]


_STARTED: list[asyncio.subprocess.Process] = []
"""Every peer process started here, for ``PeerProcess.kill_all``."""


@dataclass
class PeerProcess:
    """One ``nerts`` process with its own home (identity), stderr log and summary file.

    Its mDNS is pinned to 127.0.0.1 unless ``env`` says otherwise: every seat
    advertises its results, so even one joining by address stays on this machine.
    """

    name: str
    home: Path
    args: Sequence[str]
    prefix: Sequence[str] = ()  # e.g. ("ip", "netns", "exec", "ns1")
    env: dict[str, str] = field(default_factory=dict)
    proc: asyncio.subprocess.Process | None = None

    @property
    def summary(self) -> Path:
        return self.home / "summary.jsonl"

    @property
    def log(self) -> Path:
        return self.home / "stderr.log"

    async def start(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "NERTS_HOME": str(self.home), ENV_VAR: LOOPBACK, **self.env}
        with self.log.open("ab") as log:  # a restarted peer's log goes on
            self.proc = await asyncio.create_subprocess_exec(
                *self.prefix, *nerts_command(*self.args, "--name", self.name,
                                             "--summary", str(self.summary)),
                stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log, env=env)
        _STARTED.append(self.proc)

    @staticmethod
    def kill_all() -> None:
        """SIGKILL every peer process this interpreter started that may still run.

        A test that fails half way (a timeout while waiting for a line) never
        reaches its table's ``close``; its peers must not outlive it, playing
        on and holding ports for an hour.
        """
        while _STARTED:
            proc = _STARTED.pop()
            if proc.returncode is not None:
                continue  # reaped: its pid may belong to someone else by now
            # Not reaped, so the pid is still this child's (running or a zombie).
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(proc.pid, 0)

    async def wait_for_line(self, text: str, timeout: float, *, after: int = 0) -> None:
        """Wait until ``text`` shows up in the peer's log past byte ``after`` (or it
        exits, or time runs out)."""
        async with asyncio.timeout(timeout):
            while text not in self.log.read_bytes()[after:].decode(errors="replace"):
                if self.proc is not None and self.proc.returncode is not None:
                    raise RuntimeError(f"{self.name} exited: {self.tail()}")
                await asyncio.sleep(0.05)

    async def wait(self, timeout: float) -> int:
        assert self.proc is not None
        async with asyncio.timeout(timeout):
            return await self.proc.wait()

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()

    def terminate(self) -> None:
        """SIGTERM: a headless peer writes its final summary line and exits."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()

    def lines(self) -> list[dict[str, Any]]:
        if not self.summary.exists():
            return []
        return [json.loads(line) for line in self.summary.read_text().splitlines() if line]

    def tail(self, n: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-n:])


async def wait_all(peers: Sequence[PeerProcess], timeout: float) -> None:
    """Wait for every peer to exit 0; on the first failure kill the rest and raise."""
    async def one(peer: PeerProcess) -> None:
        code = await peer.wait(timeout)
        if code != 0:
            raise AssertionError(f"{peer.name} exited {code}:\n{peer.tail()}")

    tasks = [asyncio.ensure_future(one(peer)) for peer in peers]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        for peer in peers:
            peer.kill()


def shared_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A summary without its peer-specific part: what every peer must agree on."""
    return [{k: v for k, v in line.items() if k != "local"} for line in lines]



class PeerTable:
    """A host and its guests as ``nerts`` processes on 127.0.0.1, each optionally
    behind a relay.

    Peer 0 hosts, starting round 1 once every seat is taken; the others join
    as bots, by the table's name (mDNS pinned to 127.0.0.1) or by address.
    ``common`` goes to every peer (``--headless --bot hard --pace 0.05 ...``),
    ``host`` to the host only, ``own[i]`` to peer ``i`` alone (after the
    others, so it wins). Peer ``i`` listens on ``ports[i]`` and the others
    dial it at ``dial[i]``: its relay's port when there are faults.
    """

    def __init__(self, home: Path, players: int, *, common: Sequence[str],
                 host: Sequence[str] = (), faults: Faults | None = None,
                 by_address: bool = False, seed: int = 0, record: bool = False) -> None:
        self.name = f"t-{secrets.token_hex(4)}"
        self.players = players
        self.common = list(common)
        self.host = list(host)
        self.faults = faults
        self.by_address = by_address
        self.record = record
        self.rng = random.Random(seed)
        self.ports = [free_port() for _ in range(players)]
        self.dial = list(self.ports)
        self.relays: list[Relay] = []
        self.own: list[list[str]] = [[] for _ in range(players)]
        self.peers = [PeerProcess(f"p{i}", home / f"p{i}", []) for i in range(players)]

    def where(self, i: int) -> list[str]:
        """Where peer ``i`` listens, and (behind a relay) the port it advertises."""
        at = ["--port", str(self.ports[i])]
        return [*at, "--advertise-port", str(self.dial[i])] if self.relays else at

    async def start(self) -> None:
        await self.start_host()
        await self.start_guests()

    async def start_host(self) -> None:
        """The relays, then the host, once its table is open."""
        if self.faults is not None:
            for i, port in enumerate(self.ports):
                relay = Relay((LOOPBACK, port), self.faults, random.Random(self.rng.random()),
                              record=self.record)
                self.dial[i] = await relay.start()
                self.relays.append(relay)
        host = self.peers[0]
        host.args = ["host", "--table-name", self.name, "--auto-start", str(self.players),
                     *self.host, *self._options(0)]
        await host.start()
        await host.wait_for_line(f"table '{self.name}' open", 20)

    async def start_guests(self) -> None:
        table = f"{LOOPBACK}:{self.dial[0]}" if self.by_address else self.name
        for i, peer in enumerate(self.peers[1:], start=1):
            peer.args = ["bot", table, *self._options(i)]
            await peer.start()

    def _options(self, i: int) -> list[str]:
        return [*self.common, *self.own[i], *self.where(i)]

    async def crash(self, i: int) -> None:
        """SIGKILL peer ``i``: no goodbye, no last write."""
        peer = self.peers[i]
        peer.kill()
        if peer.proc is not None:
            await peer.proc.wait()

    async def resume(self, i: int, *options: str) -> None:
        """Start crashed peer ``i`` again with ``--resume`` (and ``options``): the host
        opens the same table, by the name and clocks it opened it with."""
        first = ["host", "--resume"] if i == 0 else ["bot", "--resume"]
        peer = self.peers[i]
        peer.args = [*first, *options, *self._options(i)]
        logged = peer.log.stat().st_size if peer.log.exists() else 0  # an earlier life's
        await peer.start()
        await peer.wait_for_line("back at table", 30, after=logged)

    async def finish(self, timeout: float, skip: Sequence[int] = ()) -> list[list[dict[str, Any]]]:
        """Wait for every peer but ``skip`` to exit 0; their summaries, in peer order."""
        try:
            await wait_all([p for i, p in enumerate(self.peers) if i not in skip], timeout)
        finally:
            await self.close()
        return [peer.lines() for i, peer in enumerate(self.peers) if i not in skip]

    async def close(self) -> None:
        for peer in self.peers:
            peer.kill()
        for relay in self.relays:
            await relay.close()
