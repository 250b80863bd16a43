"""Replicas wired together in memory: the one in-memory network of the project.

A solo table (``session.LocalTable``) and the protocol's test harness
(``testing.memnet.MemNet``) both seat replicas in one process and carry their
frames here: each frame a replica sends is posted to the replicas it reaches
(:meth:`Wires.targets`), due at a time its user picks (a LAN's delay, or a
hostile network's), and delivered in the order it falls due, ties in the
order posted, over the sender's own "link" (``via``: its key). What the wires
do to a frame on the way (delay, loss, duplication, a split) is their user's;
which replica hears which frame, and in what order, is decided here only.
"""

from __future__ import annotations

import heapq

from .replica import Outbound, Replica, Send

__all__ = ["Wires"]


class Wires:
    """The frames between ``replicas`` not delivered yet (the list is shared: a replica
    appended to it comes onto the wires with :meth:`joined`)."""

    def __init__(self, replicas: list[Replica]) -> None:
        self.replicas = replicas
        self._index = {r.me.public_key: i for i, r in enumerate(replicas)}
        self._queue: list[tuple[float, int, int, int, bytes]] = []  # due, order, to, from
        self._order = 0

    def joined(self, index: int) -> None:
        """``replicas[index]`` is on the wires now: frames for its key reach it."""
        self._index[self.replicas[index].me.public_key] = index

    def targets(self, sender: int, send: Send) -> list[int]:
        """The replicas ``send`` from ``sender`` reaches: the one it is for, else every
        other (``Send.reaches``: a heartbeat leaves some out). A frame for a key
        not on the wires reaches no one."""
        if send.to is not None:
            to = self._index.get(send.to)
            return [to] if to is not None and to != sender else []
        return [t for t, r in enumerate(self.replicas)
                if t != sender and send.reaches(r.me.public_key)]

    def post(self, due: float, sender: int, target: int, data: bytes) -> None:
        """Put a frame from ``sender`` on the way to ``target``, delivered at ``due``."""
        self._order += 1
        heapq.heappush(self._queue, (due, self._order, target, sender, data))

    @property
    def next_due(self) -> float | None:
        """When the next frame falls due (None: nothing is on the way)."""
        return self._queue[0][0] if self._queue else None

    def take(self) -> tuple[int, int, bytes]:
        """The next frame due, off the wires: ``(target, sender, data)``."""
        _due, _order, target, sender, data = heapq.heappop(self._queue)
        return target, sender, data

    def deliver(self, target: int, sender: int, data: bytes, now: float) -> Outbound:
        """``data`` received by ``target``, over its link from ``sender`` (a direct,
        authenticated one: the sender's key is the ``via``)."""
        via = self.replicas[sender].me.public_key
        return self.replicas[target].receive(data, now, via)
