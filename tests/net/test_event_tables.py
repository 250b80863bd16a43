"""Tables seated by an event: only the listed players sit, and the table deals itself.

Real sessions on 127.0.0.1 (no mDNS).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase

from ..netkit import until

pytestmark = pytest.mark.timeout(60)

LOCAL = Endpoint("127.0.0.1")


def seating(*players: Identity, turn_up: float = 3600.0) -> TableConfig:
    keys = tuple(p.public_key for p in players)
    return TableConfig(countdown=0.0, seat_only=keys, auto_start=len(keys), auto_next=600.0,
                       turn_up=turn_up)


def refusals(session: NetSession) -> list[str]:
    told: list[str] = []
    session.subscribe(lambda e: told.append(e.reason) if isinstance(e, ev.Refused) else None)
    return told


def test_a_seated_table_turns_away_who_is_not_listed_lets_spectators_watch_and_deals_once_all_sit(
        ) -> None:
    async def scenario() -> None:
        ana, ben, cy, eve = (Identity.generate(n) for n in ("Ana", "Ben", "Cy", "Eve"))
        host = await NetSession.host(ana, seating(ana, ben, cy), LOCAL,
                                     table_name="Game 1 · table A", interfaces=None)
        runners = [asyncio.create_task(host.run())]
        address = ("127.0.0.1", host.port)
        intruder = await NetSession.join(eve, address, TableConfig(), LOCAL)
        told = refusals(intruder)
        runners.append(asyncio.create_task(intruder.run()))
        await until(lambda: bool(told), "the host to turn Eve away")
        assert told[0] == "this table is seated by an event, and you are not on its list"
        watcher = await NetSession.watch(Identity.generate("Dee"), address, TableConfig(),
                                         LOCAL)
        runners.append(asyncio.create_task(watcher.run()))
        ben_s = await NetSession.join(ben, address, TableConfig(), LOCAL)
        runners.append(asyncio.create_task(ben_s.run()))
        await until(lambda: ben.public_key in host.view.seated, "Ben's seat")
        assert host.replica.phase is Phase.LOBBY  # Cy is still to come
        cy_s = await NetSession.join(cy, address, TableConfig(), LOCAL)
        runners.append(asyncio.create_task(cy_s.run()))
        await until(lambda: host.replica.phase is not Phase.LOBBY, "the deal")
        assert host.view.seated == {ana.public_key, ben.public_key, cy.public_key}
        await until(lambda: watcher.replica.phase is not Phase.LOBBY, "the spectator to see it")
        assert eve.public_key not in host.view.seated
        for s in (cy_s, ben_s, watcher, intruder, host):
            s.close()
        await asyncio.gather(*runners)

    asyncio.run(scenario())


def test_after_its_turn_up_time_a_table_deals_with_those_present_and_the_no_show_is_left_out(
        ) -> None:
    async def scenario() -> None:
        ana, ben, cy = (Identity.generate(n) for n in ("Ana", "Ben", "Cy"))
        host = await NetSession.host(ana, seating(ana, ben, cy, turn_up=0.5), LOCAL,
                                     table_name="Game 1 · table B", interfaces=None)
        runners = [asyncio.create_task(host.run())]
        address = ("127.0.0.1", host.port)
        ben_s = await NetSession.join(ben, address, TableConfig(), LOCAL)
        runners.append(asyncio.create_task(ben_s.run()))
        await until(lambda: host.replica.phase is not Phase.LOBBY, "the deal without Cy")
        assert host.view.seated == {ana.public_key, ben.public_key}
        late = await NetSession.join(cy, address, TableConfig(), LOCAL)
        told = refusals(late)
        runners.append(asyncio.create_task(late.run()))
        await until(lambda: bool(told), "the host to turn the latecomer away")
        assert cy.public_key not in host.view.seated and not host.replica.seating.waiting
        for s in (late, ben_s, host):
            s.close()
        await asyncio.gather(*runners)

    asyncio.run(scenario())


def test_a_turn_up_time_waits_for_a_second_player() -> None:
    async def scenario() -> None:
        ana, ben = Identity.generate("Ana"), Identity.generate("Ben")
        host = await NetSession.host(ana, seating(ana, ben, Identity.generate("Cy"),
                                                  turn_up=0.0),
                                     LOCAL, table_name="Game 1 · table C", interfaces=None)
        runner = asyncio.create_task(host.run())
        await asyncio.sleep(0.3)  # past its turn-up time, alone: no deal of one
        assert host.replica.phase is Phase.LOBBY
        ben_s = await NetSession.join(ben, ("127.0.0.1", host.port), TableConfig(), LOCAL)
        joined = asyncio.create_task(ben_s.run())
        await until(lambda: host.replica.phase is not Phase.LOBBY, "the deal once Ben sits")
        ben_s.close()
        host.close()
        await asyncio.gather(runner, joined)

    asyncio.run(scenario())


def test_a_stand_in_past_its_turn_up_time_waits_for_more_than_half_the_table() -> None:
    """A stand-in host (``deal_with``: 3 of a table of 4) deals no game that could not
    count: past its turn-up time with two seated it waits, and deals as a third sits."""
    async def scenario() -> None:
        ana, ben, cy, dee = (Identity.generate(n) for n in ("Ana", "Ben", "Cy", "Dee"))
        config = replace(seating(dee, ana, ben, cy, turn_up=0.0), deal_with=3)
        host = await NetSession.host(ana, config, LOCAL, table_name="Game 1 · table D",
                                     interfaces=None)
        runners = [asyncio.create_task(host.run())]
        address = ("127.0.0.1", host.port)
        ben_s = await NetSession.join(ben, address, TableConfig(), LOCAL)
        runners.append(asyncio.create_task(ben_s.run()))
        await until(lambda: ben.public_key in host.view.seated, "Ben's seat")
        await asyncio.sleep(0.3)  # past its turn-up time with two of four: no deal
        assert host.replica.phase is Phase.LOBBY
        cy_s = await NetSession.join(cy, address, TableConfig(), LOCAL)
        runners.append(asyncio.create_task(cy_s.run()))
        await until(lambda: host.replica.phase is not Phase.LOBBY, "the deal once Cy sits")
        assert host.view.seated == {ana.public_key, ben.public_key, cy.public_key}
        for s in (cy_s, ben_s, host):
            s.close()
        await asyncio.gather(*runners)

    asyncio.run(scenario())


def test_a_deal_with_above_the_seats_is_refused() -> None:
    with pytest.raises(ValueError, match=r"a table deals with 2\.\.4 players"):
        TableConfig(max_seats=4, deal_with=5)
