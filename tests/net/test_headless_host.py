"""A headless table's host and its log: what it waits for, when it deals, whom it names.

Real sessions on 127.0.0.1 (no mDNS); bots play fast and are seeded.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import random
import time
from typing import Any

import pytest

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.peer import headless
from p2p_nerts.peer.headless import IDLE_WAIT, deal_when_ready, drive_bot, paced, run_headless
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol.botdriver import BotDriver
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase, SetReady, StartRound

from ..netkit import until

pytestmark = pytest.mark.timeout(60)

LOCAL = Endpoint("127.0.0.1")


def bot(seed: int) -> Bot:
    return Bot(paced(SKILLS["hard"], 0.05), random.Random(seed))


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records]


def test_a_host_without_auto_start_says_what_it_waits_for_and_deals_when_all_are_ready(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The host says what it waits for. Waiting for a guest to be ready, it looks
    when the table tells an event (or every IDLE_WAIT), not four times a second
    on a clock of its own; the guest's word that it is ready is such an event,
    and the host deals."""
    looks = [0]
    look = headless._deal_or_say

    def counted(*args: Any) -> tuple[float | None, str | None]:
        looks[0] += 1
        return look(*args)

    monkeypatch.setattr(headless, "_deal_or_say", counted)

    async def scenario() -> None:
        host = await NetSession.host(Identity.generate("Tess"), TableConfig(countdown=0.0),
                                     LOCAL, table_name="Lab", interfaces=None)
        hosting = asyncio.create_task(run_headless(host, bot=bot(1), summary=None))
        await until(lambda: "waiting for players: this table deals once a player has joined "
                            "and is ready (or use --auto-start N)" in lines(caplog),
                    "the host to say it waits for players")
        gil = await NetSession.join(Identity.generate("Gil"), ("127.0.0.1", host.port),
                                    TableConfig(), LOCAL)
        runner = asyncio.create_task(gil.run())
        await until(lambda: "waiting for Gil to be ready before dealing (or use "
                            "--auto-start N)" in lines(caplog), "the host to name Gil")
        await asyncio.sleep(0.2)  # what Gil's seat made the table tell has been told
        before = looks[0]
        await asyncio.sleep(3.0)
        # Every 0.25 s it looked 12 times; every IDLE_WAIT, 6 (and one per event).
        assert looks[0] - before <= 3.0 / IDLE_WAIT + 2
        assert host.replica.phase is Phase.LOBBY
        gil.act(SetReady(True))
        await until(lambda: host.replica.phase is not Phase.LOBBY, "the deal")
        gil.close()
        host.close()
        await asyncio.gather(hosting, runner)

    with caplog.at_level(logging.INFO):
        asyncio.run(scenario())


def test_a_rounds_line_is_written_when_it_closes_and_peers_are_named_by_player(
        caplog: pytest.LogCaptureFixture) -> None:
    """The round's summary line is there during the break, before the next deal; the
    log names peers by player and key (not the table's name); every game's copies
    of entries are no warning."""
    async def scenario() -> None:
        tess, gil = Identity.generate("Tess"), Identity.generate("Gil")
        config = TableConfig(variants=Variants(target=1000), countdown=0.0, auto_start=2,
                             auto_next=600.0, code="pink otter")
        host = await NetSession.host(tess, config, LOCAL, table_name="Lab", interfaces=None)
        guest = await NetSession.join(gil, ("127.0.0.1", host.port),
                                      TableConfig(code="pink otter"), LOCAL)
        out = io.StringIO()
        players = [asyncio.create_task(run_headless(host, bot=bot(1), summary=None)),
                   asyncio.create_task(run_headless(guest, bot=bot(2), summary=out))]
        await until(lambda: guest.replica.phase is Phase.BETWEEN, "the first round's end",
                    timeout=45)
        await until(lambda: bool(out.getvalue()), "round 1's line")
        first = json.loads(out.getvalue().splitlines()[0])
        assert first["round"] == 1 and first["agreed"] is True
        guest.close()
        host.close()
        await asyncio.gather(*players)
        said = lines(caplog)
        # Before its first ROSTER a guest knows only the table: not "connected to Lab".
        assert f"connected to the host of Lab ({tess.fingerprint})" in said
        for name, key in (("Gil", gil), ("Tess", tess)):  # each side, as the link goes
            assert any(line.startswith(f"disconnected from {name} ({key.fingerprint}): ")
                       for line in said), name
        assert not [r for r in caplog.records
                    if r.levelno >= logging.WARNING and "rejected" in r.getMessage()]

    with caplog.at_level(logging.INFO):
        asyncio.run(scenario())


