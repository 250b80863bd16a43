"""A round's own entries: the fair shuffle, the plays and votes, the call, the
close (summaries, audits, verdicts, drops, fork proofs) and the game's result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from ..envelope import MAX_ENTRY, MAX_INT, EnvelopeError
from ..identity import PUBLIC_KEY_LEN
from ._fields import (
    MAX_CARD,
    MAX_DECL,
    MAX_MOVE_INTS,
    MAX_MOVES,
    MAX_SEATS,
    MAX_SRC,
    MsgType,
    Payload,
    _int,
    _ints,
    _key_problem,
    _Reader,
    declare,
)

# -- fair shuffle and round start -----------------------------------------------


@dataclass(frozen=True, slots=True)
class Commit(Payload):
    """Commitments made before anything is revealed (see fairness.commitment).

    `deck` binds the secret the sender's own deck is shuffled from (opened
    only by AUDIT); `share` binds its contribution to the joint value (opened
    by REVEAL).  Both come first, so neither can be chosen after seeing others'.
    """

    deck: bytes
    share: bytes

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.blob("deck"), r.blob("share"))


declare(Commit, MsgType.COMMIT, {"deck": "d", "share": "s"})


@dataclass(frozen=True, slots=True)
class Reveal(Payload):
    """Opening of the sender's joint-value share (committed as Commit.share)."""

    share: bytes

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        return cls(_Reader(cls, payload).blob("share"))


declare(Reveal, MsgType.REVEAL, {"share": "s"})


@dataclass(frozen=True, slots=True)
class Go(Payload):
    """Start of play.  `joint` is the joint value the sender derived from all
    shares, so a peer that derived another one notices before dealing."""

    joint: bytes

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        return cls(_Reader(cls, payload).blob("joint"))


declare(Go, MsgType.GO, {"joint": "j"})


# -- play ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, init=False)
class Play(Payload):
    """A card played to a foundation pile.

    `pile` names the foundation by the card that started it (its ace or joker;
    for a new pile, pile == card).  `src`: 0 nerts pile, 1 waste, 2..5 work
    piles 0..3.  `decl`: the face a joker stands for, 0 otherwise.  `mv`:
    index of this move in the author's local move log (for the audit).

    Its ``__init__`` is written out: compiled, a dataclass's generated one
    stays interpreted, and was most of the cost of parsing a received play.
    """

    card: int
    pile: int
    src: int
    decl: int
    mv: int

    def __init__(self, card: int, pile: int, src: int, decl: int, mv: int) -> None:
        # Frozen: set as the generated one does (and compiled, straight into the
        # object, which an alias of object.__setattr__ would not be).
        object.__setattr__(self, "card", card)
        object.__setattr__(self, "pile", pile)
        object.__setattr__(self, "src", src)
        object.__setattr__(self, "decl", decl)
        object.__setattr__(self, "mv", mv)

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        # The most frequent entry of all: a map of as many keys as it has fields
        # is read at once rather than through a _Reader, with the same checks in
        # the same order (a key missing means another is there instead). Its
        # size and five reads cost less than comparing its keys as a set.
        if type(payload) is not dict or len(payload) != len(cls.WIRE):
            _Reader(cls, payload)  # raises, naming what is wrong (or takes another mapping)
        k = cls.KEYS
        try:
            card, pile, src, decl, mv = (payload[k["card"]], payload[k["pile"]],
                                         payload[k["src"]], payload[k["decl"]], payload[k["mv"]])
        except KeyError:
            _key_problem(k, payload)
        # An honest play passes all five checks at once; any other is refused by
        # the checks one by one (_int), which name the first field at fault.
        if (type(card) is int and 0 <= card <= MAX_CARD and type(pile) is int
                and 0 <= pile <= MAX_CARD and type(src) is int and 0 <= src <= MAX_SRC
                and type(decl) is int and 0 <= decl <= MAX_DECL and type(mv) is int
                and 0 <= mv <= MAX_INT):
            return cls(card, pile, src, decl, mv)
        return cls(_int(card, "card", 0, MAX_CARD), _int(pile, "pile", 0, MAX_CARD),
                   _int(src, "src", 0, MAX_SRC), _int(decl, "decl", 0, MAX_DECL),
                   _int(mv, "mv", 0, MAX_INT))


