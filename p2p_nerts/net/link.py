"""One TCP connection between two peers: opening it, then frames in and out.

Opening runs in this order, both sides at once:

1. each side sends its info frame (``wire.Info``) and reads the other's; a
   newcomer learns the table id here, and a wrong version, a missing or
   unexpected table code, a full table or a round under way stops it with a
   line the user can act on (``Refused``);
2. at a table with a code, the table-code exchange (``channel.SecureChannel``):
   each side sends its SPAKE2 message, and from then on every frame either
   way is sealed under the channel, the handshake's included. A frame that
   does not open means a wrong code (``WrongCode``);
3. the signed-challenge handshake (``handshake.Handshake``) proves that the
   other side holds the key it claims, for this table, this connection and
   (with a code) this channel, and agrees a MAC key for each direction;
4. from then on every link entry (an unsigned acknowledgement or view)
   either way carries a tag under its sender's key (``linkmac.FrameMac``),
   so one that arrives on a link was sent by the link's peer: the replica
   takes it on that word.

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
from collections.abc import AsyncIterator, Iterable
from dataclasses import replace

from ..protocol.envelope import LINK_MAGIC
from ..protocol.identity import Identity, fingerprint_of
from .channel import ChannelError, SecureChannel
from .framing import FrameDecoder, FrameError, encode_frame
from .handshake import NONCE_SIZE, Handshake, HandshakeError
from .linkmac import FrameMac, MacError
from .wire import NET_VERSION, Info, WireError, decode_info, encode_info, refusal

__all__ = ["HANDSHAKE_TIMEOUT", "SEND_BUFFER_LIMIT", "CodeNeeded", "Link", "LinkError",
           "Refused", "WrongCode", "open_link"]

_log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT = 5.0
SEND_BUFFER_LIMIT = 4 << 20
"""Bytes queued for one peer before we give up on it: far above a round's traffic."""
_READ_SIZE = 64 * 1024


class LinkError(Exception):
    """The connection could not be opened or broke; the message says why (for the log)."""


class Refused(LinkError):
    """The other side will not have us at its table; the message is for the user."""


class CodeNeeded(Refused):
    """The table has a code that we lack or got wrong (a front end may ask for it)."""


class WrongCode(CodeNeeded):
    """A table-code exchange ran and failed: one guess spent.

    Also raised when the other side leaves after the exchange without sending
    a frame that opens: a guesser could otherwise test its guess against our
    first sealed frame and hang up before we count it.
    """


