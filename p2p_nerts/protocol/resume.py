"""A seat coming back to a table learns its own last entry before it signs anything.

A seat restarted from a journal that is behind (truncated, stale, deleted)
would otherwise sign sequence numbers it had already sent, with other
contents: to every other peer, an equivocation. So a replica that rejoins
first hears from the others how far they hold its own chain (the marks of
their ACKs name it), fetches those entries of its own it lacks, and only then
signs, after the table's head rather than its journal's. What it would have
signed meanwhile waits here (see Replica._resumed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .messages import Payload

#: Seconds to wait for every peer's word before going on with the word of those
#: heard (never past an entry of ours that someone is known to hold).
LEARN_TIMEOUT = 3.0


@dataclass(frozen=True, slots=True)
class Deferred:
    """An entry the replica would have signed while it was still learning."""

    payload: Payload
    round_no: int | None
    to: bytes | None


@dataclass(slots=True)
class Resume:
    """What a rejoining seat still waits for.

    ``waiting`` are the peers whose ACK (sent after the restart) it needs;
    ``journal_seq`` is how far its own journal went; ``table_seq`` the highest
    number of its own that any of them holds.
    """

    waiting: set[bytes]
    since: float
    journal_seq: int
    table_seq: int = 0
    deferred: list[Deferred] = field(default_factory=list)

    def heard(self, key: bytes, mine: int | None) -> None:
        """An ACK from ``key``, whose marks hold ``mine`` of our entries (None: no mark)."""
        self.waiting.discard(key)
        if mine is not None:
            self.table_seq = max(self.table_seq, mine)

    def complete(self, now: float, delivered: int) -> bool:
        """Whether we may sign again, holding our own chain up to ``delivered``."""
        if delivered < self.table_seq:
            return False  # someone holds an entry of ours we do not: never sign over it
        return not self.waiting or now - self.since >= LEARN_TIMEOUT

    def behind(self, delivered: int) -> int:
        """How many of our entries the table held that our journal did not."""
        return max(0, delivered - self.journal_seq)
