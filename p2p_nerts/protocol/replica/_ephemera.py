"""The ephemeral side: my marks going out.

Every ACK of mine says how far I hold every chain (``liveness.my_ack``): straight
to an author right after its play, which does the heartbeat's work for that
peer, or as the heartbeat, when ``Heartbeats`` says one is due.

``Ephemera`` keeps no state of its own, only the owners it reads and changes
(the chains, the seating, the proofs, the recovery, the heartbeats), as
``Steps`` does. What it decides comes back as effects (``_effects``), or, for
my ACK straight after a batch received (a received play's path), as the ACK
itself; the facade signs.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..messages import Ack
from . import _liveness as liveness
from ._effects import Effect, SignAck
from ._forks import Forks
from ._heartbeats import Heartbeats
from ._intake import Places
from ._recovery import Recovery
from ._seating import Seating
from ._state import RoundState


class Ephemera:
    """Where one table's replica decides what my ACKs say and to whom: the owners
    it reads and changes."""

    def __init__(self, *, places: Places, seating: Seating, forks: Forks, recovery: Recovery,
                 beats: Heartbeats) -> None:
        self.places = places
        self.seating = seating
        self.forks = forks
        self.recovery = recovery
        self.beats = beats

    # ------------------------------------------------------------- my marks
    def ack(self, rs: RoundState | None, prev_rs: RoundState | None, to: bytes,
            now: float) -> Ack:
        """My ACK straight to ``to`` (an author right after its play,
        ``Heartbeats.owe``): how far I hold every chain (``liveness.my_ack``; this
        round's and the last round's seats too). It does the heartbeat's work
        for that peer (``Heartbeats.acked``; not while the journal is replayed).
        The facade signs it: on a received play's path, so no effect."""
        if not self.recovery.restoring:
            self.beats.acked(to, now)
        return liveness.my_ack(self.seating.seated, rs, prev_rs, self.places.authors,
                               self.forks.proven)

    def beat(self, rs: RoundState | None, prev_rs: RoundState | None,
             now: float) -> Sequence[Effect]:
        """My ACKs due by the clock (``Heartbeats.due``): the heartbeat, to every peer
        but those acked straight within the last one, or one of its own to each
        of those that had none for as long."""
        besides, singles = self.beats.due(now)
        if besides is None and not singles:
            return ()
        ack = liveness.my_ack(self.seating.seated, rs, prev_rs, self.places.authors,
                              self.forks.proven)
        if besides is not None:
            return (SignAck(ack, besides=besides),)
        return [SignAck(ack, to=key) for key in singles]
