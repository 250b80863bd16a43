"""Write-ahead journal records: what a replica needs to come back after a crash.

The replica is a deterministic function of its inputs, so recovery is replay:
every frame it accepted (in arrival order; an unsigned one with the link it
came on), every entry it signed, its round secrets and its own move decisions.
Settles and agreed rotations are not recorded: replaying the inputs makes them
happen again, at the same points.
Records are plain bytes so any store can keep them (``store.py`` appends them to
a file per table).

A long game must not make a long journal (a ``--resume`` replays all of it):
as each round begins the replica notes the table's state (a SNAPSHOT record),
and as each round closes the journal is rewritten to start from the note
before the last (``replica/_catchup.py``), as the replica's memory is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

import msgpack

from .envelope import MAGIC, EnvelopeError
from .identity import PUBLIC_KEY_LEN
from .messages import Snapshot


class Kind(IntEnum):
    ENTRY = 1  # a signed frame, exactly as received or sent
    SECRETS = 2  # [round, deck secret, joint share]
    MOVE = 3  # [round, *move-log ints]: a decision of this player's
    LINK = 4  # link key (32) || a link entry (unsigned ACK) received on that link
    SNAPSHOT = 5  # a Snapshot's wire map: the table as a round began, as this seat noted it
    BOOT = 6  # the machine's boot id as a seat's replica began writing (``written_in``)


@dataclass(frozen=True, slots=True, init=False)
class Record:
    """One journal record. Its ``__init__`` is written out, as ``PlayAdded``'s: one
    is built for every entry taken in, and compiled (``scripts/compile_engine.py``),
    a dataclass's generated one stays interpreted."""

    kind: Kind
    data: bytes

    def __init__(self, kind: Kind, data: bytes) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "data", data)


def made_by(record: Record, key: bytes) -> bool:
    """Whether the record holds what ``key``'s seat made itself, not what it received.

    Those must survive a power cut once anything that follows from them has
    left the machine: nobody else could give them back (a peer holds an entry
    we signed, but we could sign another under its number, which is
    equivocation; a revealed deck needs its secret). Received frames are the
    other peers' too, who resend them.
    """
    if record.kind is Kind.ENTRY:
        return record.data[len(MAGIC):len(MAGIC) + PUBLIC_KEY_LEN] == key
    return record.kind is not Kind.LINK


def secrets_record(round_no: int, deck_secret: bytes, share: bytes) -> Record:
    return Record(Kind.SECRETS, msgpack.packb([round_no, deck_secret, share]))


def move_record(round_no: int, move: tuple[int, ...]) -> Record:
    return Record(Kind.MOVE, msgpack.packb([round_no, *move]))


def boot_record(boot: bytes) -> Record:
    return Record(Kind.BOOT, boot)


def written_in(records: Sequence[Record], boot: bytes) -> bool:
    """Whether the journal's tail was written while the machine ran in ``boot``: its
    last BOOT record names it. A replica that knows the boot names it first in
    what it journals, and again once a seat back after a restart of the machine
    has learned where its chain ends; what a journal of an earlier boot may
    have lost, and how long the seat then waits, is ``resume.py``'s."""
    last = next((r.data for r in reversed(records) if r.kind is Kind.BOOT), None)
    return last == boot


def unpack(record: Record) -> list[object]:
    """The fields of a SECRETS or MOVE record."""
    fields = msgpack.unpackb(record.data)
    if not isinstance(fields, list) or not fields or not isinstance(fields[0], int):
        raise ValueError("corrupt journal record")
    return fields


def snapshot_record(snapshot: Snapshot) -> Record:
    return Record(Kind.SNAPSHOT, msgpack.packb(snapshot.to_wire()))


def snapshot_of(record: Record) -> Snapshot:
    """The snapshot a SNAPSHOT record holds (raises ValueError if it holds none)."""
    try:
        fields = msgpack.unpackb(record.data, raw=False)
        if not isinstance(fields, dict):
            raise ValueError("not a map")
        return Snapshot.from_wire(fields)
    except (ValueError, TypeError, EnvelopeError, msgpack.UnpackException):
        raise ValueError("corrupt journal snapshot") from None
