"""The event's signed entries: who opened it, who registered, where each game sits.

They travel in the protocol's own envelope (``protocol/envelope.py``): magic,
author key, Ed25519 signature over the exact msgpack body, and a body whose
``table_id`` field holds the event's id and whose ``round`` field the game
number. Their types (200 and up) are none of a table's, so no table takes one
for its own entry, and no event takes a table's.

Each entry's sequence number follows from what it is (the opening is the
organiser's 1st, game g's seating its 2g-th, the end of game g its 2g+1-th; a
registration its player's 1st), so an author who signs two different entries
for one place has signed two bodies under one number: equivocation, evident
from the two frames, as at a table.

Who signs what is the point: the organiser signs the opening and every
seating, each *player* signs their own registration, so an organiser cannot
invent players, and nobody but the organiser can seat anyone.

`decode` is the trust boundary: whatever bytes it is given it returns a whole,
checked entry or raises `EventError` with one line that says what is wrong.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from ..protocol.envelope import GENESIS, MAX_INT, TABLE_ID_LEN, EnvelopeError, open_entry, seal
from ..protocol.identity import PUBLIC_KEY_LEN, Identity, clean_name, fingerprint_of

__all__ = [
    "EVENT_ID_LEN",
    "MAX_GAMES",
    "MAX_PLAYERS",
    "Entry",
    "EventError",
    "Finished",
    "Opened",
    "Registered",
    "Seated",
    "TableSeats",
    "code_check",
    "code_proof",
    "decode",
    "encode",
    "letter",
]

EVENT_ID_LEN: Final = TABLE_ID_LEN
#: Players one event seats at most: a seating of them all (50 tables of 4 is 200)
#: stays far inside one entry's 64 KiB.
MAX_PLAYERS: Final = 500
MAX_GAMES: Final = 50
MIN_TABLE, MAX_TABLE = 3, 5
MAX_TARGET: Final = 10_000
MAX_TURN_UP_S: Final = 3600
#: Rule options a seating carries for its tables, at most, each a short value.
MAX_RULES: Final = 16
_HASH_LEN: Final = 32
_SEED_LEN: Final = 32

OPENED, REGISTERED, SEATED, FINISHED = 200, 201, 202, 203
_CODE_CHECK: Final = b"p2p-nerts/event-code\x00"
_CODE_PROOF: Final = b"p2p-nerts/event-code-proof\x00"

RuleValue = int | str | bool


class EventError(Exception):
    """An event entry, file or step refused: the message is one line fit to show."""


@dataclass(frozen=True, slots=True)
class Opened:
    """The organiser's opening of an event: its name and how it is played."""

    event_id: bytes
    name: str
    organiser: bytes
    games: int
    table_size: int
    target: int
    #: ``code_check(event_id, code)``, or None for an event anyone may join.
    code_check: bytes | None
    #: How long a seated player has to turn up before the game goes on without them.
    turn_up_s: int
    created: int


@dataclass(frozen=True, slots=True)
class Registered:
    """A player's own signed word that they take part, under this name."""

    event_id: bytes
    player: bytes
    name: str
    #: ``code_proof(event_id, player, code)`` (empty when the event has no code).
    code_proof: bytes = b""


@dataclass(frozen=True, slots=True)
class TableSeats:
    """One table of a seating: its letter, its host (who opens it) and its seats."""

    letter: str
    host: bytes
    seats: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class Seated:
    """Game ``game``'s seating, as the organiser drew it.

    ``players`` are who were present to be seated; ``counted`` names the game
    records (by table id) whose standings ordered the draw, so anyone holding
    them draws the very same tables again (``draw.py``).
    """

    event_id: bytes
    game: int
    seed: bytes
    players: tuple[bytes, ...]
    tables: tuple[TableSeats, ...]
    rules: Mapping[str, RuleValue] = field(default_factory=dict)
    counted: tuple[bytes, ...] = ()


@dataclass(frozen=True, slots=True)
class Finished:
    """The organiser's word that game ``game`` is over (its tables' records still count
    whenever they come: a table may play on while the organiser's machine is down)."""

    event_id: bytes
    game: int


Entry = Opened | Registered | Seated | Finished


