"""One TCP connection between two peers: opening it, then frames in and out.

Opening runs in this order, both sides at once:

1. each side sends its info frame (``wire.Info``) and reads the other's; a
   newcomer learns the table id here, and a wrong version, a missing or
   unexpected table code or a full table stops it with a
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
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import cast

from ..protocol.envelope import LINK_MAGIC
from ..protocol.identity import Identity, fingerprint_of
from .channel import ChannelError, SecureChannel
from .framing import FrameDecoder, FrameError, encode_frame
from .guard import CODE_PAUSE, CODE_TRIES
from .handshake import NONCE_SIZE, Handshake, HandshakeError
from .linkmac import FrameMac, MacError
from .wire import NET_VERSION, Info, WireError, decode_info, encode_info, refusal

__all__ = ["HANDSHAKE_TIMEOUT", "SEND_BUFFER_LIMIT", "CodeNeeded", "Connection", "Link",
           "LinkError", "Refused", "WrongCode", "connect", "listen", "open_link"]

_log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT = 5.0
SEND_BUFFER_LIMIT = 4 << 20
"""Bytes queued for one peer before we give up on it: far above a round's traffic."""
_MAX_QUEUED = 64
"""Frames queued while a link opens before we stop reading from its socket."""


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


class Connection(asyncio.Protocol):
    """One TCP connection's frames, as they arrive.

    While the link opens, frames wait in a queue for :meth:`read`; once it is
    open, :meth:`deliver_to` hands those of each read straight to the link's
    reader, as ``data_received`` finds them. That path is why this is a
    protocol and not a stream pair: a peer woken by a play handles it in the
    same turn of the event loop, without waking a reader task and an async
    generator first (about 90 µs less per frame on an idle peer here, of 250
    or so).
    """

    def __init__(self, on_made: Callable[[Connection], None] | None = None) -> None:
        self.transport: asyncio.Transport | None = None
        self.reason = ""  # why the connection ended: the first one given wins
        #: The peer sent something: a connection closed before it did is a lobby's
        #: check that the table is there (``discovery.dial``), or a port scan.
        self.heard = False
        self._on_made = on_made
        self._decoder = FrameDecoder()
        self._queue: deque[bytes] = deque()
        self._handler: Callable[[list[bytes]], None] | None = None
        self._error: FrameError | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        self._lost = asyncio.get_running_loop().create_future()

    # ------------------------------------------------------------ asyncio's side
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport, whatever the loop's class for it (uvloop's is no
        # subclass of asyncio.Transport).
        self.transport = cast(asyncio.Transport, transport)
        if self._on_made is not None:
            self._on_made(self)

    def data_received(self, data: bytes) -> None:
        self.heard = True
        try:
            frames = self._decoder.feed(data)
        except FrameError as exc:
            self._error = exc
            self.abort(str(exc))
            self._wake()
            return
        if self._handler is None:
            self._queue.extend(frames)
            if len(self._queue) >= _MAX_QUEUED and not self._paused:
                self._paused = True  # nobody reads yet: let TCP hold the rest
                self.transport_or_raise().pause_reading()
            self._wake()
        elif frames and not self.closed:
            self._handler(frames)

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None and not self.reason:
            self.reason = f"connection error: {exc}"
        if not self._lost.done():
            self._lost.set_result(None)
        self._wake()

    # ------------------------------------------------------------ ours
    def transport_or_raise(self) -> asyncio.Transport:
        if self.transport is None:
            raise LinkError("the connection is not up")
        return self.transport

    @property
    def closed(self) -> bool:
        return self.transport is None or self.transport.is_closing()

    async def read(self) -> bytes | None:
        """The next frame (while the link opens); None once the peer has closed.

        Raises ``FrameError`` for bad framing.
        """
        while not self._queue:
            if self._error is not None:
                raise self._error
            if self._lost.done() or self.closed:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        frame = self._queue.popleft()
        if len(self._queue) < _MAX_QUEUED // 2:
            self._resume_reading()
        return frame

    def deliver_to(self, handler: Callable[[list[bytes]], None]) -> None:
        """From now on, give ``handler`` the frames of each read as it arrives (the
        queued ones first)."""
        self._handler = handler
        queued, self._queue = list(self._queue), deque()
        if queued and not self.closed:
            handler(queued)
        self._resume_reading()

    async def wait_closed(self) -> None:
        """Return once the connection is gone (closed by either side)."""
        await asyncio.shield(self._lost)

    def write(self, data: bytes) -> None:
        self.transport_or_raise().write(data)

    def close(self, reason: str = "") -> None:
        """Close after what is queued has gone out."""
        if not self.reason:
            self.reason = reason
        if self.transport is not None:
            self.transport.close()

    def abort(self, reason: str) -> None:
        """Close now, dropping what is queued."""
        if not self.reason:
            self.reason = reason
        if self.transport is not None:
            self.transport.abort()

    def hold(self, seconds: float) -> None:
        """Read nothing more for ``seconds``: the peer's frames wait in TCP's buffers
        (it is sending faster than we take them), which costs us nothing."""
        if not self._paused and not self.closed:
            self._paused = True
            self.transport_or_raise().pause_reading()
            asyncio.get_running_loop().call_later(seconds, self._resume_reading)

    def _resume_reading(self) -> None:
        if self._paused and not self.closed:
            self._paused = False
            self.transport_or_raise().resume_reading()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


