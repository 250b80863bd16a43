"""Per-author sequences: in-order delivery, replays, gaps and equivocation.

Every sequenced entry carries its author's next sequence number. A replica
delivers each author's entries in sequence order (so Lamport times from one
author only grow, which finality relies on), holds early arrivals until the
gap is filled, ignores exact replays, and treats two *different* signed
entries with the same author and number as proof of misbehaviour.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .envelope import HEADER_LEN, Entry

#: Entries held per author while waiting for a gap to fill.
MAX_HELD = 1024
#: Bytes of them (as received) per author: early AUDITs are large. Only keys
#: with a place at the table get entries held (a stranger's are dropped), so
#: this bounds the held entries of the whole table too.
MAX_HELD_BYTES = 1 << 20


class Equivocation(Exception):
    """Two different entries signed by one author under one sequence number."""


@dataclass(slots=True)
class AuthorLog:
    """What one replica has of one author's sequence."""

    key: bytes
    delivered: int = 0  # highest seq delivered, all below it delivered too
    lamport: int = 0  # Lamport time of the last delivered entry
    #: Delivered entries, kept to resend, all of them: a newcomer, or a peer
    #: back from a long outage, catches up by replaying every author from its
    #: first entry. Kept as frames only: the decoded entry (payload maps, an
    #: AUDIT's move list) is about 5x bigger, and nothing reads it once delivered.
    entries: dict[int, bytes] = field(default_factory=dict)
    held: dict[int, Entry] = field(default_factory=dict)  # arrived early
    claimed: int = 0  # highest seq this author is known to have sent
    #: The highest seq and the latest Lamport time the author's own ACKs gave:
    #: everything it signs after all of them must be later than that time.
    vouched: tuple[int, int] = (0, 0)

    def offer(self, entry: Entry) -> str:
        """Classify an arriving entry: "next", "held", "duplicate" (raises on equivocation)."""
        seq = entry.seq
        self.claimed = max(self.claimed, seq)
        known = self._known_body(seq)
        if known is not None:
            if known != entry.body:
                raise Equivocation(f"two entries with sequence number {seq}")
            return "duplicate"
        if seq <= self.delivered:
            return "duplicate"  # delivered and since pruned: an old replay
        if seq == self.delivered + 1:
            return "next"
        if len(self.held) >= MAX_HELD or (
                sum(len(e.raw) for e in self.held.values()) + len(entry.raw) > MAX_HELD_BYTES):
            return "duplicate"  # too far ahead to keep; a resend will bring it back
        self.held[seq] = entry
        return "held"

    def mark_delivered(self, entry: Entry) -> None:
        self.delivered = entry.seq
        self.lamport = max(self.lamport, entry.lamport)
        self.entries[entry.seq] = entry.raw

    def _known_body(self, seq: int) -> bytes | None:
        """The body this author signed under ``seq``, if we hold it (same body, same id)."""
        held = self.held.get(seq)
        if held is not None:
            return held.body
        frame = self.entries.get(seq)
        # Sequenced entries are always signed: only ACK and VIEW travel as link entries.
        return None if frame is None else frame[HEADER_LEN:]

    def missing(self) -> tuple[int, int] | None:
        """The first gap to ask for again, as an inclusive range, or None."""
        if self.claimed <= self.delivered or self.delivered + 1 in self.held:
            return None
        end = min(self.held) - 1 if self.held else self.claimed
        return (self.delivered + 1, end)

    def note_claim(self, seq: int) -> None:
        """Someone says this author has sent up to ``seq`` (an ack, a heartbeat)."""
        self.claimed = max(self.claimed, seq)

    def vouch(self, seq: int, lamport: int) -> None:
        """The author acknowledged at ``lamport``, having signed up to ``seq``.

        Each is kept at its highest: an entry signed after every ACK so far
        (seq above them all) is later than each, so than the latest time. An
        ACK that came late, or a lying one, can only raise the bar.
        """
        self.vouched = (max(self.vouched[0], seq), max(self.vouched[1], lamport))

    def lamport_problem(self, entry: Entry) -> str | None:
        """Why ``entry``'s Lamport time cannot be honest (the next one delivered), or None.

        Times grow strictly along one author's sequence, and past every ACK it
        sent before signing the entry: an ACK says how far its clock was, and
        peers count on nothing earlier coming from it (finality). An entry
        dated back to win a collision is caught by the second rule.
        """
        if entry.lamport <= self.lamport:
            return "lamport_not_increasing"
        seq, lamport = self.vouched
        if entry.seq > seq and entry.lamport <= lamport:
            return "back_dated"
        return None
