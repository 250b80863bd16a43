"""One TCP connection between two peers: opening it, then frames in and out.

Opening runs in this order, both sides at once:

1. each side sends its info frame (``wire.Info``) and reads the other's; a
   newcomer learns the table id here, and a wrong version, a full table or a
   round under way stops it with a line the user can act on (``Refused``);
2. the signed-challenge handshake (``handshake.Handshake``) proves that the
   other side holds the key it claims, for this table and this connection.

Only then is the link handed to the mesh, keyed by that proven key. Sending
never waits: frames go straight to the transport, whose buffer is this
link's send queue; a peer that lets it grow past ``SEND_BUFFER_LIMIT`` is cut
off (it reconnects and catches up through the replica's resend requests), so
one slow peer can never stall the event loop or the other peers.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from collections.abc import AsyncIterator

from ..protocol.identity import Identity, fingerprint_of
from .framing import FrameDecoder, FrameError, encode_frame
from .handshake import NONCE_SIZE, Handshake, HandshakeError
from .wire import Info, WireError, decode_info, encode_info, refusal

__all__ = ["HANDSHAKE_TIMEOUT", "SEND_BUFFER_LIMIT", "Link", "LinkError", "Refused",
           "open_link"]

_log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT = 5.0
SEND_BUFFER_LIMIT = 4 << 20
"""Bytes queued for one peer before we give up on it: far above a round's traffic."""
_READ_SIZE = 64 * 1024


class LinkError(Exception):
    """The connection could not be opened or broke; the message says why (for the log)."""


class Refused(LinkError):
    """The other side will not have us at its table; the message is for the user."""


class Link:
    """An authenticated connection to the peer whose public key is ``key``."""

    def __init__(self, key: bytes, peer: Info, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, decoder: FrameDecoder,
                 pending: deque[bytes]) -> None:
        self.key = key
        self.peer = peer
        self._reader = reader
        self._writer = writer
        self._decoder = decoder
        self._pending = pending
        peername = writer.get_extra_info("peername")
        self.remote_ip: str = peername[0] if peername else ""
        self.reason = ""

    def __repr__(self) -> str:
        return f"<Link {fingerprint_of(self.key)} {self.peer.name!r}>"

    @property
    def closed(self) -> bool:
        return self._writer.is_closing()

    @property
    def buffered(self) -> int:
        """Bytes written but not yet taken by the kernel."""
        return self._writer.transport.get_write_buffer_size()

    def send(self, frame: bytes) -> bool:
        """Queue one already framed payload; False if the link is (now) closed."""
        if self._writer.is_closing():
            return False
        self._writer.write(frame)
        if self.buffered > SEND_BUFFER_LIMIT:
            self.abort("send queue overflow: the peer is not reading")
            return False
        return True

    async def frames(self) -> AsyncIterator[bytes]:
        """Every payload the peer sends, until it closes; ``LinkError`` on bad framing."""
        while True:
            while self._pending:
                yield self._pending.popleft()
            data = await self._reader.read(_READ_SIZE)
            if not data:
                return
            try:
                self._pending.extend(self._decoder.feed(data))
            except FrameError as exc:
                raise LinkError(str(exc)) from None

    def close(self, reason: str) -> None:
        """Close after what is queued has gone out."""
        if not self.reason:
            self.reason = reason
        self._writer.close()

    def abort(self, reason: str) -> None:
        """Close now, dropping what is queued."""
        if not self.reason:
            self.reason = reason
        self._writer.transport.abort()


async def open_link(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    identity: Identity,
    info: Info,
    *,
    expect_key: bytes | None = None,
    joining: bool = False,
    timeout: float = HANDSHAKE_TIMEOUT,
) -> Link:
    """Run the opening exchange on a fresh connection; the caller closes it on error.

    ``expect_key`` is the key we dialed for (the handshake must prove that
    one); ``joining`` says we are a newcomer, whom a full or busy table refuses.
    Raises ``Refused`` (for the user) or ``LinkError`` (for the log).
    """
    decoder = FrameDecoder()
    pending: deque[bytes] = deque()

    async def next_frame() -> bytes:
        while not pending:
            data = await reader.read(_READ_SIZE)
            if not data:
                raise LinkError("the peer closed the connection while opening it")
            pending.extend(decoder.feed(data))
        return pending.popleft()

    try:
        writer.write(encode_frame(encode_info(info)))
        async with asyncio.timeout(timeout):
            peer = decode_info(await next_frame())
            why = refusal(peer, joining=joining)
            if why is not None:
                raise Refused(why)
            if info.tid is not None and peer.tid is not None and info.tid != peer.tid:
                raise LinkError("the peer is at another table")
            tid = info.tid or peer.tid
            if tid is None:
                raise LinkError("neither side named the table")
            handshake = Handshake(identity.private_key, tid, os.urandom(NONCE_SIZE))
            writer.write(encode_frame(handshake.start()))
            while not handshake.done:
                reply = handshake.receive(await next_frame())
                if reply is not None:
                    writer.write(encode_frame(reply))
    except TimeoutError:
        raise LinkError(f"no handshake within {timeout:g} s") from None
    except (FrameError, WireError) as exc:
        raise LinkError(str(exc)) from None
    except HandshakeError as exc:
        raise LinkError(f"handshake failed: {exc.reason}") from None
    except OSError as exc:
        raise LinkError(f"connection error: {exc}") from None
    key = handshake.peer_key
    assert key is not None
    if expect_key is not None and key != expect_key:
        raise LinkError(f"expected {fingerprint_of(expect_key)}, met {fingerprint_of(key)}")
    return Link(key, peer, reader, writer, decoder, pending)
