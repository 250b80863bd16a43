"""Message types and their payloads: the vocabulary of a table's whole life.

Each payload is a frozen dataclass that knows its `MsgType`, its short wire
keys, how to turn itself into a msgpack map (`to_wire`) and how to rebuild
itself from an untrusted map (`from_wire`).  Parsing is strict on purpose:
every key must be present, no other key is allowed, every value has exactly
the right type and range, and every list has a cap.  A peer running other code
therefore either agrees with us on the meaning of an entry or gets it rejected
with a reason code; it can never be half-understood.

Cards are opaque ints in 0..1023 here; the game layer owns their encoding.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, NoReturn, Self

from ..envelope import GENESIS, MAX_ENTRY, MAX_INT, Entry, EnvelopeError, seal, seal_link
from ..identity import PUBLIC_KEY_LEN, SIGNATURE_LEN, Identity, clean_name

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

HASH_LEN = 32
MAX_CARD = 1023
MAX_SEATS = 8
MAX_REASON = 200
MAX_MOVES = 5000
MAX_MOVE_INTS = 6
MAX_PILE = 64
WORK_PILES = 4
MAX_SRC = 1 + WORK_PILES  # 0 = nerts pile, 1 = waste, 2..5 = work piles 0..3
MAX_DECL = 63
MAX_ACK_AUTHORS = 32
MAX_RESEND = 1024
MAX_SNAPSHOT_KEYS = 64  # authors (and players' totals) a SNAPSHOT names: a table tracks 64
MAX_TARGET = 10_000
MAX_APP_VERSION = 0xFFFF
TEAMS = ("none", "pairs", "share")
#: SETTINGS clocks, in milliseconds: the default and the range a peer accepts.
COUNTDOWN_MS = 3000  # from GO to the first move
MAX_COUNTDOWN_MS = 60_000
DROP_AFTER_MS = 6000  # a live seat silent this long is voted out of the round
MIN_DROP_AFTER_MS = 500
MAX_DROP_AFTER_MS = 3_600_000


class MsgType(enum.IntEnum):
    """Entry types.  Numbers are grouped by phase and never reused."""

    # table membership and lobby
    HELLO = 1
    JOIN = 2
    LEAVE = 3
    ROSTER = 4
    SETTINGS = 5
    READY = 6
    # fair shuffle and round start
    COMMIT = 10
    REVEAL = 11
    GO = 12
    # play
    PLAY = 20
    ACK = 21
    VIEW = 22
    STUCK = 23
    NERTS = 24
    # round end
    SUMMARY = 30
    AUDIT = 31
    VERDICT = 32
    # log repair and departure
    RESEND = 40
    GOODBYE = 41
    DROP = 42
    REFUSE = 43
    FORK = 44
    SNAPSHOT = 45
    # game end
    RESULT = 50


class _Reader:
    """Takes typed fields out of an untrusted payload map.

    Errors name the field by its Python attribute (`bad_field:card`), which is
    what a developer reading a log wants; an unexpected key is named as sent
    when it is a short identifier, else as "?".

    Every received entry goes through here, so the usual case is made cheap:
    a map with exactly the wanted keys passes one set comparison, and only a
    map that fails it is searched for the key to name.
    """

    __slots__ = ("_keys", "_map")

    def __init__(self, cls: type[Payload], payload: Mapping[str, object]) -> None:
        if type(payload) is not dict and not isinstance(payload, Mapping):
            raise EnvelopeError("bad_field:payload")
        if payload.keys() != cls.WIRE:
            _key_problem(cls.KEYS, payload)
        self._keys = cls.KEYS
        self._map = payload

    def raw(self, attr: str) -> object:
        return self._map[self._keys[attr]]

    def integer(self, attr: str, lo: int = 0, hi: int = MAX_INT) -> int:
        return _int(self._map[self._keys[attr]], attr, lo, hi)

    def opt_integer(self, attr: str, lo: int = 0, hi: int = MAX_INT) -> int | None:
        value = self.raw(attr)
        return None if value is None else _int(value, attr, lo, hi)

    def flag(self, attr: str) -> bool:
        value = self.raw(attr)
        if type(value) is not bool:
            raise EnvelopeError(f"bad_field:{attr}")
        return value

    def blob(self, attr: str, length: int = HASH_LEN) -> bytes:
        return _bytes(self.raw(attr), attr, length)

    def opt_blob(self, attr: str, length: int = HASH_LEN) -> bytes | None:
        value = self.raw(attr)
        return None if value is None else _bytes(value, attr, length)

    def text(self, attr: str, max_len: int = MAX_REASON) -> str:
        """Free text that ends up on screens: bounded and free of control characters."""
        value = self.raw(attr)
        if type(value) is not str or len(value) > max_len or not value.isprintable():
            raise EnvelopeError(f"bad_field:{attr}")
        return value

    def name(self, attr: str) -> str:
        return _name(self.raw(attr), attr)

    def array(self, attr: str, max_len: int, min_len: int = 0) -> list[object]:
        value = self.raw(attr)
        if type(value) is not list or not min_len <= len(value) <= max_len:
            raise EnvelopeError(f"bad_field:{attr}")
        return value


def _key_problem(keys: Mapping[str, str], payload: Mapping[str, object]) -> NoReturn:
    """Raise for a map whose keys are not exactly ``keys``' wire keys: the first
    unexpected key as sent, else the first missing attribute."""
    wanted = keys.values()
    for key in payload:
        if key not in wanted:
            # Name the stray key only if it is harmless to log (the envelope
            # lets only text keys through, but a caller may hand over any map).
            shown = (key if isinstance(key, str) and key.isascii() and key.isidentifier()
                     and len(key) <= 16 else "?")
            raise EnvelopeError(f"bad_field:{shown}")
    for attr, key in keys.items():
        if key not in payload:
            raise EnvelopeError(f"bad_field:{attr}")
    raise EnvelopeError("bad_field:payload")  # (keys that compare unlike themselves)


def _int(value: object, attr: str, lo: int, hi: int) -> int:
    # `type(...) is int` on purpose: bool is an int subclass but not an int here.
    if type(value) is not int or not lo <= value <= hi:
        raise EnvelopeError(f"bad_field:{attr}")
    return value


def _name(value: object, attr: str) -> str:
    """A display name must arrive in canonical form (see clean_name): one name, one encoding."""
    if type(value) is str:
        try:
            if clean_name(value) == value:
                return value
        except ValueError:
            pass
    raise EnvelopeError(f"bad_field:{attr}")


def _bytes(value: object, attr: str, length: int) -> bytes:
    if type(value) is not bytes or len(value) != length:
        raise EnvelopeError(f"bad_field:{attr}")
    return value


def _pair(value: object, attr: str) -> tuple[object, object]:
    if type(value) is not list or len(value) != 2:
        raise EnvelopeError(f"bad_field:{attr}")
    return value[0], value[1]


def _plain(value: object) -> object:
    """Tuples (and NamedTuples) become lists: the map then equals what a peer decodes."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _strictly_ascending(keys: list[bytes], attr: str) -> None:
    """Sorted, duplicate-free lists have one encoding, so equal content means equal bytes."""
    if any(a >= b for a, b in itertools.pairwise(keys)):
        raise EnvelopeError(f"bad_field:{attr}")


