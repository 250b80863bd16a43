"""The table code: a PAKE-keyed, encrypted channel under every connection.

Without the code nobody can join a table that has one, nor read its traffic.
Both ends run SPAKE2 (symmetric mode) on the code, bound to the table id, and
derive a key for each direction with HKDF; every later frame is sealed with
ChaCha20-Poly1305 under a per-direction counter nonce (so frames cannot be
replayed, reordered or cut out unnoticed). A wrong code is found at the first
sealed frame: it does not open.

Why a PAKE rather than a KDF of the code: a passive listener to a SPAKE2
exchange learns nothing to test guesses against offline, and an active one
gets one guess per connection, which the host can rate-limit. Short codes that
people can read out at a game night (e.g. ``4417`` or ``pink-otter``) are
therefore safe; a KDF would need a code long enough to survive offline guessing.

Sans-I/O: bytes in, bytes out. See ``docs/PROTOCOL.md``, "Table code".
"""

from __future__ import annotations

import hashlib

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from spake2 import SPAKE2_Symmetric  # type: ignore[import-untyped]
from spake2.spake2 import SideSymmetric, SPAKEError  # type: ignore[import-untyped]

MAX_CODE_LEN = 64
_ID = b"p2p-nerts/v1/table-code\x00"
_KEYS = b"p2p-nerts/v1/channel-keys\x00"
SPAKE_MSG_LEN = 33
TAG_LEN = 16


class ChannelError(Exception):
    """The channel cannot go on: wrong code, or a frame was tampered with."""


def normalize_code(code: str) -> bytes:
    """The bytes both ends feed to SPAKE2: case and surrounding spaces do not matter."""
    text = " ".join(code.split()).lower()
    if not text or len(text) > MAX_CODE_LEN or not text.isprintable():
        raise ValueError(f"a table code is 1 to {MAX_CODE_LEN} printable characters")
    return text.encode()


class SecureChannel:
    """One connection's encryption, keyed from the table code.

    ``dialer`` says which end this is, so the two directions get different keys.
    """

    def __init__(self, code: str, table_id: bytes, *, dialer: bool) -> None:
        self._spake = SPAKE2_Symmetric(normalize_code(code), idSymmetric=_ID + table_id)
        self._dialer = dialer
        self._send_key: ChaCha20Poly1305 | None = None
        self._recv_key: ChaCha20Poly1305 | None = None
        self._sent = 0
        self._received = 0
        self.binding = b""

    def start(self) -> bytes:
        """The first frame to send: this end's SPAKE2 message."""
        msg: bytes = self._spake.start()
        return msg

    def finish(self, peer_message: bytes) -> None:
        """Take the peer's SPAKE2 message and derive the keys (no answer needed)."""
        # The side byte is checked here: spake2 only asserts it, which a stray
        # frame would turn into an AssertionError (and python -O into nothing).
        if len(peer_message) != SPAKE_MSG_LEN or peer_message[:1] != SideSymmetric:
            raise ChannelError("not a table-code exchange")
        try:
            shared: bytes = self._spake.finish(peer_message)
        except (SPAKEError, ValueError) as exc:
            raise ChannelError(f"table-code exchange failed: {exc}") from None
        material = HKDF(hashes.SHA256(), 96, salt=None, info=_KEYS).derive(shared)
        to_listener, to_dialer, binding = material[:32], material[32:64], material[64:]
        mine, theirs = (to_listener, to_dialer) if self._dialer else (to_dialer, to_listener)
        self._send_key = ChaCha20Poly1305(mine)
        self._recv_key = ChaCha20Poly1305(theirs)
        #: A value only the two ends know: the handshake signs it, so a relay
        #: that knows the code still cannot splice two channels together.
        self.binding = hashlib.sha256(binding).digest()

    @property
    def ready(self) -> bool:
        return self._send_key is not None

    def seal(self, plaintext: bytes) -> bytes:
        if self._send_key is None:
            raise ChannelError("the table-code exchange is not finished")
        nonce = self._sent.to_bytes(12, "big")
        self._sent += 1
        return self._send_key.encrypt(nonce, plaintext, None)

    def open(self, sealed: bytes) -> bytes:
        """Decrypt the next frame; raises ChannelError for a wrong code or tampering."""
        if self._recv_key is None:
            raise ChannelError("the table-code exchange is not finished")
        nonce = self._received.to_bytes(12, "big")
        try:
            plaintext = self._recv_key.decrypt(nonce, sealed, None)
        except InvalidTag:
            raise ChannelError(
                "wrong table code (or a frame was altered on the way)") from None
        self._received += 1
        return plaintext
