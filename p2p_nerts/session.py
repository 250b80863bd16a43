"""Sessions: the one small interface between a table and whoever plays at it.

A UI, a headless runner or a test sees a :class:`Session`: it reads state
through ``session.replica.view()``, sends commands with :meth:`Session.act`,
and hears events through :meth:`Session.subscribe`. Whether the other seats are bots in
this process (:class:`LocalTable`) or peers across the network
(``net.node.NetSession``) is invisible to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import os
import random
import time
from collections.abc import Callable
from typing import Protocol

from .game.bot import SKILLS, Bot
from .game.variants import Variants
from .protocol.botdriver import BotDriver
from .protocol.events import Event, GameOver, Notice
from .protocol.identity import Identity
from .protocol.journal import Kind, Record
from .protocol.messages import MAX_DROP_AFTER_MS
from .protocol.replica import Command, Open, Outbound, Replica
from .store import SOLO, Store, StoreError

Listener = Callable[[Event], None]

PUMP_INTERVAL = 0.02  # how often a local table runs ticks and bots (seconds)


class Session(Protocol):
    """What a player's front end needs from a table."""

    @property
    def replica(self) -> Replica: ...

    @property
    def networked(self) -> bool:
        """Whether other seats are across a network (and so may fall silent)."""
        ...

    @property
    def address(self) -> str | None:
        """Where players join the table ("host:port"), if this seat hosts it on a network."""
        ...

    def act(self, command: Command) -> None:
        """Run a replica command now; raises IllegalMove or CommandError, changing nothing."""
        ...

    def subscribe(self, listener: Listener) -> None: ...

    async def run(self) -> None:
        """Keep the table alive until :meth:`close`."""
        ...

    def close(self) -> None: ...


BOT_NAMES = ("Ada", "Bix", "Cleo", "Dov", "Eun", "Fenna", "Gus", "Hal")


def bot_names(player: str, count: int) -> tuple[str, ...]:
    """Names for ``count`` computer players beside ``player``: none named like them
    (two seats of one name would be one name on the screen and in the log)."""
    return tuple(n for n in BOT_NAMES if n.casefold() != player.casefold())[:count]


