"""Heartbeats: when each peer is due my marks again.

Every ACK of mine carries every mark (how far I hold each author's chain),
so one straight to an author after its play does a heartbeat's work for
that peer too. The heartbeat then goes every HEARTBEAT to every peer but
those that had such an ACK within the last HEARTBEAT; one of those that
hears nothing more from me by its own HEARTBEAT gets one of its own. So
each peer hears my marks at least every HEARTBEAT (plus a tick), as with a
plain heartbeat to everyone, while at a busy table the acks after each play
are all the ACKs there are.

A small state machine over times and keys; the facade signs the ACKs.
"""

from __future__ import annotations

from ._base import HEARTBEAT


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

    def acked(self, key: bytes, now: float) -> None:
        """My marks went straight to ``key``."""
        self._acked[key] = now

    def soon(self) -> None:
        """Everyone is due my marks at the next tick (an AUDIT or SUMMARY in: the
        round closes once every live seat has said it holds each)."""
        self._all = float("-inf")
        self._acked.clear()

    def due(self, now: float) -> tuple[frozenset[bytes] | None, list[bytes]]:
        """Who is due my marks now: ``(besides, singles)``. ``besides`` is None when
        no heartbeat is due, else the peers it leaves out (acked within the
        last HEARTBEAT); ``singles`` the peers due one of their own. Taken as
        sent."""
        if now - self._all >= HEARTBEAT:
            self._all = now
            self._acked = {k: at for k, at in self._acked.items() if now - at < HEARTBEAT}
            return frozenset(self._acked), []
        singles = [k for k, at in self._acked.items() if now - at >= HEARTBEAT]
        for key in singles:
            del self._acked[key]  # the next heartbeat is less than HEARTBEAT away
        return None, singles
