"""Table membership and lobby: who is there, who sits where, the rules, who is
ready, and who is refused or leaves."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple, Self

from ..envelope import EnvelopeError
from ..identity import PUBLIC_KEY_LEN
from ._fields import (
    COUNTDOWN_MS,
    DROP_AFTER_MS,
    MAX_APP_VERSION,
    MAX_COUNTDOWN_MS,
    MAX_DROP_AFTER_MS,
    MAX_SEATS,
    MAX_TARGET,
    MIN_DROP_AFTER_MS,
    TEAMS,
    MsgType,
    Payload,
    _bytes,
    _name,
    _pair,
    _Reader,
    declare,
)


@dataclass(frozen=True, slots=True)
class Hello(Payload):
    """Announce oneself on a new connection: who, and which app protocol."""

    name: str
    version: int

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.name("name"), r.integer("version", 1, MAX_APP_VERSION))


declare(Hello, MsgType.HELLO, {"name": "n", "version": "v"})


@dataclass(frozen=True, slots=True)
class Join(Payload):
    """Ask for a seat.  `code_proof` proves knowledge of the table code (32 bytes) or is None."""

    name: str
    code_proof: bytes | None

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.name("name"), r.opt_blob("code_proof"))


declare(Join, MsgType.JOIN, {"name": "n", "code_proof": "p"})


@dataclass(frozen=True, slots=True)
class Leave(Payload):
    """Give up one's seat (the connection may stay, e.g. to watch)."""



declare(Leave, MsgType.LEAVE)


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

    seats: tuple[Seat, ...]

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        return cls(_seats(_Reader(cls, payload).array("seats", MAX_SEATS, min_len=1)))


declare(Roster, MsgType.ROSTER, {"seats": "s"})


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


declare(Settings, MsgType.SETTINGS, {
    "stock_turn": "st",
    "strict_ties": "ti",
    "penalty": "pe",
    "target": "ta",
    "jokers": "jo",
    "teams": "te",
    "lone_rotate": "lr",
    "countdown_ms": "cd",
    "drop_after_ms": "da",
})


@dataclass(frozen=True, slots=True)
class Ready(Payload):
    """Ready for the next round (`on=False` takes it back)."""

    on: bool

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        return cls(_Reader(cls, payload).flag("on"))


declare(Ready, MsgType.READY, {"on": "r"})


@dataclass(frozen=True, slots=True)
class Refuse(Payload):
    """The host will not seat `who` (table full, round under way), and says why."""

    who: bytes
    reason: str

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        r = _Reader(cls, payload)
        return cls(r.blob("who", PUBLIC_KEY_LEN), r.text("reason"))


declare(Refuse, MsgType.REFUSE, {"who": "w", "reason": "r"})


@dataclass(frozen=True, slots=True)
class Goodbye(Payload):
    """Leaving the network (closing connections), with a human-readable reason."""

    reason: str = ""

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        return cls(_Reader(cls, payload).text("reason"))


declare(Goodbye, MsgType.GOODBYE, {"reason": "r"})
