"""A seat coming back to a table learns its own last entry before it signs anything.

A seat restarted from a journal that is behind (truncated, stale, deleted)
would otherwise sign sequence numbers it had already sent, with other
contents: to every other peer, an equivocation. So a replica that rejoins
first hears from the others how far they hold its own chain (the marks of
their ACKs name it), fetches those entries of its own it lacks, and only then
signs, after the table's head rather than its journal's. What it would have
signed meanwhile waits here (see Replica._resumed).

How long it waits depends on what the journal can have lost. Within one boot
of the machine, nothing: every record is the kernel's before anything that
follows from it leaves, and a crashed process loses none of it; the seat goes
on after LEARN_TIMEOUT with the word of those heard (a journal deleted or
copied back from elsewhere is the user's doing). After a restart of the
machine, its last batch: a batch is made durable just after its frames leave
(the ``fsync`` is off the way of a play), so a power cut in between can take
entries from the journal that the others hold. Then the seat waits for every
peer's word, or for REBOOT_WAIT after the first word it hears (``rebooted``):
the peers link to a restarted seat one by one, and the first may not hold
what it lost. Not for ever: the table may be waiting for this seat's vote to
drop a seat that went silent meanwhile, which would never answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .messages import Payload

#: Seconds to wait for every peer's word before going on with the word of those
#: heard (never past an entry of ours that someone is known to hold).
LEARN_TIMEOUT = 3.0
#: After a restart of the machine: seconds to wait for every peer's word after the
#: first is heard (every peer at a table links to a restarted seat within a few
#: seconds; a silent seat's drop waits no longer than this for its vote).
REBOOT_WAIT = 30.0


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
    number of its own that any of them holds. ``rebooted``: the machine's boot,
    when the journal was written in an earlier one (the journal names it once
    the seat has learned); ``first_heard``: when a peer it waits for was first
    heard.
    """

    waiting: set[bytes]
    since: float
    journal_seq: int
    table_seq: int = 0
    deferred: list[Deferred] = field(default_factory=list)
    rebooted: bytes | None = None
    first_heard: float | None = None

    def heard(self, key: bytes, mine: int | None, now: float) -> None:
        """An ACK from ``key`` at ``now``, whose marks hold ``mine`` of our entries
        (None: no mark)."""
        if key in self.waiting and self.first_heard is None:
            self.first_heard = now
        self.waiting.discard(key)
        if mine is not None:
            self.table_seq = max(self.table_seq, mine)

    def complete(self, now: float, delivered: int) -> bool:
        """Whether we may sign again, holding our own chain up to ``delivered``."""
        if delivered < self.table_seq:
            return False  # someone holds an entry of ours we do not: never sign over it
        if not self.waiting:
            return True
        if self.rebooted is not None:  # the journal may lack entries a peer holds
            return self.first_heard is not None and now - self.first_heard >= REBOOT_WAIT
        return now - self.since >= LEARN_TIMEOUT

    def behind(self, delivered: int) -> int:
        """How many of our entries the table held that our journal did not."""
        return max(0, delivered - self.journal_seq)
