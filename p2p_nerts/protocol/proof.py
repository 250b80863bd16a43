"""Proofs of equivocation: two entries one author signed under one sequence number.

Each author's sequenced entries form a hash chain (an entry's `prev` is the
id of the author's entry before it), so two peers that hold the same entry
hold the same history of its author up to it. An honest author signs one
entry per sequence number; two validly signed ones are proof that it lied,
which anyone can check from the two frames alone, with no trust in whoever
relays them.

A proof is *strict* when both entries name the same predecessor: then the
author's chain is the same for everyone up to just before them, and they
are where it forked. Every peer cuts the author's entries there, at the same
sequence number, whichever pair of the fork it found first. A pair whose
predecessors differ only says the fork is earlier: the finder asks for the
predecessors and looks again (see Replica), until it holds a strict pair.
"""

from __future__ import annotations

from dataclasses import dataclass

from .envelope import Entry, EnvelopeError, open_entry

__all__ = ["ForkProof", "check_fork", "strict_pair"]


@dataclass(frozen=True, slots=True)
class ForkProof:
    """A checked proof: `author` signed both frames under `seq`; `cut` = seq − 1 is
    the last of its entries that every peer holds alike."""

    author: bytes
    seq: int
    first: bytes
    second: bytes

    @property
    def cut(self) -> int:
        return self.seq - 1


def strict_pair(a: Entry, b: Entry) -> bool:
    """Whether two verified entries prove a fork at their own sequence number."""
    return (a.signed and b.signed and a.author == b.author and a.table_id == b.table_id
            and a.seq == b.seq and a.prev == b.prev and a.body != b.body)


def check_fork(first: bytes, second: bytes, table_id: bytes) -> ForkProof:
    """Verify both signatures and that the pair is a strict fork at this table.

    Raises EnvelopeError("bad_proof") for anything else, so a FORK carrying a
    made-up proof is refused (and its signer named) like any invalid entry.
    """
    try:
        a, b = open_entry(first), open_entry(second)
    except EnvelopeError:
        raise EnvelopeError("bad_proof") from None
    if a.table_id != table_id or not strict_pair(a, b):
        raise EnvelopeError("bad_proof")
    return ForkProof(a.author, a.seq, a.raw, b.raw)
