"""The outbox: my own entries, numbered, dated and chained as I sign them.

A small class owning my sequence number, (shared with finality, which reads
it) my Lamport clock, and my play signed but not yet delivered to myself.
:func:`signing` decides how an entry I am about to sign is handled now, and
:meth:`Outbox.sign` carries that out in one call: the frame queued, the
record journaled, the entry put off until I am back at the table, or taken
from the journal being replayed; what it returns the facade delivers to
myself (the only place that does).
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Sequence

from ..authors import AuthorLog
from ..clock import LamportClock
from ..envelope import GENESIS, Entry
from ..identity import Identity
from ..journal import Kind, Record
from ..messages import Head, MsgType, Payload, link_message, parse_payload, seal_message
from ..resume import Deferred
from ._base import BETWEEN_ROUND_TYPES, EPHEMERAL, LINK_TYPES, ROUND_TYPES, Outbound, Send
from ._recovery import Recovery
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
        #: My play, signed and returned by the command that made it, not yet
        #: delivered to myself: the shell sends it first and calls
        #: ``Replica.apply_own``, so that the other peers start checking it while
        #: I apply it (one cold pass through my own delivery on a peer just woken
        #: to play). Any call applies it first, so nothing is ever judged without it.
        self.unapplied: tuple[Entry, Payload] | None = None

    def hold(self, signed: tuple[Entry, Payload] | None) -> None:
        """My play just signed, to deliver to myself on the next call (:attr:`unapplied`)."""
        self.unapplied = signed

    def take_unapplied(self) -> tuple[Entry, Payload] | None:
        """My play signed and not yet delivered to myself, if any, taken to be now."""
        signed, self.unapplied = self.unapplied, None
        return signed

    def sign(self, out: Outbound, payload: Payload, rs: RoundState | None,
             mine: AuthorLog | None, back: Recovery, *, round_no: int | None = None,
             to: bytes | None = None, expect_lamport: int | None = None,
             besides: frozenset[bytes] = frozenset()) -> tuple[Entry, Payload] | None:
        """Handle one entry of mine as :func:`signing` says, into ``out``; what to
        deliver to myself is returned (None: nothing).

        ``mine`` is my log as delivered to myself (its head is the predecessor);
        ``back`` the journal being replayed and the resume under way. Signed,
        an ephemeral entry is only queued, a sequenced one journaled, queued
        and returned. Restoring, my journaled entry of that number is returned
        instead, where live play delivered it; resuming, the entry waits.
        """
        kind = payload.TYPE
        how = signing(kind, rs, resuming=back.resume is not None, restoring=back.restoring)
        if how is Signing.SIGN:
            number = round_no if round_no is not None else (rs.number if rs else 0)
            if kind in EPHEMERAL:
                # It names the last entry delivered to myself (a VIEW riding with a
                # play is signed before the play is).
                out.sends.append(Send(self.ephemeral(payload, number, mine), to,
                                      shown=kind is MsgType.VIEW, besides=besides))
                return None
            entry = self.sequenced(payload, number, GENESIS if mine is None else mine.head,
                                   expect_lamport)
            out.journal.append(Record(Kind.ENTRY, entry.raw))
            out.sends.append(Send(entry.raw, to))
            return entry, payload
        if how is Signing.DEFER:
            assert back.resume is not None
            back.resume.deferred.append(Deferred(payload, deferred_round(kind, round_no, rs), to))
        elif how is Signing.REPLAY and kind not in EPHEMERAL:
            signed = back.signed(self.seq + 1)
            if signed is not None and signed.type == kind:
                return signed, parse_payload(signed.type, signed.payload)
        return None

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

    def caught_up(self, mine: AuthorLog | None, heads: Sequence[Head],
                  dated: Collection[bytes]) -> None:
        """The table's chains taken up as far as ``heads`` (a snapshot's), ``mine``
        my own among them: never sign under a number it holds, nor before the time
        of a ``dated`` author's head."""
        self.seq = max(self.seq, mine.delivered if mine is not None else 0)
        self.clock.time = max([self.clock.time, *(h.lamport for h in heads if h.author in dated)])
