"""Signed entries: the only bytes peers exchange, and the only way in from the wire.

Frame layout (see docs/PROTOCOL.md)::

    MAGIC b"NZ" (2) | author public key (32) | signature (64) | body (msgpack)

msgpack has no canonical form, so we sign the exact body bytes (behind a
domain-separation prefix) rather than a decoded object, verify the signature
*before* decoding anything, and keep the received frame to forward verbatim.
The entry id is SHA-256 of the body, so every peer names an entry the same way.
Each body also names its author's previous entry (`prev`: that entry's
signature), so an author's entries form a chain: two peers holding one entry
hold the same history of that author before it, and a fork is evident (see
proof.py). A signature names its entry as surely as the id (under one key, two
bodies with one valid signature would take a SHA-512 collision), and it is
already in every frame: checking a link costs no hash on the receive path.

`open_entry` is the trust boundary: whatever bytes it is given, it returns a
fully validated `Entry` or raises `EnvelopeError` with a short reason code.
The payload map is decoded but its fields are checked by `messages.parse_payload`.

*Link entries* are the unsigned form, for what is never forwarded
(acknowledgements, views)::

    MAGIC b"NL" (2) | body (msgpack)

They prove nothing by themselves: `open_link_entry` takes the key of the
authenticated connection the frame came on (``net/linkmac.py``) and accepts
the body only if it names that key as its author.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Final, NamedTuple

import msgpack

from .identity import PUBLIC_KEY_LEN, SIGNATURE_LEN, Identity, verify

__all__ = [
    "BODY_FIELDS",
    "DOMAIN",
    "GENESIS",
    "HEADER_LEN",
    "LINK_MAGIC",
    "MAGIC",
    "MAX_ENTRY",
    "MAX_INT",
    "MIN_ENTRY",
    "PROTOCOL_VERSION",
    "TABLE_ID_LEN",
    "Entry",
    "EnvelopeError",
    "open_entry",
    "open_link_entry",
    "seal",
    "seal_link",
]

# Final, so compiled code (scripts/compile_engine.py) reads them as constants.
MAGIC: Final = b"NZ"
LINK_MAGIC: Final = b"NL"
DOMAIN: Final = b"p2p-nerts/v1/entry\x00"
PROTOCOL_VERSION: Final = 2
#: The `prev` of an author's first entry (and the head of one that signed nothing).
GENESIS: Final = bytes(SIGNATURE_LEN)
HEADER_LEN: Final = len(MAGIC) + PUBLIC_KEY_LEN + SIGNATURE_LEN  # 98
MIN_ENTRY: Final = HEADER_LEN + 1
LINK_MIN_ENTRY: Final = len(LINK_MAGIC) + 1
MAX_ENTRY: Final = 64 * 1024
TABLE_ID_LEN: Final = 16
# Largest integer accepted anywhere on the wire: exact in a double, so any
# implementation can hold it, and far beyond any honest counter.
MAX_INT: Final = 2**53 - 1
MAX_MSG_TYPE: Final = 255
BODY_FIELDS: Final = ("version", "table_id", "round", "author", "seq", "lamport", "type", "prev",
               "payload")

# Per-container caps for the decoder, so a tiny frame cannot claim a huge
# allocation.  The biggest legitimate containers are an AUDIT move list
# (5000 items), a reason string (200 characters, up to 800 bytes) and the two
# frames a FORK carries as its proof (bin, each at most a whole entry).
_MAX_ARRAY: Final = 5000
_MAX_MAP: Final = 32
_MAX_STR: Final = 1024
_MAX_BIN: Final = MAX_ENTRY

_SIG_START: Final = len(MAGIC) + PUBLIC_KEY_LEN


class EnvelopeError(Exception):
    """A frame or payload was rejected.  `reason` is a short machine-readable code.

    Codes: too_short, too_large, bad_magic, bad_signature, malformed_body,
    unsupported_version, author_mismatch, unknown_type, bad_field:<name>.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Entry(NamedTuple):
    """One verified, validated entry of the table log.

    `raw` is the exact frame as received (or sent), to store and forward
    byte for byte.  `payload` is the decoded but not yet type-checked payload
    map (see messages.parse_payload); `raw` pins it down, so an entry hashes
    by its frame.

    A named tuple rather than a frozen dataclass: one is built for every frame
    that arrives, and a tuple is built several times faster.
    """

    version: int
    table_id: bytes
    round: int
    author: bytes
    seq: int
    lamport: int
    type: int
    #: Sequenced: the signature of the author's entry seq - 1 (GENESIS for seq 1).
    #: Ephemeral: the signature of the author's entry ``seq``, its chain head then.
    prev: bytes
    payload: Mapping[str, object]
    raw: bytes

    def __hash__(self) -> int:
        return hash(self.raw)  # (the payload map is not hashable; the frame pins it)

    @property
    def id(self) -> bytes:
        """SHA-256 of the body: every peer names an entry the same way.

        Computed when asked, not as each entry arrives: nothing on the receive
        path needs it, and on a peer woken by a frame a first hash costs tens
        of microseconds of cold caches.
        """
        return hashlib.sha256(self.body).digest()

    @property
    def signed(self) -> bool:
        """False for a link entry: only the connection it came on vouches for it."""
        return self.raw[: len(MAGIC)] == MAGIC

    @property
    def signature(self) -> bytes:
        """The 64-byte Ed25519 signature over DOMAIN + body (empty for a link entry)."""
        return self.raw[_SIG_START:HEADER_LEN] if self.signed else b""

    @property
    def body(self) -> bytes:
        """The msgpack body, exactly as received."""
        return self.raw[HEADER_LEN if self.signed else len(LINK_MAGIC):]


