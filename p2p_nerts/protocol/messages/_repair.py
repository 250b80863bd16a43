"""Log repair: asking again for entries one lacks (RESEND), and the table as a
round began for a peer behind what the others still hold (SNAPSHOT)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple, Self

from ..envelope import MAX_INT, EnvelopeError
from ..identity import PUBLIC_KEY_LEN, SIGNATURE_LEN
from ._fields import (
    MAX_RESEND,
    MAX_SEATS,
    MAX_SNAPSHOT_KEYS,
    MsgType,
    Payload,
    _bytes,
    _int,
    _pair,
    _plain,
    _Reader,
    _strictly_ascending,
    declare,
)
from ._lobby import Seat, Settings, _seats


@dataclass(frozen=True, slots=True)
class Resend(Payload):
    """Please send again `author`'s entries from_seq..to_seq (inclusive, <= 1024 of them)."""

    author: bytes
    from_seq: int
    to_seq: int

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        from_seq = r.integer("from_seq", 1)
        to_seq = r.integer("to_seq", from_seq, from_seq + MAX_RESEND - 1)
        return cls(r.blob("author", PUBLIC_KEY_LEN), from_seq, to_seq)


declare(Resend, MsgType.RESEND, {"author": "a", "from_seq": "f", "to_seq": "t"})


class Head(NamedTuple):
    """Where one author's chain stood: its entry `seq`, that entry's Lamport time
    and its id (signature), which the author's next entry names."""

    author: bytes
    seq: int
    lamport: int
    id: bytes


class Total(NamedTuple):
    """One player's running total, by key (seats change between rounds)."""

    key: bytes
    points: int


@dataclass(frozen=True, slots=True)
class Snapshot(Payload):
    """The table as round `round` began, for a peer behind what the others still hold.

    Peers forget finished rounds (see docs/PROTOCOL.md, Pruning): the host
    answers a RESEND for an entry it has forgotten with this instead, sent to
    the asker alone. It is the host's state at the ROSTER that began `round`:
    the seats that ROSTER gave, the rules and clocks, the game's totals and
    rounds scored before it (`over`: that game had ended, a new one begins),
    and each author's chain head at that point. The asker takes it up there
    and replays what followed, which every peer still holds.
    """

    round: int
    over: bool
    seats: tuple[Seat, ...]
    settings: Settings
    totals: tuple[Total, ...]
    rounds: int
    heads: tuple[Head, ...]

    def to_wire(self) -> dict[str, object]:
        wire = {key: _plain(getattr(self, attr)) for attr, key in self.KEYS.items()}
        wire["c"] = self.settings.to_wire()
        return wire

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        settings = r.raw("settings")
        if not isinstance(settings, Mapping):
            raise EnvelopeError("bad_field:settings")
        totals = []
        for item in r.array("totals", MAX_SNAPSHOT_KEYS):
            key, points = _pair(item, "totals")
            totals.append(Total(_bytes(key, "totals", PUBLIC_KEY_LEN),
                                _int(points, "totals", -MAX_INT, MAX_INT)))
        _strictly_ascending([t.key for t in totals], "totals")
        heads = []
        for item in r.array("heads", MAX_SNAPSHOT_KEYS):
            if type(item) is not list or len(item) != 4:
                raise EnvelopeError("bad_field:heads")
            author, seq, lamport, head = item
            heads.append(Head(_bytes(author, "heads", PUBLIC_KEY_LEN),
                              _int(seq, "heads", 1, MAX_INT), _int(lamport, "heads", 1, MAX_INT),
                              _bytes(head, "heads", SIGNATURE_LEN)))
        _strictly_ascending([h.author for h in heads], "heads")
        return cls(r.integer("round", 1), r.flag("over"),
                   _seats(r.array("seats", MAX_SEATS, min_len=1)), Settings.from_wire(settings),
                   tuple(totals), r.integer("rounds"), tuple(heads))


declare(Snapshot, MsgType.SNAPSHOT, {
    "round": "r", "over": "o", "seats": "s", "settings": "c", "totals": "t",
    "rounds": "n", "heads": "h",
})
