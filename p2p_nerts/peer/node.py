"""A networked table seat, and how it comes to be: hosting, joining, watching, resuming.

:class:`NetSession` implements the :class:`~p2p_nerts.session.Session`
protocol, so a UI, a headless runner or a bot cannot tell it from an
in-process table. What it does once it sits is its
:class:`~p2p_nerts.peer.shell.NetShell`'s (routing between the replica, the
journal and the mesh); this module holds its four ways to open: :meth:`host`
opens a new table (and publishes it on mDNS through the
:class:`~p2p_nerts.peer.announce.TableAnnouncer` the shell owns), :meth:`join`
takes a seat at a host's, :meth:`watch` watches one without a seat, and
:meth:`resume` brings a crashed seat back from the journal in its
:class:`~p2p_nerts.store.Store`. A guest learns the table id and the host's
key from the connection it opens, before its replica exists.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..net.discovery import MAX_NAME_CHARS, MAX_SEATS
from ..net.interfaces import Interfaces, advertised_addresses, bind_addresses, interfaces_from
from ..net.link import Link, LinkError, Refused
from ..net.mesh import BACKOFF_MAX, BACKOFF_MIN
from ..net.wire import WireError, format_address, parse_address
from ..protocol import events as ev
from ..protocol.envelope import TABLE_ID_LEN
from ..protocol.identity import Identity, fingerprint_of
from ..protocol.replica import AskToWatch, Open, Replica
from ..session import restored
from ..store import Store, TableRecord
from .config import TableConfig
from .seatback import WAITING
from .shell import NetShell

__all__ = ["HOST_GONE", "LATECOMER", "Endpoint", "NetSession", "TableConfig", "fingerprint_hex"]

_log = logging.getLogger(__name__)

LATECOMER = ("A round is under way: you play from the next round (you sit down as this one "
             "ends)")
HOST_GONE = 20.0
"""Seconds without a link to the host after which a guest gives up: without the
host no round can start (a headless guest quits then; a resuming one stops
dialing a host that may be coming back from a crash itself)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where this peer listens, and which port it tells others to dial.

    ``advertise_port`` differs from the real port only behind a relay or a
    port forward (the fault-injecting relay of the tests is one).
    """

    bind: str = ""  # one address or several, comma-separated; "": every interface
    port: int = 0  # any free port
    advertise_port: int | None = None


def _as_opened(config: TableConfig, name: str, facts: dict[str, object]
               ) -> tuple[TableConfig, str]:
    """The table a host resumes, as it opened it (``Store.hosting``): its name, its
    seats and when it deals by itself, whatever the command line says now (its
    rules and clocks come back from the journal's SETTINGS). A fact missing or
    unreadable keeps ``config``'s."""
    opened = facts.get("name")
    if isinstance(opened, str) and 0 < len(opened) <= MAX_NAME_CHARS and opened.isprintable():
        name = opened
    seats = facts.get("seats")
    if type(seats) is int and 2 <= seats <= MAX_SEATS:
        config = replace(config, max_seats=seats)
    auto_start = facts.get("auto_start", config.auto_start)
    if auto_start is None or (type(auto_start) is int and 2 <= auto_start <= config.max_seats):
        config = replace(config, auto_start=auto_start)
    seat_only = facts.get("seat_only")
    if isinstance(seat_only, list) and all(
            isinstance(k, str) and len(k) == 64 for k in seat_only):
        with contextlib.suppress(ValueError):
            config = replace(config, seat_only=tuple(bytes.fromhex(k) for k in seat_only))
    deal_with = facts.get("deal_with")
    if type(deal_with) is int:
        with contextlib.suppress(ValueError):
            config = replace(config, deal_with=deal_with)
    turn_up = facts.get("turn_up")
    if isinstance(turn_up, int | float) and not isinstance(turn_up, bool):
        with contextlib.suppress(ValueError):
            config = replace(config, turn_up=float(turn_up))
    auto_next = facts.get("auto_next", config.auto_next)
    if auto_next is None or (isinstance(auto_next, int | float) and not isinstance(
            auto_next, bool) and 0 <= auto_next <= 3600):
        config = replace(config, auto_next=None if auto_next is None else float(auto_next))
    return config, name


def fingerprint_hex(key: bytes) -> str:
    """The fingerprint as a table's TXT record carries it: no dashes."""
    return fingerprint_of(key).replace("-", "")


class NetSession(NetShell):
    """One seat at a table whose other seats are peers on the network.

    Build one with :meth:`host`, :meth:`join`, :meth:`watch` or :meth:`resume`;
    then ``await run()`` keeps it alive until :meth:`close`, after which ``run``
    says goodbye and returns (:class:`~p2p_nerts.peer.shell.NetShell`).
    """

    # ------------------------------------------------------------ factories
    @classmethod
    async def host(cls, identity: Identity, config: TableConfig, endpoint: Endpoint, *,
                   table_name: str, interfaces: Interfaces | None, store: Store | None = None,
                   keep_entries: bool = False, table_id: bytes | None = None,
                   clock: Callable[[], float] = time.monotonic) -> NetSession:
        """Open a new table; advertise it on mDNS unless ``interfaces`` is None.

        ``table_id``: the id it opens under (an event's table has the one its
        seating gives it, so that its record names that seat); else a new one.

        With a ``store``, the replica's journal is written to it before anything
        is sent, so that :meth:`resume` can bring the seat back after a crash.
        With ``keep_entries``, the signed entries it journals are kept in
        :attr:`entries` from the first (the table's own rules and seats).
        """
        self = cls(identity, config, is_host=True, store=store, keep_entries=keep_entries,
                   clock=clock)
        self.table_name = table_name
        if table_id is not None and len(table_id) != TABLE_ID_LEN:
            raise ValueError(f"a table id is {TABLE_ID_LEN} bytes")
        self._use(self._new_replica(table_id or os.urandom(TABLE_ID_LEN), identity.public_key))
        await self._listen(endpoint)
        self._remember(format_address(endpoint.bind.split(",")[0].strip() or "0.0.0.0",
                                      self.port))
        if store is not None:
            c = config
            self._disk.write(lambda s: s.note_hosting(self.replica.table_id, {
                "name": table_name, "seats": c.max_seats, "auto_start": c.auto_start,
                "auto_next": c.auto_next, "turn_up": c.turn_up, "deal_with": c.deal_with,
                "seat_only": None if c.seat_only is None else [k.hex() for k in c.seat_only]}))
        self._command(Open())
        self._hosting_at(endpoint, interfaces)
        if interfaces is not None:
            await self._announce(interfaces)
        return self

    @classmethod
    async def join(cls, identity: Identity, address: tuple[str, int], config: TableConfig,
                   endpoint: Endpoint, *, fingerprint: str | None = None,
                   store: Store | None = None,
                   clock: Callable[[], float] = time.monotonic) -> NetSession:
        """Take a seat at the table whose host listens at ``address``.

        ``fingerprint`` (from the table's mDNS record) must match the key the
        host proves in the handshake. Raises ``Refused`` (full table, wrong
        version; ``CodeNeeded`` for a missing or wrong table
        code) or ``LinkError``, each with a line for the user.
        """
        self = cls(identity, config, is_host=False, store=store, clock=clock)
        link = await self._reach(address, fingerprint, joining=not config.wait_for_seat,
                                 endpoint=endpoint)
        assert link.peer.tid is not None  # _reach checked it
        back = self._back_at(link.peer.tid, link.key)
        if back is not None:
            _log.info("back at a table we sat at: picking up where we left")
            self._use(back)
            self._seat.had_seat = self.view.my_seat is not None
        else:
            self._use(self._new_replica(link.peer.tid, link.key))
        self._remember(format_address(*address))
        opened = self.replica.handle(Open(), self._clock())
        if link.peer.full and not self._seat.had_seat:  # we asked to wait (it refuses others)
            self._seat.waiting = True
            opened.events.append(ev.Notice(WAITING))
        elif link.peer.playing:
            opened.events.append(ev.Notice(LATECOMER))
        self._route(opened)
        self._hand_out()
        return self

    @classmethod
    async def watch(cls, identity: Identity, address: tuple[str, int], config: TableConfig,
                    endpoint: Endpoint, *, fingerprint: str | None = None,
                    clock: Callable[[], float] = time.monotonic) -> NetSession:
        """Watch the table whose host listens at ``address``, without a seat.

        A spectator links to every seat as a player does and checks every
        entry as a player does (its replica is a player's that never asks for
        a seat), but it signs nothing the table waits for: no JOIN, no ACK, no
        vote, so it is never part of finality, drops or the shuffle. It asks
        for entries it misses like anyone. It keeps no journal. Full tables
        can be watched; a coded one needs its code. Raises like :meth:`join`.
        """
        self = cls(identity, config, is_host=False, clock=clock)
        self.watching = True
        link = await self._reach(address, fingerprint, joining=False, endpoint=endpoint)
        assert link.peer.tid is not None  # _reach checked it
        self._use(self._new_replica(link.peer.tid, link.key))
        self.replica.watching = True
        self._command(AskToWatch(link.key))
        return self

    async def _reach(self, address: tuple[str, int], fingerprint: str | None, *,
                     joining: bool, endpoint: Endpoint) -> Link:
        """Listen and link to the host at ``address`` (the one we found, if ``fingerprint``)."""
        await self._listen(endpoint)
        try:
            link = await self._mesh.connect(*address, joining=joining)
        except BaseException:
            await self._mesh.close(flush=0)
            raise
        if link.peer.tid is None or (fingerprint is not None
                                     and fingerprint_hex(link.key) != fingerprint):
            link.close("not the host we looked for")
            await self._mesh.close(flush=0)
            raise LinkError(f"{address[0]}:{address[1]} is not the host of the table we found")
        self.table_name = link.peer.name
        self._mesh.host_key = link.key
        self._mesh.adopt(link, address)  # before the replica: this first link-up is no rejoin
        return link

    def _back_at(self, table_id: bytes, host_key: bytes) -> Replica | None:
        """Our replica as we left this very table, rebuilt from the journal, if we sat
        at it last and its game goes on (a crash, a closed terminal, and ``join``
        again without ``--resume``) or is over (back for the next game the host
        deals there): what we sign next then follows what we signed before. A
        fresh replica would sign a second JOIN under a number its first one had,
        which every peer rejects as equivocation, and the game's result again."""
        table = self._disk.store.last_table() if self._disk.store is not None else None
        if table is None or (table.table_id, table.host_key) != (table_id, host_key):
            return None
        assert self._disk.store is not None
        return Replica.restore(self._identity, table_id, host_key,
                               self._disk.store.records(table_id), self._clock(),
                               **self._replica_options())

    @classmethod
    async def resume(cls, identity: Identity, config: TableConfig, endpoint: Endpoint,
                     store: Store, table: TableRecord, *, table_name: str,
                     interfaces: Interfaces | None,
                     clock: Callable[[], float] = time.monotonic) -> NetSession:
        """Come back to ``table`` after a crash, from the journal in ``store``.

        The replica is rebuilt exactly as it was (``Replica.restore``) and
        catches up from its peers before it plays again. A host listens on its
        old port, where the guests keep redialing it; a guest dials the host.
        """
        is_host = table.host_key == identity.public_key
        if is_host:
            config, table_name = _as_opened(config, table_name, store.hosting(table.table_id))
        self = cls(identity, config, is_host=is_host, store=store, clock=clock)
        replica = restored(store, table.table_id, identity, table.table_id, table.host_key,
                           self._clock(), **self._replica_options())
        try:
            address = parse_address(table.address)
        except WireError:
            host, _, port = table.address.rpartition(":")  # a host name given to join
            address = (host, int(port))
        if is_host:
            self.table_name = table_name
            self._use(replica)
            await self._listen(Endpoint(endpoint.bind, address[1], endpoint.advertise_port))
            self._hosting_at(endpoint, interfaces)
            if interfaces is not None:
                await self._announce(interfaces)
            return self
        await self._listen(endpoint)
        self._mesh.host_key = table.host_key
        try:
            link = await self._redial_host(address, table.host_key)
        except BaseException:
            await self._mesh.close(flush=0)
            raise
        self.table_name = link.peer.name
        self._mesh.adopt(link, address)
        self._use(replica)
        self._seat.had_seat = self.view.my_seat is not None
        return self

    async def _redial_host(self, address: tuple[str, int], host_key: bytes) -> Link:
        """Link to the host we sat with, dialing again for up to ``HOST_GONE``: the
        host may have crashed with us and be coming back on its old port."""
        give_up = time.monotonic() + HOST_GONE
        delay = BACKOFF_MIN
        while True:
            try:
                return await self._mesh.connect(*address, joining=False, expect_key=host_key)
            except Refused:
                raise  # it answered, and said no: dialing again changes nothing
            except LinkError as exc:
                if time.monotonic() + delay > give_up:
                    raise LinkError(f"no link to the host at {format_address(*address)} "
                                    f"for {HOST_GONE:g} s (last: {exc})") from None
                _log.debug("the host is not back yet: %s", exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)

    # ------------------------------------------------------------ opening helpers
    def _replica_options(self) -> dict[str, Any]:
        c = self._config
        return {"variants": c.variants, "countdown": c.countdown, "drop_after": c.drop_after,
                "auto_start": c.auto_start, "auto_next": c.auto_next,
                "max_seats": c.max_seats, "seat_only": c.seat_only,
                "deal_by": None if c.turn_up is None else self._clock() + c.turn_up,
                "deal_with": c.deal_with, "boot": self._disk.boot}

    def _new_replica(self, table_id: bytes, host_key: bytes) -> Replica:
        return Replica(self._identity, table_id, host_key, **self._replica_options())

    def _remember(self, address: str) -> None:
        """Note the table in the store (how to find it again) as we sit down."""
        if self._disk.store is not None:
            r = self.replica
            self._disk.write(lambda store: store.join_table(r.table_id, r.host_key, address))

    async def _listen(self, endpoint: Endpoint) -> None:
        self.port = await self._mesh.listen(endpoint.bind, endpoint.port)
        self._advertised_port = endpoint.advertise_port or self.port

    def _hosting_at(self, endpoint: Endpoint, interfaces: Interfaces | None) -> None:
        """Host: note the address players join by (``nerts join ADDRESS``), for the
        screen: the address the table listens on, or else the first it advertises."""
        bound = bind_addresses(endpoint.bind)[0]
        if bound in ("0.0.0.0", "::"):
            every = interfaces_from(None) if interfaces is None else interfaces
            bound = advertised_addresses(every)[0]
        self.address = format_address(bound, self._advertised_port)

    async def _announce(self, interfaces: Interfaces) -> None:
        """Host: publish the table on mDNS (``announce``), as the lobbies show it."""
        await self._announcer.start(
            self.replica, interfaces, name=self.table_name,
            fingerprint=fingerprint_hex(self._identity.public_key), host=self._identity.name,
            needs_code=self._config.code is not None, port=self._advertised_port)

