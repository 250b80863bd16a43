"""Message types and their payloads: the vocabulary of a table's whole life.

Each payload is a frozen dataclass that knows its `MsgType`, its short wire
keys, how to turn itself into a msgpack map (`to_wire`) and how to rebuild
itself from an untrusted map (`from_wire`).  Parsing is strict on purpose:
every key must be present, no other key is allowed, every value has exactly
the right type and range, and every list has a cap.  A peer running other code
therefore either agrees with us on the meaning of an entry or gets it rejected
with a reason code; it can never be half-understood.

Cards are opaque ints in 0..1023 here; the game layer owns their encoding.

The payloads live in private modules by concern (`_lobby`, `_round`, `_link`,
`_repair`), built on the limits and field checkers of `_fields`; `_codec`
parses a payload by its type and seals one as an entry.  Import from here.
"""

from __future__ import annotations

from ._codec import (
    link_message,
    parse_payload,
    seal_message,
)
from ._fields import (
    COUNTDOWN_MS,
    DROP_AFTER_MS,
    HASH_LEN,
    MAX_ACK_AUTHORS,
    MAX_CARD,
    MAX_COUNTDOWN_MS,
    MAX_DROP_AFTER_MS,
    MAX_MOVE_INTS,
    MAX_MOVES,
    MAX_PILE,
    MAX_REASON,
    MAX_RESEND,
    MAX_SEATS,
    MAX_SNAPSHOT_KEYS,
    MIN_DROP_AFTER_MS,
    TEAMS,
    WORK_PILES,
    MsgType,
    Payload,
)
from ._link import (
    Ack,
    AckMark,
    View,
)
from ._lobby import (
    Goodbye,
    Hello,
    Join,
    Leave,
    Ready,
    Refuse,
    Roster,
    Seat,
    Settings,
)
from ._repair import (
    Head,
    Resend,
    Snapshot,
    Total,
)
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

__all__ = [
    "COUNTDOWN_MS",
    "DROP_AFTER_MS",
    "HASH_LEN",
    "MAX_ACK_AUTHORS",
    "MAX_CARD",
    "MAX_COUNTDOWN_MS",
    "MAX_DROP_AFTER_MS",
    "MAX_MOVES",
    "MAX_MOVE_INTS",
    "MAX_PILE",
    "MAX_REASON",
    "MAX_RESEND",
    "MAX_SEATS",
    "MAX_SNAPSHOT_KEYS",
    "MIN_DROP_AFTER_MS",
    "TEAMS",
    "WORK_PILES",
    "Ack",
    "AckMark",
    "Audit",
    "Commit",
    "Drop",
    "Fork",
    "Go",
    "Goodbye",
    "Head",
    "Hello",
    "Join",
    "Leave",
    "MsgType",
    "Nerts",
    "Payload",
    "Play",
    "Ready",
    "Refuse",
    "Resend",
    "Result",
    "Reveal",
    "Roster",
    "Seat",
    "Settings",
    "Snapshot",
    "Stuck",
    "Summary",
    "Total",
    "Verdict",
    "View",
    "link_message",
    "parse_payload",
    "seal_message",
]