async def connect(host: str, port: int) -> Connection:
    """Open a TCP connection to ``host:port`` (``OSError`` if nobody answers)."""
    _transport, connection = await asyncio.get_running_loop().create_connection(
        Connection, host, port)
    return connection


async def listen(bind: str, port: int,
                 on_connection: Callable[[Connection], None]) -> asyncio.Server:
    """Accept TCP connections on ``bind:port``; each new one goes to ``on_connection``."""
    return await asyncio.get_running_loop().create_server(
        lambda: Connection(on_connection), bind, port)


class _Stream:
    """Whole payloads over one connection, sealed once a table-code channel is up."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
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
        self.connection.write(self.frame(payload))

    def open(self, frame: bytes) -> bytes:
        """A received frame's payload: opened (with a code), its tag checked (a link entry).

        Raises ``ChannelError`` for a sealed frame that does not open,
        ``MacError`` for a link entry whose tag does not check.
        """
        if self.channel is not None and self.channel.ready:
            frame = self.channel.open(frame)
        if frame[:len(LINK_MAGIC)] == LINK_MAGIC:
            if self.mac is None:
                raise MacError("a link entry before the handshake")
            frame = self.mac.check(frame)
        return frame

    async def read(self) -> bytes | None:
        """The next payload, opened; None once the peer has closed.

        Raises ``FrameError`` for bad framing, and what :meth:`open` raises.
        """
        frame = await self.connection.read()
        return None if frame is None else self.open(frame)

    async def expect(self) -> bytes:
        frame = await self.read()
        if frame is None:
            raise LinkError("the peer closed the connection while opening it")
        return frame


class Link:
    """An authenticated connection to the peer whose public key is ``key``."""

    def __init__(self, key: bytes, peer: Info, stream: _Stream) -> None:
        #: When a frame last came in (``time.monotonic``; the mesh sets it).
        self.heard_at = time.monotonic()
        self.key = key
        self.peer = peer
        self._stream = stream
        self._connection = stream.connection
        peername = self._connection.transport_or_raise().get_extra_info("peername")
        self.remote_ip: str = peername[0] if peername else ""

    def __repr__(self) -> str:
        return f"<Link {fingerprint_of(self.key)} {self.peer.name!r}>"

    @property
    def reason(self) -> str:
        """Why the link ended (empty while it lasts)."""
        return self._connection.reason

    @property
    def closed(self) -> bool:
        return self._connection.closed

    @property
    def sealed(self) -> bool:
        """True when the frames on this link go through a table-code channel."""
        return self._stream.channel is not None

    @property
    def buffered(self) -> int:
        """Bytes written but not yet taken by the kernel."""
        return self._connection.transport_or_raise().get_write_buffer_size()

    def send(self, payload: bytes) -> bool:
        """Queue one payload (framed, tagged, sealed with a code); False if the link is closed."""
        return self.send_all((payload,))

    def send_all(self, payloads: Iterable[bytes]) -> bool:
        """Queue payloads in one write: one system call, however many frames."""
        if self.closed:
            return False
        self._connection.write(b"".join(map(self._stream.frame, payloads)))
        if self.buffered > SEND_BUFFER_LIMIT:
            self.abort("send queue overflow: the peer is not reading")
            return False
        return True

    async def serve(self, on_payloads: Callable[[list[bytes]], None]) -> None:
        """Give ``on_payloads`` the payloads of each read from the peer, as they
        arrive; return once the connection has ended (``reason`` says why).

        Whatever goes wrong with one frame (bad framing, a seal or tag that
        does not check, a payload ``on_payloads`` refuses by raising) ends this
        connection, never the peer; the payloads before it are handled.
        """
        def take(frames: list[bytes]) -> None:
            payloads: list[bytes] = []
            try:
                for frame in frames:
                    payloads.append(self._stream.open(frame))
            except ChannelError:
                self.abort("a sealed frame did not open (altered on the way?)")
            except MacError:
                self.abort("a frame's tag did not check (altered on the way?)")
            try:
                on_payloads(payloads)
            except (LinkError, WireError, OSError) as exc:
                self.abort(f"{type(exc).__name__}: {exc}")
            except Exception as exc:  # noqa: BLE001 - a bug here must cost one link, not the peer
                _log.exception("serving %s failed", fingerprint_of(self.key))
                self.abort(f"internal error: {exc!r}")

        self._connection.deliver_to(take)
        await self._connection.wait_closed()

    def hold(self, seconds: float) -> None:
        """Read nothing more from this peer for ``seconds`` (see ``Connection.hold``)."""
        self._connection.hold(seconds)

    def close(self, reason: str) -> None:
        """Close after what is queued has gone out."""
        self._connection.close(reason)

    def abort(self, reason: str) -> None:
        """Close now, dropping what is queued."""
        self._connection.abort(reason)


async def open_link(
    connection: Connection,
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
    stream = _Stream(connection)
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
                    raise Refused("a code exchange from this address is under way, or it "
                                  "got the code wrong too often")
                stream.channel = SecureChannel(code, tid, dialer=dialer)
                stream.write(stream.channel.start())
                theirs = await stream.read()
                if theirs is None:
                    raise Refused(f"table {table} refused the code exchange: it judges one "
                                  "code at a time from an address, and after "
                                  f"{CODE_TRIES} wrong ones waits {CODE_PAUSE:g} s; try "
                                  f"again in {CODE_PAUSE:g} s")
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
