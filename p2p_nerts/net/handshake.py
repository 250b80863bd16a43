"""Mutual authentication of a fresh TCP connection, sans I/O.

Why: a peer's Ed25519 key is its identity at the table (it signs every log
entry), so before trusting anything on a connection each side must prove it
holds the private key for the public key it claims, *now*, for *this*
connection and *this* table. Both sides run the same symmetric exchange::

    HELLO  msgpack {"v": 1, "key": pub(32), "nonce": random(32), "table": id(16),
                    "dh": X25519 ephemeral public key(32)}
    AUTH   msgpack {"sig": Ed25519 signature(64)} over
           b"p2p-nerts/v1/handshake\\x00" + table + own_nonce + peer_nonce + peer_key
           + binding + own_dh + peer_dh

A signature covers the verifier's fresh nonce (so it cannot be replayed), the
verifier's key (so it cannot be relayed to somebody else) and the table id
(so it cannot be reused at another table); the domain prefix keeps it from
ever being valid as a signature over a game message. Both HELLOs go out at
once, so the exchange costs one round trip.

``binding`` is the table-code channel's binding (``channel.SecureChannel``),
empty at a table without a code. Both ends of one channel derive the same
value and nobody else can, so a signature made inside one channel is useless
inside another: someone who knows the code and sits in the middle cannot run
two channels and pass one peer's handshake on to the other.

The object is a pure state machine: callers frame and send what it returns
and feed it what they receive, and pass in the randomness, which is what makes
it testable without sockets. Bytes in and out are frame payloads (see
``framing``).

Each side also sends a fresh X25519 public key, and both signatures cover
both of them, so only the two proven ends know the shared secret. From it
each end derives a MAC key per direction (``link_keys``): every later frame
on the connection carries a tag under the sender's key (``link.py``), so a
frame that arrives on a link is known to come from the link's peer without a
signature of its own. That is what lets acknowledgements and views travel
unsigned (an Ed25519 verify costs ~90 µs, a MAC ~1 µs).

This proves identities; hiding the traffic and keeping strangers out is the
table code's job (``channel``), which runs first and carries these messages.
"""

from __future__ import annotations

import enum
from typing import Any

import msgpack
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from .framing import unpack_map

__all__ = [
    "HANDSHAKE_VERSION",
    "KEY_SIZE",
    "LINK_KEY_DOMAIN",
    "LINK_KEY_SIZE",
    "NONCE_SIZE",
    "SIGNATURE_DOMAIN",
    "TABLE_ID_SIZE",
    "Handshake",
    "HandshakeError",
]

HANDSHAKE_VERSION = 1
SIGNATURE_DOMAIN = b"p2p-nerts/v1/handshake\x00"
KEY_SIZE = 32
LINK_KEY_DOMAIN = b"p2p-nerts/v1/link-key\x00"
LINK_KEY_SIZE = 32
NONCE_SIZE = 32
TABLE_ID_SIZE = 16
_SIGNATURE_SIZE = 64
_MAX_MESSAGE = 256
"""Both messages are ~100 bytes; anything far larger is not a handshake."""

_HELLO_FIELDS = frozenset({"v", "key", "nonce", "table", "dh"})
_AUTH_FIELDS = frozenset({"sig"})


