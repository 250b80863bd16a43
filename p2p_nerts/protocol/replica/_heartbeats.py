"""Heartbeats: when each peer is due my marks again, and how often.

Every ACK of mine carries every mark (how far I hold each author's chain),
so one straight to an author after its play does a heartbeat's work for
that peer too. The heartbeat then goes every interval (:func:`every`) to
every peer but those that had such an ACK within the last interval; one of
those that hears nothing more from me by its own interval (and
SINGLE_SLACK) gets one of its own. So each peer hears my marks at least
every interval (plus the slack), as with a plain heartbeat to everyone,
while at a busy table the acks after each play are most of the ACKs there
are.

The interval is HEARTBEAT, but longer while a round is played and only
plays wait for their turn in its total order (:func:`every`): a play's fate
at its author rests on the straight ACKs alone, and the others' plays wait
only to be told in order. Whatever else is ordered (a stuck vote, a Nerts
call, a drop vote, a fork's proof, mine too; the last audit, the last
summary) makes everyone due my marks at the next tick as it comes in
(:func:`at_once`, :meth:`Heartbeats.soon`), and so does a play ordered
before one waiting for its turn (:func:`decides`); the interval is
HEARTBEAT again until that turn is taken. What the table decides waits no
longer than with a heartbeat every HEARTBEAT, and a round closes sooner.

A small state machine over times and keys (and, for whom a play received
owes an ACK, the round's foundation log); the facade signs the ACKs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ...game.foundations import Play, before
from ..messages import MsgType
from ._base import HEARTBEAT, Phase
from ._state import RoundState

#: How long past its interval a peer acked straight waits for an ACK of its
#: own. Its next play (acked straight) or the next heartbeat often comes in
#: that while and does its work; sent exactly on time, a single rarely rides
#: with anything (a shell that ticked every 50 ms gave it that slack by chance).
SINGLE_SLACK = 0.05
#: The heartbeat while only plays wait for their turn, at most: my marks tell
#: a peer when the others' plays are final, which it only tells in order (the
#: seat that made one has its straight ACKs), so they may come later; every
#: heartbeat the table takes in costs each peer a wake-up.
PLAY_HEARTBEAT = 1.5
#: ... and at least this many heartbeats within the table's ``drop_after``: a seat
#: that only listens is heard through its heartbeats alone, and must never come
#: near silent (the shortest ``drop_after`` keeps HEARTBEAT).
BEATS_PER_DROP = 4

_PLAY: Final = MsgType.PLAY
_PLAYING: Final = Phase.PLAYING
_AUDIT: Final = MsgType.AUDIT
_SUMMARY: Final = MsgType.SUMMARY


def at_once(rs: RoundState, kind: int) -> bool:
    """Whether an ordered entry other than a play, just taken in (of type ``kind``),
    makes everyone due my marks at the next tick (:meth:`Heartbeats.soon`): a
    stuck vote, a Nerts call, a DROP vote or a fork's proof, mine too; an AUDIT
    (or a SUMMARY) once every live seat's is in.

    Mine too: its turn waits for every play ordered before it, and for each,
    for my word that I hold it as well as the others'; my heartbeat may have
    left some peers out, or be most of an interval away.

    The round is scored once every live seat's audit has had its turn, and
    agreed once every summary has: an AUDIT that leaves one still to come is
    acted on no sooner with my marks at once, and with one broadcast each
    after the last, not after every one, a round's close costs each peer a
    few wake-ups where it cost it two for every other seat. (A seat that keeps its
    audit back is voted out, and the votes get my marks at once.)
    """
    if kind == _AUDIT:
        return _all_in(rs, rs.audit_seq)
    if kind == _SUMMARY:
        return _all_in(rs, rs.summary_seq)
    return True


def decides(rs: RoundState, play: Play) -> bool:
    """Whether another seat's ``play``, just taken in, is ordered before an entry
    other than a play that waits for its turn (a Nerts call, say): that turn
    waits for every seat's word that it holds the play too, and the marks
    that went out at once as that entry came in did not name it (it came
    later). It gets everyone my marks at the next tick as well."""
    return bool(rs.unplayed) and any(
        item.kind != _PLAY and before(play.key, (item.lamport, item.seat))
        for item in rs.ordered)


def _all_in(rs: RoundState, said: Mapping[int, int]) -> bool:
    """Whether every live seat not agreed dropped has said its piece (``said``)."""
    return all(seat in said for seat in rs.live if seat not in rs.dropping)


def every(phase: Phase, rs: RoundState | None, drop_after: float) -> float:
    """How often my marks are due to each peer now: HEARTBEAT, or while a round
    is played with nothing but plays waiting for their turn in its total order
    (no stuck vote, Nerts call, fork's proof or agreed drop, no DROP vote
    waiting to be counted), up to PLAY_HEARTBEAT, a BEATS_PER_DROP-th of the
    table's ``drop_after``."""
    if phase is not _PLAYING or rs is None or rs.drop_queue or rs.unplayed:
        return HEARTBEAT
    return min(PLAY_HEARTBEAT, max(HEARTBEAT, drop_after / BEATS_PER_DROP))


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

    def next_due(self, interval: float) -> float:
        """When :meth:`due` next has someone, the heartbeat going every ``interval``
        (:func:`every`): the next heartbeat, or the first peer acked straight whose
        own interval (and SINGLE_SLACK) runs out before it."""
        first = self._all + interval
        for at in self._acked.values():
            first = min(first, at + interval + SINGLE_SLACK)
        return first

    def soon(self) -> None:
        """Everyone is due my marks at the next tick (another seat's entry in that
        is ordered and not a play: its turn comes once every live seat has said
        it holds it)."""
        self._all = float("-inf")
        self._acked.clear()

    def due(self, now: float, interval: float) -> tuple[frozenset[bytes] | None, list[bytes]]:
        """Who is due my marks now, the heartbeat going every ``interval``
        (:func:`every`): ``(besides, singles)``. ``besides`` is None when no
        heartbeat is due, else the peers it leaves out (acked within the last
        interval); ``singles`` the peers due one of their own (acked an interval
        and SINGLE_SLACK ago). Taken as sent."""
        if now - self._all >= interval:
            self._all = now
            self._acked = {k: at for k, at in self._acked.items() if now - at < interval}
            return frozenset(self._acked), []
        singles = [k for k, at in self._acked.items() if now - at >= interval + SINGLE_SLACK]
        for key in singles:
            del self._acked[key]  # the next heartbeat is less than an interval away
        return None, singles