@dataclass(frozen=True, slots=True)
class Payload:
    """Base of all payloads: `KEYS` maps attribute names to short wire keys."""

    TYPE: ClassVar[MsgType]
    KEYS: ClassVar[Mapping[str, str]] = {}
    #: The wire keys of ``KEYS``, as a set to check a received map against at once.
    WIRE: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls) -> None:
        # (No super() call: a slotted dataclass's methods cannot use the
        # zero-argument form, and object's hook does nothing.)
        cls.WIRE = frozenset(cls.KEYS.values())

    def to_wire(self) -> dict[str, object]:
        """The msgpack map for this payload (tuples pack as arrays)."""
        return {key: _plain(getattr(self, attr)) for attr, key in self.KEYS.items()}

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        """Validate an untrusted map and build the payload; raises EnvelopeError."""
        _Reader(cls, payload)
        return cls()


# -- table membership and lobby -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello(Payload):
    """Announce oneself on a new connection: who, and which app protocol."""

    TYPE = MsgType.HELLO
    KEYS: ClassVar[Mapping[str, str]] = {"name": "n", "version": "v"}
    name: str
    version: int

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.name("name"), r.integer("version", 1, MAX_APP_VERSION))


@dataclass(frozen=True, slots=True)
class Join(Payload):
    """Ask for a seat.  `code_proof` proves knowledge of the table code (32 bytes) or is None."""

    TYPE = MsgType.JOIN
    KEYS: ClassVar[Mapping[str, str]] = {"name": "n", "code_proof": "p"}
    name: str
    code_proof: bytes | None

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.name("name"), r.opt_blob("code_proof"))


