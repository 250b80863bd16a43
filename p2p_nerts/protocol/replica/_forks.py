"""Forks: the proofs of equivocation this replica holds, the leads to a fork it
follows, and what a FORK does at its turn in the total order.

A small class owns what outlives a round (the proven keys, the leads asked
about); the rest are functions of one round's state, changed through its own
methods (a proof held, a seat convicted). They return what
the facade must do as effects (``_effects``: ask for an entry, tell the user);
nothing here signs or sends. What a proof held or a FORK's turn does next
(what a proven seat sent past its fork taken out, a FORK published, the
accused leaving the round) is taken by ``Steps``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .. import events as ev
from ..envelope import Entry, author_of, open_entry
from ..messages import Fork, Resend
from ..proof import ForkProof, strict_pair
from ._base import RESEND_INTERVAL, Lead
from ._effects import Effect, Emit, Sign
from ._state import RoundState


@dataclass(frozen=True, slots=True)
class Held:
    """A proof now holds against ``seat`` in the round: what it signed past the
    fork is taken out; ``first``: no proof against it was held before (then the
    facade tells everyone, once)."""

    seat: int
    first: bool


@dataclass(frozen=True, slots=True)
class Convicted:
    """A FORK's turn in the total order: ``seat`` leaves the round, flagged, and
    counts up to ``cut``."""

    seat: int
    proof: ForkProof
    cut: int


class Forks:
    """The proven equivocators (for the whole game: the host seats them no more)
    and the fork leads asked about in this round."""

    def __init__(self) -> None:
        self.proven: dict[bytes, ForkProof] = {}
        self._asked: dict[tuple[bytes, int], float] = {}

    def new_round(self) -> None:
        self._asked.clear()

    def ask(self, rs: RoundState | None, lead: Lead, now: float) -> bool:
        """Whether to ask for the entry a lead names now: at most every
        RESEND_INTERVAL, and no more once its author is proven in the round."""
        seat = rs.seat_of(lead.author) if rs is not None else None
        if rs is not None and seat is not None and seat in rs.forks:
            return False
        if now - self._asked.get((lead.author, lead.seq), -1e9) < RESEND_INTERVAL:
            return False
        self._asked[(lead.author, lead.seq)] = now
        return True

    def follow(self, rs: RoundState | None, leads: Iterable[Lead], now: float) -> list[Effect]:
        """Ask for the entries these leads name, as often as :meth:`ask` allows: a
        second signed entry under that number, the answer, proves the fork."""
        return [Sign(Resend(lead.author, lead.seq, lead.seq), to=lead.via)
                for lead in leads if self.ask(rs, lead, now)]

    def hold(self, rs: RoundState | None, proof: ForkProof) -> Held | None:
        """Keep a checked proof (the lowest one of each author), and against its
        author's seat in the round; None when it changes nothing in the round.

        Its entries from the fork on differ between peers, so none of them is
        final anywhere (finality needs matching marks); taking them out at
        once, on each peer as it learns the proof, changes no decision already
        taken. It leaves the live seats only where its FORK entry comes in
        the total order (:func:`convict`), the same point on every peer.
        """
        known = self.proven.get(proof.author)
        if known is None or proof.seq < known.seq:
            self.proven[proof.author] = proof
        seat = rs.seat_of(proof.author) if rs is not None else None
        if rs is None or seat is None:
            return None
        held = rs.forks.get(seat)
        if held is not None and held.seq <= proof.seq:
            return None
        rs.fork_proven(seat, proof)
        return Held(seat, held is None)


def conflict(known: bytes, entry: Entry, via: bytes | None) -> ForkProof | Lead | None:
    """Two entries of one author under one number: a proof, or a lead to one.

    When they name different predecessors the chains parted earlier: ask
    whoever sent this branch for the entry before, until a strict pair.
    """
    first = open_entry(known)
    if strict_pair(first, entry):
        return ForkProof(entry.author, entry.seq, first.raw, entry.raw)
    if entry.seq > 1:
        return Lead(entry.author, entry.seq - 1, via)
    return None


def convict(rs: RoundState, fork: Fork) -> Convicted | None:
    """A FORK's turn in the total order: its accused, if still live, is flagged, and
    its drop is cut at the fork (like an agreed drop, taking effect here: what it
    signed before counts, as every peer holds the same, nothing after)."""
    accused = rs.seat_of(author_of(fork.first))
    if accused is None or accused not in rs.live:
        return None
    proof = rs.forks[accused]
    cut = min(rs.dropping.get(accused, proof.cut), proof.cut)
    rs.convicted(accused, cut)
    return Convicted(accused, proof, cut)


def flagged(rs: RoundState, fork: Fork, convicted: Convicted) -> Emit:
    """The accused of a FORK at its turn (:func:`convict`) flagged, with the proof."""
    seat = convicted.seat
    return Emit(ev.Flagged(seat, rs.names[seat],
                           f"equivocation: signed two entries numbered {convicted.proof.seq}",
                           (fork.first, fork.second)))
