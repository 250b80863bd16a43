"""Views go only to the peers that draw the other seats' tableaux (``TableConfig.views``),
over real TCP on 127.0.0.1: a bot or a headless seat says as it links that it draws
none, and is sent no VIEW; a seat with a screen, or a spectator, gets every seat's."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable, Iterable

import pytest

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.peer.headless import paced, run_headless
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import LINK_MAGIC, open_link_entry
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import MsgType
from p2p_nerts.protocol.replica import Outbound

from ..netkit import until

pytestmark = pytest.mark.timeout(60)

LOCAL = Endpoint(bind="127.0.0.1")


def count_views(session: NetSession, to: Counter[bytes | None]) -> None:
    """Count, by addressee, the VIEWs ``session`` hands its mesh."""
    send_all = session._mesh.send_all
    me = session.replica.me.public_key

    def counted(sends: Iterable[tuple[bytes, bytes | None]]) -> None:
        sends = list(sends)
        to.update(key for data, key in sends if data[:len(LINK_MAGIC)] == LINK_MAGIC
                  and open_link_entry(data, me).type == MsgType.VIEW)
        send_all(sends)

    session._mesh.send_all = counted  # type: ignore[method-assign]


def seen(session: NetSession) -> set[int]:
    """The seats whose views ``session`` holds for its current round."""
    rnd = session.replica.view().round
    return set(rnd.views) if rnd is not None else set()


def test_views_go_only_to_the_peers_that_draw_them() -> None:
    async def scenario() -> None:
        config = TableConfig(variants=Variants(target=1000), countdown=0.0, auto_start=3,
                             drop_after=3.0)
        host = await NetSession.host(Identity.generate("Tess"), config, LOCAL,
                                     table_name="Lab", interfaces=None)
        screen = await NetSession.join(Identity.generate("Sy"), ("127.0.0.1", host.port),
                                       TableConfig(), LOCAL)
        bot = await NetSession.join(Identity.generate("Bo"), ("127.0.0.1", host.port),
                                    TableConfig(views=False), LOCAL)
        sessions = [host, screen, bot]
        to: dict[str, Counter[bytes | None]] = {}
        for name, session in zip(("host", "screen", "bot"), sessions, strict=True):
            count_views(session, to.setdefault(name, Counter()))
        games = [asyncio.create_task(run_headless(
                     s, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(i)), summary=None,
                     linger=0.1))
                 for i, s in enumerate(sessions)]
        key = {name: s.replica.me.public_key for name, s in zip(to, sessions, strict=True)}
        try:
            # Until the screen has shown both others' tableaux, and the host the bot's.
            await until(lambda: {0, 2} <= seen(screen) and 2 in seen(host)
                        and to["bot"][key["screen"]] >= 3 and to["host"][key["screen"]] >= 3,
                        "views reach the seats with a screen")
        finally:
            for session in sessions:
                session.close()
            await asyncio.gather(*games)
        for name in to:
            assert None not in to[name], f"{name} sent a view to every peer"
            assert to[name][key["bot"]] == 0, f"{name} sent the bot a view"
        assert to["screen"][key["host"]] > 0 and to["bot"][key["host"]] > 0
        assert seen(bot) == set()

    asyncio.run(scenario())


def test_a_table_nobody_draws_makes_no_view_until_a_spectator_comes() -> None:
    """Not sent, and not made either (signing a VIEW for nobody was a peer's CPU
    spent every interval); a spectator who comes in the middle of the round is
    sent each seat's tableau as it stands."""
    async def scenario() -> None:
        config = TableConfig(variants=Variants(target=1000), countdown=0.0, auto_start=2,
                             drop_after=3.0, views=False)
        host = await NetSession.host(Identity.generate("Tess"), config, LOCAL,
                                     table_name="Lab", interfaces=None)
        bot = await NetSession.join(Identity.generate("Bo"), ("127.0.0.1", host.port),
                                    TableConfig(views=False), LOCAL)
        sessions = [host, bot]
        made = [0, 0]  # VIEWs each routed
        plays = [0, 0]  # plays each made
        for i, session in enumerate(sessions):
            route = session._route

            def routed(out: Outbound, *, own: bool = False, i: int = i,
                       route: Callable[..., None] = route) -> None:
                made[i] += sum(send.shown for send in out.sends)
                route(out, own=own)

            def played(event: ev.Event, i: int = i) -> None:
                plays[i] += isinstance(event, ev.PlayAdded) and event.mine

            session._route = routed  # type: ignore[method-assign]
            session.subscribe(played)
        games = [asyncio.create_task(run_headless(
                     s, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(i)), summary=None,
                     linger=0.1))
                 for i, s in enumerate(sessions)]
        watcher: NetSession | None = None
        try:
            await until(lambda: min(plays) >= 3, "both seats play")
            assert made == [0, 0]
            watcher = await NetSession.watch(Identity.generate("Wes"),
                                             ("127.0.0.1", host.port), TableConfig(), LOCAL)
            games.append(asyncio.create_task(run_headless(watcher, bot=None, summary=None,
                                                          linger=0.1)))
            await until(lambda: watcher is not None and {0, 1} <= seen(watcher),
                        "the spectator is sent both tableaux")
        finally:
            for session in [*sessions, *([watcher] if watcher else [])]:
                session.close()
            await asyncio.gather(*games)
        assert min(made) > 0

    asyncio.run(scenario())