class LocalTable:
    """A solo table: the player's replica and bot replicas, wired in memory.

    No sockets at all, so solo play works with no network. The bots are full
    replicas talking the real protocol (signed entries, commit–reveal, audit),
    which keeps solo play and network play one code path. ``bots`` is the
    number of bot seats; under share-a-deck two bots play at each, and one
    plays the player's tableau with them.
    """

    def __init__(self, player: Identity, *, bots: int = 2, skill: str = "medium",
                 variants: Variants | None = None, seed: int | None = None,
                 countdown: float = 3.0, clock: Callable[[], float] = time.monotonic,
                 delay: tuple[float, float] = (0.0, 0.0), store: Store | None = None) -> None:
        """``delay`` (min, max seconds) holds every frame back like a LAN would, so that
        plays are visibly pending and the player's plays can collide with the bots'.
        ``store``: the player's, where the game is kept when it ends or is left."""
        if not 1 <= bots <= 7:
            raise ValueError("a solo table has 1 to 7 bots")
        if skill not in SKILLS:
            raise ValueError(f"unknown skill {skill!r}: choose from {', '.join(SKILLS)}")
        rng = random.Random(seed)
        self._clock = clock
        table_id = rng.randbytes(16)
        ids = [player] + [Identity.from_seed(rng.randbytes(32), name)
                          for name in bot_names(player.name, bots)]
        self._replicas = [
            Replica(ident, table_id, player.public_key, variants=variants,
                    rng=rng.randbytes if seed is not None else os.urandom,
                    # In-process seats never fall silent, but a terminal
                    # suspended a while (Ctrl-Z) must not have them all voting
                    # one another out when it comes back: the longest allowed.
                    countdown=countdown, drop_after=MAX_DROP_AFTER_MS / 1000)
            for ident in ids
        ]
        lone_rotate = (variants or Variants()).lone_rotate
        #: (replica index, driver): a bot at each bot's seat; under share-a-deck a
        #: second one there, and one beside the player (their own generator, so
        #: that a seed deals the same cards whatever the teams).
        self._drivers = [
            (i, BotDriver(r, Bot(SKILLS[skill], random.Random(rng.random()),
                                 lone_rotate=lone_rotate)))
            for i, r in enumerate(self._replicas) if i
        ]
        partners = random.Random(None if seed is None else f"partners {seed}")
        # The player's partner is named (its moves are news on their screen) after
        # the bots, as one more of them.
        partner = (*bot_names(player.name, bots + 1), "Your partner")[bots]
        self._drivers += [
            (i, BotDriver(r, Bot(SKILLS[skill], random.Random(partners.random()),
                                 lone_rotate=lone_rotate), partner=True,
                          name=None if i else partner))
            for i, r in enumerate(self._replicas)
        ]
        self._index = {r.me.public_key: i for i, r in enumerate(self._replicas)}
        if not 0.0 <= delay[0] <= delay[1] <= 5.0:
            raise ValueError("delay must be 0 <= min <= max <= 5 seconds")
        self._delay = delay
        self._delay_rng = random.Random(rng.random())
        # (due, order, target, sender, frame)
        self._queue: list[tuple[float, int, int, int, bytes]] = []
        self._order = 0
        self._listeners: list[Listener] = []
        self._closed = asyncio.Event()
        self._store = store
        #: The player's seat's journal (only kept, never written): the history's
        #: record is made from it, as the replica forgets finished rounds.
        self._journal: list[Record] = []
        now = self._clock()
        for i, r in enumerate(self._replicas):
            # One at a time, so the bots sit down in the order of their names;
            # everyone is seated before the table is handed over.
            self._route(i, r.handle(Open(), now))
            self._pump(everything=True)
        for i, driver in self._drivers:
            self._route(i, driver.step(now))  # the bots say they are ready
        self._pump(everything=True)
        self._replicas[0].seating.auto_start = None

    @property
    def replica(self) -> Replica:
        return self._replicas[0]

    @property
    def networked(self) -> bool:
        return False  # every seat is in this process: none falls silent

    @property
    def address(self) -> str | None:
        return None  # nobody joins a solo table

    def act(self, command: Command) -> None:
        self._route(0, self._replicas[0].handle(command, self._clock()))
        self._route(0, self._replicas[0].apply_own(self._clock()))
        self._pump()

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    async def run(self) -> None:
        while not self._closed.is_set():
            self.step()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closed.wait(), PUMP_INTERVAL)

    def step(self) -> None:
        """One beat of the table: ticks, bot moves, deliveries."""
        now = self._clock()
        for i, r in enumerate(self._replicas):
            self._route(i, r.tick(now))
        for i, driver in self._drivers:
            if driver.next_at is None or driver.next_at <= now:
                self._route(i, driver.step(now))
                self._route(i, self._replicas[i].apply_own(now))
        self._pump()

    def close(self) -> None:
        if not self._closed.is_set():
            self._keep()  # finished or given up: kept like a networked seat's game
        self._closed.set()

    def _keep(self) -> None:
        if self._store is None:
            return
        from .records.history import keep  # here: records reads its summaries through net

        try:
            keep(self._store, self.replica, f"{self.replica.me.name}'s solo table",
                 time.time(), flags=(SOLO,), journal=self._journal)
        except StoreError as exc:
            for listener in self._listeners:
                listener(Notice(f"Cannot keep the game in your history: {exc}"))

    def _route(self, sender: int, out: Outbound) -> None:
        if sender == 0:
            self._journal += (r for r in out.journal if r.kind is Kind.ENTRY)
            for event in out.events:
                for listener in self._listeners:
                    listener(event)
                if isinstance(event, GameOver):
                    self._keep()
        now = self._clock()
        for send in out.sends:
            if send.to is not None:
                targets = [self._index[send.to]] if send.to in self._index else []
            else:
                targets = [t for t in range(len(self._replicas)) if t != sender
                           and send.reaches(self._replicas[t].me.public_key)]
            for target in targets:
                low, high = self._delay
                due = now + low + (high - low) * self._delay_rng.random()
                self._order += 1
                heapq.heappush(self._queue, (due, self._order, target, sender, send.data))

    def _pump(self, *, everything: bool = False) -> None:
        """Deliver every frame that is due (all of them when there is no delay)."""
        while self._queue and (everything or self._queue[0][0] <= self._clock()):
            _due, _order, target, sender, data = heapq.heappop(self._queue)
            via = self._replicas[sender].me.public_key  # the in-process "link"
            self._route(target, self._replicas[target].receive(data, self._clock(), via))
