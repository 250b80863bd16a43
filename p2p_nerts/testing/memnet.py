"""Replicas wired together in memory, in simulated time, with a hostile network.

The test harness for the protocol (and a demonstration that the replica needs
nothing but bytes and a clock): every frame a replica sends is delivered to
its recipients (``protocol.wires``, the in-memory network a solo table uses
too) after a random delay, possibly reordered across senders, duplicated, or
dropped (a dropped frame is recovered by the protocol's own resend requests,
as on a real network). Deterministic for a seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from ..game.bot import SKILLS, Bot
from ..game.variants import Variants
from ..protocol.botdriver import BotDriver
from ..protocol.events import Event
from ..protocol.identity import Identity
from ..protocol.journal import Record
from ..protocol.replica import Open, Outbound, Replica, compact, compacts
from ..protocol.wires import Wires

TABLE_ID = bytes(range(16))


@dataclass(frozen=True, slots=True)
class Faults:
    """What the simulated network does to frames."""

    min_delay: float = 0.001
    max_delay: float = 0.030
    duplicate: float = 0.0  # chance a frame is delivered twice
    drop: float = 0.0  # chance a frame is lost (the protocol asks again)
    tick: float = 0.05  # how often every replica's tick runs
    #: Tick each replica only when it says it needs one (``Replica.next_due``), as
    #: the shells do, instead of every ``tick`` seconds.
    on_due: bool = False


@dataclass(slots=True)
class MemNet:
    """A table of replicas (some driven by bots) on a simulated network."""

    replicas: list[Replica]
    drivers: dict[int, BotDriver]
    rng: random.Random
    faults: Faults = field(default_factory=Faults)
    #: Second players, at the tableaux they share with a driver (share-a-deck).
    partners: dict[int, BotDriver] = field(default_factory=dict)
    now: float = 0.0
    events: list[list[Event]] = field(default_factory=list)
    #: Each replica's journal, compacted as a store compacts it (``replica.compact``)...
    journals: list[list[Record]] = field(default_factory=list)
    #: ...and the signed entries compaction took out of it (the game record's).
    pasts: list[list[Record]] = field(default_factory=list)
    delivered: int = 0
    ticks: int = 0  # replica ticks run
    _again: dict[int, tuple[float, int]] = field(default_factory=dict)
    dropped: int = 0
    duplicated: int = 0
    cut: set[int] = field(default_factory=set)  # replicas whose links are down
    down: set[int] = field(default_factory=set)  # crashed: no ticks, nothing in or out
    #: A network split: frames only reach replicas in the sender's own group.
    groups: list[set[int]] = field(default_factory=list)
    wires: Wires = field(init=False)  # the frames on their way

    def __post_init__(self) -> None:
        self.events = [[] for _ in self.replicas]
        self.journals = [[] for _ in self.replicas]
        self.pasts = [[] for _ in self.replicas]
        self.wires = Wires(self.replicas)

    def output(self, sender: int, out: Outbound) -> None:
        """Take what a replica produced: keep its events, put its frames on the wire,
        and then let it apply its own play (as a shell does after a command)."""
        self._route(sender, out)
        self._route(sender, self.replicas[sender].apply_own(self.now))

    def _route(self, sender: int, out: Outbound) -> None:
        self.events[sender].extend(out.events)
        journal = self.journals[sender]
        journal.extend(out.journal)
        if compacts(out.events) and (done := compact(journal)) is not None:
            self.journals[sender] = list(done.kept)
            self.pasts[sender] += done.past
        for send in out.sends:
            for target in self.wires.targets(sender, send):
                if (sender in self.cut or target in self.cut or sender in self.down
                        or not self._same_side(sender, target)
                        or self.rng.random() < self.faults.drop):
                    self.dropped += 1
                    continue
                copies = 2 if self.rng.random() < self.faults.duplicate else 1
                self.duplicated += copies - 1
                for _ in range(copies):
                    delay = self.faults.min_delay + self.rng.random() * (
                        self.faults.max_delay - self.faults.min_delay)
                    self.wires.post(self.now + delay, sender, target, send.data)

    def written(self, k: int) -> list[Record]:
        """Every record replica ``k`` journaled that a game record reads: what
        compaction took out, then the journal."""
        return [*self.pasts[k], *self.journals[k]]

    def join(self, replica: Replica, driver: BotDriver) -> int:
        """A newcomer comes onto the network and asks for a seat; returns its index."""
        index = len(self.replicas)
        self.replicas.append(replica)
        self.events.append([])
        self.journals.append([])
        self.pasts.append([])
        self.wires.joined(index)
        self.drivers[index] = driver
        self.output(index, replica.handle(Open(), self.now))
        return index

    def _same_side(self, a: int, b: int) -> bool:
        return not self.groups or any(a in g and b in g for g in self.groups)

    def run(self, until: Callable[[], bool], *, limit: float = 3600.0) -> bool:
        """Run simulated time until ``until()`` holds (True) or ``limit`` seconds pass (False)."""
        next_tick = self.now
        while not until():
            if self.faults.on_due:
                next_tick = max(self.now, min(
                    (r.next_due() for i, r in enumerate(self.replicas) if i not in self.down),
                    default=float("inf")))
            next_driver = min((d.next_at for _, d in self._players()
                               if d.next_at is not None), default=next_tick)
            next_frame = self.wires.next_due
            self.now = min(next_tick, next_driver,
                           next_tick if next_frame is None else next_frame)
            if self.now > limit:
                return False
            if next_frame is not None and next_frame <= self.now:
                target, sender, data = self.wires.take()
                if target in self.down or not self._same_side(sender, target):
                    self.dropped += 1
                    continue
                self.delivered += 1
                self.output(target, self.wires.deliver(target, sender, data, self.now))
                continue
            if next_tick <= self.now:
                next_tick = self.now + self.faults.tick
                for i, replica in enumerate(self.replicas):
                    if i not in self.down and (not self.faults.on_due
                                               or replica.next_due() <= self.now):
                        self.ticks += 1
                        self.output(i, replica.tick(self.now))
                        if self.faults.on_due:
                            self._check_due(i, replica)
            for i, driver in self._players():
                if driver.next_at is None or driver.next_at <= self.now:
                    self.output(i, driver.step(self.now))
        return True

    def _check_due(self, i: int, replica: Replica) -> None:
        """A replica still due after a few ticks at one time would spin a shell."""
        again = self._again.get(i)
        count = again[1] + 1 if again is not None and again[0] == self.now else 1
        self._again[i] = (self.now, count)
        if count > 3 and replica.next_due() <= self.now:
            raise RuntimeError(f"replica {i} is still due after {count} ticks at {self.now}")

    def _players(self) -> Iterator[tuple[int, BotDriver]]:
        yield from self.drivers.items()
        yield from self.partners.items()


def identities(n: int) -> list[Identity]:
    """Fixed identities ``p0``..: the same keys in every run, so seats are reproducible."""
    return [Identity.from_seed(bytes([i + 1]) * 32, f"p{i}") for i in range(n)]


def bot_table(
    n: int,
    seed: int,
    *,
    variants: Variants | None = None,
    faults: Faults | None = None,
    skill: str = "hard",
    classes: dict[int, Callable[..., Replica]] | None = None,
    table_id: bytes = TABLE_ID,
    ids: Sequence[Identity] | None = None,
) -> MemNet:
    """``n`` replicas seated at one table (the first hosts), each driven by a bot
    (two under share-a-deck).

    ``classes`` swaps in another replica class for some seats (tests use it to
    seat cheaters); ``ids`` seats these players (the first hosts) instead of
    :func:`identities`. Returns once everyone is seated, in the lobby.
    """
    ids = list(ids) if ids is not None else identities(n)
    reps = [
        (classes or {}).get(i, Replica)(
            ident, table_id, ids[0].public_key, variants=variants or Variants(),
            rng=random.Random(seed * 100 + i).randbytes, countdown=0.0, drop_after=5.0)
        for i, ident in enumerate(ids)
    ]
    drivers = {i: BotDriver(r, Bot(SKILLS[skill], random.Random(seed * 7 + i)))
               for i, r in enumerate(reps)}
    partners = ({i: BotDriver(r, Bot(SKILLS[skill], random.Random(seed * 11 + i)), partner=True)
                 for i, r in enumerate(reps)} if variants and variants.teams == "share" else {})
    net = MemNet(reps, drivers, random.Random(seed), faults or Faults(), partners=partners)
    for i, r in enumerate(reps):
        net.output(i, r.handle(Open(), 0.0))
    if not net.run(lambda: all(len(r.view().seats) == n for r in reps), limit=60.0):
        raise RuntimeError("the lobby did not fill")
    return net