def seal(
    identity: Identity,
    *,
    table_id: bytes,
    round: int,
    seq: int,
    lamport: int,
    type: int,
    payload: Mapping[str, object],
    prev: bytes = GENESIS,
) -> Entry:
    """Build, sign and frame an entry authored by `identity`.

    The result goes through the same validation as a received frame, so we
    never send what a peer would reject: bad arguments raise EnvelopeError.
    """
    body = _pack(identity.public_key, table_id, round, seq, lamport, type, prev, payload)
    raw = MAGIC + identity.public_key + identity.sign(DOMAIN + body) + body
    _check_size(raw)
    return _decode(raw, identity.public_key, body)


def seal_link(
    author: bytes,
    *,
    table_id: bytes,
    round: int,
    seq: int,
    lamport: int,
    type: int,
    payload: Mapping[str, object],
    prev: bytes = GENESIS,
) -> bytes:
    """An unsigned link entry by ``author``, for the peers it is directly linked to.

    Unlike `seal` it is not decoded again to check it: link entries are
    ephemeral (a rejected one is as good as lost, and the next heartbeat
    repairs that) and sent many times a second, so the check is left to
    the tests.
    """
    raw = LINK_MAGIC + _pack(author, table_id, round, seq, lamport, type, prev, payload)
    _check_size(raw, LINK_MIN_ENTRY)
    return raw


#: One packer for every body: ``msgpack.packb`` builds a new one per call, which
#: costs about as much as packing a PLAY. (It packs without calling back into
#: Python, so no other thread can come between; it starts afresh after an error.)
_PACKER: Final = msgpack.Packer(use_bin_type=True)


def _pack(author: bytes, table_id: bytes, round: int, seq: int, lamport: int, type: int,
          prev: bytes, payload: Mapping[str, object]) -> bytes:
    try:
        body: bytes = _PACKER.pack(
            [PROTOCOL_VERSION, table_id, round, author, seq, lamport, type, prev,
             dict(payload)])
    except (TypeError, ValueError, OverflowError):
        raise EnvelopeError("malformed_body") from None
    return body


def author_of(raw: bytes) -> bytes:
    """The author key a signed frame names, read without checking it: for frames
    checked before (journaled, or kept in a game record)."""
    return raw[len(MAGIC):len(MAGIC) + PUBLIC_KEY_LEN]


def open_entry(raw: bytes | bytearray | memoryview) -> Entry:
    """Check and decode one received frame; the trust boundary of the protocol.

    Order matters: cheap length and magic checks, then the signature over the
    raw body, and only then msgpack decoding and field validation, so
    unauthenticated bytes never reach the decoder.  Raises only EnvelopeError.
    """
    raw = bytes(raw)
    _check_size(raw)
    if raw[: len(MAGIC)] != MAGIC:
        raise EnvelopeError("bad_magic")
    author = raw[len(MAGIC) : _SIG_START]
    body = raw[HEADER_LEN:]
    if raw not in _CHECKED:
        if not verify(author, raw[_SIG_START:HEADER_LEN], DOMAIN + body):
            raise EnvelopeError("bad_signature")
        _CHECKED.add(raw)
    return _decode(raw, author, body)


class _Checked:
    """The latest frames whose signature checked in this process: the same bytes are
    not checked again.

    A game's every entry is checked once as it arrives, and again when the
    finished game is replayed for the history (``records.verify.replay``, in a
    worker thread: a whole game's verifies at once); an entry heard from two
    peers (a resend crossing the original) is checked once. Only the exact
    frame is remembered, never a key or a signature alone, so whatever this
    says yes to would have verified: the answer is the check's own. Bounded
    by count and bytes in two generations (the older one goes when the newer
    is full); a frame forgotten is simply checked again. Safe across threads:
    each step is one operation on a set or one assignment. What this process
    signs is not remembered: opened here, it is checked as a peer's would be
    (a benchmark signs the frames it then receives).
    """

    def __init__(self, frames: int, size: int) -> None:
        self._frames = frames  # a generation's bounds
        self._size = size
        self._young: set[bytes] = set()
        self._old: set[bytes] = set()
        self._bytes = 0

    def __contains__(self, raw: bytes) -> bool:
        return raw in self._young or raw in self._old

    def add(self, raw: bytes) -> None:
        young = self._young
        young.add(raw)
        self._bytes += len(raw)
        if len(young) >= self._frames or self._bytes >= self._size:
            self._old, self._young, self._bytes = young, set(), 0


