"""The options of a seat at a networked table, as the command line gives them.

Apart from :mod:`~p2p_nerts.peer.shell` and :mod:`~p2p_nerts.peer.node`
because both read them: the shell for the seat's own behaviour (its code,
bounds, views, patience at a full table), the factories for the replica's
rules and clocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..game.variants import Variants
from ..net.bounds import Limits
from ..net.channel import normalize_code
from ..protocol.replica import COUNTDOWN, DEAL_WITH, DROP_AFTER

__all__ = ["TableConfig"]


@dataclass(frozen=True, slots=True)
class TableConfig:
    """The replica's options, as the command line gives them."""

    variants: Variants = field(default_factory=Variants)
    countdown: float = COUNTDOWN
    drop_after: float = DROP_AFTER
    """The rules and clocks a host announces; a guest plays by its host's instead."""
    auto_start: int | None = None
    auto_next: float | None = None
    max_seats: int = 8
    code: str | None = None
    """The table code: a host that has one lets in only peers who know it, and
    all traffic is encrypted; a guest needs the table's code to join."""
    limits: Limits = field(default_factory=Limits)
    """What the other peers may make this one do (``bounds``)."""
    wait_for_seat: bool = False
    """A guest at a full table waits for a free seat (asking again as the
    table's roster changes) instead of being turned away."""
    seat_only: tuple[bytes, ...] | None = None
    """Host: the only players it seats (an event's seating: spectators still
    watch); with ``auto_start`` their number, it deals once they all sit."""
    turn_up: float | None = None
    """Host: seconds after it opens (or comes back) that it waits for its players
    before the first deal; then it deals with those seated, ``deal_with`` at least."""
    deal_with: int = DEAL_WITH
    """Host: the fewest seated it deals with once its turn-up time is over (an
    event's stand-in host: more than half the table, or its game would not
    count)."""
    views: bool = True
    """This seat draws the other seats' tableaux (a screen), and says so as it
    links: the others send their VIEWs only to the peers that do. A bot or a
    headless seat reads none, and a table of them sends far fewer frames."""

    def __post_init__(self) -> None:
        if self.code is not None:
            normalize_code(self.code)  # a bad code is a ValueError now, not at each connection
        if self.seat_only is not None and not 2 <= len(set(self.seat_only)) <= self.max_seats:
            raise ValueError(f"a seating lists 2..{self.max_seats} players")
        if self.turn_up is not None and not 0 <= self.turn_up <= 3600:
            raise ValueError("a turn-up time is 0..3600 seconds")
        if not DEAL_WITH <= self.deal_with <= self.max_seats:
            raise ValueError(f"a table deals with {DEAL_WITH}..{self.max_seats} players")
