"""A player's machine at an event: following it, registering, and sitting at its tables.

:class:`EventLink` keeps a connection to the organiser's event server
(``event_wire``), coming back to it whenever it goes (the organiser's
machine may crash and resume), and builds this machine's own copy of the
event's book from the signed entries and records it hears: every seating is
checked here (its draw re-run from its inputs) before it is shown or
followed. It registers the player once it knows the event (the code, if the
event has one, checked against the opening first), and hands the organiser
the records of the event's games this player kept, at each connection and
after each game: a game played while the organiser was down counts when it
is back.

:func:`play_table` takes the player to their table of a seating: the table's
host (its first seat) opens it under the id the seating gives it, for the
listed players only, dealing as soon as they all sit or after the event's
turn-up time; the others find it on mDNS by its name and its host's key and
join it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..event.book import EventBook, MissingRecords, check_code, table_id_for
from ..event.entries import EventError, Opened, Registered, Seated, TableSeats, code_proof, encode
from ..game.bot import Bot
from ..game.variants import VariantError, Variants
from ..net.discovery import DiscoveryError, find_table
from ..net.interfaces import Interfaces
from ..net.link import LinkError
from ..net.mesh import BACKOFF_MAX, BACKOFF_MIN
from ..protocol.identity import Identity
from ..records.record import MAX_RECORD
from ..store import Store, StoreError
from .event_wire import VERSION, WireError, read_frame, write_frame
from .headless import run_headless
from .node import Endpoint, NetSession, TableConfig, fingerprint_hex
from .tables import join_found

__all__ = ["AUTO_NEXT", "EventLink", "Seat", "open_table", "play_table", "table_name",
           "take_part"]

_log = logging.getLogger(__name__)

AUTO_NEXT = 8.0
"""Seconds an event's table rests between two rounds before it deals again."""
_RECORDS_SLACK = 60.0
"""Seconds before the event's opening whose games a player still hands in (clocks
differ between machines; a record that matches no seating counts for nothing)."""


@dataclass(frozen=True, slots=True)
class Seat:
    """This player's place in one game's seating."""

    game: int
    table: TableSeats
    name: str  # the table's, as the lobbies show it
    others: tuple[str, ...]  # the names of the others at it

    def line(self) -> str:
        """``Game 2: table C, with Ana, Ben``: what the player's screen says."""
        return f"Game {self.game}: table {self.table.letter}, with {', '.join(self.others)}"


def table_name(game: int, letter: str) -> str:
    """An event's table, as the lobbies show it."""
    return f"Game {game} · table {letter}"


class EventLink:
    """This machine's link to an event's organiser (see the module's docstring).

    ``register``: take part (with ``code`` if the event has one), else only
    follow; ``store``: the player's, whose kept games of the event are handed
    in. ``changed`` is called after anything new (entries, records, a refusal).
    """

    def __init__(self, identity: Identity, address: tuple[str, int], *, register: bool,
                 code: str | None = None, store: Store | None = None,
                 changed: Callable[[], None] = lambda: None) -> None:
        self.identity = identity
        self.address = address
        self.book = EventBook()
        self.code = code
        self._register = register
        self._store = store
        self._changed = changed
        self._writer: asyncio.StreamWriter | None = None
        self._held: list[bytes] = []  # seatings drawn from records not heard yet
        self._handed: set[bytes] = set()  # records handed in on this connection
        #: Why the organiser refused this player (a wrong code...), or None.
        self.refused: str | None = None
        self.connected = asyncio.Event()
        self._closed = False

    @property
    def registered(self) -> bool:
        return self.identity.public_key in self.book.registrations

    def my_seat(self, game: int) -> Seat | None:
        """Where this player sits in game ``game`` (None: not seated in it)."""
        state = self.book.games.get(game)
        if state is None:
            return None
        me = self.identity.public_key
        for table in state.seated.tables:
            if me in table.seats:
                names = self.book.registrations
                return Seat(game, table, table_name(game, table.letter),
                            tuple(names[k].name for k in table.seats if k != me and k in names))
        return None

    async def run(self) -> None:
        """Follow the event until :meth:`close`, connecting again whenever the link goes.
        Raises EventError when the organiser refuses this player's registration."""
        delay = BACKOFF_MIN
        while not self._closed:
            try:
                await self._session()
                delay = BACKOFF_MIN
            except (OSError, TimeoutError, WireError, asyncio.IncompleteReadError) as exc:
                _log.debug("the event's organiser is out of reach: %s", exc)
            finally:
                self.connected.clear()
                self._writer = None
            if self.refused is not None:
                raise EventError(self.refused)
            if self._closed:
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)

    def close(self) -> None:
        self._closed = True
        if self._writer is not None:
            self._writer.close()

    def hand_in(self) -> None:
        """Send the organiser this player's kept games of the event it has not had."""
        writer, opened = self._writer, self.book.opened
        if writer is None or opened is None or self._store is None:
            return
        try:
            records = self._store.records_since(opened.created - _RECORDS_SLACK)
        except StoreError as exc:
            _log.warning("cannot read the games to hand in: %s", exc)
            return
        for data in reversed(records):  # oldest first
            if data not in self._handed and len(data) <= MAX_RECORD:
                self._handed.add(data)
                write_frame(writer, {"r": data})

    async def _session(self) -> None:
        reader, writer = await asyncio.open_connection(*self.address, limit=MAX_RECORD + 1024)
        self._writer = writer
        self._handed = set()
        try:
            reg = self._registration()
            write_frame(writer, {"v": VERSION, "reg": reg,
                                 "from": [len(self.book.entries), len(self.book.records)]})
            await writer.drain()
            answer = await read_frame(reader, MAX_RECORD + 64)
            if "error" in answer:
                self.refused = str(answer["error"])[:200]
                self._changed()
                return
            self.connected.set()
            self.hand_in()
            while True:
                frame = await read_frame(reader, MAX_RECORD + 64)
                self._heard(frame)
                if reg is None and (reg := self._registration()) is not None:
                    write_frame(writer, {"reg": reg})  # now it knows the event's id
                if "error" in frame:
                    self.refused = str(frame["error"])[:200]
                    self._changed()
                    return
                await writer.drain()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _registration(self) -> bytes | None:
        """This player's signed registration, once the event's opening is known."""
        opened = self.book.opened
        if not self._register or opened is None:
            return None
        proof = b""
        if opened.code_check is not None:
            if self.code is None or not check_code(opened, self.code):
                self.refused = ("the event needs its code: --code CODE" if self.code is None
                                else "that is not the event's code")
                self._closed = True
                if self._writer is not None:
                    self._writer.close()
                return None
            proof = code_proof(opened.event_id, self.identity.public_key, self.code)
        return encode(Registered(opened.event_id, self.identity.public_key,
                                 self.identity.name, proof), self.identity)

    def _heard(self, frame: dict[str, object]) -> None:
        entry, record = frame.get("e"), frame.get("r")
        try:
            if type(entry) is bytes:
                self._apply(entry)
            elif type(record) is bytes:
                if self.book.add_record(record):
                    for held in self._held[:]:
                        self._held.remove(held)
                        self._apply(held)
            elif "error" not in frame:
                raise WireError("a malformed frame")
        except EventError as exc:
            _log.warning("the organiser sent an entry this machine refuses: %s", exc)
            return
        self._changed()

    def _apply(self, raw: bytes) -> None:
        try:
            self.book.apply(raw)
        except MissingRecords:
            self._held.append(raw)  # its records come next