@dataclass(frozen=True, slots=True)
class Leave(Payload):
    """Give up one's seat (the connection may stay, e.g. to watch)."""

    TYPE = MsgType.LEAVE


class Seat(NamedTuple):
    """One seat of the roster; a tuple so it packs as a 2-element array."""

    key: bytes
    name: str


@dataclass(frozen=True, slots=True)
class Roster(Payload):
    """Who sits at the table: 1..8 distinct seats in the host's order (seat index = position).

    The order is the host's to choose, because it says who partners whom
    ("pairs": seats 2k and 2k+1); a newcomer is seated after the others.
    """

    TYPE = MsgType.ROSTER
    KEYS: ClassVar[Mapping[str, str]] = {"seats": "s"}
    seats: tuple[Seat, ...]

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        return cls(_seats(_Reader(cls, payload).array("seats", MAX_SEATS, min_len=1)))


def _seats(items: list[object]) -> tuple[Seat, ...]:
    """1..8 distinct seats (a ROSTER's, a SNAPSHOT's)."""
    seats = []
    for item in items:
        key, name = _pair(item, "seats")
        seats.append(Seat(_bytes(key, "seats", PUBLIC_KEY_LEN), _name(name, "seats")))
    if len({s.key for s in seats}) != len(seats):
        raise EnvelopeError("bad_field:seats")
    return tuple(seats)


@dataclass(frozen=True, slots=True)
class Settings(Payload):
    """Table rules and clocks for the next round.  Defaults are the classic game.

    The clocks are the host's so the table plays by one of each: a seat with a
    shorter countdown would move first, and peers that disagreed on when a
    seat is silent would vote it out at different times.  They are whole
    milliseconds, so every peer reads the very number the host sent.
    """

    TYPE = MsgType.SETTINGS
    KEYS: ClassVar[Mapping[str, str]] = {
        "stock_turn": "st",
        "strict_ties": "ti",
        "penalty": "pe",
        "target": "ta",
        "jokers": "jo",
        "teams": "te",
        "lone_rotate": "lr",
        "countdown_ms": "cd",
        "drop_after_ms": "da",
    }
    stock_turn: int = 3
    strict_ties: bool = False
    penalty: bool = True
    target: int = 100
    jokers: bool = False
    teams: str = "none"
    lone_rotate: bool = False
    countdown_ms: int = COUNTDOWN_MS
    drop_after_ms: int = DROP_AFTER_MS

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        stock_turn = r.integer("stock_turn", 1, 3)
        if stock_turn == 2:
            raise EnvelopeError("bad_field:stock_turn")
        teams = r.raw("teams")
        if type(teams) is not str or teams not in TEAMS:
            raise EnvelopeError("bad_field:teams")
        return cls(
            stock_turn=stock_turn,
            strict_ties=r.flag("strict_ties"),
            penalty=r.flag("penalty"),
            target=r.integer("target", 1, MAX_TARGET),
            jokers=r.flag("jokers"),
            teams=teams,
            lone_rotate=r.flag("lone_rotate"),
            countdown_ms=r.integer("countdown_ms", 0, MAX_COUNTDOWN_MS),
            drop_after_ms=r.integer("drop_after_ms", MIN_DROP_AFTER_MS, MAX_DROP_AFTER_MS),
        )


@dataclass(frozen=True, slots=True)
class Ready(Payload):
    """Ready for the next round (`on=False` takes it back)."""

    TYPE = MsgType.READY
    KEYS: ClassVar[Mapping[str, str]] = {"on": "r"}
    on: bool

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        return cls(_Reader(cls, payload).flag("on"))