declare(Play, MsgType.PLAY, {
    "card": "c",
    "pile": "p",
    "src": "s",
    "decl": "d",
    "mv": "m",
})


@dataclass(frozen=True, slots=True)
class Stuck(Payload):
    """Vote that nobody can move (`on=False` withdraws it).

    `moves` is the number of foundation plays the voter had seen, so the vote
    only counts while no later play has landed.
    """

    on: bool
    moves: int

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.flag("on"), r.integer("moves"))


declare(Stuck, MsgType.STUCK, {"on": "o", "moves": "m"})


@dataclass(frozen=True, slots=True)
class Nerts(Payload):
    """The call.  Its Lamport time is what counts; the audit checks the caller's
    move log shows an empty nerts pile at that time."""



declare(Nerts, MsgType.NERTS)


# -- round end ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Summary(Payload):
    """What the sender computed at round end: foundation hash and per-seat scores."""

    digest: bytes
    scores: tuple[int, ...]

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        scores = _ints(r.raw("scores"), "scores", MAX_SEATS, -MAX_INT, MAX_INT)
        return cls(r.blob("digest"), scores)


declare(Summary, MsgType.SUMMARY, {"digest": "h", "scores": "s"})


@dataclass(frozen=True, slots=True)
class Audit(Payload):
    """Opening of the sender's deck secret (committed as Commit.deck) plus its
    whole local move log, so every peer can replay the round.

    Each move is 1..6 ints (|i| < 2**53), in an encoding the game layer owns.
    """

    deck_secret: bytes
    moves: tuple[tuple[int, ...], ...]

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        moves = tuple(
            _ints(move, "moves", MAX_MOVE_INTS, -MAX_INT, MAX_INT, min_len=1)
            for move in r.array("moves", MAX_MOVES)
        )
        return cls(r.blob("deck_secret"), moves)


declare(Audit, MsgType.AUDIT, {"deck_secret": "s", "moves": "m"})


@dataclass(frozen=True, slots=True)
class Verdict(Payload):
    """Result of replaying one seat's audit: `ok`, or why not."""

    seat: int
    ok: bool
    reason: str = ""

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.integer("seat", 0, MAX_SEATS - 1), r.flag("ok"), r.text("reason"))


declare(Verdict, MsgType.VERDICT, {"seat": "t", "ok": "o", "reason": "r"})


@dataclass(frozen=True, slots=True)
class Drop(Payload):
    """Vote to drop a silent seat from the round.

    `upto` is the highest sequence number of `who` the voter holds; once every
    other live seat has voted, the seat's entries up to the largest `upto`
    count and nothing later does.
    """

    who: bytes
    upto: int

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.blob("who", PUBLIC_KEY_LEN), r.integer("upto"))


declare(Drop, MsgType.DROP, {"who": "w", "upto": "u"})


@dataclass(frozen=True, slots=True)
class Fork(Payload):
    """Proof that one seat signed two different entries under one sequence number.

    `first` and `second` are the two frames, byte for byte as their author
    signed them; both name the same predecessor, so the author's history is
    agreed up to just before them (see proof.py, which checks them).
    """

    first: bytes
    second: bytes

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(_frame(r.raw("first"), "first"), _frame(r.raw("second"), "second"))


declare(Fork, MsgType.FORK, {"first": "a", "second": "b"})


def _frame(value: object, attr: str) -> bytes:
    if type(value) is not bytes or not 0 < len(value) <= MAX_ENTRY:
        raise EnvelopeError(f"bad_field:{attr}")
    return value


# -- game end -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Result(Payload):
    """The game's final result as the sender reckoned it, signed as the game ends.

    Sent in the last round (the entry's round number), so it names that
    round's seats: `totals` by seat, and `digest`, the last round's
    foundation hash (what its SUMMARY carried). Every seat signs one, so a
    game record carries every seat's agreement with the result, which
    anyone can then check against the record's own entries.
    """

    totals: tuple[int, ...]
    digest: bytes

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        totals = _ints(r.raw("totals"), "totals", MAX_SEATS, -MAX_INT, MAX_INT, min_len=1)
        return cls(totals, r.blob("digest"))


declare(Result, MsgType.RESULT, {"totals": "t", "digest": "h"})