class HandshakeError(Exception):
    """The peer failed the handshake; ``reason`` says why, for the log.

    The connection must be dropped: nothing it sent can be trusted.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _State(enum.Enum):
    NEW = enum.auto()
    AWAIT_HELLO = enum.auto()
    AWAIT_AUTH = enum.auto()
    DONE = enum.auto()
    FAILED = enum.auto()


class Handshake:
    """One side of the handshake for one connection.

    Use: send ``start()``; for each payload received call ``receive()`` and
    send what it returns, if anything; when ``done`` is true ``peer_key`` is
    the authenticated raw public key of the peer, and ``link_keys`` the MAC
    keys for the two directions. Any ``HandshakeError`` is final for the
    connection. ``ephemeral`` is this connection's X25519 key (fresh by
    default; tests pass one in).
    """

    def __init__(self, private_key: Ed25519PrivateKey, table_id: bytes, nonce: bytes,
                 binding: bytes = b"", ephemeral: X25519PrivateKey | None = None) -> None:
        if len(table_id) != TABLE_ID_SIZE:
            raise ValueError(f"table_id must be {TABLE_ID_SIZE} bytes, got {len(table_id)}")
        if len(nonce) != NONCE_SIZE:
            raise ValueError(f"nonce must be {NONCE_SIZE} bytes, got {len(nonce)}")
        self._private_key = private_key
        self._own_key = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self._table_id = table_id
        self._nonce = nonce
        self._binding = binding
        self._ephemeral = ephemeral or X25519PrivateKey.generate()
        self._own_dh = self._ephemeral.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self._peer_dh = b""
        self._secret = b""
        self._state = _State.NEW
        self._peer_key: Ed25519PublicKey | None = None
        self._peer_key_bytes = b""
        self._peer_nonce = b""

    @property
    def done(self) -> bool:
        """True once the peer has proved possession of its key."""
        return self._state is _State.DONE

    @property
    def peer_key(self) -> bytes | None:
        """The peer's raw Ed25519 public key, only once it is authenticated."""
        return self._peer_key_bytes if self._state is _State.DONE else None

    @property
    def link_keys(self) -> tuple[bytes, bytes]:
        """(our sending key, the peer's sending key), once the handshake is done.

        HKDF-SHA256 of the X25519 secret, one key per sender, named by its
        Ed25519 key and nonce: the two directions never share a key, and no
        other connection (fresh nonces, fresh X25519 keys) derives either.
        """
        if self._state is not _State.DONE:
            raise RuntimeError("the handshake is not done")
        secret = self._secret
        return (_link_key(secret, self._table_id, self._own_key, self._nonce,
                          self._peer_key_bytes, self._peer_nonce),
                _link_key(secret, self._table_id, self._peer_key_bytes, self._peer_nonce,
                          self._own_key, self._nonce))

    def start(self) -> bytes:
        """Our HELLO payload; send it as soon as the connection is up."""
        if self._state is not _State.NEW:
            raise RuntimeError("Handshake.start() called twice")
        self._state = _State.AWAIT_HELLO
        hello = {
            "v": HANDSHAKE_VERSION,
            "key": self._own_key,
            "nonce": self._nonce,
            "table": self._table_id,
            "dh": self._own_dh,
        }
        return msgpack.packb(hello)

    def receive(self, payload: bytes) -> bytes | None:
        """Process one payload from the peer; return our reply payload, if any."""
        if self._state is _State.NEW:
            raise RuntimeError("Handshake.receive() before start()")
        try:
            if self._state is _State.AWAIT_HELLO:
                return self._receive_hello(payload)
            if self._state is _State.AWAIT_AUTH:
                self._receive_auth(payload)
                return None
        except HandshakeError:
            self._state = _State.FAILED
            raise
        raise HandshakeError(f"unexpected message in state {self._state.name.lower()}")

    def _receive_hello(self, payload: bytes) -> bytes:
        message = unpack_map(payload, _MAX_MESSAGE, "HELLO", HandshakeError)
        # Version first: a newer peer's HELLO may well have other fields.
        version = message.get("v", HANDSHAKE_VERSION)
        if type(version) is not int or version != HANDSHAKE_VERSION:
            raise HandshakeError(f"unsupported handshake version {version!r}")
        _expect_fields(message, _HELLO_FIELDS, "HELLO")
        key = _expect_bytes(message, "key", KEY_SIZE)
        nonce = _expect_bytes(message, "nonce", NONCE_SIZE)
        table = _expect_bytes(message, "table", TABLE_ID_SIZE)
        dh = _expect_bytes(message, "dh", KEY_SIZE)
        if table != self._table_id:
            raise HandshakeError(f"peer is at another table ({table.hex()})")
        if key == self._own_key:
            # A reflected HELLO, or a second nerts with our data dir elsewhere
            # (a copied key): on one machine the store's lock prevents that.
            raise HandshakeError("peer presented our own key (reflected HELLO, or another "
                                 "nerts using the same key)")
        if nonce == self._nonce:
            raise HandshakeError("peer presented our own nonce (reflected HELLO)")
        try:
            self._peer_key = Ed25519PublicKey.from_public_bytes(key)
        except ValueError as exc:
            raise HandshakeError(f"peer key is not an Ed25519 key: {exc}") from None
        if dh == self._own_dh:
            raise HandshakeError("peer presented our own X25519 key (reflected HELLO)")
        try:
            self._secret = self._ephemeral.exchange(X25519PublicKey.from_public_bytes(dh))
        except ValueError:  # a low-order point: the secret would be all zeros
            raise HandshakeError("peer X25519 key is unusable") from None
        self._peer_key_bytes = key
        self._peer_nonce = nonce
        self._peer_dh = dh
        self._state = _State.AWAIT_AUTH
        signature = self._private_key.sign(
            _transcript(self._table_id, self._nonce, nonce, key, self._binding,
                        self._own_dh, dh))
        return msgpack.packb({"sig": signature})

    def _receive_auth(self, payload: bytes) -> None:
        message = unpack_map(payload, _MAX_MESSAGE, "AUTH", HandshakeError)
        _expect_fields(message, _AUTH_FIELDS, "AUTH")
        signature = _expect_bytes(message, "sig", _SIGNATURE_SIZE)
        assert self._peer_key is not None  # set together with AWAIT_AUTH
        try:
            self._peer_key.verify(
                signature,
                _transcript(self._table_id, self._peer_nonce, self._nonce, self._own_key,
                            self._binding, self._peer_dh, self._own_dh),
            )
        except InvalidSignature:
            raise HandshakeError("peer's signature does not verify") from None
        self._state = _State.DONE


def _transcript(
    table_id: bytes, signer_nonce: bytes, verifier_nonce: bytes, verifier_key: bytes,
    binding: bytes, signer_dh: bytes, verifier_dh: bytes,
) -> bytes:
    """The exact bytes a signer signs: see the module docstring."""
    return (SIGNATURE_DOMAIN + table_id + signer_nonce + verifier_nonce + verifier_key + binding
            + signer_dh + verifier_dh)


def _link_key(secret: bytes, table_id: bytes, sender: bytes, sender_nonce: bytes,
              receiver: bytes, receiver_nonce: bytes) -> bytes:
    """The MAC key of the ``sender`` → ``receiver`` direction of one connection."""
    info = LINK_KEY_DOMAIN + table_id + sender + sender_nonce + receiver + receiver_nonce
    return HKDF(hashes.SHA256(), LINK_KEY_SIZE, salt=None, info=info).derive(secret)


def _expect_fields(message: dict[str, Any], fields: frozenset[str], what: str) -> None:
    if message.keys() != fields:
        raise HandshakeError(
            f"{what} has fields {sorted(map(str, message))}, expected {sorted(fields)}"
        )


def _expect_bytes(message: dict[str, Any], field: str, size: int) -> bytes:
    value = message[field]
    if not isinstance(value, bytes) or len(value) != size:
        raise HandshakeError(f"field {field!r} must be {size} bytes")
    return value