#: Some games' worth of entries in a generation (a game to 40 at eight seats signs
#: about 650), and a few MiB at most (most of it the very frames the replica holds).
_CHECKED: Final = _Checked(frames=16_384, size=4 << 20)


def open_link_entry(raw: bytes | bytearray | memoryview, via: bytes) -> Entry:
    """Check and decode a link entry that arrived on the authenticated link from ``via``.

    The link's tag proved who sent the frame; the body must name that same
    author (``author_mismatch`` otherwise: a relayed link entry proves
    nothing). Raises only EnvelopeError.
    """
    raw = bytes(raw)
    _check_size(raw, LINK_MIN_ENTRY)
    if raw[: len(LINK_MAGIC)] != LINK_MAGIC:
        raise EnvelopeError("bad_magic")
    return _decode(raw, via, raw[len(LINK_MAGIC):])


def _check_size(raw: bytes, least: int = MIN_ENTRY) -> None:
    if len(raw) < least:
        raise EnvelopeError("too_short")
    if len(raw) > MAX_ENTRY:
        raise EnvelopeError("too_large")


def _strict_map(pairs: list[tuple[object, object]]) -> dict[str, object]:
    """Maps must have text keys, each once: duplicates would let two decoders disagree."""
    result: dict[str, object] = {}
    for key, value in pairs:
        if not isinstance(key, str) or key in result:
            raise ValueError("map keys must be distinct strings")
        result[key] = value
    return result


def _no_ext(code: int, data: bytes) -> object:
    raise ValueError("ext types are not allowed")


_new_tuple = tuple.__new__


def _decode(raw: bytes, author: bytes, body: bytes) -> Entry:
    try:
        obj = msgpack.unpackb(
            body,
            raw=False,
            strict_map_key=True,
            use_list=True,
            object_pairs_hook=_strict_map,
            ext_hook=_no_ext,
            max_str_len=_MAX_STR,
            max_bin_len=_MAX_BIN,
            max_array_len=_MAX_ARRAY,
            max_map_len=_MAX_MAP,
            max_ext_len=0,
        )
    except (ValueError, TypeError, msgpack.UnpackException):
        # ValueError covers ExtraData, StackError, FormatError, bad UTF-8, limits.
        raise EnvelopeError("malformed_body") from None
    if not isinstance(obj, list) or not obj:
        raise EnvelopeError("malformed_body")
    if _int(obj[0], "version", 0) != PROTOCOL_VERSION:
        raise EnvelopeError("unsupported_version")
    if len(obj) != len(BODY_FIELDS):
        raise EnvelopeError("malformed_body")
    _, table_id, round_, body_author, seq, lamport, msg_type, prev, payload = obj
    if type(table_id) is not bytes or len(table_id) != TABLE_ID_LEN:
        raise EnvelopeError("bad_field:table_id")
    if type(body_author) is not bytes or len(body_author) != PUBLIC_KEY_LEN:
        raise EnvelopeError("bad_field:author")
    if body_author != author:
        raise EnvelopeError("author_mismatch")
    if type(prev) is not bytes or len(prev) != SIGNATURE_LEN:
        raise EnvelopeError("bad_field:prev")
    if not isinstance(payload, dict):
        raise EnvelopeError("bad_field:payload")
    # An honest body passes the four checks at once; any other is refused by the
    # checks one by one (_int), which name the first field at fault.
    if not (type(round_) is int and 0 <= round_ <= MAX_INT and type(seq) is int
            and 1 <= seq <= MAX_INT and type(lamport) is int and 1 <= lamport <= MAX_INT
            and type(msg_type) is int and 0 <= msg_type <= MAX_MSG_TYPE):
        _int(round_, "round", 0)
        _int(seq, "seq", 1)
        _int(lamport, "lamport", 1)
        _int(msg_type, "type", 0, MAX_MSG_TYPE)
    # One is built for every received frame: straight from its fields, as a named
    # tuple's own constructor (a Python function taking each by name) costs more.
    return _new_tuple(Entry, (PROTOCOL_VERSION, table_id, round_, author, seq, lamport,
                              msg_type, prev, payload, raw))


def _int(value: object, name: str, lo: int, hi: int = MAX_INT) -> int:
    # `type(...) is int` on purpose: bool is an int subclass but not an int here.
    if type(value) is not int or not lo <= value <= hi:
        raise EnvelopeError(f"bad_field:{name}")
    return value
