"""Pruning and catching up: which finished rounds a replica forgets, and the
snapshot that brings a peer back that asks for what was forgotten.

A long game must not grow a peer's memory with every round. As each round
begins, a replica notes where every author's chain stands and the table's
state (a :class:`~p2p_nerts.protocol.messages.Snapshot`); at the next round's
start it forgets each author's entries up to the earlier note, and only as
far as every seat's ACKs say it holds them. So it keeps the current round and
the one before (what a peer still closing a round, or back from a short
crash, asks for), and never what a seat still lacks. A peer that asks for an
entry older than that (a newcomer, a spectator, a peer back from a long
outage) gets the host's snapshot as the previous round began, and replays
from there what every peer still holds.

Pure: the facade asks and applies (signs the snapshot, prunes the logs,
takes a snapshot up).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..authors import AuthorLog
from ..messages import MAX_SNAPSHOT_KEYS, AckMark, Head, Seat, Settings, Snapshot, Total


@dataclass(slots=True)
class Pruning:
    """What one replica knows for pruning: who holds what, and its two notes."""

    #: Seat key → author → the highest seq that seat's ACKs say it holds.
    held_by: dict[bytes, dict[bytes, int]] = field(default_factory=dict)
    #: Each author's delivered seq, and the snapshot, as the current round began.
    begun: tuple[dict[bytes, int], Snapshot] | None = None
    #: The snapshot handed out for forgotten entries: as the previous round began.
    floor: Snapshot | None = None
    #: The round of the last snapshot this replica could not take up (said once).
    refused: int = 0

    def heard(self, seat: bytes, marks: Iterable[AckMark]) -> None:
        """A seat's ACK: how far it holds each author's chain."""
        held = self.held_by.setdefault(seat, {})
        for mark in marks:
            if mark.seq > held.get(mark.author, 0):
                held[mark.author] = mark.seq

    def round_begins(self, snapshot: Snapshot, seats: Iterable[bytes],
                     me: bytes) -> dict[bytes, int]:
        """A round begins with ``snapshot`` (see :func:`capture`); returns, by author,
        the seq before which its entries may be forgotten now.

        That is where its chain stood as the previous round began, or less
        where a seat of this round has not said it holds that far (a newcomer
        still catching up, a seat whose ACKs were lost): nothing a seat may
        still ask for is forgotten. A liar claiming more only denies itself.
        """
        seats = set(seats)
        self.held_by = {k: held for k, held in self.held_by.items() if k in seats}
        previous, self.begun = self.begun, (positions(snapshot), snapshot)
        if previous is None:
            return {}
        stood, self.floor = previous
        others = [self.held_by.get(k, {}) for k in seats if k != me]
        floors = {}
        for author, seq in stood.items():
            floor = min([seq, *(held.get(author, 0) for held in others)])
            if floor > 0:
                floors[author] = floor
        return floors


def positions(snapshot: Snapshot) -> dict[bytes, int]:
    return {head.author: head.seq for head in snapshot.heads}


def capture(number: int, *, over: bool, seats: tuple[Seat, ...], settings: Settings,
            totals: dict[bytes, int], rounds: int, authors: dict[bytes, AuthorLog],
            player: Callable[[bytes], bool]) -> Snapshot:
    """The table as round ``number`` begins: its ROSTER delivered, nothing of the
    round yet. Honest peers agree on everything but the heads (which lobby
    entries each has delivered); a head is the author's own signature, which
    its next entry names, so a wrong one is found out at that entry."""
    heads = [Head(key, log.delivered, log.lamport, log.head)
             for key, log in sorted(authors.items()) if log.delivered and player(key)]
    seated = {seat.key for seat in seats}
    kept = sorted(totals.items(), key=lambda kv: (kv[0] not in seated, kv[0]))
    return Snapshot(number, over, seats, settings,
                    tuple(sorted(Total(k, v) for k, v in kept[:MAX_SNAPSHOT_KEYS])),
                    rounds, tuple(heads[:MAX_SNAPSHOT_KEYS]))


def behind(snapshot: Snapshot, authors: dict[bytes, AuthorLog]) -> bool:
    """Whether we hold less of some author than the snapshot does."""
    return any((log := authors.get(head.author)) is None or log.delivered < head.seq
               for head in snapshot.heads)


