"""What one peer lets the others make it do: admission of links, per-link budgets,
and log lines that a flood cannot multiply.

Anyone on the network can reach a table's port. What an authenticated link
may cost us is bounded here, by rules the mesh applies (``mesh.Mesh``):

- A link is *admitted* while its key has a place at the table (a seat, a
  place in the round or on the waiting list) or had one (``TableView.player``),
  or is a spectator; only admitted links hear the table's traffic and are listed
  in the host's peers frame. A link that is not admitted within
  ``Limits.grace`` seconds of coming up is closed.
- Links that are not admitted (handshakes under way included) are capped per
  remote address and in all: a newcomer past the caps is closed at once.
- Every link has a budget of frames and bytes a second (``LinkBudget``):
  over it, frames are dropped unread and counted; a link that stays far over
  it is closed.

Sans I/O: callers pass the time in.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..protocol.budget import TokenBucket

__all__ = ["Limits", "LinkBudget", "QuietLog", "Unseated"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds one peer keeps (tests make them small)."""

    grace: float = 5.0
    """Seconds an authenticated link may stay without a place at the table."""
    unseated_per_address: int = 16
    """Links without a place (and handshakes under way) from one address."""
    unseated: int = 64
    """Links without a place (and handshakes under way) in all."""
    frames_per_second: float = 2000.0
    frame_burst: float = 8000.0
    """A peer catching up gets up to a few thousand entries at once (RESEND answers)."""
    bytes_per_second: float = 4 << 20
    byte_burst: float = 16 << 20
    far_over: float = 4.0
    """A link that has had this many seconds' worth of its rate dropped (the count
    drains at the rate) is closed: it is flooding, not bursting."""
    unseated_frames_per_second: float = 200.0
    unseated_frame_burst: float = 1000.0
    unseated_bytes_per_second: float = 512 << 10
    unseated_byte_burst: float = 2 << 20
    """The host's budget for the links without a place from one address, together
    (a new link does not start afresh). They send little the table needs (a
    HELLO, a JOIN, a spectator's requests for entries), and each frame costs a
    signature check: a flood from them is held to this rate."""


class LinkBudget:
    """The frames and bytes one link may make us handle."""

    def __init__(self, limits: Limits, *, unseated: bool = False) -> None:
        rate, burst, byte_rate, byte_burst = (
            (limits.unseated_frames_per_second, limits.unseated_frame_burst,
             limits.unseated_bytes_per_second, limits.unseated_byte_burst) if unseated
            else (limits.frames_per_second, limits.frame_burst, limits.bytes_per_second,
                  limits.byte_burst))
        self._frames = TokenBucket(rate, burst)
        self._bytes = TokenBucket(byte_rate, byte_burst)
        self._debt = TokenBucket(rate, rate * limits.far_over)
        self.dropped = 0

    def admit(self, now: float, size: int) -> bool:
        """Whether to handle one frame of ``size`` bytes (False: drop it, counted)."""
        if self._frames.take(now) and self._bytes.take(now, size):
            return True
        self.dropped += 1
        self._debt.take(now)
        return False

    def flooding(self, now: float) -> bool:
        """True once the drops have gone far over the budget: close the link."""
        return self._debt.room(now) < 1


class Unseated:
    """Links (and handshakes) without a place at the table, by remote address."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._by_address: dict[str, int] = {}
        self.total = 0

    def room(self, address: str) -> bool:
        """Whether one more may come from ``address``."""
        return (self.total < self._limits.unseated
                and self._by_address.get(address, 0) < self._limits.unseated_per_address)

    def add(self, address: str) -> None:
        self._by_address[address] = self._by_address.get(address, 0) + 1
        self.total += 1

    def remove(self, address: str) -> None:
        left = self._by_address.get(address, 0) - 1
        if left < 0:
            return
        if left:
            self._by_address[address] = left
        else:
            del self._by_address[address]
        self.total -= 1


class QuietLog:
    """Log lines of one kind at most ``burst`` per ``interval`` seconds, with a count.

    A flood of failed handshakes or refused strangers would otherwise write a
    line each: the log (a file under the screen) would grow with the attack.
    The lines of a kind go out while its budget lasts (a table filling up logs
    every newcomer); those past it are counted, and the next one that goes out
    says how many there were.
    """

    def __init__(self, logger: logging.Logger, interval: float = 10.0, burst: int = 8) -> None:
        self._logger = logger
        self._rate = burst / interval
        self._burst = burst
        self._budgets: dict[str, TokenBucket] = {}
        self._held: dict[str, int] = {}

    def log(self, now: float, kind: str, level: int, message: str, *args: object) -> None:
        budget = self._budgets.get(kind)
        if budget is None:
            budget = self._budgets[kind] = TokenBucket(self._rate, self._burst)
        if not budget.take(now):
            self._held[kind] = self._held.get(kind, 0) + 1
            return
        held = self._held.pop(kind, 0)
        if held:
            message += f" (and {held} more like it since the last one logged)"
        self._logger.log(level, message, *args)