def test_a_headless_bot_waiting_for_the_deal_sleeps_until_the_table_changes() -> None:
    """Ready and waiting for the host to deal, a bot looks at the table when it tells
    an event (or every IDLE_WAIT), not every IDLE_LOOK: twenty wake-ups a second
    for nothing, at a table between rounds. Told of the deal, it plays."""
    async def scenario() -> None:
        host = await NetSession.host(Identity.generate("Tess"), TableConfig(countdown=0.0),
                                     LOCAL, table_name="Lab", interfaces=None)
        hosting = asyncio.create_task(host.run())
        guest = await NetSession.join(Identity.generate("Gil"), ("127.0.0.1", host.port),
                                      TableConfig(), LOCAL)
        steps = [0]
        step_bot = guest.step_bot

        def counted(driver: BotDriver) -> None:
            steps[0] += 1
            step_bot(driver)

        guest.step_bot = counted  # type: ignore[method-assign]
        playing = asyncio.create_task(run_headless(guest, bot=bot(2), summary=None))
        await until(lambda: host.replica.seating.ready.get(guest.replica.me.public_key, False),
                    "the bot to say it is ready")
        await asyncio.sleep(0.2)  # what its readiness made the table tell has been told
        before = steps[0]
        await asyncio.sleep(3.0)
        # Each look steps the bot and its partner (who plays only under share-a-deck).
        # Looking every IDLE_LOOK, the bot alone would step 60 times; every IDLE_WAIT,
        # each of the two steps 6 times.
        assert steps[0] - before <= 2 * (3.0 / IDLE_WAIT + 3)
        host.act(StartRound())
        await until(lambda: (rnd := guest.replica.view().round) is not None
                    and rnd.tableau is not None and bool(rnd.tableau.log), "the bot's first move")
        guest.close()
        host.close()
        await asyncio.gather(playing, hosting)

    asyncio.run(scenario())


def test_a_host_without_auto_start_rests_between_rounds_then_deals() -> None:
    """After a round, the host rests, then deals again (every guest is ready): its
    looks wait for an event or the rest's end, and the rest is kept."""
    rest = 1.0

    async def scenario() -> None:
        host = await NetSession.host(Identity.generate("Tess"),
                                     TableConfig(countdown=0.0, variants=Variants(target=1000)),
                                     LOCAL, table_name="Lab", interfaces=None)
        news, moved = asyncio.Event(), asyncio.Event()

        def told(_event: object) -> None:
            news.set()
            moved.set()

        host.subscribe(told)
        hosting = asyncio.create_task(host.run())
        tess = asyncio.create_task(drive_bot(host, bot(1), time.monotonic, moved))
        guest = await NetSession.join(Identity.generate("Gil"), ("127.0.0.1", host.port),
                                      TableConfig(), LOCAL)
        gil = asyncio.create_task(run_headless(guest, bot=bot(2), summary=None))
        dealer = asyncio.create_task(deal_when_ready(host, time.monotonic, news, rest))
        await until(lambda: host.replica.phase is Phase.BETWEEN, "the first round's end",
                    timeout=45)
        closed = time.monotonic()
        await until(lambda: host.replica.phase is not Phase.BETWEEN, "the next deal")
        rs = host.replica.rs
        assert rs is not None and rs.number == 2
        assert time.monotonic() - closed >= rest - 0.05  # (its rest began as the round closed)
        guest.close()
        host.close()
        for task in (tess, dealer):
            task.cancel()
        await asyncio.gather(hosting, gil, tess, dealer, return_exceptions=True)

    asyncio.run(scenario())
