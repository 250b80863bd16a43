"""``nerts solo --loopback``: a solo game over real sockets on 127.0.0.1.

The default solo table (``session.LocalTable``) wires its replicas in memory,
which needs no network at all and lets ``--seed`` fix the deals. This one is
the network game on one machine: the player hosts a table on loopback that is
advertised nowhere (no mDNS), and each computer player joins it as a peer of
its own, with its own key, listening port, handshakes, links and heartbeats.
They all run in this process, in one event loop; nothing leaves 127.0.0.1.
With the player's store, the game is kept in their history as the in-process
table keeps it, flagged solo (nobody else sat at it: no event standings count
it); the computer players keep nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace

from ..game.variants import Variants
from ..net.link import LinkError
from ..net.logs import speaking_as
from ..protocol.identity import Identity
from ..protocol.messages import MAX_DROP_AFTER_MS
from ..protocol.replica import COUNTDOWN
from ..records.history import keep
from ..session import bot_names
from ..store import SOLO, Store, StoreError
from .headless import drive_bot, drive_partner, table_bot
from .node import Endpoint, NetSession, TableConfig

_log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
SEAT_WAIT = 10.0
"""Seconds a computer player may take to be seated before the table gives up."""


@dataclass(frozen=True, slots=True)
class LoopbackTable:
    """The player's seat (the host) and the computer players' own sessions."""

    session: NetSession
    bots: tuple[NetSession, ...]


@contextlib.asynccontextmanager
async def loopback_table(identity: Identity, *, bots: int, skill: str, variants: Variants,
                         countdown: float = COUNTDOWN, pace: float = 1.0,
                         store: Store | None = None,
                         clock: Callable[[], float] = time.monotonic
                         ) -> AsyncIterator[LoopbackTable]:
    """Host a table on 127.0.0.1 and seat ``bots`` computer players at it, in name order
    (``pace`` multiplies their think times: 0.05 makes test games fast).

    The player's session is the caller's to run (the screen does, as for any
    table); the bots' sessions run here. On the way out every session is
    closed, every bot has stopped and the game is kept in ``store``, finished
    or given up, once all it holds is in. As at the in-process table, a seat may
    be silent as long as the protocol allows: all seats share this process,
    so a terminal suspended a while (Ctrl-Z) must not have them voting one
    another out when it comes back.
    """
    config = TableConfig(variants=variants, countdown=countdown,
                         drop_after=MAX_DROP_AFTER_MS / 1000, max_seats=1 + bots)
    host = await NetSession.host(identity, config, Endpoint(LOOPBACK), interfaces=None,
                                 table_name=f"{identity.name}'s solo table",
                                 keep_entries=store is not None, clock=clock)
    host.networked = False  # every seat is in this process: none falls silent alone
    bots_config = replace(config, views=False)  # only the player's screen draws the others
    guests: list[NetSession] = []
    runs: list[asyncio.Task[None]] = []
    drivers: list[asyncio.Task[None]] = []
    handed_over = False
    try:
        for name in bot_names(identity.name, bots):
            voice = speaking_as(name)  # its connections and timers log under its name
            guest = await asyncio.create_task(
                NetSession.join(Identity.generate(name), (LOOPBACK, host.port), bots_config,
                                Endpoint(LOOPBACK), clock=clock), context=voice)
            guests.append(guest)
            runs.append(asyncio.create_task(guest.run(), context=voice))
            drivers.append(asyncio.create_task(
                drive_bot(guest, table_bot(skill, pace=pace), clock), context=voice))
            await _seated(guest)  # one at a time: the seats go in name order
        if variants.teams == "share":
            drivers.append(asyncio.create_task(
                drive_partner(host, table_bot(skill, pace=pace), clock)))
        handed_over = True
        yield LoopbackTable(host, tuple(guests))
    finally:
        for session in (host, *guests):
            session.close()
        for task in drivers:
            task.cancel()
        if not handed_over:
            await host.run()  # it never ran: closed, this only shuts it down
        await asyncio.gather(*runs, *drivers, return_exceptions=True)
        if store is not None and handed_over:
            _keep(store, host)


def _keep(store: Store, host: NetSession) -> None:
    try:
        keep(store, host.replica, host.table_name, time.time(), flags=(SOLO,),
             journal=host.entries or ())
    except StoreError as exc:
        _log.error("cannot keep the game in the history: %s", exc)


async def _seated(guest: NetSession) -> None:
    try:
        async with asyncio.timeout(SEAT_WAIT):
            while guest.replica.view().my_seat is None:
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise LinkError(f"{guest.replica.me.name} could not sit down at the table "
                        f"on {LOOPBACK}") from None
