"""A hostile client against a table of three honest peers: they neither crash nor stall.

The honest peers are NetSessions in this process (so the test can time each
play), bots playing over real TCP on 127.0.0.1. While they play, Mallory
connects to each of them and sends, at once:

* garbage bytes instead of an info frame, and a frame header declaring 4 GB;
* a slow frame: an info frame and the start of another, one byte every 5 ms;
* over a properly opened (authenticated) connection: replays of real entries
  it received, the same entries with a forged signature or author, a flood of
  validly signed entries from a key with no seat, ACKs claiming huge sequence
  numbers for the honest authors, and entries from a hundred fresh keys.

The flood is bounded (a few thousand frames) and stops by itself. Every honest
play made while it lasts must still become final, short of ``STALL`` (how long
it takes under attack is a figure for ``scripts/hostile.py``, not for a test),
the game must end the same everywhere, and the rejections must be counted.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any

import pytest

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.net.bounds import Limits
from p2p_nerts.net.framing import encode_frame
from p2p_nerts.net.link import Link, connect, open_link
from p2p_nerts.net.wire import NET_VERSION, Info, encode_info, is_entry
from p2p_nerts.peer.headless import paced, run_headless
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import GENESIS
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Ack, AckMark, Payload, Play, Roster, Seat, seal_message
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.testing.peers import shared_lines

from ..netkit import until

pytestmark = pytest.mark.timeout(90)

LOCAL = Endpoint(bind="127.0.0.1")
#: Seconds from an honest PLAY to its PlayFinal that would mean a stall: far above any
#: figure seen, so that a busy machine cannot reach it, yet short of a whole round.
STALL = 10.0
FLOOD = 1000  # validly signed entries from Mallory's unseated key, to each peer
FRESH_KEYS = 100
DRIP = 0.005  # seconds between the bytes of the slow frame
SIG = slice(34, 98)  # the signature inside an entry frame


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


class Finality:
    """When each of a peer's own plays was made, and how long it took to become final."""

    def __init__(self) -> None:
        self.made: dict[object, float] = {}
        self.samples: list[tuple[float, float]] = []  # (made at, seconds to final)

    def __call__(self, event: ev.Event) -> None:
        now = time.monotonic()
        if isinstance(event, ev.PlayAdded) and event.mine:
            self.made[event.play.key] = now
        elif isinstance(event, ev.PlayFinal) and event.mine:
            made = self.made.pop(event.play.key, None)
            if made is not None:
                self.samples.append((made, now - made))


class Mallory:
    """The hostile client: raw sockets for the junk, authenticated links for the rest."""

    def __init__(self, sessions: list[NetSession]) -> None:
        self.sessions = sessions
        self.me = Identity.generate("Mallory")
        self.table_id = sessions[0].replica.table_id
        self.honest = [s.replica.me.public_key for s in sessions]
        self.captured: list[bytes] = []
        self.heard = 0  # table entries that reached Mallory: none should
        self.sent: Counter[str] = Counter()
        self.heads: dict[bytes, bytes] = {}  # the last entry signed by each key

    async def attack(self) -> None:
        links = [await self._open(s.port) for s in self.sessions]
        readers = [asyncio.create_task(self._capture(link)) for link in links]
        # A link without a seat hears nothing of the table: real entries to replay
        # and forge come from one that has (as a seated accomplice would pass them on).
        for log in self.sessions[0].replica.authors.values():
            self.captured += list(log.entries.values())[:100]
        try:
            await asyncio.gather(*(self._junk(s.port) for s in self.sessions),
                                 *(self._drip(s.port) for s in self.sessions),
                                 self._flood(links))
        finally:
            for task in readers:
                task.cancel()
            for link in links:
                link.close("done")

    # ------------------------------------------------------------ raw junk
    async def _junk(self, port: int) -> None:
        for junk in (os.urandom(4096), b"\xff\xff\xff\xff" + bytes(64)):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(junk)
            self.sent["junk"] += 1
            async with asyncio.timeout(6):  # the peer hangs up on it
                while await reader.read(4096):
                    pass
            writer.close()

    async def _drip(self, port: int) -> None:
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        info = encode_frame(encode_info(Info(NET_VERSION, self.table_id, "slow", 0)))
        for byte in info + encode_frame(bytes(200))[:150]:
            if writer.is_closing():
                break
            writer.write(bytes([byte]))
            self.sent["dripped bytes"] += 1
            await asyncio.sleep(DRIP)
        writer.close()

    # ------------------------------------------------------------ over a real link
    async def _open(self, port: int) -> Link:
        return await open_link(await connect("127.0.0.1", port), self.me,
                               Info(NET_VERSION, self.table_id, "M", 0), dialer=True)

    async def _capture(self, link: Link) -> None:
        def take(frames: list[bytes]) -> None:
            self.heard += sum(1 for frame in frames if is_entry(frame))

        await link.serve(take)

    async def _flood(self, links: list[Link]) -> None:
        rs = self.sessions[0].replica.rs
        round_no = rs.number if rs is not None else 0
        real = list(self.captured)
        batches: list[tuple[str, list[bytes]]] = [
            ("replayed", real),
            ("forged signature", [f[:40] + bytes([f[40] ^ 1]) + f[41:] for f in real]),
            ("forged author", [f[:2] + self.honest[i % 3] + f[34:]
                               for i, f in enumerate(real) if f[2:34] != self.honest[i % 3]]),
            ("unseated", [self._sign(self.me, Play(card=1 + i % 13, pile=1, src=0, decl=0, mv=i),
                                     round_no, seq=i + 1, lamport=i + 1)
                          for i in range(FLOOD)]),
            ("roster", [self._sign(self.me, Roster((Seat(self.me.public_key, "Mallory"),)),
                                   round_no, seq=FLOOD + 1, lamport=FLOOD + 1)]),
            ("inflated acks", [self._sign(self.me, Ack(tuple(AckMark(k, 10**6) for k in
                                                             sorted(self.honest))),
                                          round_no, seq=FLOOD + 1, lamport=FLOOD + 2)]),
            ("fresh keys", [self._sign(Identity.generate(f"k{i}"),
                                       Play(card=2, pile=1, src=0, decl=0, mv=0),
                                       round_no, seq=1, lamport=1)
                            for i in range(FRESH_KEYS)]),
        ]
        for kind, frames in batches:
            for start in range(0, len(frames), 50):
                for link in links:
                    for frame in frames[start:start + 50]:
                        link.send(frame)
                self.sent[kind] += len(frames[start:start + 50]) * len(links)
                await asyncio.sleep(0.01)

    def _sign(self, who: Identity, payload: Payload, round_no: int, *, seq: int,
              lamport: int) -> bytes:
        """Signed and chained like an honest client's entries (each names the one
        before), so that they go all the way into the replicas before refusal."""
        key = who.public_key
        entry = seal_message(who, payload, table_id=self.table_id, round=round_no, seq=seq,
                             lamport=lamport, prev=self.heads.get(key, GENESIS))
        self.heads[key] = entry.signature
        return entry.raw


