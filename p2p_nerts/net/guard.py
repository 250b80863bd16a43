"""Online guessing of a table code: a few tries per address, then a pause.

The table code's PAKE (``channel``) gives a passive listener nothing to test
guesses against, so the only way to guess is to connect and run the exchange:
one guess per connection. Counting failed exchanges per remote address and
refusing an address for a while after a few failures slows it to a crawl (at
5 tries per 30 s, the 10 000 four-digit codes take about 17 hours from one
address, two words from a short list far longer), while a player who mistyped
the code waits half a minute at worst.

The listener runs one exchange at a time per address (``mesh``), the others
from it waiting their turn: a failure is only known once an exchange ends, so
parallel connections would otherwise all be judged before the first failure
counts.

Sans I/O: the caller passes the time in.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CODE_PAUSE", "CODE_TRIES", "CodeGuard"]

CODE_TRIES = 5
"""Failed code exchanges from one address before it is refused."""
CODE_PAUSE = 30.0
"""Seconds an address is refused after that many failures."""
_MAX_ADDRESSES = 1024
"""Addresses remembered: a peer on many addresses costs us bounded memory."""


@dataclass(slots=True)
class _Record:
    failures: int = 0
    refused_until: float = 0.0


class CodeGuard:
    """Failed table-code exchanges by remote address."""

    def __init__(self, tries: int = CODE_TRIES, pause: float = CODE_PAUSE) -> None:
        self.tries = tries
        self.pause = pause
        self._records: dict[str, _Record] = {}

    def refused_for(self, address: str, now: float) -> float:
        """Seconds ``address`` is still refused another try (0 when it may try)."""
        record = self._records.get(address)
        return max(0.0, record.refused_until - now) if record is not None else 0.0

    def failed(self, address: str, now: float) -> bool:
        """Count a failed exchange; True when this one gets the address refused."""
        record = self._records.get(address)
        if record is None:
            self._forget_some(now)
            record = self._records[address] = _Record()
        record.failures += 1
        if record.failures < self.tries:
            return False
        record.failures = 0
        record.refused_until = now + self.pause
        return True

    def succeeded(self, address: str) -> None:
        """Whoever gets the code right has nothing left to guess."""
        self._records.pop(address, None)

    def _forget_some(self, now: float) -> None:
        if len(self._records) < _MAX_ADDRESSES:
            return
        for address, record in list(self._records.items()):
            if record.refused_until <= now:
                del self._records[address]
        while len(self._records) >= _MAX_ADDRESSES:  # all refused: the oldest goes first
            del self._records[next(iter(self._records))]
