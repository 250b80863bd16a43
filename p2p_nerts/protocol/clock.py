"""Lamport clock: the logical time that orders a table's log.

Entries are totally ordered by (lamport, author key), so every peer folds the
foundations in the same order whatever order the frames arrived in.  Time is
a counter, never a wall clock, which keeps the replica pure and testable.
"""

from __future__ import annotations

__all__ = ["LamportClock"]


class LamportClock:
    """A Lamport counter.  `time` is the timestamp of the latest event seen or made."""

    __slots__ = ("time",)

    def __init__(self, time: int = 0) -> None:
        if time < 0:
            raise ValueError("Lamport time cannot be negative")
        self.time = time

    def tick(self) -> int:
        """Advance for a local event (sending an entry) and return its timestamp."""
        self.time += 1
        return self.time

    def observe(self, remote: int) -> int:
        """Take in a received timestamp: time becomes max(local, remote) + 1.

        The result is later than everything seen so far, so whatever we send
        next is ordered after what we have received.
        """
        self.time = max(self.time, remote) + 1
        return self.time

    def __repr__(self) -> str:
        return f"LamportClock(time={self.time})"
