"""The full TCP mesh of one peer: a listening server, dialers, links by public key.

Who connects to whom: guests dial the host (the only address they start
with). The host knows every guest's address (the IP it sees and the listen
port from the guest's info frame) and sends everyone a *peers* frame whenever
that list changes; between two guests the one with the smaller key dials, so
each pair has one connection. A dialer that loses its link redials with
exponential backoff (0.1 s doubling to 2 s). Nothing else is needed on a
reconnect: the replica's heartbeat ACKs carry per-author high-water marks and
the replica asks again for whatever it is missing.

At a table with a code every connection runs the table-code exchange
(``link``), and a listener refuses an address that failed it too often
(``guard.CodeGuard``), so the code cannot be guessed quickly online.

Admission (``bounds``): only links whose key has a place at the table
(``admitted``) hear its traffic and are listed in peers frames; one that gets
no place within a grace period is closed; links without a place are capped
per address and in all; every link has a budget of frames and bytes a second.

The mesh moves bytes and knows keys; it never looks inside a replica entry.
Whatever a peer sends, the worst outcome is that its connection is closed
with a logged reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..protocol.identity import Identity, fingerprint_of
from .bounds import Limits, LinkBudget, QuietLog, Unseated
from .guard import CodeGuard
from .interfaces import bind_addresses
from .link import (
    HANDSHAKE_TIMEOUT,
    Connection,
    Link,
    LinkError,
    Refused,
    WrongCode,
    connect,
    listen,
    open_link,
)
from .wire import (
    Info,
    WireError,
    decode_peers,
    encode_peers,
    format_address,
    is_entry,
)

__all__ = ["BACKOFF_MAX", "BACKOFF_MIN", "Mesh"]

_log = logging.getLogger(__name__)

BACKOFF_MIN = 0.1
BACKOFF_MAX = 2.0
_CONNECT_TIMEOUT = 5.0
_HOLD = 1.0  # seconds a link without a place over its budget is not read from
_MAX_BUDGETS = 1024  # addresses whose links without a place share a budget, remembered
_STABLE = 1.0  # a link that lived this long resets the backoff
_REFUSE_LINGER = 2.0  # let a refused newcomer read our info frame before we hang up

FramesHandler = Callable[[bytes, list[bytes]], None]
LinkHandler = Callable[[bytes, bool], None]
Admitted = Callable[[bytes], bool]


@dataclass(slots=True)
class _Turn:
    """One address's turn at the table-code exchange: one at a time."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0  # running the exchange or waiting for it


