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

The journal follows the same rule (:func:`compact`, in each break between
rounds): a ``--resume`` replays it, and a long game must not make that long
either.

Pure: ``Pruning`` says what to forget and how to take a snapshot up, and
``Steps`` carries that out (journals the note, prunes the chains through
``Places``, takes a snapshot up); a store applies :func:`compact` to its
journal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import msgpack

from ...game.scoring import Match
from ...game.variants import VariantError, Variants
from .. import events as ev
from ..authors import AuthorLog
from ..envelope import HEADER_LEN, Entry, EnvelopeError, author_of
from ..journal import Kind, Record, snapshot_of, unpack
from ..messages import MAX_SNAPSHOT_KEYS, AckMark, Head, Seat, Settings, Snapshot, Total
from ._base import EPHEMERAL, Phase, rules_of
from ._effects import Effect, Emit

CANNOT_CATCH_UP = ("the table no longer holds entries of rounds this peer missed: it "
                   "cannot catch up; start again without --resume to sit down afresh")


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

    def begin(self, snapshot: Snapshot, me: bytes) -> dict[bytes, int]:
        """Round ``snapshot.round`` begins (``snapshot``: :func:`capture`, which the
        caller journals, where a compacted journal will start): by author, the
        seq before which its entries are forgotten now (:meth:`round_begins`)."""
        return self.round_begins(snapshot, {seat.key for seat in snapshot.seats}, me)

    def offered(self, entry: Entry, snapshot: Snapshot, *, host_key: bytes, is_host: bool,
                authors: dict[bytes, AuthorLog], number: int) -> Variants | list[Effect]:
        """The host's snapshot (``entry``), in round ``number``: the rules to take it
        up by (``Steps.take_up``), if we hold less than it does and have not begun
        its round; else, if we hold less, say once that we cannot catch up.
        Raises ``EnvelopeError`` for one that deals no table."""
        if entry.author != host_key or is_host or not behind(snapshot, authors):
            return []
        if number >= snapshot.round:
            if self.refused >= snapshot.round:
                return []
            self.refused = snapshot.round
            return [Emit(ev.Notice(CANNOT_CATCH_UP))]
        try:
            variants = rules_of(snapshot.settings)
            variants.check_players(len(snapshot.seats))
        except VariantError:
            raise EnvelopeError("bad_field:snapshot") from None
        return variants

    def take_up(self, snapshot: Snapshot,
                variants: Variants) -> tuple[dict[bytes, int], Match, Phase]:
        """Go on from ``snapshot``: the host's, or my own note that a compacted
        journal starts with, which is the note of its round: the game as it
        gives it, its totals, match and phase, for ``Game.take_standing``
        (``Steps.take_up`` takes its chains, rules and seats up; then the round
        is caught up with before moving, and begins as it did for everyone)."""
        self.begun = (positions(snapshot), snapshot)
        seated = len(snapshot.seats)
        return ({total.key: total.points for total in snapshot.totals},
                Match(variants, seated, [0] * seated, snapshot.rounds),
                Phase.OVER if snapshot.over else Phase.BETWEEN)


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


@dataclass(frozen=True, slots=True)
class Compaction:
    """A journal rewritten to start where the round before the current one began.

    ``kept`` is the new journal: that round's snapshot first, then what a
    replay from it needs. ``past`` are the signed entries it no longer holds:
    a resume does not need them, but the game's record does.
    """

    kept: tuple[Record, ...]
    past: tuple[Record, ...]


def compacts(events: Iterable[ev.Event]) -> bool:
    """Whether a call closed a round: in the break that follows, the journal is
    compacted (nothing waits on the disk then, as the next deal would)."""
    return any(isinstance(event, ev.RoundOver) for event in events)


def compact(records: Sequence[Record]) -> Compaction | None:
    """The journal from its last snapshot but one (None: it starts there already).

    Between rounds, that snapshot was noted as the previous round began, where
    the replica's memory starts too: the previous round is replayed whole (a peer still
    closing it asks for it, and its score is shown), the current one as far as
    it went. Before that note the journal keeps only what a replay from it
    needs: entries above the heads it names (arrived early, held, delivered
    after it), my secrets and moves from its round on, and the last boot of
    the machine it names (right after the note). The rest (older
    rounds, ACKs, a snapshot taken up from the host) goes; the records after
    the note stay as they were, in order.
    """
    notes = [i for i, record in enumerate(records) if record.kind is Kind.SNAPSHOT]
    if len(notes) < 2 or notes[-2] == 0:
        return None
    at = notes[-2]
    start = snapshot_of(records[at])
    heads = {head.author: head.seq for head in start.heads}
    kept, past = [records[at]], list[Record]()
    boot: Record | None = None  # the last named before the note (``journal.written_in``)
    for record in records[:at]:
        if record.kind is Kind.BOOT:
            boot = record
        elif record.kind is Kind.ENTRY:
            seq = _sequence(record.data)
            if seq is None:
                continue  # an ACK, or a snapshot taken up: nothing a replay from here reads
            (kept if seq > heads.get(author_of(record.data), 0) else past).append(record)
        elif record.kind in (Kind.SECRETS, Kind.MOVE) and _round(unpack(record)) >= start.round:
            kept.append(record)
    if boot is not None:
        kept.insert(1, boot)
    kept.extend(records[at + 1:])
    return Compaction(tuple(kept), tuple(past))


def _sequence(raw: bytes) -> int | None:
    """A journaled frame's sequence number, None for an ephemeral one (checked when it
    came: the body is read without trusting it again)."""
    body = msgpack.unpackb(raw[HEADER_LEN:], raw=False)
    if not isinstance(body, list) or len(body) < 7:
        raise ValueError("corrupt journal entry")
    seq, msg_type = body[4], body[6]
    if msg_type in EPHEMERAL:
        return None
    if type(seq) is not int:
        raise ValueError("corrupt journal entry")
    return seq


def _round(fields: list[object]) -> int:
    number = fields[0]
    assert isinstance(number, int)  # unpack checked it
    return number
