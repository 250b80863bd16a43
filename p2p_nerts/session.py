"""Sessions: the one small interface between a table and whoever plays at it.

A UI, a headless runner or a test sees a :class:`Session`: it reads state
through ``session.view``, sends commands with :meth:`Session.act`,
and hears events through :meth:`Session.subscribe`. Whether the other seats are bots in
this process (:class:`LocalTable`) or peers across the network
(``peer.node.NetSession``) is invisible to it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from .game.bot import DEFAULT_SKILL, SKILLS, Bot, paced
from .game.variants import Variants
from .protocol.botdriver import BotDriver
from .protocol.events import (
    Divergence,
    Event,
    GameOver,
    Notice,
    RoundAgreed,
    RoundOver,
    RoundStarting,
)
from .protocol.identity import Identity
from .protocol.journal import Kind, Record, made_by
from .protocol.messages import MAX_DROP_AFTER_MS
from .protocol.replica import Command, Open, Outbound, Phase, Replica, TableView, compacts
from .protocol.wires import Wires
from .records.history import Kept, to_keep
from .records.record import GameRecord, record_of
from .store import SOLO, JournalError, Store, StoreError, TableRecord, seat_journal
from .waits import wait_event

Listener = Callable[[Event], None]

#: The least time between two beats of a local table (seconds), and the time to the
#: next one after a beat in which a seat told of something: every bot looks again.
PUMP_INTERVAL = 0.02
#: The longest a local table sleeps between beats while nothing falls due (seconds):
#: it bounds a change that might come without an event, as IDLE_WAIT does for a
#: headless bot.
QUIET_BEAT = 0.5
SLICE = 0.001  # a local table's beat lets the loop turn once it held it this long (seconds)


class Session(Protocol):
    """What a player's front end needs from a table."""

    @property
    def view(self) -> TableView:
        """The table, read-only, as it stands at each read."""
        ...

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



SOLO_DELAY = (0.02, 0.08)
"""A computer player's pause before each move at a solo table, in seconds (least,
most): quick enough to race, slow enough to see."""


def solo_table(identity: Identity, *, bots: int = 2, skill: str = DEFAULT_SKILL,
               variants: Variants | None = None, seed: int | None = None,
               store: Store | None = None, pace: float = 1.0) -> LocalTable:
    """A table against computer players, as ``nerts solo`` and the lobby deal it
    (``store``: the player's, which journals and keeps the game)."""
    return LocalTable(identity, bots=bots, skill=skill, variants=variants, seed=seed,
                      delay=SOLO_DELAY, store=store, pace=pace)


class History(Protocol):
    """The player's finished games, as the lobby's pages read them: a port, as
    :class:`Session` is a table's, so that the UI reaches no store. Both calls
    raise :data:`HistoryError` with a line for the player when the games cannot
    be read (the player's :class:`~p2p_nerts.store.Store` is one)."""

    def games(self) -> list[tuple[int, dict[str, Any]]]:
        """Every kept game, newest first: its number and its summary."""
        ...

    def game_record(self, number: int) -> bytes | None:
        """Game ``number``'s signed record (None: no such game)."""
        ...


HistoryError = StoreError
"""What a :class:`History` raises."""

BOT_NAMES = ("Ada", "Bix", "Cleo", "Dov", "Eun", "Fenna", "Gus", "Hal")


def bot_names(player: str, count: int) -> tuple[str, ...]:
    """Names for ``count`` computer players beside ``player``: none named like them
    (two seats of one name would be one name on the screen and in the log)."""
    return tuple(n for n in BOT_NAMES if n.casefold() != player.casefold())[:count]


def restored(store: Store, journal: bytes, identity: Identity, table_id: bytes,
             host_key: bytes, now: float, **options: Any) -> Replica:
    """A seat's replica rebuilt from its journal in ``store`` (``Replica.restore``);
    JournalError, naming the file and what to do, for a journal that cannot be
    replayed (whatever a bad record breaks in the replay)."""
    records = store.records(journal)
    try:
        return Replica.restore(identity, table_id, host_key, records, now, **options)
    except Exception as exc:  # noqa: BLE001 - whatever a bad record breaks, one line
        raise JournalError(
            f"the journal {store.journal_path(journal)} holds a record that cannot be "
            f"replayed ({type(exc).__name__}: {exc}): this table cannot be resumed; move "
            "the file aside to play on without it") from None