@pytest.mark.slow
def test_a_hostile_client_neither_crashes_nor_stalls_the_honest_peers() -> None:
    async def scenario() -> None:
        # Mallory's links are closed once the grace for taking a seat is over: she
        # floods within it.
        config = TableConfig(variants=Variants(target=40), countdown=0.0, drop_after=3.0,
                             auto_next=0.2, limits=Limits(grace=30.0))
        host = await NetSession.host(Identity.generate("Host"),
                                     replace(config, auto_start=3),
                                     LOCAL, table_name="Honest table", interfaces=None)
        guests = [await NetSession.join(Identity.generate(name), ("127.0.0.1", host.port),
                                        config, LOCAL) for name in ("Bo", "Cy")]
        sessions = [host, *guests]
        finality = [Finality() for _ in sessions]
        for session, watch in zip(sessions, finality, strict=True):
            session.subscribe(watch)
        outs = [io.StringIO() for _ in sessions]
        games = [asyncio.create_task(run_headless(
            s, bot=Bot(paced(SKILLS["hard"], 0.1), random.Random(i)), summary=out, linger=0.5))
            for i, (s, out) in enumerate(zip(sessions, outs, strict=True))]
        await until(lambda: host.replica.phase is Phase.PLAYING
                    and sum(len(f.samples) for f in finality) >= 3, timeout=20)

        mallory = Mallory(sessions)
        began = time.monotonic()
        await asyncio.wait_for(mallory.attack(), 20)
        ended = time.monotonic()
        assert not any(game.done() for game in games), "an honest peer stopped"
        assert mallory.sent["unseated"] == 3 * FLOOD and mallory.sent["replayed"] > 30

        codes = await asyncio.wait_for(asyncio.gather(*games), 60)
        assert codes == [0, 0, 0]
        during = [took for f in finality for made, took in f.samples if began <= made <= ended]
        assert len(during) >= 10, "the honest peers kept playing"
        assert max(during) < STALL, sorted(during)[-5:]
        summaries = [[json.loads(x) for x in out.getvalue().splitlines()] for out in outs]
        assert summaries[0][-1]["game_over"]
        for other in summaries[1:]:
            assert shared_lines(other) == shared_lines(summaries[0])
        rejected = sum((s.replica.rejected for s in sessions), Counter())
        assert rejected["bad_signature"] >= 30 and rejected["duplicate"] >= 30, rejected
        # Each flooded entry is refused: from a key without a place at the table.
        assert rejected["stranger"] >= FLOOD, rejected
        assert mallory.heard == 0, "a link without a seat heard the table"

    run(scenario)


def test_one_entry_from_far_in_the_future_does_not_stop_the_table() -> None:
    async def scenario() -> None:
        config = TableConfig(variants=Variants(target=15), countdown=0.0, auto_next=0.2)
        host = await NetSession.host(Identity.generate("Host"), replace(config, auto_start=2),
                                     LOCAL, table_name="Honest table", interfaces=None)
        guest = await NetSession.join(Identity.generate("Bo"), ("127.0.0.1", host.port),
                                      config, LOCAL)
        games = [asyncio.create_task(run_headless(
            s, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(i)), summary=None,
            linger=0.2)) for i, s in enumerate((host, guest))]
        await until(lambda: host.replica.phase is Phase.PLAYING, timeout=20)
        mallory = Mallory([host, guest])
        link = await mallory._open(host.port)
        link.send(mallory._sign(mallory.me, Ack(()), 1, seq=1, lamport=2**53 - 2))
        assert await asyncio.wait_for(asyncio.gather(*games), 60) == [0, 0]

    run(scenario)
