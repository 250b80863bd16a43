"""Heartbeats: when each peer is due my marks again.

Every ACK of mine carries every mark (how far I hold each author's chain),
so one straight to an author after its play does a heartbeat's work for
that peer too. The heartbeat then goes every HEARTBEAT to every peer but
those that had such an ACK within the last HEARTBEAT; one of those that
hears nothing more from me by its own HEARTBEAT (and SINGLE_SLACK) gets one
of its own. So each peer hears my marks at least every HEARTBEAT (plus the
slack), as with a plain heartbeat to everyone, while at a busy table the
acks after each play are all the ACKs there are.

A small state machine over times and keys (and, for whom a play received
owes an ACK, the round's foundation log); the facade signs the ACKs.
"""

from __future__ import annotations

from ...game.foundations import Play
from ._base import HEARTBEAT
from ._state import RoundState

#: How long past its HEARTBEAT a peer acked straight waits for an ACK of its
#: own. Its next play (acked straight) or the next heartbeat often comes in
#: that while and does its work; sent exactly on time, a single rarely rides
#: with anything (a shell that ticked every 50 ms gave it that slack by chance).
SINGLE_SLACK = 0.05


class Heartbeats:
    """When my marks last went to everyone, and to each peer acked since; whom
    the frames being received are owed an ACK straight after."""

    def __init__(self) -> None:
        self._all = float("-inf")  # the last heartbeat (to everyone but the fresh)
        #: The peers my ACK went straight to since that heartbeat, or that it
        #: left out: when it did.
        self._acked: dict[bytes, float] = {}
        #: The authors of the plays received in the batch being taken in: each
        #: gets my ACK straight after it, one for the whole batch (the facade
        #: empties it as a batch begins and signs the ACKs as it ends).
        self.owed: set[bytes] = set()

    def owe(self, rs: RoundState, play: Play) -> None:
        """Another seat's ``play`` was just taken in: its author is owed my ACK straight
        after the batch, and so is the author of every other play it landed
        before on its pile (but mine).

        Those plays came before it, each acked straight to its author then,
        without it; and a play's fate is not settled at its author while a play
        ordered before it on its pile may not be held by every live seat
        (``_order.unsure_before``). Nobody else tells that author that I hold
        this one now: my next ACK to it is a heartbeat away, or its next play.
        """
        self.owed.add(rs.keys[play.author])
        plays = rs.log.piles[play.pile].plays
        if plays[-1] is play:  # the usual case: it landed last on its pile
            return
        for later in plays[plays.index(play) + 1:]:
            if later.author != rs.me:
                self.owed.add(rs.keys[later.author])

    def acked(self, key: bytes, now: float) -> None:
        """My marks went straight to ``key``."""
        self._acked[key] = now

    def next_due(self) -> float:
        """When :meth:`due` next has someone: the next heartbeat, or the first peer
        acked straight whose own HEARTBEAT (and SINGLE_SLACK) runs out before it."""
        first = self._all + HEARTBEAT
        for at in self._acked.values():
            first = min(first, at + HEARTBEAT + SINGLE_SLACK)
        return first

    def soon(self) -> None:
        """Everyone is due my marks at the next tick (an AUDIT or SUMMARY in: the
        round closes once every live seat has said it holds each)."""
        self._all = float("-inf")
        self._acked.clear()

    def due(self, now: float) -> tuple[frozenset[bytes] | None, list[bytes]]:
        """Who is due my marks now: ``(besides, singles)``. ``besides`` is None when
        no heartbeat is due, else the peers it leaves out (acked within the
        last HEARTBEAT); ``singles`` the peers due one of their own (acked
        HEARTBEAT and SINGLE_SLACK ago). Taken as sent."""
        if now - self._all >= HEARTBEAT:
            self._all = now
            self._acked = {k: at for k, at in self._acked.items() if now - at < HEARTBEAT}
            return frozenset(self._acked), []
        singles = [k for k, at in self._acked.items() if now - at >= HEARTBEAT + SINGLE_SLACK]
        for key in singles:
            del self._acked[key]  # the next heartbeat is less than HEARTBEAT away
        return None, singles
