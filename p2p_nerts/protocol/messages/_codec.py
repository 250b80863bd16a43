"""Payloads to and from entries: parsing a received payload by its type, and
sealing (or linking) a payload as an entry of one's own."""

from __future__ import annotations

from collections.abc import Mapping

from ..envelope import GENESIS, Entry, EnvelopeError, seal, seal_link
from ..identity import Identity
from ._fields import Payload
from ._link import Ack, View
from ._lobby import Goodbye, Hello, Join, Leave, Ready, Refuse, Roster, Settings
from ._repair import Resend, Snapshot
from ._round import (
    Audit,
    Commit,
    Drop,
    Fork,
    Go,
    Nerts,
    Play,
    Result,
    Reveal,
    Stuck,
    Summary,
    Verdict,
)

_BY_TYPE: dict[int, type[Payload]] = {
    cls.TYPE: cls
    for cls in (
        Hello, Join, Leave, Roster, Settings, Ready, Commit, Reveal, Go, Play,
        Ack, View, Stuck, Nerts, Summary, Audit, Verdict, Resend, Goodbye, Drop, Refuse,
        Fork, Snapshot, Result,
    )
}  # fmt: skip


def parse_payload(msg_type: int, payload: Mapping[str, object]) -> Payload:
    """Validate the payload map of an entry of type `msg_type`.

    Raises EnvelopeError("unknown_type") or EnvelopeError("bad_field:<attr>").
    """
    cls = _BY_TYPE.get(msg_type)
    if cls is None:
        raise EnvelopeError("unknown_type")
    return cls.from_wire(payload)


def seal_message(
    identity: Identity,
    payload: Payload,
    *,
    table_id: bytes,
    round: int,
    seq: int,
    lamport: int,
    prev: bytes = GENESIS,
) -> Entry:
    """Sign `payload` as a new entry; refuses (EnvelopeError) anything a peer would refuse."""
    wire = payload.to_wire()
    if parse_payload(payload.TYPE, wire) != payload:
        raise EnvelopeError(f"bad_field:{payload.TYPE.name.lower()}")
    return seal(
        identity,
        table_id=table_id,
        round=round,
        seq=seq,
        lamport=lamport,
        type=payload.TYPE,
        payload=wire,
        prev=prev,
    )


def link_message(
    author: bytes,
    payload: Payload,
    *,
    table_id: bytes,
    round: int,
    seq: int,
    lamport: int,
    prev: bytes = GENESIS,
) -> bytes:
    """`payload` as an unsigned link entry by `author` (see envelope.open_link_entry)."""
    return seal_link(
        author,
        table_id=table_id,
        round=round,
        seq=seq,
        lamport=lamport,
        type=payload.TYPE,
        payload=payload.to_wire(),
        prev=prev,
    )