# -- fair shuffle and round start -----------------------------------------------


@dataclass(frozen=True, slots=True)
class Commit(Payload):
    """Commitments made before anything is revealed (see fairness.commitment).

    `deck` binds the secret the sender's own deck is shuffled from (opened
    only by AUDIT); `share` binds its contribution to the joint value (opened
    by REVEAL).  Both come first, so neither can be chosen after seeing others'.
    """

    TYPE = MsgType.COMMIT
    KEYS: ClassVar[Mapping[str, str]] = {"deck": "d", "share": "s"}
    deck: bytes
    share: bytes

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.blob("deck"), r.blob("share"))


@dataclass(frozen=True, slots=True)
class Reveal(Payload):
    """Opening of the sender's joint-value share (committed as Commit.share)."""

    TYPE = MsgType.REVEAL
    KEYS: ClassVar[Mapping[str, str]] = {"share": "s"}
    share: bytes

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        return cls(_Reader(cls, payload).blob("share"))


@dataclass(frozen=True, slots=True)
class Go(Payload):
    """Start of play.  `joint` is the joint value the sender derived from all
    shares, so a peer that derived another one notices before dealing."""

    TYPE = MsgType.GO
    KEYS: ClassVar[Mapping[str, str]] = {"joint": "j"}
    joint: bytes

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        return cls(_Reader(cls, payload).blob("joint"))


# -- play ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Play(Payload):
    """A card played to a foundation pile.

    `pile` names the foundation by the card that started it (its ace or joker;
    for a new pile, pile == card).  `src`: 0 nerts pile, 1 waste, 2..5 work
    piles 0..3.  `decl`: the face a joker stands for, 0 otherwise.  `mv`:
    index of this move in the author's local move log (for the audit).
    """

    TYPE = MsgType.PLAY
    KEYS: ClassVar[Mapping[str, str]] = {
        "card": "c",
        "pile": "p",
        "src": "s",
        "decl": "d",
        "mv": "m",
    }
    card: int
    pile: int
    src: int
    decl: int
    mv: int

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        # The most frequent entry of all: a map with exactly its keys is read at
        # once rather than through a _Reader, with the same checks in the same order.
        if type(payload) is not dict or payload.keys() != cls.WIRE:
            _Reader(cls, payload)  # raises, naming what is wrong (or takes another mapping)
        k = cls.KEYS
        return cls(_int(payload[k["card"]], "card", 0, MAX_CARD),
                   _int(payload[k["pile"]], "pile", 0, MAX_CARD),
                   _int(payload[k["src"]], "src", 0, MAX_SRC),
                   _int(payload[k["decl"]], "decl", 0, MAX_DECL),
                   _int(payload[k["mv"]], "mv", 0, MAX_INT))


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


@dataclass(frozen=True, slots=True)
class Stuck(Payload):
    """Vote that nobody can move (`on=False` withdraws it).

    `moves` is the number of foundation plays the voter had seen, so the vote
    only counts while no later play has landed.
    """

    TYPE = MsgType.STUCK
    KEYS: ClassVar[Mapping[str, str]] = {"on": "o", "moves": "m"}
    on: bool
    moves: int

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.flag("on"), r.integer("moves"))


@dataclass(frozen=True, slots=True)
class Nerts(Payload):
    """The call.  Its Lamport time is what counts; the audit checks the caller's
    move log shows an empty nerts pile at that time."""

    TYPE = MsgType.NERTS


# -- round end ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Summary(Payload):
    """What the sender computed at round end: foundation hash and per-seat scores."""

    TYPE = MsgType.SUMMARY
    KEYS: ClassVar[Mapping[str, str]] = {"digest": "h", "scores": "s"}
    digest: bytes
    scores: tuple[int, ...]

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        scores = _ints(r.raw("scores"), "scores", MAX_SEATS, -MAX_INT, MAX_INT)
        return cls(r.blob("digest"), scores)


@dataclass(frozen=True, slots=True)
class Audit(Payload):
    """Opening of the sender's deck secret (committed as Commit.deck) plus its
    whole local move log, so every peer can replay the round.

    Each move is 1..6 ints (|i| < 2**53), in an encoding the game layer owns.
    """

    TYPE = MsgType.AUDIT
    KEYS: ClassVar[Mapping[str, str]] = {"deck_secret": "s", "moves": "m"}
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


