"""The link entries, sent to each peer on its own link and never relayed:
acknowledgements (which double as heartbeats) and views of a tableau."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple, Self

from ..envelope import GENESIS, MAX_INT, EnvelopeError
from ..identity import PUBLIC_KEY_LEN, SIGNATURE_LEN
from ._fields import (
    MAX_ACK_AUTHORS,
    MAX_CARD,
    MAX_PILE,
    WORK_PILES,
    MsgType,
    Payload,
    _int,
    _ints,
    _opt_int,
    _Reader,
    declare,
)


class AckMark(NamedTuple):
    """Sender has every entry of `author` up to and including `seq`, and the one
    at `seq` is signed `head`: two peers holding different entries notice."""

    author: bytes
    seq: int
    head: bytes = GENESIS


@dataclass(frozen=True, slots=True, init=False)
class Ack(Payload):
    """Acknowledgement and heartbeat.

    The entry's own Lamport time is what total-order delivery needs; `upto`
    (sorted by author) adds per-author high-water marks so peers can spot
    and RESEND gaps.
    """

    upto: tuple[AckMark, ...] = ()

    def __init__(self, upto: tuple[AckMark, ...] = ()) -> None:
        # Written out, as Play's (one is built for every ACK sent or received).
        object.__setattr__(self, "upto", upto)

    def to_wire(self) -> dict[str, object]:
        # The same map as Payload.to_wire's, each mark a list, built at once: that
        # one walks every mark's fields through a recursive call, four times the
        # cost, and an ACK goes to some peer after nearly every play.
        return {"u": [[author, seq, head] for author, seq, head in self.upto]}

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        # Every peer acknowledges to every other each tick, with up to one mark
        # per seat, so this is among the most frequent parses of all. Any fault
        # in `upto` has the one reason bad_field:upto, so the checks _bytes, _int
        # and _strictly_ascending would make are fused into one pass here: their
        # order cannot show.
        if type(payload) is not dict or payload.keys() != cls.WIRE:
            _Reader(cls, payload)  # raises, naming what is wrong (or takes another mapping)
        items = payload["u"]
        if type(items) is not list or len(items) > MAX_ACK_AUTHORS:
            raise EnvelopeError("bad_field:upto")
        marks = []
        last = b""  # below every key, which is never empty
        for item in items:
            if type(item) is not list or len(item) != 3:
                raise EnvelopeError("bad_field:upto")
            author, seq, head = item
            if (type(author) is not bytes or len(author) != PUBLIC_KEY_LEN or author <= last
                    or type(seq) is not int or not 0 <= seq <= MAX_INT
                    or type(head) is not bytes or len(head) != SIGNATURE_LEN):
                raise EnvelopeError("bad_field:upto")
            last = author
            # (tuple.__new__ builds the same AckMark in C; the NamedTuple's own
            # constructor is Python code, the larger part of the cost otherwise.)
            marks.append(tuple.__new__(AckMark, item))
        return cls(tuple(marks))


declare(Ack, MsgType.ACK, {"upto": "u"})


@dataclass(frozen=True, slots=True, init=False)
class View(Payload):
    """The public part of a tableau, for the other screens.

    `top` is the face-up nerts card (None exactly when `nerts` is 0), `work`
    the four work piles bottom to top, `waste` the waste top card or None,
    `stock` the number of face-down stock cards.
    """

    nerts: int
    top: int | None
    work: tuple[tuple[int, ...], ...]
    waste: int | None
    stock: int

    def __init__(self, nerts: int, top: int | None, work: tuple[tuple[int, ...], ...],
                 waste: int | None, stock: int) -> None:
        # Written out, as Play's (one is built for every view received).
        object.__setattr__(self, "nerts", nerts)
        object.__setattr__(self, "top", top)
        object.__setattr__(self, "work", work)
        object.__setattr__(self, "waste", waste)
        object.__setattr__(self, "stock", stock)

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        # A seat's view goes to its peers whenever its tableau changes, which
        # makes it one of the most frequent entries. As for PLAY, a map with
        # exactly its keys is read at once rather than through a _Reader, with
        # the same checks in the same order (nerts, top, work, waste, stock).
        if type(payload) is not dict or payload.keys() != cls.WIRE:
            _Reader(cls, payload)  # raises, naming what is wrong (or takes another mapping)
        nerts = _int(payload["n"], "nerts", 0, MAX_PILE)
        top = _opt_int(payload["t"], "top", 0, MAX_CARD)
        if (nerts == 0) != (top is None):
            raise EnvelopeError("bad_field:top")
        piles = payload["w"]
        if type(piles) is not list or len(piles) != WORK_PILES:
            raise EnvelopeError("bad_field:work")
        work = tuple([_ints(pile, "work", MAX_PILE, 0, MAX_CARD) for pile in piles])
        return cls(nerts, top, work, _opt_int(payload["x"], "waste", 0, MAX_CARD),
                   _int(payload["k"], "stock", 0, MAX_PILE))


declare(View, MsgType.VIEW, {
    "nerts": "n",
    "top": "t",
    "work": "w",
    "waste": "x",
    "stock": "k",
})