@dataclass(frozen=True, slots=True)
class SoloSetup:
    """What a solo table is made of beyond its seats' journals, kept in the store as it
    opens (``Store.sit_solo``): ``nerts solo --resume`` seats the same computer
    players again, with their own keys, skill and pace."""

    bots: tuple[tuple[str, bytes], ...]  # each computer player's name and key seed
    skill: str
    pace: float
    variants: Variants

    def identities(self) -> list[Identity]:
        return [Identity.from_seed(seed, name) for name, seed in self.bots]

    def to_json(self) -> dict[str, Any]:
        return {"bots": [[name, seed.hex()] for name, seed in self.bots],
                "skill": self.skill, "pace": self.pace,
                "variants": dataclasses.asdict(self.variants)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SoloSetup:
        """The setup :meth:`to_json` wrote; ValueError if it is not one."""
        try:
            bots = tuple((str(name), bytes.fromhex(seed)) for name, seed in data["bots"])
            setup = cls(bots, str(data["skill"]), float(data["pace"]),
                        Variants(**data["variants"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a solo table's setup ({exc})") from None
        if setup.skill not in SKILLS or not 1 <= len(bots) <= 7:
            raise ValueError("not a solo table's setup")
        return setup


class LocalTable:
    """A solo table: the player's replica and bot replicas, wired in memory.

    No sockets at all, so solo play works with no network: the seats' frames go
    over the in-memory network (``protocol.wires``). The bots are full
    replicas talking the real protocol (signed entries, commit–reveal, audit),
    which keeps solo play and network play one code path. ``bots`` is the
    number of bot seats; under share-a-deck two bots play at each, and one
    plays the player's tableau with them.

    With a ``store``, every seat journals as a seat at a network table does
    (write-ahead, each seat its own journal: ``store.seat_journal``), and the
    game goes into the player's history as each round ends, as the game ends
    and as the player leaves: a closed terminal, a signal or a crash loses no
    round, and :meth:`resume` brings every seat back from its journal.
    """

    def __init__(self, player: Identity, *, bots: int = 2, skill: str = "medium",
                 variants: Variants | None = None, seed: int | None = None,
                 countdown: float = 3.0, clock: Callable[[], float] = time.monotonic,
                 delay: tuple[float, float] = (0.0, 0.0), store: Store | None = None,
                 pace: float = 1.0) -> None:
        """``delay`` (min, max seconds) holds every frame back like a LAN would, so that
        plays are visibly pending and the player's plays can collide with the bots'.
        ``store``: the player's, where the game is journaled and kept. ``pace``: the
        computer players think that many times as long."""
        if not 1 <= bots <= 7:
            raise ValueError("a solo table has 1 to 7 bots")
        if skill not in SKILLS:
            raise ValueError(f"unknown skill {skill!r}: choose from {', '.join(SKILLS)}")
        if not 0 < pace <= 100:
            raise ValueError("a solo table's pace is above 0 and at most 100")
        rng = random.Random(seed)
        table_id = rng.randbytes(16)
        setup = SoloSetup(tuple((name, rng.randbytes(32))
                                for name in bot_names(player.name, bots)),
                          skill, pace, variants or Variants())
        deal = rng.randbytes if seed is not None else os.urandom
        replicas = [Replica(ident, table_id, player.public_key, rng=deal,
                            **_options(setup, countdown))
                    for ident in (player, *setup.identities())]
        self._wire(replicas, setup, rng, seed, clock, delay, store)
        self._write(lambda s: s.sit_solo(table_id, player.public_key, setup.to_json()))
        now = self._clock()
        for i, r in enumerate(self._replicas):
            # One at a time, so the bots sit down in the order of their names;
            # everyone is seated before the table is handed over.
            self._route(i, r.handle(Open(), now))
            self.deliver(everything=True)
        for i, driver in self._drivers:
            self._route(i, driver.step(now))  # the bots say they are ready
        self.deliver(everything=True)
        self._replicas[0].seating.auto_start = None

    @classmethod
    def resume(cls, player: Identity, store: Store, table: TableRecord, *,
               countdown: float = 3.0, clock: Callable[[], float] = time.monotonic,
               delay: tuple[float, float] = (0.0, 0.0)) -> LocalTable:
        """Every seat of the solo ``table`` back from its journal in ``store``, as each
        was (``Replica.restore``), the computer players with their own keys: the
        seats catch up with one another as seats at a network table do after a
        crash, and the game goes on. StoreError (JournalError for a journal) in
        one line if it cannot."""
        data = store.solo(table.table_id)
        if data is None:
            raise StoreError("your unfinished table is on the network: nerts host --resume "
                             "or nerts join --resume goes back to it")
        try:
            setup = SoloSetup.from_json(data)
        except ValueError as exc:
            raise StoreError(f"cannot resume the solo game: {exc}") from None
        now = clock()
        replicas = [restored(store, seat_journal(table.table_id, i), ident, table.table_id,
                             table.host_key, now, rng=os.urandom,
                             **_options(setup, countdown))
                    for i, ident in enumerate((player, *setup.identities()))]
        self = cls.__new__(cls)
        self._wire(replicas, setup, random.Random(), None, clock, delay, store)
        return self

    def _wire(self, replicas: list[Replica], setup: SoloSetup, rng: random.Random,
              seed: int | None, clock: Callable[[], float], delay: tuple[float, float],
              store: Store | None) -> None:
        """Seat the bots at ``replicas`` (the player's first) and wire them in memory."""
        self._clock = clock
        self._replicas = replicas
        self._view = replicas[0].view()
        self._table_id = replicas[0].table_id
        lone_rotate = setup.variants.lone_rotate
        skill = paced(SKILLS[setup.skill], setup.pace)
        #: (replica index, driver): a bot at each bot's seat; under share-a-deck a
        #: second one there, and one beside the player (their own generator, so
        #: that a seed deals the same cards whatever the teams).
        self._drivers = [
            (i, BotDriver(r, Bot(skill, random.Random(rng.random()), lone_rotate=lone_rotate)))
            for i, r in enumerate(self._replicas) if i
        ]
        partners = random.Random(None if seed is None else f"partners {seed}")
        # The player's partner is named (its moves are news on their screen) after
        # the bots, as one more of them.
        bots = len(setup.bots)
        partner = (*bot_names(replicas[0].me.name, bots + 1), "Your partner")[bots]
        self._drivers += [
            (i, BotDriver(r, Bot(skill, random.Random(partners.random()),
                                 lone_rotate=lone_rotate), partner=True,
                          name=None if i else partner))
            for i, r in enumerate(self._replicas)
        ]
        self._wires = Wires(self._replicas)
        if not 0.0 <= delay[0] <= delay[1] <= 5.0:
            raise ValueError("delay must be 0 <= min <= max <= 5 seconds")
        self._delay = delay
        self._delay_rng = random.Random(rng.random())
        self._listeners: list[Listener] = []
        self._closed = asyncio.Event()
        #: Set by a command (or closing): the next beat is due now, not when :meth:`_rest`
        #: says.
        self._wake = asyncio.Event()
        #: A seat told of something since the beat began (:meth:`_rest`).
        self._moved = False
        self._store = store
        self._journaling = store is not None  # until a write fails: then play on without
        self._sync_due = False  # a seat journaled what it made itself (Store.sync)
        #: The player's seat's signed entries, kept in memory too: the record is made
        #: from them and the journal, as the replica forgets finished rounds (and a
        #: journal that failed holds only the start).
        self._entries: list[Record] = []
        self._over: dict[str, object] = {}  # the game's result, once it is over
        self._signed = 0  # the last round of a game kept with every seat's signed result
        self._keeps = 0  # the game kept in the history so far: each time numbered
        self._landed = 0  # the number of the latest keep in the store
        #: The game's number in the player's history, once a round of it is kept.
        self.kept: int | None = None

    @property
    def replica(self) -> Replica:
        """The player's own replica (for this table's tests and records; a front end
        reads :attr:`view`)."""
        return self._replicas[0]

    @property
    def view(self) -> TableView:
        return self._view

    @property
    def networked(self) -> bool:
        return False  # every seat is in this process: none falls silent

    @property
    def resumable(self) -> bool:
        """Whether ``nerts solo --resume`` can go on with this game: dealt, journaled,
        and not over."""
        return self._journaling and self.replica.game_goes_on

    @property
    def address(self) -> str | None:
        return None  # nobody joins a solo table

    def act(self, command: Command) -> None:
        """The player's command, taken by their seat at once; what it sends reaches the
        others in the next beat (:meth:`run`, woken now, or :meth:`step`), in slices:
        a deal's commit-reveal among eight seats is hundreds of signed frames, which
        the player's key would otherwise wait for before their screen shows it."""
        self._route(0, self._replicas[0].handle(command, self._clock()))
        self._route(0, self._replicas[0].apply_own(self._clock()))
        self._wake.set()

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    async def run(self) -> None:
        """Beat when the table next needs it (:meth:`_rest`; at once after a command),
        each beat in slices of :data:`SLICE` on the loop the screen shares: a key
        pressed during a beat waits for one slice, not for every seat's ticks, moves
        and deliveries."""
        while not self._closed.is_set():
            self._wake.clear()  # a command from here on is taken up by another beat
            self._moved = False
            began = time.perf_counter()
            for _ in self._beat():
                if time.perf_counter() - began >= SLICE:
                    await asyncio.sleep(0)
                    if self._closed.is_set():
                        return
                    began = time.perf_counter()
            await wait_event(self._wake, self._rest())

    def _rest(self) -> float:
        """How long the table sleeps after a beat, as a network seat sleeps until its
        replica next needs a tick: PUMP_INTERVAL if a seat told of something in it
        (the bots with nothing to do look again: the table changed), else until a
        seat's tick (``Replica.next_due``), a bot's move or a frame falls due, at
        least PUMP_INTERVAL and at most QUIET_BEAT. A bot with nothing to do
        (``BotDriver.idle``) has nothing due: it looks again once the table moves."""
        if self._moved:
            return PUMP_INTERVAL
        wire = self._wires.next_due
        due = min(math.inf if wire is None else wire, *(r.next_due() for r in self._replicas))
        for _, driver in self._drivers:
            if driver.next_at is None:
                due = 0.0
            elif not driver.idle:
                due = min(due, driver.next_at)
        return min(QUIET_BEAT, max(PUMP_INTERVAL, due - self._clock()))

    def step(self) -> None:
        """One beat of the table at once: ticks, bot moves, deliveries."""
        for _ in self._beat():
            pass

    def _beat(self) -> Iterator[None]:
        """One beat of the table, yielding after each seat's tick, each bot's move and
        each frame delivered: where :meth:`run` may let the loop go."""
        now = self._clock()
        for i, r in enumerate(self._replicas):
            self._route(i, r.tick(now))
            yield
        for i, driver in self._drivers:
            if driver.next_at is None or driver.next_at <= now:
                self._route(i, driver.step(now))
                self._route(i, self._replicas[i].apply_own(now))
                yield
        while self._deliver():
            yield

    def close(self) -> None:
        """Leave the table: the game is kept in the history as it stands. A game over
        is finished with (its journals go); one left before its end stays
        journaled, for ``nerts solo --resume``."""
        if self._closed.is_set():
            return
        self._closed.set()  # first: a keep still under way lands before this one, or not at all
        self._wake.set()
        self._keep(at_once=True)
        if self.replica.phase is Phase.OVER:
            table_id, result = self._table_id, self._over
            self._write(lambda s: s.finish_table(table_id, result))
        self._write(lambda s: s.sync())

    def _keep(self, *, at_once: bool = False) -> None:
        """Put the game in the player's history: the record copied now, replayed (every
        signature and audit checked again, the whole game's CPU) in a worker
        thread when a loop runs, and written back on this one (``at_once``: here)."""
        if self._store is None:
            return
        record = self._record()
        me = self.replica.me.public_key
        self._keeps += 1
        number = self._keeps
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            at_once = True
        if at_once:
            try:
                kept = to_keep(record, me, (SOLO,))
            except Exception as exc:  # noqa: BLE001 - the game goes on; the history says why
                self._tell(Notice(f"Cannot keep the game in your history: {exc!r}"))
                return
            self._kept(number, kept)
            return
        reckoned = loop.run_in_executor(None, to_keep, record, me, (SOLO,))

        def done(future: asyncio.Future[Kept | None]) -> None:
            if future.cancelled() or self._closed.is_set():
                return
            if (exc := future.exception()) is not None:
                self._tell(Notice(f"Cannot keep the game in your history: {exc!r}"))
                return
            self._kept(number, future.result())

        reckoned.add_done_callback(done)

    def _kept(self, number: int, kept: Kept | None) -> None:
        """A keep reckoned: into the store, unless a later one is there already."""
        if kept is None or number < self._landed or self._store is None:
            return
        self._landed = number
        try:
            self.kept = kept.into(self._store)
        except StoreError as exc:
            self._tell(Notice(f"Cannot keep the game in your history: {exc}"))

    def _record(self) -> GameRecord:
        """The game's record: the replica's last rounds and the journal's earlier ones."""
        assert self._store is not None
        journal = list(self._entries)
        if self._journaling:
            try:
                journal += self._store.written(self._table_id)
            except StoreError as exc:
                self._tell(Notice(f"Cannot read the game's journal: {exc}"))
        return record_of(self.replica, f"{self.replica.me.name}'s solo table", time.time(),
                         journal)

    def _write(self, write: Callable[[Store], None]) -> None:
        """Write to the store's journals; if that fails, say so once and play on without
        them (the game can then not be resumed, but it is still kept as it ends)."""
        if self._store is None or not self._journaling:
            return
        try:
            write(self._store)
        except (sqlite3.Error, OSError, StoreError) as exc:
            self._journaling = False
            self._tell(Notice(f"Cannot journal the game ({exc}): playing on, but it cannot "
                              "be resumed"))

    def _tell(self, event: Event) -> None:
        for listener in self._listeners:
            listener(event)

    def _route(self, sender: int, out: Outbound) -> None:
        """Journal, tell the player, queue the frames (each delivered by :meth:`deliver`,
        after what its seat made is on the disk: ``Store.sync``)."""
        if out.journal and self._journaling:
            journal, key = out.journal, seat_journal(self._table_id, sender)
            self._write(lambda s: s.append(key, journal))
            me = self._replicas[sender].me.public_key
            self._sync_due = self._sync_due or any(made_by(r, me) for r in journal)
        if compacts(out.events) and self._journaling:  # a break: nothing waits
            key = seat_journal(self._table_id, sender)
            self._write(lambda s: s.compact(key))
        if out.events:
            self._moved = True
        if sender == 0:
            self._entries += (r for r in out.journal if r.kind is Kind.ENTRY)
            for event in out.events:
                self._tell(event)
                if isinstance(event, GameOver):
                    self._over = {"winner": event.winner, "totals": list(event.totals)}
                elif isinstance(event, RoundStarting) and self._over:
                    self._over, self.kept = {}, None  # played again: a new game
                if isinstance(event, RoundAgreed | Divergence):
                    self._keep()  # every round is in the history once every seat signed it
                if isinstance(event, RoundOver):
                    self._write(lambda s: s.checkpoint())
            rs = self.replica.rs
            if (self.replica.phase is Phase.OVER and rs is not None
                    and rs.number != self._signed and rs.live <= rs.signed_results.keys()):
                self._signed = rs.number  # and the game once every seat signed its result
                self._keep()
        now = self._clock()
        for send in out.sends:
            for target in self._wires.targets(sender, send):
                low, high = self._delay
                due = now + low + (high - low) * self._delay_rng.random()
                self._wires.post(due, sender, target, send.data)

    def deliver(self, *, everything: bool = False) -> None:
        """Deliver every frame that is due (``everything``: every frame), and nothing
        else: no tick, no bot's move. A test driving the table by hand calls it
        after a command, where :meth:`run` would deliver in its next beat."""
        while self._deliver(everything=everything):
            pass

    def _deliver(self, *, everything: bool = False) -> bool:
        """Deliver the next frame if it is due (``everything``: if there is one); say
        whether one was."""
        due = self._wires.next_due
        if due is None or not (everything or due <= self._clock()):
            return False
        if self._sync_due:  # group commit: what the seats made, before it leaves
            self._sync_due = False
            self._write(lambda s: s.sync())
        target, sender, data = self._wires.take()
        self._route(target, self._wires.deliver(target, sender, data, self._clock()))
        return True


def _options(setup: SoloSetup, countdown: float) -> dict[str, Any]:
    """Every seat's replica options at a solo table."""
    # In-process seats never fall silent, but a terminal suspended a while (Ctrl-Z)
    # must not have them all voting one another out when it comes back: the longest
    # allowed.
    return {"variants": setup.variants, "countdown": countdown,
            "drop_after": MAX_DROP_AFTER_MS / 1000}
