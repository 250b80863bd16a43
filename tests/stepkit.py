"""``Steps`` on their own, for the tests of the replica's sub-machines: the table as
a step reads it, set by the test, and what the steps decide recorded in order
rather than carried out (no network, no replica)."""

from __future__ import annotations

from collections.abc import Iterable

from p2p_nerts.game.scoring import Match
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.clock import LamportClock
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica._base import Phase
from p2p_nerts.protocol.replica._catchup import Pruning
from p2p_nerts.protocol.replica._effects import Effect
from p2p_nerts.protocol.replica._forks import Forks
from p2p_nerts.protocol.replica._game import Game
from p2p_nerts.protocol.replica._intake import Places
from p2p_nerts.protocol.replica._order import Finality
from p2p_nerts.protocol.replica._outbox import Outbox
from p2p_nerts.protocol.replica._recovery import Recovery
from p2p_nerts.protocol.replica._seating import Seating
from p2p_nerts.protocol.replica._state import RoundState
from p2p_nerts.protocol.replica._steps import Steps

#: In ``Table.done``: what every author held back was delivered here.
DRAIN = "drain"


class Table:
    """The table as a step reads it: a ``Game`` the steps change through its
    methods, which a test sets through the properties below, and the time; what
    the steps decide lands in ``done``, in order, and is not carried out."""

    def __init__(self, rs: RoundState | None = None, phase: Phase = Phase.LOBBY, *,
                 now: float = 0.0) -> None:
        self.game = Game()
        self.game.rs, self.game.phase = rs, phase
        self.now = now
        self.done: list[Effect | str] = []

    @property
    def rs(self) -> RoundState | None:
        return self.game.rs

    @rs.setter
    def rs(self, rs: RoundState | None) -> None:
        self.game.rs = rs

    @property
    def phase(self) -> Phase:
        return self.game.phase

    @phase.setter
    def phase(self, phase: Phase) -> None:
        self.game.phase = phase

    @property
    def match(self) -> Match | None:
        return self.game.match

    @match.setter
    def match(self, match: Match | None) -> None:
        self.game.match = match

    @property
    def totals(self) -> dict[bytes, int]:
        return self.game.totals

    @totals.setter
    def totals(self, totals: dict[bytes, int]) -> None:
        self.game.totals = totals

    def apply(self, effects: Iterable[Effect]) -> None:
        self.done += effects

    def drain(self) -> None:
        self.done.append(DRAIN)


def steps_at(me: bytes, rs: RoundState | None = None, phase: Phase = Phase.LOBBY, *,
             seating: Seating | None = None, forks: Forks | None = None,
             recovery: Recovery | None = None, pruning: Pruning | None = None,
             places: Places | None = None, table: Table | None = None,
             ) -> tuple[Steps, Table]:
    """Steps for ``me``'s replica (the host's, unless ``seating`` says another hosts),
    the table being ``rs`` in ``phase`` (or ``table``), over these owners (new ones
    where not given)."""
    if seating is None:
        seating = Seating(me, me, variants=Variants(), countdown=3.0, drop_after=10.0,
                          auto_start=None, auto_next=None, max_seats=8)
    if table is None:
        table = Table(rs, phase)
    places, clock = places or Places(), LamportClock()
    return Steps(b"t" * 16, me, is_host=seating.host_key == me, rng=lambda n: b"r" * n,
                 seating=seating, forks=forks or Forks(), recovery=recovery or Recovery(),
                 pruning=pruning or Pruning(), places=places,
                 outbox=Outbox(Identity.from_seed(b"\x00" * 32, "me"), b"t" * 16, clock),
                 order=Finality(places.authors, clock), game=table.game, live=table,
                 apply=table.apply, drain=table.drain), table
