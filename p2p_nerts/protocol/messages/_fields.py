"""What every payload is built on: the limits, the entry types, the strict
field checkers and the `Payload` base.

Parsing is strict on purpose (see the package docstring); the checkers here
are the definition of each field rule, and every error they raise is one
reason code, ``bad_field:<attr>``. Only the ACK's marks, parsed more often
than anything but views, apply them fused into one pass (see Ack.from_wire),
and a test holds that parse to these checkers' answers; a PLAY, the most
frequent signed entry, is accepted by their fused checks too, and refused by
these checkers one by one.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Final, NoReturn, Self

from ..envelope import MAX_INT, EnvelopeError
from ..identity import clean_name

# Final, so compiled code reads them as constants (a received play checks some).
HASH_LEN: Final = 32
MAX_CARD: Final = 1023
MAX_SEATS: Final = 8
MAX_REASON: Final = 200
MAX_MOVES: Final = 5000
MAX_MOVE_INTS: Final = 6
MAX_PILE: Final = 64
WORK_PILES: Final = 4
MAX_SRC: Final = 1 + WORK_PILES  # 0 = nerts pile, 1 = waste, 2..5 = work piles 0..3
MAX_DECL: Final = 63
MAX_ACK_AUTHORS: Final = 32
MAX_RESEND: Final = 1024
MAX_SNAPSHOT_KEYS: Final = 64  # authors (and players' totals) a SNAPSHOT names: a table tracks 64
MAX_TARGET: Final = 10_000
MAX_APP_VERSION: Final = 0xFFFF
TEAMS = ("none", "pairs", "share")
#: SETTINGS clocks, in milliseconds: the default and the range a peer accepts.
COUNTDOWN_MS: Final = 3000  # from GO to the first move
MAX_COUNTDOWN_MS: Final = 60_000
DROP_AFTER_MS: Final = 6000  # a live seat silent this long is voted out of the round
MIN_DROP_AFTER_MS: Final = 500
MAX_DROP_AFTER_MS: Final = 3_600_000


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
        return _opt_int(self._map[self._keys[attr]], attr, lo, hi)

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
    # Any key at all (the map may be anyone's): walked as objects, since compiled
    # code would check each to be the text that a payload map's type promises.
    sent: Iterable[object] = payload
    for key in sent:
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


def _opt_int(value: object, attr: str, lo: int, hi: int) -> int | None:
    return None if value is None else _int(value, attr, lo, hi)


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


def _ints(
    value: object, attr: str, max_len: int, lo: int, hi: int, min_len: int = 0
) -> tuple[int, ...]:
    if type(value) is not list or not min_len <= len(value) <= max_len:
        raise EnvelopeError(f"bad_field:{attr}")
    # _int's rule, in a loop rather than a call per element: a view carries
    # four of these lists, an audit thousands.
    for v in value:
        if type(v) is not int or not lo <= v <= hi:
            raise EnvelopeError(f"bad_field:{attr}")
    return tuple(value)


def _strictly_ascending(keys: list[bytes], attr: str) -> None:
    """Sorted, duplicate-free lists have one encoding, so equal content means equal bytes."""
    if any(a >= b for a, b in itertools.pairwise(keys)):
        raise EnvelopeError(f"bad_field:{attr}")


class _Declared:
    """What every payload class has (:func:`declare` gives it): its entry type
    `TYPE`, and `KEYS`, which maps its attribute names to short wire keys.

    Kept off the dataclasses: compiled (``scripts/compile_engine.py``), every
    value declared in a dataclass's body is taken for a field, ClassVar or not.
    """

    __slots__ = ()
    TYPE: ClassVar[MsgType]
    KEYS: ClassVar[Mapping[str, str]] = {}
    #: The wire keys of ``KEYS``, as a set to check a received map against at once.
    WIRE: ClassVar[frozenset[str]] = frozenset()


@dataclass(frozen=True, slots=True)
class Payload(_Declared):
    """Base of all payloads, each a frozen dataclass.

    A dataclass itself, fieldless, so that compiled code compares payloads
    as dataclasses (by their fields, not as the same object).
    """

    def to_wire(self) -> dict[str, object]:
        """The msgpack map for this payload (tuples pack as arrays)."""
        return {key: _plain(getattr(self, attr)) for attr, key in self.KEYS.items()}

    @classmethod
    def from_wire(cls, payload: Mapping[str, object]) -> Self:
        """Validate an untrusted map and build the payload; raises EnvelopeError."""
        _Reader(cls, payload)
        return cls()


def declare(cls: type[Payload], kind: MsgType, keys: Mapping[str, str] | None = None) -> None:
    """Give a payload class its entry type and its wire keys (attribute: key, in
    the order they are packed), once it is defined (see :class:`_Declared`)."""
    cls.TYPE = kind
    if keys is not None:
        cls.KEYS = keys
        cls.WIRE = frozenset(keys.values())
