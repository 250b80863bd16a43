"""The outbox: my own entries, numbered, dated and chained as I sign them.

A small class owning my sequence number and (shared with finality, which
reads it) my Lamport clock. It only builds frames; :func:`signing` decides
how an entry I am about to sign is handled now, and the facade journals it,
queues it and delivers it to myself.
"""

from __future__ import annotations

import enum

from ..authors import AuthorLog
from ..clock import LamportClock
from ..envelope import GENESIS, Entry
from ..identity import Identity
from ..messages import MsgType, Payload, link_message, seal_message
from ._base import BETWEEN_ROUND_TYPES, EPHEMERAL, LINK_TYPES, ROUND_TYPES
from ._state import RoundState


class Signing(enum.Enum):
    """What becomes of an entry I am about to sign."""

    SIGN = enum.auto()     #: sign it now
    NOTHING = enum.auto()  #: no seat in its round, or out of it: nothing of mine counts there
    DEFER = enum.auto()    #: back at a table: not before I know where my chain ends there
    REPLAY = enum.auto()   #: restoring: the journal holds what I signed here before the crash


def signing(kind: MsgType, rs: RoundState | None, *, resuming: bool,
            restoring: bool) -> Signing:
    """How an entry of type ``kind`` that I am about to sign is handled now."""
    if (kind in ROUND_TYPES and rs is not None
            and (rs.me is None or rs.dropped(rs.me) or rs.me in rs.forks)):
        return Signing.NOTHING
    if resuming and kind not in EPHEMERAL and not restoring:
        return Signing.DEFER
    if restoring:
        return Signing.REPLAY
    return Signing.SIGN


def deferred_round(kind: MsgType, round_no: int | None, rs: RoundState | None) -> int | None:
    """The round an entry put off until I resume is for: a round's entry (or the
    host's between rounds) keeps the round it was made in, for it or for none."""
    if round_no is None and rs is not None and kind in ROUND_TYPES | BETWEEN_ROUND_TYPES:
        return rs.number
    return round_no


class Outbox:
    """My sequence number and Lamport clock, and the frames signed with them."""

    def __init__(self, identity: Identity, table_id: bytes, clock: LamportClock) -> None:
        self.me = identity
        self.table_id = table_id
        self.clock = clock
        self.seq = 0  # the last number I signed (or, back at a table, learned I had)

    def sequenced(self, payload: Payload, number: int, prev: bytes,
                  expect_lamport: int | None = None) -> Entry:
        """My next entry, naming ``prev`` (my head) as its predecessor.

        ``expect_lamport``: the time a local play was keyed by before signing;
        the entry must carry that very time.
        """
        self.seq += 1
        lamport = self.clock.tick()
        if expect_lamport is not None and lamport != expect_lamport:
            raise AssertionError("Lamport time moved under a local play")
        return seal_message(self.me, payload, table_id=self.table_id, round=number,
                            seq=self.seq, lamport=lamport, prev=prev)

    def ephemeral(self, payload: Payload, number: int, mine: AuthorLog | None) -> bytes:
        """An entry that takes no number: it carries my latest one instead.

        Peers learn from it what I have sent, and ask again for anything
        lost. It names my chain head too (``mine``: my log as delivered to
        myself), so a peer holding another entry of mine under that number
        notices. Link types go unsigned (the link says who sent them).
        """
        head = GENESIS if mine is None else mine.head
        seq = max(mine.delivered if mine is not None else 0, 1)
        lamport = max(self.clock.time, 1)
        if payload.TYPE in LINK_TYPES:
            return link_message(self.me.public_key, payload, table_id=self.table_id,
                                round=number, seq=seq, lamport=lamport, prev=head)
        return seal_message(self.me, payload, table_id=self.table_id, round=number,
                            seq=seq, lamport=lamport, prev=head).raw

    def took(self, entry: Entry) -> None:
        """One of my entries was delivered to me (signed here, from the journal, or
        fetched from the table): never sign under its number, or before its time."""
        self.seq = max(self.seq, entry.seq)
        self.clock.time = max(self.clock.time, entry.lamport)