@dataclass(frozen=True, slots=True)
class Verdict(Payload):
    """Result of replaying one seat's audit: `ok`, or why not."""

    TYPE = MsgType.VERDICT
    KEYS: ClassVar[Mapping[str, str]] = {"seat": "t", "ok": "o", "reason": "r"}
    seat: int
    ok: bool
    reason: str = ""

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.integer("seat", 0, MAX_SEATS - 1), r.flag("ok"), r.text("reason"))


# -- log repair and departure -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Resend(Payload):
    """Please send again `author`'s entries from_seq..to_seq (inclusive, <= 1024 of them)."""

    TYPE = MsgType.RESEND
    KEYS: ClassVar[Mapping[str, str]] = {"author": "a", "from_seq": "f", "to_seq": "t"}
    author: bytes
    from_seq: int
    to_seq: int

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        from_seq = r.integer("from_seq", 1)
        to_seq = r.integer("to_seq", from_seq, from_seq + MAX_RESEND - 1)
        return cls(r.blob("author", PUBLIC_KEY_LEN), from_seq, to_seq)


@dataclass(frozen=True, slots=True)
class Goodbye(Payload):
    """Leaving the network (closing connections), with a human-readable reason."""

    TYPE = MsgType.GOODBYE
    KEYS: ClassVar[Mapping[str, str]] = {"reason": "r"}
    reason: str = ""

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        return cls(_Reader(cls, payload).text("reason"))


def _ints(
    value: object, attr: str, max_len: int, lo: int, hi: int, min_len: int = 0
) -> tuple[int, ...]:
    if type(value) is not list or not min_len <= len(value) <= max_len:
        raise EnvelopeError(f"bad_field:{attr}")
    return tuple(_int(v, attr, lo, hi) for v in value)


@dataclass(frozen=True, slots=True)
class Drop(Payload):
    """Vote to drop a silent seat from the round.

    `upto` is the highest sequence number of `who` the voter holds; once every
    other live seat has voted, the seat's entries up to the largest `upto`
    count and nothing later does.
    """

    TYPE = MsgType.DROP
    KEYS: ClassVar[Mapping[str, str]] = {"who": "w", "upto": "u"}
    who: bytes
    upto: int

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.blob("who", PUBLIC_KEY_LEN), r.integer("upto"))


@dataclass(frozen=True, slots=True)
class Refuse(Payload):
    """The host will not seat `who` (table full, round under way), and says why."""

    TYPE = MsgType.REFUSE
    KEYS: ClassVar[Mapping[str, str]] = {"who": "w", "reason": "r"}
    who: bytes
    reason: str

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.blob("who", PUBLIC_KEY_LEN), r.text("reason"))


@dataclass(frozen=True, slots=True)
class Fork(Payload):
    """Proof that one seat signed two different entries under one sequence number.

    `first` and `second` are the two frames, byte for byte as their author
    signed them; both name the same predecessor, so the author's history is
    agreed up to just before them (see proof.py, which checks them).
    """

    TYPE = MsgType.FORK
    KEYS: ClassVar[Mapping[str, str]] = {"first": "a", "second": "b"}
    first: bytes
    second: bytes

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(_frame(r.raw("first"), "first"), _frame(r.raw("second"), "second"))


def _frame(value: object, attr: str) -> bytes:
    if type(value) is not bytes or not 0 < len(value) <= MAX_ENTRY:
        raise EnvelopeError(f"bad_field:{attr}")
    return value


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

    TYPE = MsgType.SNAPSHOT
    KEYS: ClassVar[Mapping[str, str]] = {
        "round": "r", "over": "o", "seats": "s", "settings": "c", "totals": "t",
        "rounds": "n", "heads": "h",
    }
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

    TYPE = MsgType.RESULT
    KEYS: ClassVar[Mapping[str, str]] = {"totals": "t", "digest": "h"}
    totals: tuple[int, ...]
    digest: bytes

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        totals = _ints(r.raw("totals"), "totals", MAX_SEATS, -MAX_INT, MAX_INT, min_len=1)
        return cls(totals, r.blob("digest"))


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