def _variants(seated: Seated, opened: Opened) -> Variants:
    target = seated.rules.get("target", opened.target)
    try:
        return Variants(target=target if type(target) is int else opened.target)
    except VariantError:
        return Variants(target=opened.target)


async def open_table(identity: Identity, book: EventBook, seat: Seat, *,
                     interfaces: Interfaces | None, endpoint: Endpoint, store: Store | None,
                     views: bool, find_timeout: float | None = None) -> NetSession:
    """Sit at ``seat``'s table: open it if this player is its host, else find it (by
    its name and its host's key) and join it, looking until the turn-up time is
    over. Raises ``DiscoveryError``/``LinkError`` (one line) when it cannot."""
    opened = book.opened
    assert opened is not None  # a seat comes from a seating of an opened event
    seated = book.games[seat.game].seated
    table = seat.table
    if table.host == identity.public_key:
        config = TableConfig(variants=_variants(seated, opened), seat_only=table.seats,
                             auto_start=len(table.seats), auto_next=AUTO_NEXT,
                             turn_up=float(opened.turn_up_s), views=views,
                             max_seats=max(2, len(table.seats)))
        return await NetSession.host(
            identity, config, endpoint, table_name=seat.name, interfaces=interfaces,
            store=store, table_id=table_id_for(opened.event_id, seat.game, table.letter))
    if interfaces is None:
        raise LinkError("an event's table is found on mDNS: no interfaces to look on")
    wanted = f"{seat.name}@{fingerprint_hex(table.host)}"
    give_up = time.monotonic() + (find_timeout if find_timeout is not None
                                  else opened.turn_up_s + 10.0)
    while True:
        try:
            ad = await find_table(wanted, interfaces, 3.0)
            return await join_found(identity, ad, TableConfig(views=views), endpoint, store)
        except (DiscoveryError, LinkError) as exc:
            if time.monotonic() >= give_up:
                raise
            _log.info("looking for %s: %s", seat.name, exc)


async def play_table(link: EventLink, seat: Seat, bot: Bot, *, interfaces: Interfaces | None,
                     endpoint: Endpoint, store: Store | None) -> int:
    """A computer player's game at ``seat``'s table, then its record handed in."""
    _log.info("%s", seat.line())
    session = await open_table(link.identity, link.book, seat, interfaces=interfaces,
                               endpoint=endpoint, store=store, views=False)
    code = await run_headless(session, bot=bot, summary=None)
    link.hand_in()
    return code


async def take_part(link: EventLink, bot: Bot | None, changed: asyncio.Event, *,
                    interfaces: Interfaces | None, endpoint: Endpoint,
                    store: Store | None) -> bool:
    """Follow the event through ``link`` (running it) until its last game is over (True)
    or the organiser refuses this player (EventError); each game's seat is said in
    the log, and with ``bot`` played. ``changed`` is the one ``link`` sets."""
    following = asyncio.ensure_future(link.run())
    shown = 0
    said_registered = False
    try:
        while True:
            if following.done():
                following.result()  # the organiser refused this player: EventError
                return False
            book = link.book
            if link.registered and not said_registered:
                said_registered = True
                _log.info("registered for %s", book.opened.name if book.opened else "the event")
            game = len(book.games)
            if game > shown:
                shown = game
                seat = link.my_seat(game)
                if seat is None:
                    _log.info("game %d: you are not seated in it (you play from the next)",
                              game)
                elif bot is not None:
                    await play_table(link, seat, bot, interfaces=interfaces,
                                     endpoint=endpoint, store=store)
                else:
                    _log.info("%s (nerts join \"%s\" takes you there)", seat.line(), seat.name)
            opened = book.opened
            if opened is not None and game >= opened.games and book.games[game].finished:
                return True
            changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), 1.0)
    finally:
        link.close()
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