class Mesh:
    """Every connection of one peer, keyed by the other peer's public key.

    ``on_frames(key, entries)`` gets the replica entries of each read from
    ``key``'s link, in the order they came; ``on_link(key, up)`` is
    told when a link to ``key`` comes up or goes down. ``info()`` is what we
    say in our info frame, asked afresh for each connection; ``code`` is the
    table code, which every connection then needs. ``admitted(key)`` says
    whether a key has a place at the table (None: every key has);
    ``name_of(key)`` is the player's name for a peer's key, where the table
    knows it: a log line names the player, not what the peer's info frame says
    (a host's is its table's name, a newcomer's at a coded table a placeholder).
    """

    def __init__(self, identity: Identity, info: Callable[[], Info], *, is_host: bool,
                 on_frames: FramesHandler, on_link: LinkHandler | None = None,
                 code: str | None = None, admitted: Admitted | None = None,
                 player: Admitted | None = None, limits: Limits | None = None,
                 name_of: Callable[[bytes], str | None] = lambda _key: None) -> None:
        self.me = identity.public_key
        self.is_host = is_host
        self._identity = identity
        self._info = info
        self._code = code
        self._guard = CodeGuard()
        self._on_frames = on_frames
        self._on_link = on_link
        self._admitted: Admitted = admitted or (lambda _key: True)
        #: Whether a key plays here (a spectator is admitted but does not): the
        #: full budget of frames is for those (``_dispatch``).
        self._player: Admitted = player or self._admitted
        self.limits = limits or Limits()
        self._unseated = Unseated(self.limits)
        self._pending: dict[Link, str] = {}  # accepted links without a place, by address
        self._unplaced: dict[str, LinkBudget] = {}  # see _unplaced_budget
        self._quiet = QuietLog(_log)
        self._code_turns: dict[str, _Turn] = {}  # by address, while any is using it
        self._name_of = name_of
        self.links: dict[bytes, Link] = {}
        self.host_key: bytes | None = None  # a guest takes peers frames from it only
        self.addresses: dict[bytes, str] = {}  # host: where each guest listens
        self._seated: frozenset[bytes] = frozenset()
        self._announced: dict[bytes, str] | None = None
        self._dialers: dict[bytes, tuple[tuple[str, int], asyncio.Task[None]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._servers: list[asyncio.Server] = []
        self._closing = False

    # ------------------------------------------------------------ setting up
    async def listen(self, bind: str, port: int) -> int:
        """Start accepting connections; returns the port (useful with port 0).

        ``bind`` is one address or several, comma-separated (the addresses of
        the interfaces a user restricted the table to), all on one port
        (:func:`~.interfaces.bind_addresses`).
        """
        for address in bind_addresses(bind):
            try:
                server = await listen(address, port, self._on_connection)
            except OSError as exc:
                for other in self._servers:
                    other.close()
                self._servers.clear()
                where = (format_address(address, port) if bind
                         else f"every interface, port {port}")
                raise LinkError(f"cannot listen on {where} (--bind, --port): "
                                f"{exc.strerror or exc}") from None
            self._servers.append(server)
            port = int(server.sockets[0].getsockname()[1])  # the others take the same
        return port

    async def connect(self, host: str, port: int, *, joining: bool,
                      expect_key: bytes | None = None) -> Link:
        """Dial once and open a link, without serving it yet (see :meth:`adopt`).

        Raises ``Refused`` or ``LinkError`` with a message for the user.
        """
        try:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can return a
            # connection made just as the task is cancelled, and lose the cancel.
            async with asyncio.timeout(_CONNECT_TIMEOUT):
                connection = await connect(host, port)
        except (OSError, TimeoutError) as exc:
            raise LinkError(f"cannot reach {format_address(host, port)}: "
                            f"{exc.strerror if isinstance(exc, OSError) else 'timed out'}"
                            ) from None
        try:
            return await open_link(connection, self._identity, self._info(), dialer=True,
                                   code=self._code, expect_key=expect_key, joining=joining)
        except BaseException:
            connection.close()
            raise

    def adopt(self, link: Link, address: tuple[str, int]) -> None:
        """Serve a link opened with :meth:`connect` (sends reach it at once), and keep
        redialing ``address`` whenever it drops."""
        self._register(link)
        self._start_dialer(link.key, address, first=link)

    # ------------------------------------------------------------ sending
    def send(self, data: bytes, to: bytes | None) -> None:
        """One entry to one peer, or to every connected peer; a missing peer is skipped."""
        self.send_all(((data, to),))

    def send_all(self, sends: Iterable[tuple[bytes, bytes | None]]) -> None:
        """Entries, each to one peer or to every connected peer, in order.

        Each link gets all of its frames in one write: on a small machine a
        write to a local peer costs a system call and often a context switch
        to the woken reader, so a play and the view after it cost one, not two.
        """
        queues: dict[bytes, list[bytes]] = {}
        # A link without a place hears none of the table's traffic, only what is
        # addressed to it: the answers to what it sent (the ACK that tells a
        # newcomer where its chain ends, a refusal). Who has a place is asked
        # once per call, and only when something goes to everyone: most calls
        # carry nothing, or one ACK to one author.
        admitted: list[bytes] | None = None
        for data, to in sends:
            if to is not None:
                if to in self.links:
                    queues.setdefault(to, []).append(data)
                continue
            if admitted is None:
                admitted = self.hearers()
            for key in admitted:
                queues.setdefault(key, []).append(data)
        for key, frames in queues.items():
            link = self.links.get(key)
            if link is not None:
                link.send_all(frames)

    def hearers(self) -> list[bytes]:
        """The peers that hear the table's traffic (what goes to everyone)."""
        return [key for key in self.links if self._admitted(key)]

    def viewers(self) -> list[bytes]:
        """The peers that hear the table's traffic and draw the other seats' tableaux
        (their info frame says so): the only ones a VIEW is for."""
        return [key for key, link in self.links.items()
                if link.peer.views and self._admitted(key)]

    def draws(self) -> bool:
        """Whether any of the :meth:`viewers` is linked now: with none, a VIEW is for no one."""
        return any(link.peer.views and self._admitted(key) for key, link in self.links.items())

    # ------------------------------------------------------------ the peers list
    def set_seated(self, keys: Iterable[bytes]) -> None:
        """Host: the seated keys changed; tell everyone where the others listen."""
        self._seated = frozenset(keys)
        self._announce()

    def announce_to(self, link: Link) -> None:
        """Host: send ``link`` the peers list now (it has just been admitted)."""
        self._announce(link)

    def _announce(self, to: Link | None = None) -> None:
        """Send the peers list to everyone if it changed, else (if given) to ``to`` alone.

        It lists, and goes to, the keys with a place at the table only: a
        stranger neither learns where the players listen nor fills the list.
        """
        peers = {k: a for k, a in self.addresses.items()
                 if k in self._seated or (k in self.links and self._admitted(k))}
        if peers != self._announced:
            self._announced = peers
            payload = encode_peers(peers)
            for link in list(self.links.values()):
                if self._admitted(link.key):
                    link.send(payload)
        elif to is not None and self._admitted(to.key):
            to.send(encode_peers(peers))

    def dial(self, peers: dict[bytes, tuple[str, int]]) -> None:
        """Guest: keep one link to each listed peer whose key is larger than ours."""
        wanted = {k: a for k, a in peers.items()
                  if k > self.me and k != self.host_key}
        for key, (address, task) in list(self._dialers.items()):
            if key != self.host_key and wanted.get(key) != address:
                task.cancel()
                del self._dialers[key]
        for key, address in wanted.items():
            if key not in self._dialers:
                self._start_dialer(key, address)

    # ------------------------------------------------------------ closing
    def close_silent(self, keys: Iterable[bytes], after: float) -> None:
        """Close the links of ``keys`` that brought nothing for ``after`` s (the peer
        is gone: see ``Admission.must_be_heard``); each one's end is told as any
        link's is."""
        now = time.monotonic()
        for key in keys:
            link = self.links.get(key)
            if link is not None and now - link.heard_at > after:
                # Abort: a peer gone silent takes no data, so a close would wait
                # for what is queued to it to go out, for as long as TCP tries.
                link.abort(f"silent for {after:g} s")

    async def close(self, flush: float = 1.0) -> None:
        """Stop dialing and accepting; give queued frames up to ``flush`` s to go out."""
        self._closing = True
        for server in self._servers:
            server.close()
        for _address, task in self._dialers.values():
            task.cancel()
        deadline = time.monotonic() + flush
        while (any(link.buffered for link in self.links.values())
               and time.monotonic() < deadline):
            await asyncio.sleep(0.01)
        for link in list(self.links.values()):
            link.close("closing")
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------ internals
    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _start_dialer(self, key: bytes, address: tuple[str, int],
                      first: Link | None = None) -> None:
        self._dialers[key] = (address, self._spawn(self._dial_loop(key, address, first)))

    def _on_connection(self, connection: Connection) -> None:
        """Serve an incoming connection in a task of ours, which ``close`` cancels."""
        self._spawn(self._accept(connection))

    async def _accept(self, connection: Connection) -> None:
        if self._closing:
            connection.close()
            return
        peername = connection.transport_or_raise().get_extra_info("peername")
        ip = str(peername[0]) if peername else "?"
        now = time.monotonic()
        self._recount()
        if not self._unseated.room(ip):
            self._quiet.log(now, "unseated cap", logging.INFO, "closed a connection from %s: "
                            "too many without a seat (from there, or in all)", ip)
            connection.abort("too many connections without a seat")
            return
        self._unseated.add(ip)
        try:
            link = await self._open_accepted(connection, ip)
        except BaseException:
            self._unseated.remove(ip)
            raise
        if link is None:
            self._unseated.remove(ip)
            return
        if self._admitted(link.key):
            self._unseated.remove(ip)
        else:
            self._pending[link] = ip  # counted until it has a place or goes
        if link.peer.port:
            self.addresses[link.key] = format_address(link.remote_ip, link.peer.port)
        await self._serve(link)

    async def _open_accepted(self, connection: Connection, ip: str) -> Link | None:
        """Run the opening exchange of an incoming connection; None if it failed (logged)."""
        try:
            link = await self._exchange(connection, ip)
        except WrongCode:
            connection.close()
            return None
        except Refused as exc:
            self._quiet.log(time.monotonic(), "refused", logging.INFO,
                            "refused a connection from %s: %s", ip, exc)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_REFUSE_LINGER):
                    await connection.wait_closed()
            connection.close()
            return None
        except LinkError as exc:
            if connection.heard and connection.closed and self._info().full:
                # It heard our info frame say full, and went: the newcomer's side
                # says why (``wire.refusal``), and so does ours.
                self._quiet.log(time.monotonic(), "refused", logging.INFO,
                                "turned away a newcomer from %s: the table is full", ip)
            elif connection.heard or not connection.closed:
                self._quiet.log(time.monotonic(), "failed", logging.INFO,
                                "incoming connection from %s failed: %s", ip, exc)
            else:  # closed unspoken: a lobby checking that the table is there
                _log.debug("a connection from %s closed before it said anything", ip)
            connection.close()
            return None
        if link.sealed:
            self._guard.succeeded(ip)
        return link

    async def _exchange(self, connection: Connection, ip: str) -> Link:
        """``open_link`` for an incoming connection, one code exchange at a time from
        an address (see ``guard``): the others from it wait their turn, and a
        failure counts before the next one is judged."""
        if self._code is None or self._guard.refused_for(ip, time.monotonic()) > 0:
            return await self._open(connection, ip)
        turn = self._code_turns.setdefault(ip, _Turn())
        turn.users += 1
        try:
            try:
                async with asyncio.timeout(HANDSHAKE_TIMEOUT):
                    await turn.lock.acquire()
            except TimeoutError:
                raise LinkError("waited too long for its turn at the table code") from None
            try:
                return await self._open(connection, ip)
            finally:
                turn.lock.release()
        finally:
            turn.users -= 1
            if not turn.users:
                del self._code_turns[ip]

    async def _open(self, connection: Connection, ip: str) -> Link:
        try:
            return await open_link(
                connection, self._identity, self._info(), dialer=False, code=self._code,
                refuse_code=self._guard.refused_for(ip, time.monotonic()) > 0)
        except WrongCode as exc:
            if self._guard.failed(ip, time.monotonic()):
                _log.warning("%s from %s: refusing that address for %g s", exc, ip,
                             self._guard.pause)
            else:
                self._quiet.log(time.monotonic(), "wrong code", logging.INFO, "%s from %s",
                                exc, ip)
            raise

    def _recount(self) -> None:
        """Stop counting the accepted links that have a place at the table by now."""
        for link, ip in list(self._pending.items()):
            if self._admitted(link.key):
                del self._pending[link]
                self._unseated.remove(ip)

    def _check_place(self, link: Link) -> None:
        """Grace is over: a link whose key has no place at the table goes."""
        if not link.closed and not self._admitted(link.key):
            link.close(f"no seat taken within {self.limits.grace:g} s")

    async def _dial_loop(self, key: bytes, address: tuple[str, int], first: Link | None) -> None:
        delay = BACKOFF_MIN
        link = first
        while not self._closing:
            if link is None:
                try:
                    link = await self.connect(*address, joining=False, expect_key=key)
                except LinkError as exc:
                    _log.debug("dialing %s failed: %s", fingerprint_of(key), exc)
                except Exception:  # noqa: BLE001 - keep dialing whatever happened
                    _log.exception("dialing %s failed", fingerprint_of(key))
            if link is not None:
                began = time.monotonic()
                await self._serve(link)
                link = None
                if time.monotonic() - began > _STABLE:
                    delay = BACKOFF_MIN
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)

    def _register(self, link: Link) -> None:
        """Make ``link`` the link for its key (a newer connection replaces an older one)."""
        old = self.links.get(link.key)
        if old is not None and old is not link:
            old.close("replaced by a newer connection")
        self.links[link.key] = link
        if self._admitted(link.key):
            _log.info("connected to %s", self._who(link))
        else:
            self._quiet.log(time.monotonic(), "newcomer", logging.INFO,
                            "connected to %s, who has no seat yet", self._who(link))
            asyncio.get_running_loop().call_later(self.limits.grace, self._check_place, link)
        self._notify(link.key, True)
        if self.is_host:
            self._announce(to=link)

    async def _serve(self, link: Link) -> None:
        """Read a link until it ends; it is the link for its key while it lasts.

        A link opened while the mesh closes (its opening exchange was under
        way) is closed at once: nothing else would ever close it.
        """
        if self._closing:
            link.close("closing")
            return
        if self.links.get(link.key) is not link:
            self._register(link)
        budgets = (LinkBudget(self.limits), self._unplaced_budget(link.remote_ip))
        try:
            await link.serve(lambda payloads: self._dispatch(link, budgets, payloads))
        finally:
            ip = self._pending.pop(link, None)
            if ip is not None:
                self._unseated.remove(ip)
            link.close("connection ended")
            if self.links.get(link.key) is link:
                del self.links[link.key]
                self._notify(link.key, False)
                if self.is_host:
                    if link.key not in self._seated:  # keeps the book as small as the table
                        self.addresses.pop(link.key, None)
                    self._announce()
            if ip is None or self._admitted(link.key):
                _log.info("disconnected from %s: %s", self._who(link), link.reason)
            else:
                self._quiet.log(time.monotonic(), "newcomer gone", logging.INFO,
                                "disconnected from %s, who had no seat: %s",
                                self._who(link), link.reason)

    def _who(self, link: Link) -> str:
        """``Ana (ab12-…)``: the peer's player name (else its info frame's) and key."""
        name = self._name_of(link.key)
        if name is None:
            # A peer at this table says the table's name in its info frame, not its
            # own: one we know nothing of yet (no seat, not watching yet) is a
            # stranger, not "Main table".
            name = "a stranger" if link.peer.name == self._info().name else link.peer.name
        return f"{name} ({fingerprint_of(link.key)})"

    def _unplaced_budget(self, ip: str) -> LinkBudget:
        """The budget shared by the links without a place from ``ip`` (``Limits``)."""
        budget = self._unplaced.get(ip)
        if budget is None:
            if len(self._unplaced) >= _MAX_BUDGETS:
                self._unplaced.pop(next(iter(self._unplaced)))  # the longest known
            budget = self._unplaced[ip] = LinkBudget(self.limits, unseated=True)
        return budget

    def _dispatch(self, link: Link, budgets: tuple[LinkBudget, LinkBudget],
                  payloads: list[bytes]) -> None:
        """Hand a link's frames on, within its budget: the smaller one shared by an
        address's links whose keys do not play here (strangers and spectators:
        see ``Limits``), at a guest as at the host. A guest that has just sat
        down cannot tell the seats from strangers yet, and catches up from
        them: until it can, every key plays there (its ``player`` rule)."""
        now = link.heard_at = time.monotonic()
        unplaced = not self._player(link.key)
        budget = budgets[1] if unplaced else budgets[0]
        given = len(payloads)
        payloads = [p for p in payloads if budget.admit(now, len(p))]
        if budget.flooding(now):
            raise LinkError(f"far over its budget ({budget.dropped} frames dropped)")
        if unplaced and len(payloads) < given:
            # Over its budget: read no more from it for a while rather than read
            # and drop (reading a flood costs about as much as checking it).
            link.hold(_HOLD)
        entries: list[bytes] = []
        for payload in payloads:
            if is_entry(payload):
                entries.append(payload)
                continue
            self._hand_over(link, entries)  # the order they came in
            entries = []
            if self.is_host or link.key != self.host_key:
                raise WireError("a transport frame from a peer that is not the host")
            self.dial(decode_peers(payload))
        self._hand_over(link, entries)

    def _hand_over(self, link: Link, entries: list[bytes]) -> None:
        if entries:
            try:
                self._on_frames(link.key, entries)
            except Exception:  # noqa: BLE001 - a frame must never take the peer down
                _log.exception("handling frames from %s failed", fingerprint_of(link.key))

    def _notify(self, key: bytes, up: bool) -> None:
        if self._on_link is not None:
            try:
                self._on_link(key, up)
            except Exception:  # noqa: BLE001
                _log.exception("link callback failed")
