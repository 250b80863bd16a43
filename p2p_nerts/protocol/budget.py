"""A token bucket: how much a peer may make us do per second, with room for a burst.

Every resource a remote peer can spend on our behalf (frames we read and
check, entries we resend to it) is metered by one of these, so that what it
costs us grows with time, not with how fast the peer sends. Honest traffic
stays far inside the rate; the burst lets a peer catching up take a lot at
once. Sans I/O: the caller passes the time in.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TokenBucket"]


@dataclass(slots=True)
class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up; starts full."""

    rate: float
    burst: float
    tokens: float = -1.0  # -1: full at the first take
    last: float = 0.0

    def take(self, now: float, cost: float = 1.0) -> bool:
        """Spend ``cost`` tokens if there are that many; False (nothing spent) if not."""
        if self.tokens < 0:
            self.tokens, self.last = self.burst, now
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens < cost:
            return False
        self.tokens -= cost
        return True

    def room(self, now: float) -> int:
        """Whole tokens there are to spend now (spend them with :meth:`take`)."""
        if self.tokens < 0:
            return int(self.burst)
        return int(min(self.burst, self.tokens + (now - self.last) * self.rate))
