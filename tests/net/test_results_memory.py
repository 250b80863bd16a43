"""``nerts event``'s memory against hostile results servers: a record larger than any
game is refused unread, and the rest are read within one budget and verified as they
come, so 64 servers offering junk leave the asker's peak RSS under 100 MB.

The asker runs in a subprocess of its own, so that its peak (``VmHWM``) is its
own; the servers here, on 127.0.0.1, each send at most a few records' worth."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest

from p2p_nerts.records.record import MAX_RECORD, encode

from ..protocol.test_records import _record

pytestmark = pytest.mark.timeout(240)
SERVERS = 64
PEAK_KB = 100_000  # 100 MB

ASKER = r"""
import asyncio, json, resource, sys
from pathlib import Path
from p2p_nerts.peer.results import tallied

servers = [("127.0.0.1", int(port)) for port in sys.argv[1:]]
standings = asyncio.run(tallied(servers, 0.0, lambda since: []))
# This process's own peak: Linux carries ru_maxrss over from the parent it was forked
# from (here pytest, however large), where VmHWM starts again at exec.
status = Path("/proc/self/status")
peak = (int(next(line.split()[1] for line in status.read_text().splitlines()
                 if line.startswith("VmHWM:")))
        if status.exists() else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
print(json.dumps({"peak_kb": peak, "games": len(standings.games),
                  "refused": standings.refused}))
"""

CHUNK = os.urandom(1 << 20)


def _junk(kind: int) -> tuple[int, bytes]:
    """What a hostile server offers, as (length it claims, how its body begins)."""
    if kind == 0:
        return 0xFFFF_FFFF, b""  # four gigabytes, it says
    if kind == 1:
        return MAX_RECORD + 1, b""  # a byte more than any game
    if kind == 2:
        return MAX_RECORD, b""  # random bytes, as large as a record may be
    if kind == 3:  # one msgpack bin filling it all
        return MAX_RECORD, b"\xc6" + (MAX_RECORD - 5).to_bytes(4, "big")
    return MAX_RECORD, msgpack.packb(["p2p-nerts record", 1])[:-1] + b"\xdd\xff\xff\xff\xff"


async def _hostile(kind: int, reader: asyncio.StreamReader,
                   writer: asyncio.StreamWriter) -> None:
    """Offers its junk as every one of 64 records, until the asker hangs up."""
    length, start = _junk(kind)
    try:
        await reader.readexactly(4)
        for _ in range(64):
            writer.write(length.to_bytes(4, "big") + start)
            left = min(length, MAX_RECORD) - len(start) if length <= MAX_RECORD else 0
            while left > 0:
                writer.write(CHUNK[:left])
                left -= min(left, len(CHUNK))
                await writer.drain()
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def _honest(data: bytes, reader: asyncio.StreamReader,
                  writer: asyncio.StreamWriter) -> None:
    await reader.readexactly(int.from_bytes(await reader.readexactly(4), "big"))  # the request
    writer.write(len(data).to_bytes(4, "big") + data + bytes(4))
    await writer.drain()
    writer.close()


def test_sixty_four_junk_servers_keep_the_asker_under_100_mb(tmp_path: Path) -> None:
    real = encode(_record())

    async def scenario() -> dict[str, object]:
        servers = [await asyncio.start_server(functools.partial(_hostile, k % 5), "127.0.0.1", 0)
                   for k in range(SERVERS)]
        servers.append(await asyncio.start_server(functools.partial(_honest, real),
                                                  "127.0.0.1", 0))
        ports = [str(s.sockets[0].getsockname()[1]) for s in servers]
        try:
            asker = await asyncio.create_subprocess_exec(
                sys.executable, "-c", ASKER, *ports, stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
            out, _err = await asyncio.wait_for(asker.communicate(), 200)
            assert asker.returncode == 0
            answer: dict[str, object] = json.loads(out)
            return answer
        finally:
            for server in servers:
                server.close()

    answer = asyncio.run(scenario())
    assert answer["games"] == 1  # the honest server's game, counted among the junk
    refused = answer["refused"]
    assert isinstance(refused, list)
    assert len(refused) == SERVERS  # one line each: a server of junk is asked no further
    assert sum("larger than any game's" in reason for _where, reason in refused) == sum(
        1 for k in range(SERVERS) if k % 5 < 2)  # refused unread
    peak = answer["peak_kb"]
    assert isinstance(peak, int) and peak < PEAK_KB, f"peak RSS {peak} kB"
