"""The link entries, sent to each peer on its own link and never relayed:
acknowledgements (which double as heartbeats) and views of a tableau."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, Self

from ..envelope import GENESIS, MAX_INT, EnvelopeError
from ..identity import PUBLIC_KEY_LEN, SIGNATURE_LEN
from ._fields import (
    MAX_ACK_AUTHORS,
    MAX_CARD,
    MAX_PILE,
    WORK_PILES,
    MsgType,
    Payload,
    _bytes,
    _int,
    _ints,
    _Reader,
    _strictly_ascending,
)


class AckMark(NamedTuple):
    """Sender has every entry of `author` up to and including `seq`, and the one
    at `seq` is signed `head`: two peers holding different entries notice."""

    author: bytes
    seq: int
    head: bytes = GENESIS


@dataclass(frozen=True, slots=True)
class Ack(Payload):
    """Acknowledgement and heartbeat.

    The entry's own Lamport time is what total-order delivery needs; `upto`
    (sorted by author) adds per-author high-water marks so peers can spot
    and RESEND gaps.
    """

    TYPE = MsgType.ACK
    KEYS: ClassVar[Mapping[str, str]] = {"upto": "u"}
    upto: tuple[AckMark, ...] = ()

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        marks = []
        for item in r.array("upto", MAX_ACK_AUTHORS):
            if type(item) is not list or len(item) != 3:
                raise EnvelopeError("bad_field:upto")
            author, seq, head = item
            marks.append(AckMark(_bytes(author, "upto", PUBLIC_KEY_LEN),
                                 _int(seq, "upto", 0, MAX_INT),
                                 _bytes(head, "upto", SIGNATURE_LEN)))
        _strictly_ascending([m.author for m in marks], "upto")
        return cls(tuple(marks))


@dataclass(frozen=True, slots=True)
class View(Payload):
    """The public part of a tableau, for the other screens.

    `top` is the face-up nerts card (None exactly when `nerts` is 0), `work`
    the four work piles bottom to top, `waste` the waste top card or None,
    `stock` the number of face-down stock cards.
    """

    TYPE = MsgType.VIEW
    KEYS: ClassVar[Mapping[str, str]] = {
        "nerts": "n",
        "top": "t",
        "work": "w",
        "waste": "x",
        "stock": "k",
    }
    nerts: int
    top: int | None
    work: tuple[tuple[int, ...], ...]
    waste: int | None
    stock: int

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        nerts = r.integer("nerts", 0, MAX_PILE)
        top = r.opt_integer("top", 0, MAX_CARD)
        if (nerts == 0) != (top is None):
            raise EnvelopeError("bad_field:top")
        piles = r.array("work", WORK_PILES, min_len=WORK_PILES)
        work = tuple(_ints(pile, "work", MAX_PILE, 0, MAX_CARD) for pile in piles)
        return cls(
            nerts, top, work, r.opt_integer("waste", 0, MAX_CARD), r.integer("stock", 0, MAX_PILE)
        )