class _Stream:
    """Whole frames over one connection, sealed once a table-code channel is up."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.decoder = FrameDecoder()
        self.pending: deque[bytes] = deque()
        self.channel: SecureChannel | None = None
        self.mac: FrameMac | None = None

    def frame(self, payload: bytes) -> bytes:
        """``payload`` as it goes on the wire: tagged (a link entry), sealed, framed."""
        if self.mac is not None and payload[:len(LINK_MAGIC)] == LINK_MAGIC:
            payload = self.mac.tag(payload)
        if self.channel is not None and self.channel.ready:
            payload = self.channel.seal(payload)
        return encode_frame(payload)

    def write(self, payload: bytes) -> None:
        self.writer.write(self.frame(payload))

    async def read(self) -> bytes | None:
        """The next payload, opened; None once the peer has closed.

        Raises ``FrameError`` for bad framing, ``ChannelError`` for a sealed
        frame that does not open, ``MacError`` for a link entry whose tag
        does not check.
        """
        while not self.pending:
            data = await self.reader.read(_READ_SIZE)
            if not data:
                return None
            self.pending.extend(self.decoder.feed(data))
        frame = self.pending.popleft()
        if self.channel is not None and self.channel.ready:
            frame = self.channel.open(frame)
        if frame[:len(LINK_MAGIC)] == LINK_MAGIC:
            if self.mac is None:
                raise MacError("a link entry before the handshake")
            frame = self.mac.check(frame)
        return frame

    async def expect(self) -> bytes:
        frame = await self.read()
        if frame is None:
            raise LinkError("the peer closed the connection while opening it")
        return frame


class Link:
    """An authenticated connection to the peer whose public key is ``key``."""

    def __init__(self, key: bytes, peer: Info, stream: _Stream) -> None:
        self.key = key
        self.peer = peer
        self._stream = stream
        self._writer = stream.writer
        peername = self._writer.get_extra_info("peername")
        self.remote_ip: str = peername[0] if peername else ""
        self.reason = ""

    def __repr__(self) -> str:
        return f"<Link {fingerprint_of(self.key)} {self.peer.name!r}>"

    @property
    def closed(self) -> bool:
        return self._writer.is_closing()

    @property
    def sealed(self) -> bool:
        """True when the frames on this link go through a table-code channel."""
        return self._stream.channel is not None

    @property
    def buffered(self) -> int:
        """Bytes written but not yet taken by the kernel."""
        return self._writer.transport.get_write_buffer_size()

    def send(self, payload: bytes) -> bool:
        """Queue one payload (framed, tagged, sealed with a code); False if the link is closed."""
        return self.send_all((payload,))

    def send_all(self, payloads: Iterable[bytes]) -> bool:
        """Queue payloads in one write: one system call, however many frames."""
        if self._writer.is_closing():
            return False
        self._writer.write(b"".join(map(self._stream.frame, payloads)))
        if self.buffered > SEND_BUFFER_LIMIT:
            self.abort("send queue overflow: the peer is not reading")
            return False
        return True

    async def frames(self) -> AsyncIterator[bytes]:
        """Every payload the peer sends, until it closes; ``LinkError`` on bad framing."""
        while True:
            try:
                frame = await self._stream.read()
            except FrameError as exc:
                raise LinkError(str(exc)) from None
            except ChannelError:
                raise LinkError("a sealed frame did not open (altered on the way?)") from None
            except MacError:
                raise LinkError("a frame's tag did not check (altered on the way?)") from None
            if frame is None:
                return
            yield frame

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
    dialer: bool,
    code: str | None = None,
    refuse_code: bool = False,
    expect_key: bytes | None = None,
    joining: bool = False,
    timeout: float = HANDSHAKE_TIMEOUT,
) -> Link:
    """Run the opening exchange on a fresh connection; the caller closes it on error.

    ``dialer`` says which end we are (the two directions of a channel get
    different keys). With a ``code`` the table-code exchange runs, and our
    info frame says so (its ``code`` flag is set here, from ``code``);
    ``refuse_code`` makes a listener refuse the exchange to an address that
    failed it too often. ``expect_key`` is the key we dialed for (the
    handshake must prove that one); ``joining`` says we are a newcomer, whom
    a full or busy table refuses. Raises ``Refused`` (for the user; its
    subclass ``WrongCode`` when a code guess failed) or ``LinkError``.
    """
    stream = _Stream(reader, writer)
    info = replace(info, code=code is not None)
    table = info.name  # named in a wrong-code message: ours, until we hear the host's
    guessing = False  # the code exchange ran, and no sealed frame has opened yet
    try:
        stream.write(encode_info(info))
        async with asyncio.timeout(timeout):
            peer = decode_info(await stream.expect())
            if dialer:
                table = peer.name
            _check_peer(peer, code is not None, dialer=dialer, joining=joining)
            if info.tid is not None and peer.tid is not None and info.tid != peer.tid:
                raise LinkError("the peer is at another table")
            tid = info.tid or peer.tid
            if tid is None:
                raise LinkError("neither side named the table")
            binding = b""
            if code is not None:
                if refuse_code:
                    raise Refused("too many wrong table codes from this address")
                stream.channel = SecureChannel(code, tid, dialer=dialer)
                stream.write(stream.channel.start())
                theirs = await stream.read()
                if theirs is None:
                    raise Refused(f"table {table} refused the code exchange: too many wrong "
                                  "codes from this address; try again in a minute")
                stream.channel.finish(theirs)
                guessing = True
                binding = stream.channel.binding
            handshake = Handshake(identity.private_key, tid, os.urandom(NONCE_SIZE), binding)
            stream.write(handshake.start())
            while not handshake.done:
                frame = await stream.expect()
                guessing = False  # it opened: the code is right
                reply = handshake.receive(frame)
                if reply is not None:
                    stream.write(reply)
    except ChannelError:
        raise WrongCode(f"wrong table code for table {table}") from None
    except Refused:
        raise
    except (TimeoutError, LinkError) as exc:
        if guessing:
            raise WrongCode(f"wrong table code for table {table}") from None
        if isinstance(exc, LinkError):
            raise
        raise LinkError(f"no handshake within {timeout:g} s") from None
    except (FrameError, WireError) as exc:
        raise LinkError(str(exc)) from None
    except HandshakeError as exc:
        raise LinkError(f"handshake failed: {exc.reason}") from None
    except OSError as exc:
        raise LinkError(f"connection error: {exc}") from None
    key = handshake.peer_key
    assert key is not None
    stream.mac = FrameMac(*handshake.link_keys)
    if expect_key is not None and key != expect_key:
        raise LinkError(f"expected {fingerprint_of(expect_key)}, met {fingerprint_of(key)}")
    return Link(key, peer, stream)


def _check_peer(peer: Info, have_code: bool, *, dialer: bool, joining: bool) -> None:
    """Raise ``Refused`` when we cannot go on with this peer (a line for the user).

    Both ends hold the table's code or neither does: a joiner that brought a
    code must not fall back to an open connection, which whoever answered in
    the table's place could offer.
    """
    if peer.v == NET_VERSION and peer.code != have_code:
        if not dialer:
            raise Refused("a peer came without the table code" if have_code
                          else "a peer came with a table code; this table has none")
        if peer.code:
            raise CodeNeeded(f"table {peer.name} needs a code: use --code")
        raise Refused(f"table {peer.name} has no code: join without --code")
    why = refusal(peer, joining=joining)
    if why is not None:
        raise Refused(why)
