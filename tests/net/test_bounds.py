"""Admission and bounds over real TCP on 127.0.0.1, with small limits: what a link
without a seat may cost a table."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from p2p_nerts.game.variants import Variants
from p2p_nerts.net.bounds import Limits, LinkBudget, QuietLog, Unseated
from p2p_nerts.net.link import Link, LinkError, Refused, WrongCode, connect, open_link
from p2p_nerts.net.wire import NET_VERSION, Info, decode_peers, is_entry
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Ready, seal_message
from p2p_nerts.protocol.replica import SetReady

from ..netkit import until

pytestmark = pytest.mark.timeout(60)

LOCAL = Endpoint(bind="127.0.0.1")


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


async def table(limits: Limits) -> tuple[NetSession, NetSession]:
    config = TableConfig(variants=Variants(target=1000), countdown=0.0, limits=limits)
    host = await NetSession.host(Identity.generate("Host"), config, LOCAL,
                                 table_name="Bounded", interfaces=None)
    guest = await NetSession.join(Identity.generate("Bo"), ("127.0.0.1", host.port), config,
                                  LOCAL)
    await until(lambda: len(host.replica.view().seats) == 2)
    return host, guest


async def stranger(port: int, who: Identity | None = None) -> Link:
    """An authenticated link with a fresh key (``who``'s) that asks for no seat."""
    who = who or Identity.generate("Mallory")
    return await open_link(await connect("127.0.0.1", port), who,
                           Info(NET_VERSION, None, who.name, 4242), dialer=True)


class Heard:
    """What a link heard: table entries, and the peers frames."""

    def __init__(self, link: Link) -> None:
        self.entries = 0
        self.peers: list[dict[bytes, tuple[str, int]]] = []
        self.task = asyncio.get_running_loop().create_task(link.serve(self._take))

    def _take(self, frames: list[bytes]) -> None:
        for frame in frames:
            if is_entry(frame):
                self.entries += 1
            else:
                self.peers.append(decode_peers(frame))


async def close_all(*sessions: NetSession) -> None:
    for s in sessions:
        await s._mesh.close(flush=0)


def test_a_link_without_a_seat_hears_nothing_is_listed_nowhere_and_goes(
        caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        host, guest = await table(Limits(grace=0.5))
        me = Identity.generate("Mallory")
        heard = Heard(await stranger(host.port, me))
        for _ in range(5):  # the table talks while she listens
            host.act(SetReady(True))
            host.act(SetReady(False))
            await asyncio.sleep(0.02)
        announced = host._mesh._announced or {}
        assert me.public_key in host._mesh.links and me.public_key not in announced
        await asyncio.wait_for(heard.task, 10)  # closed by the host
        assert heard.entries == 0 and heard.peers == []
        assert me.public_key not in host._mesh.links
        assert set(host._mesh._announced or {}) == {guest.replica.me.public_key}
        await close_all(host, guest)

    with caplog.at_level(logging.INFO):
        run(scenario)
    assert any("who had no seat: no seat taken within 0.5 s" in r.getMessage()
               for r in caplog.records)


def test_links_without_a_seat_are_capped_per_address() -> None:
    async def scenario() -> None:
        host, guest = await table(Limits(grace=30.0, unseated_per_address=2, unseated=10))
        keys = [Identity.generate(f"m{i}") for i in range(3)]
        first = [await stranger(host.port, who) for who in keys[:2]]
        with pytest.raises(LinkError):
            await stranger(host.port)  # one too many from 127.0.0.1
        for link in first:
            link.close("done")
        await until(lambda: host._mesh._unseated.total == 0)
        again = await stranger(host.port, keys[2])  # the count went with them
        await until(lambda: keys[2].public_key in host._mesh.links)
        again.close("done")
        await close_all(host, guest)

    run(scenario)


@pytest.mark.parametrize("flooded", ["host", "guest"])
def test_a_link_far_over_its_budget_is_closed_and_the_table_plays_on(
        flooded: str, caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        # A key without a place has the smaller budget, at a guest that knows its
        # table's seats as at the host: the seats, the larger.
        limits = Limits(grace=30.0, unseated_frames_per_second=50, unseated_frame_burst=50,
                        far_over=1.0)
        host, guest = await table(limits)
        target, other = (host, guest) if flooded == "host" else (guest, host)
        running = [asyncio.create_task(s.run()) for s in (host, guest)]  # (ticked: caught up)
        await until(lambda: len(target.replica.view().seated) == 2)  # it knows the seats
        mallory = await stranger(target.port)
        heard = Heard(mallory)
        me = Identity.generate("flood")  # a key that signs, never seen on a link
        frames = [seal_message(me, Ready(True), table_id=host.replica.table_id, round=0,
                               seq=n, lamport=n).raw for n in range(1, 400)]
        mallory.send_all(frames)
        await asyncio.wait_for(heard.task, 10)  # closed by the peer flooded
        # Only the frames within the budget reached the replica, and none was kept.
        assert target.replica.rejected["stranger"] <= limits.unseated_frame_burst + 60
        assert me.public_key not in target.replica.authors
        assert other.replica.me.public_key in target._mesh.links  # the table is still there
        for session in (host, guest):
            session.close()
        await asyncio.gather(*running)

    with caplog.at_level(logging.INFO):
        run(scenario)
    assert any("far over its budget" in r.getMessage() for r in caplog.records)


def test_a_link_budget_drops_then_closes() -> None:
    budget = LinkBudget(Limits(frames_per_second=10, frame_burst=10, far_over=1.0,
                               bytes_per_second=1000, byte_burst=1000))
    assert all(budget.admit(0.0, 10) for _ in range(10))
    assert not budget.admit(0.0, 10) and budget.dropped == 1
    assert not budget.flooding(0.0)
    for _ in range(10):
        budget.admit(0.0, 10)
    assert budget.flooding(0.0)
    bytes_only = LinkBudget(Limits(bytes_per_second=100, byte_burst=100))
    assert bytes_only.admit(0.0, 100) and not bytes_only.admit(0.0, 1)
    unseated = LinkBudget(Limits(frame_burst=100, unseated_frame_burst=5), unseated=True)
    assert sum(unseated.admit(0.0, 10) for _ in range(100)) == 5  # a link without a place


def test_unseated_counts_by_address_and_in_all() -> None:
    unseated = Unseated(Limits(unseated_per_address=2, unseated=3))
    unseated.add("a")
    unseated.add("a")
    assert not unseated.room("a") and unseated.room("b")
    unseated.add("b")
    assert not unseated.room("c")  # three in all
    unseated.remove("a")
    assert unseated.room("a") and unseated.room("c")
    unseated.remove("z")  # never counted: no change
    assert unseated.total == 2


def test_repeated_log_lines_are_rate_limited_with_a_count(
        caplog: pytest.LogCaptureFixture) -> None:
    quiet = QuietLog(logging.getLogger("test.quiet"), interval=10.0, burst=1)
    with caplog.at_level(logging.INFO, logger="test.quiet"):
        for n in range(50):
            quiet.log(n * 0.1, "failed", logging.INFO, "handshake %d failed", n)
        quiet.log(5.0, "other", logging.INFO, "another kind")
        quiet.log(10.5, "failed", logging.INFO, "handshake %d failed", 99)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["handshake 0 failed", "another kind",
                     "handshake 99 failed (and 49 more like it since the last one logged)"]
    burst = QuietLog(logging.getLogger("test.quiet"), interval=10.0, burst=3)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="test.quiet"):
        for n in range(10):
            burst.log(0.0, "joined", logging.INFO, "joined %d", n)
    assert [r.getMessage() for r in caplog.records] == ["joined 0", "joined 1", "joined 2"]


def test_parallel_code_guesses_from_one_address_are_judged_one_at_a_time() -> None:
    """Many exchanges at once from one address: they take turns, so the guard counts
    each failure before the next is judged: 5, then the address waits."""
    async def scenario() -> None:
        config = TableConfig(code="pink otter", limits=Limits(unseated_per_address=32))
        host = await NetSession.host(Identity.generate("Host"), config, LOCAL,
                                     table_name="Coded", interfaces=None)

        async def guess(n: int) -> str:
            who = Identity.generate(f"g{n}")
            try:
                await open_link(await connect("127.0.0.1", host.port), who,
                                Info(NET_VERSION, None, who.name, 0), dialer=True,
                                code=f"{n:04d}", joining=True)
            except WrongCode:
                return "judged"
            except Refused as exc:
                assert "try again in 30 s" in str(exc), exc
                return "refused"
            return "in"

        results = await asyncio.gather(*(guess(n) for n in range(20)))
        assert results.count("judged") == 5 and results.count("refused") == 15, results
        assert host._mesh._code_turns == {}  # nothing kept once they are gone
        await close_all(host)

    run(scenario)