@dataclass(frozen=True, slots=True)
class Signed:
    """A decoded entry with who signed it and its frame, byte for byte."""

    entry: Entry
    author: bytes
    raw: bytes


def code_check(event_id: bytes, code: str) -> bytes:
    """What an opening publishes of its code: lets a player's machine tell a wrong
    code before it registers (a short code can be guessed from it offline: the
    code keeps strangers from registering by accident, it is no password)."""
    return hashlib.sha256(_CODE_CHECK + event_id + code.encode()).digest()


def code_proof(event_id: bytes, player: bytes, code: str) -> bytes:
    """What a registration carries: only someone who knew the code could make it, and
    it is bound to the player's key, so it cannot be copied into another's."""
    return hashlib.sha256(_CODE_PROOF + event_id + player + code.encode()).digest()


def letter(index: int) -> str:
    """Table ``index``'s letter: A..Z, then AA, AB.. (50 tables: up to AX)."""
    letters = string.ascii_uppercase
    if index < len(letters):
        return letters[index]
    return letters[index // len(letters) - 1] + letters[index % len(letters)]


def _place(entry: Entry) -> tuple[int, int, int]:
    """(type, round, seq) of an entry: the seq follows from what the entry is."""
    match entry:
        case Opened():
            return OPENED, 0, 1
        case Registered():
            return REGISTERED, 0, 1
        case Seated(game=game):
            return SEATED, game, 2 * game
        case Finished(game=game):
            return FINISHED, game, 2 * game + 1


def _payload(entry: Entry) -> dict[str, object]:
    match entry:
        case Opened():
            return {"name": entry.name, "organiser": entry.organiser, "games": entry.games,
                    "table_size": entry.table_size, "target": entry.target,
                    "code_check": entry.code_check, "turn_up_s": entry.turn_up_s,
                    "created": entry.created}
        case Registered():
            return {"player": entry.player, "name": entry.name, "code_proof": entry.code_proof}
        case Seated():
            return {"seed": entry.seed, "players": list(entry.players),
                    "tables": [[t.letter, t.host, list(t.seats)] for t in entry.tables],
                    "rules": dict(entry.rules), "counted": list(entry.counted)}
        case Finished():
            return {}


def signer_of(entry: Entry) -> bytes | None:
    """The key that must sign ``entry``: its player for a registration, the organiser's
    (named in the opening, None here) for the rest, the organiser for the opening."""
    match entry:
        case Opened():
            return entry.organiser
        case Registered():
            return entry.player
    return None


def encode(entry: Entry, identity: Identity) -> bytes:
    """``entry`` signed by ``identity``, framed as a protocol entry.

    Checked as a received one is (``decode``), so nothing goes out that a player's
    machine would refuse: EventError otherwise.
    """
    must = signer_of(entry)
    if must is not None and must != identity.public_key:
        raise EventError("that entry must be signed by "
                         f"{fingerprint_of(must)}, not {identity.fingerprint}")
    kind, game, seq = _place(entry)
    try:
        raw = seal(identity, table_id=entry.event_id, round=game, seq=seq, lamport=seq,
                   type=kind, payload=_payload(entry), prev=GENESIS).raw
    except EnvelopeError as exc:
        raise EventError(f"cannot sign that entry ({exc.reason})") from None
    decode(raw)
    return raw


def decode(data: bytes | bytearray | memoryview) -> Signed:
    """Check and read one entry's frame; EventError (one line) on anything wrong."""
    try:
        frame = open_entry(data)
    except EnvelopeError as exc:
        if exc.reason == "bad_signature":
            raise EventError("an event entry's signature does not match "
                             "(forged or changed)") from None
        raise EventError(f"not an event entry ({exc.reason})") from None
    p = frame.payload
    event_id = frame.table_id
    try:
        entry: Entry
        if frame.type == OPENED:
            _keys(p, "name", "organiser", "games", "table_size", "target", "code_check",
                  "turn_up_s", "created")
            check = p["code_check"]
            if check is not None:
                _bytes(check, "code_check", _HASH_LEN)
            entry = Opened(event_id, _name(p["name"]), _key(p["organiser"], "organiser"),
                           _int(p["games"], "games", 1, MAX_GAMES),
                           _int(p["table_size"], "table_size", MIN_TABLE, MAX_TABLE),
                           _int(p["target"], "target", 1, MAX_TARGET),
                           check if isinstance(check, bytes) else None,
                           _int(p["turn_up_s"], "turn_up_s", 0, MAX_TURN_UP_S),
                           _int(p["created"], "created", 0, MAX_INT))
        elif frame.type == REGISTERED:
            _keys(p, "player", "name", "code_proof")
            proof = p["code_proof"]
            if proof != b"":
                _bytes(proof, "code_proof", _HASH_LEN)
            entry = Registered(event_id, _key(p["player"], "player"), _name(p["name"]),
                               bytes(proof) if isinstance(proof, bytes) else b"")
        elif frame.type == SEATED:
            entry = _seated(event_id, frame.round, p)
        elif frame.type == FINISHED:
            _keys(p)
            entry = Finished(event_id, _int(frame.round, "game", 1, MAX_GAMES))
        else:
            raise EventError(f"not an event entry (type {frame.type})")
    except EventError as exc:
        raise EventError(f"a malformed event entry: {exc}") from None
    _kind, game, seq = _place(entry)
    if (frame.round, frame.seq, frame.lamport, frame.prev) != (game, seq, seq, GENESIS):
        raise EventError("a malformed event entry: its place in its author's chain is wrong")
    must = signer_of(entry)
    if must is not None and must != frame.author:
        raise EventError("an event entry signed by another key than the one it names")
    return Signed(entry, frame.author, bytes(data))


def _seated(event_id: bytes, game: int, p: Mapping[str, object]) -> Seated:
    _keys(p, "seed", "players", "tables", "rules", "counted")
    players = _key_list(p["players"], "players", MAX_PLAYERS)
    tables_in = p["tables"]
    if not isinstance(tables_in, list) or len(tables_in) > MAX_PLAYERS:
        raise EventError("bad tables")
    tables = []
    for index, t in enumerate(tables_in):
        if not isinstance(t, list) or len(t) != 3:
            raise EventError("bad tables")
        name, host, seats = t
        if name != letter(index):
            raise EventError(f"table {index + 1} is not lettered {letter(index)}")
        tables.append(TableSeats(name, _key(host, "host"),
                                 _key_list(seats, "seats", MAX_TABLE)))
    rules = p["rules"]
    if not isinstance(rules, dict) or len(rules) > MAX_RULES or not all(
            type(v) in (int, bool) or (type(v) is str and len(v) <= 64)
            for v in rules.values()):
        raise EventError("bad rules")
    counted = p["counted"]
    if not isinstance(counted, list) or not all(
            type(c) is bytes and len(c) == TABLE_ID_LEN for c in counted):
        raise EventError("bad counted")
    return Seated(event_id, _int(game, "game", 1, MAX_GAMES), _bytes(p["seed"], "seed", _SEED_LEN),
                  players, tuple(tables), dict(rules), tuple(counted))


def _keys(p: Mapping[str, object], *names: str) -> None:
    if set(p) != set(names):
        raise EventError("unexpected or missing fields")


def _int(value: object, name: str, lo: int, hi: int) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise EventError(f"{name} must be {lo}..{hi}")
    return value


def _bytes(value: object, name: str, length: int) -> bytes:
    if type(value) is not bytes or len(value) != length:
        raise EventError(f"bad {name}")
    return value


def _key(value: object, name: str) -> bytes:
    return _bytes(value, name, PUBLIC_KEY_LEN)


def _key_list(value: object, name: str, most: int) -> tuple[bytes, ...]:
    if not isinstance(value, list) or len(value) > most:
        raise EventError(f"bad {name}")
    keys = tuple(_key(k, name) for k in value)
    if len(set(keys)) != len(keys):
        raise EventError(f"a key twice in {name}")
    return keys


def _name(value: object) -> str:
    if type(value) is not str:
        raise EventError("bad name")
    try:
        cleaned = clean_name(value)
    except ValueError as exc:
        raise EventError(str(exc)) from None
    if cleaned != value:
        raise EventError("a name not in its canonical form")
    return cleaned

