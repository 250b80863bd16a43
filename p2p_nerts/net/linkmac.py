"""MACs on link entries: who sent a frame, without an Ed25519 signature.

Why: a signed entry costs its author a sign (~30 µs) and every receiver a
verify (~90 µs). Acknowledgements and views are sent many times a second and
are never forwarded, so they only need to prove who sent them to the peer at
the other end of one connection: they travel as *link entries* (envelope
magic ``NL``, no signature). The handshake (``handshake.Handshake``) proves
both Ed25519 keys and, under the same signatures, agrees an X25519 secret;
from it each direction gets its own key (``link_keys``). After the handshake
every link entry either way ends in a 16-byte tag::

    tag = BLAKE2b-128(key = sender's link key, counter (8 bytes, big-endian) || entry)

``counter`` counts the link entries the sender has tagged on this connection
(from 0), so one cannot be replayed, reordered or dropped without the next
check failing; a link entry whose tag does not check ends the connection.
Signed entries and transport frames carry no tag: signed entries prove
themselves (and a relay may forward them), and the transport frames are
what they were before.
"""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["TAG_SIZE", "FrameMac", "MacError"]

TAG_SIZE = 16


class MacError(Exception):
    """A frame's tag does not check: it was altered, replayed or not sent by the peer."""


class FrameMac:
    """Tags outgoing link entries and checks incoming ones, for one connection."""

    def __init__(self, send_key: bytes, receive_key: bytes) -> None:
        if send_key == receive_key:
            raise ValueError("the two directions must have different keys")
        # Keyed once: each tag starts from a copy (keying BLAKE2b costs a whole
        # block's compression, on every link entry either way otherwise).
        self._send_hash = _keyed(send_key)
        self._receive_hash = _keyed(receive_key)
        self._sent = 0
        self._received = 0

    def tag(self, payload: bytes) -> bytes:
        """``payload`` with its tag appended."""
        tag = _tag(self._send_hash, self._sent, payload)
        self._sent += 1
        return payload + tag

    def check(self, frame: bytes) -> bytes:
        """The payload of a tagged frame; ``MacError`` if the tag does not check."""
        if len(frame) < TAG_SIZE:
            raise MacError("frame too short for its tag")
        payload, tag = frame[:-TAG_SIZE], frame[-TAG_SIZE:]
        if not hmac.compare_digest(tag, _tag(self._receive_hash, self._received, payload)):
            raise MacError("frame tag does not check")
        self._received += 1
        return payload


def _keyed(key: bytes) -> hashlib.blake2b:
    return hashlib.blake2b(key=key, digest_size=TAG_SIZE)


def _tag(keyed: hashlib.blake2b, counter: int, payload: bytes) -> bytes:
    h = keyed.copy()
    h.update(counter.to_bytes(8, "big"))
    h.update(payload)
    return h.digest()
