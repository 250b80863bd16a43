"""Per-author sequences: in-order delivery, replays, gaps and equivocation.

Every sequenced entry carries its author's next sequence number. A replica
delivers each author's entries in sequence order (so Lamport times from one
author only grow, which finality relies on), holds early arrivals until the
gap is filled, ignores exact replays, and treats two *different* signed
entries with the same author and number as proof of misbehaviour. Each
delivered entry must name the one before it (`prev`, its signature): the log
keeps its head's, and an entry that names another predecessor is on another
branch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from .envelope import GENESIS, HEADER_LEN, Entry
from .identity import SIGNATURE_LEN

_SIG_START: Final = HEADER_LEN - SIGNATURE_LEN

#: Entries held per author while waiting for a gap to fill.
MAX_HELD: Final = 1024
#: Bytes of them (as received) per author: early AUDITs are large. Only keys
#: with a place at the table get entries held (a stranger's are dropped), so
#: this bounds the held entries of the whole table too.
MAX_HELD_BYTES: Final = 1 << 20


class Equivocation(Exception):
    """Two different entries signed by one author under one sequence number.

    ``known`` is the frame held before, ``entry`` the one that just came.
    """

    def __init__(self, known: bytes, entry: Entry) -> None:
        super().__init__(f"two entries with sequence number {entry.seq}")
        self.known = known
        self.entry = entry


@dataclass(slots=True)
class AuthorLog:
    """What one replica has of one author's sequence."""

    key: bytes
    delivered: int = 0  # highest seq delivered, all below it delivered too
    lamport: int = 0  # Lamport time of the last delivered entry
    head: bytes = GENESIS  # signature of the last delivered entry: what the next one names
    #: Delivered entries above ``floor``, kept to resend: those of the rounds the
    #: table may still need (see :meth:`prune`). Kept as frames only: the
    #: decoded entry (payload maps, an AUDIT's move list) is about 5x bigger,
    #: and nothing reads it once delivered.
    entries: dict[int, bytes] = field(default_factory=dict)
    #: Entries up to this seq are no longer held: pruned, or never had (taken
    #: up from a snapshot). A peer asking for one gets the host's snapshot.
    floor: int = 0
    held: dict[int, Entry] = field(default_factory=dict)  # arrived early
    #: How many early entries, and how many bytes of them, this log holds at most.
    max_held: int = MAX_HELD
    max_held_bytes: int = MAX_HELD_BYTES
    claimed: int = 0  # highest seq this author is known to have sent
    #: The highest seq and the latest Lamport time the author's own ACKs gave:
    #: everything it signs after all of them must be later than that time.
    vouched: tuple[int, int] = (0, 0)

    def offer(self, entry: Entry) -> str:
        """Classify an arriving entry: "next", "held", "duplicate" (raises on equivocation)."""
        seq = entry.seq
        if seq > self.claimed:
            self.claimed = seq
        held = self.held.get(seq)
        # Sequenced entries are always signed: only ACK and VIEW travel as link entries.
        known = held.raw if held is not None else self.entries.get(seq)
        if known is not None:
            if known[HEADER_LEN:] != entry.body:
                raise Equivocation(known, entry)
            return "duplicate"
        if seq <= self.delivered:
            return "duplicate"  # delivered and since pruned: an old replay
        if seq == self.delivered + 1:
            return "next"
        if len(self.held) >= self.max_held or (
                sum(len(e.raw) for e in self.held.values()) + len(entry.raw) > self.max_held_bytes):
            return "duplicate"  # too far ahead to keep; a resend will bring it back
        self.held[seq] = entry
        return "held"

    def mark_delivered(self, entry: Entry) -> None:
        self.delivered = seq = entry.seq
        if entry.lamport > self.lamport:
            self.lamport = entry.lamport
        self.entries[seq] = raw = entry.raw
        self.head = raw[_SIG_START:HEADER_LEN]  # (signed, as every sequenced entry)

    def prune(self, upto: int) -> None:
        """Forget the delivered entries before ``upto``: rounds every seat holds.

        The one at ``upto`` stays: a seat that holds that far names it in its
        ACK marks, which count once checked against our entry of that number.
        The chain head, the delivered number and the Lamport time stay, which
        is all that sequencing, the chain and the clock rules read; only the
        proof of a fork under a forgotten number is lost (a second entry
        under it is an old replay now, and ignored).
        """
        upto = min(upto, self.delivered)
        if upto - 1 > self.floor:
            self.entries = {seq: frame for seq, frame in self.entries.items() if seq >= upto}
            self.floor = upto - 1

    def take_up(self, seq: int, lamport: int, head: bytes) -> None:
        """Go on from entry ``seq`` (Lamport time ``lamport``, id ``head``) without
        holding it or anything before it: a snapshot's word for where the chain
        stood. Nothing changes if we hold that far already."""
        if seq <= self.delivered:
            return
        self.delivered = self.floor = seq
        self.lamport, self.head = lamport, head
        self.entries = {}
        self.held = {s: entry for s, entry in self.held.items() if s > seq}
        self.claimed = max(self.claimed, seq)

    def follows(self, entry: Entry) -> bool:
        """Whether the next entry to deliver names our head as its predecessor."""
        return entry.prev == self.head

    def id_at(self, seq: int) -> bytes | None:
        """The signature naming the delivered entry ``seq``, if we hold it."""
        if seq == self.delivered:
            return self.head
        frame = self.entries.get(seq)
        return None if frame is None else frame[_SIG_START:HEADER_LEN]

    def chain_id(self, seq: int) -> bytes | None:
        """The signature of our entry ``seq``: delivered, or held early on an unbroken chain
        from our head (a peer catching up holds a whole round ahead of what it
        can deliver, and learns from the others' marks that they hold the same)."""
        if seq <= self.delivered:
            return self.id_at(seq)
        head = self.head
        for k in range(self.delivered + 1, seq + 1):
            entry = self.held.get(k)
            if entry is None or entry.prev != head:
                return None
            head = entry.signature
        return head

    def missing(self) -> tuple[int, int] | None:
        """The first gap to ask for again, as an inclusive range, or None.

        Past entries held early too: a peer catching up holds the next round
        ahead of what it may deliver, and can check the others' marks (which
        name their latest entries) only along an unbroken run of them.
        """
        if len(self.held) == self.claimed - self.delivered:
            # Every number claimed is held (the held lie past the delivered, and none
            # past the claimed): a replayed record holds each round's entries until
            # the round before closes, and walking them after each entry made its
            # replay quadratic.
            return None
        start = self.delivered + 1
        while start in self.held:
            start += 1
        if start > self.claimed:
            return None
        end = min((s for s in self.held if s > start), default=self.claimed + 1) - 1
        return (start, end)

    def note_claim(self, seq: int) -> None:
        """Someone says this author has sent up to ``seq`` (an ack, a heartbeat).
        Noted for every mark of every ACK: a comparison, not a call to ``max``."""
        if seq > self.claimed:
            self.claimed = seq

    def vouch(self, seq: int, lamport: int) -> None:
        """The author acknowledged at ``lamport``, having signed up to ``seq``.

        Each is kept at its highest: an entry signed after every ACK so far
        (seq above them all) is later than each, so than the latest time. An
        ACK that came late, or a lying one, can only raise the bar.
        """
        vouched_seq, vouched_at = self.vouched
        if seq > vouched_seq or lamport > vouched_at:  # (else it stays as it is)
            self.vouched = (max(vouched_seq, seq), max(vouched_at, lamport))

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
