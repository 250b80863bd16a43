"""``peer.announce``: what a host's mDNS ad says of its table, and when it says it again.

The tables are replicas on the in-memory network and the advertiser is a fake
that keeps what it is told, so these tests open no socket.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any

import pytest

from p2p_nerts.game.variants import Variants
from p2p_nerts.net.discovery import TableAd, TableAdvertiser
from p2p_nerts.net.interfaces import Interfaces
from p2p_nerts.net.wire import NET_VERSION
from p2p_nerts.peer.announce import AdFacts, TableAnnouncer
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase, Replica
from p2p_nerts.testing.memnet import TABLE_ID, MemNet, bot_table

from ..netkit import until
from ..replica_harness import ask_for_seat, play_round, quiet_deal

pytestmark = pytest.mark.timeout(60)

RULES = Variants().summary()
A_TICK = 0.05
"""Seconds the keeping of an ad is given to act on a change (one of the session's ticks)."""


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


class Recording(TableAdvertiser):
    """Publishes nothing: keeps the ad it was given, each update and its close."""

    failing_updates = 0  # how many of the first updates fail
    failing_close = False

    def __init__(self, ad: TableAd, interfaces: Interfaces) -> None:
        super().__init__(ad, interfaces)
        self.first = ad
        self.updates: list[dict[str, Any]] = []
        self.closed = False

    async def start(self) -> TableAd:
        return replace(self.first, instance="Test table #1", addresses=("127.0.0.1",))

    async def update(self, **changes: Any) -> TableAd:
        self.updates.append(changes)
        if len(self.updates) <= self.failing_updates:
            raise OSError("the mDNS socket is gone")
        return self.first

    async def close(self) -> None:
        self.closed = True
        if self.failing_close:
            raise OSError("the mDNS socket is gone")


async def announced(host: Replica, net: MemNet,
                    kind: type[Recording] = Recording) -> tuple[TableAnnouncer, Recording]:
    """``host``'s table announced, on the in-memory network's clock; and its advertiser."""
    made: list[Recording] = []

    def advertiser(ad: TableAd, interfaces: Interfaces) -> TableAdvertiser:
        made.append(kind(ad, interfaces))
        return made[-1]

    announcer = TableAnnouncer(lambda: net.now, advertiser=advertiser)
    await announcer.start(host, ["127.0.0.1"], name="Test table", fingerprint="0123456789abcdef",
                          host="p0", needs_code=True, port=4000)
    return announcer, made[0]


def seat_newcomer(net: MemNet, number: int) -> None:
    """A newcomer asks the host for a seat, and is given one (the host's roster grows)."""
    host = net.replicas[0]
    newcomer = Replica(Identity.from_seed(bytes([0x70 + number]) * 32, f"new{number}"),
                       TABLE_ID, host.me.public_key)
    seats = len(host.view().seats)
    net.output(0, ask_for_seat(newcomer, host, net.now))
    assert len(host.view().seats) == seats + 1


def test_the_ad_says_how_many_sit_and_where_the_game_is() -> None:
    net = bot_table(2, seed=3)
    host = net.replicas[0]
    host.seating.auto_next = 30.0
    assert AdFacts.of(host) == AdFacts(2, RULES, "lobby", None)
    play_round(net)
    assert host.phase is Phase.BETWEEN and host.seating.next_round_at is not None
    assert AdFacts.of(host) == AdFacts(2, RULES, "break", host.seating.next_round_at)
    dealt = quiet_deal(3, seed=4).replicas[0]
    assert dealt.phase is Phase.PLAYING
    assert AdFacts.of(dealt) == AdFacts(3, RULES, "playing", None)


def test_the_first_ad_describes_the_table_and_its_next_deal_in_unix_time() -> None:
    net = bot_table(2, seed=5)
    host = net.replicas[0]
    host.seating.auto_next = 30.0
    play_round(net)
    assert host.seating.next_round_at is not None
    wait = host.seating.next_round_at - net.now

    async def scenario() -> None:
        announcer, advertiser = await announced(host, net)
        ad = advertiser.first
        assert (ad.name, ad.host, ad.fingerprint, ad.port, ad.needs_code) == (
            "Test table", "p0", "0123456789abcdef", 4000, True)
        assert ad.protocol_version == NET_VERSION
        assert (ad.seats_taken, ad.seats_total, ad.variant, ad.state) == (2, 8, RULES, "break")
        assert ad.next_deal is not None and abs(ad.next_deal - (time.time() + wait)) <= 1
        await announcer.close()
        assert advertiser.closed

    run(scenario)


def test_an_unchanged_table_is_not_announced_again_and_a_new_seat_is() -> None:
    net = bot_table(2, seed=6)

    async def scenario() -> None:
        announcer, advertiser = await announced(net.replicas[0], net)
        for _ in range(3):
            announcer.check()
            await asyncio.sleep(A_TICK)
        assert advertiser.updates == []
        seat_newcomer(net, 1)
        announcer.check()
        await until(lambda: advertiser.updates != [], "the new seat announced")
        assert advertiser.updates == [
            {"seats_taken": 3, "variant": RULES, "state": "lobby", "next_deal": None}]
        announcer.check()  # the ad says it now
        await asyncio.sleep(A_TICK)
        assert len(advertiser.updates) == 1
        await announcer.close()

    run(scenario)


def test_a_failed_update_or_close_is_logged_and_the_table_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    class Failing(Recording):
        failing_updates = 1
        failing_close = True

    net = bot_table(2, seed=7)

    async def scenario() -> None:
        announcer, advertiser = await announced(net.replicas[0], net, Failing)
        seat_newcomer(net, 1)
        announcer.changed()
        await until(lambda: len(advertiser.updates) == 1, "the first update tried")
        seat_newcomer(net, 2)
        announcer.check()
        await until(lambda: len(advertiser.updates) == 2, "the next change announced")
        assert advertiser.updates[-1]["seats_taken"] == 4
        await announcer.close()
        assert advertiser.closed

    with caplog.at_level(logging.ERROR, logger="p2p_nerts.peer.announce"):
        run(scenario)
    failures = [r.getMessage() for r in caplog.records if r.name == "p2p_nerts.peer.announce"]
    assert failures == ["updating the table's mDNS record failed",
                        "withdrawing the table's mDNS record failed"]


def test_the_next_deal_is_announced_between_rounds_only() -> None:
    """A deal time the seating still holds says nothing in the lobby or mid-round."""
    lobby = bot_table(2, seed=8).replicas[0]
    dealt = quiet_deal(3, seed=9).replicas[0]
    for host, phase in ((lobby, Phase.LOBBY), (dealt, Phase.PLAYING)):
        host.seating.next_round_at = 99.0
        assert host.phase is phase and AdFacts.of(host).next_at is None
    lobby.game.enter(Phase.BETWEEN)
    assert AdFacts.of(lobby).next_at == 99.0
