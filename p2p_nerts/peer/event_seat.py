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
join it. Where the host never comes, the next seat stands in for it
(:func:`open_table`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..event.book import EventBook, MissingRecords, check_code, stand_in_quorum, table_id_for
from ..event.entries import EventError, Opened, Registered, Seated, TableSeats, code_proof, encode
from ..game.bot import Bot
from ..game.variants import VariantError, Variants
from ..net.discovery import DiscoveryError
from ..net.interfaces import Interfaces
from ..net.link import LinkError, Refused
from ..net.mesh import BACKOFF_MAX, BACKOFF_MIN
from ..protocol.identity import Identity
from ..protocol.replica import DEAL_WITH
from ..records.record import MAX_RECORD, RecordError
from ..records.record import decode as decode_record
from ..store import Store, StoreError
from ..waits import wait_event
from .event_watch import find_seated, table_name, watch_game
from .event_wire import NONCE_LEN, VERSION, WireError, presence, read_frame, write_frame
from .headless import run_headless
from .node import Endpoint, NetSession, TableConfig
from .tables import join_found

__all__ = ["AUTO_NEXT", "EventLink", "Seat", "open_table", "play_table", "stand_in_step",
           "table_name", "take_part"]

_log = logging.getLogger(__name__)

AUTO_NEXT = 8.0
"""Seconds an event's table rests between two rounds before it deals again."""
HAND_IN_EVERY = 5.0
"""Seconds between two looks for games to hand in, while connected: a game played
from the lobby is kept when its table closes, at no moment this link knows of."""
STAND_IN_MIN = 5.0
"""Seconds at least that each seat of a table waits for the one before it to open it."""
LOOK = 3.0
"""Seconds one look on mDNS for a table's host (or stand-in) lasts."""
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


class EventLink:
    """This machine's link to an event's organiser (see the module's docstring).

    ``register``: take part (with ``code`` if the event has one), else only
    follow; ``store``: the player's, whose kept games of the event are handed
    in. ``changed`` is called after anything new (entries, records, a refusal, a
    look at a table). ``watch``: mDNS interfaces where this machine watches the
    tables of the game under way, for the live scores its book then shows
    (``event_watch``; the projector's page of a machine that only follows).
    """

    def __init__(self, identity: Identity, address: tuple[str, int], *, register: bool,
                 code: str | None = None, store: Store | None = None,
                 changed: Callable[[], None] = lambda: None,
                 watch: Interfaces | None = None) -> None:
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
        self._nonce = b""  # the organiser's, on this connection
        self._table_ids: dict[bytes, bytes] = {}  # each kept record's table, read once
        self._seated_at: dict[int, float] = {}  # when each game's seating was heard
        #: Why the organiser refused this player (a wrong code...), or None.
        self.refused: str | None = None
        self.connected = asyncio.Event()
        self._closed = False
        #: With mDNS interfaces: watch the tables of the game under way, for their
        #: live scores in the book (``event_watch``: a projector's page shows them).
        self._watch = watch
        self._watched = 0  # the last game whose tables are watched
        self._watching: set[asyncio.Task[None]] = set()

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

    def moved_on(self, game: int) -> bool:
        """Whether the event is past game ``game`` (ended, or the next one seated)."""
        state = self.book.games.get(game)
        return len(self.book.games) > game or (state is not None and state.finished)

    def played(self, seat: Seat) -> bool:
        """Whether ``seat``'s table has its result: in the book, or kept here (a player
        back from a crash after its game ended must not open the table again)."""
        if (seat.game, seat.table.letter) in self.book.results() or self.moved_on(seat.game):
            return True
        opened = self.book.opened
        if self._store is None or opened is None:
            return False
        table_id = table_id_for(opened.event_id, seat.game, seat.table.letter)
        try:
            return any(self._table_id(data) == table_id
                       for data in self._store.records_since(opened.created - _RECORDS_SLACK))
        except StoreError:
            return False

    def _table_id(self, data: bytes) -> bytes | None:
        """A kept record's table id, read once (None: not a record the event could count)."""
        table_id = self._table_ids.get(data)
        if table_id is None:
            try:
                table_id = self._table_ids[data] = decode_record(data).table_id
            except RecordError:
                return None
        return table_id

    async def run(self) -> None:
        """Follow the event until :meth:`close`, connecting again whenever the link goes.
        Raises EventError when the organiser refuses this player's registration."""
        delay = BACKOFF_MIN
        said = False  # that the organiser is out of reach, since it was last reached
        where = f"{self.address[0]}:{self.address[1]}"
        while not self._closed:
            try:
                await self._session()
                delay, said = BACKOFF_MIN, False
            except (OSError, TimeoutError, WireError, asyncio.IncompleteReadError) as exc:
                _log.log(logging.DEBUG if said else logging.INFO,
                         "the event's organiser at %s is out of reach (%s): trying again",
                         where, str(exc) or type(exc).__name__)
                said = True
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
        for task in self._watching:
            task.cancel()

    def hand_in(self) -> None:
        """Send the organiser this player's kept games of the event it has not had: those
        of its tables only (by the table id each seating gives its tables), so that the
        player's other games stay their own."""
        writer, opened = self._writer, self.book.opened
        if writer is None or opened is None or self._store is None:
            return
        tables = {table_id_for(opened.event_id, game, table.letter)
                  for game, state in self.book.games.items() for table in state.seated.tables}
        try:
            records = self._store.records_since(opened.created - _RECORDS_SLACK)
        except StoreError as exc:
            _log.warning("cannot read the games to hand in: %s", exc)
            return
        for data in reversed(records):  # oldest first
            if data in self._handed or len(data) > MAX_RECORD:
                continue
            if self._table_id(data) in tables:
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
            nonce = answer.get("nonce")
            if type(nonce) is not bytes or len(nonce) != NONCE_LEN:
                raise WireError("an answer without its nonce")
            self._nonce = nonce
            if reg is not None:
                self._here(writer)
            self.connected.set()
            self.hand_in()
            handing_in = asyncio.ensure_future(self._hand_in_every())
            try:
                await self._follow(reader, writer, reg)
            finally:
                handing_in.cancel()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _hand_in_every(self) -> None:
        while True:
            await asyncio.sleep(HAND_IN_EVERY)
            self.hand_in()

    async def _follow(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      reg: bytes | None) -> None:
        """Take what the organiser sends, until the connection goes."""
        while True:
            frame = await read_frame(reader, MAX_RECORD + 64)
            await self._heard(frame)
            if reg is None and (reg := self._registration()) is not None:
                write_frame(writer, {"reg": reg})  # now it knows the event's id
                self._here(writer)
            if "error" in frame:
                self.refused = str(frame["error"])[:200]
                self._changed()
                return
            await writer.drain()

    def _here(self, writer: asyncio.StreamWriter) -> None:
        """Prove to the organiser that this player is here, on this connection."""
        opened = self.book.opened
        if opened is not None:
            write_frame(writer, {"here": self.identity.sign(presence(opened.event_id,
                                                                      self._nonce))})

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

    async def _heard(self, frame: dict[str, object]) -> None:
        """An entry or a record from the organiser, checked into the book (a record is
        replayed in a worker thread: the seat this machine plays at goes on meanwhile)."""
        entry, record = frame.get("e"), frame.get("r")
        try:
            if type(entry) is bytes:
                self._apply(entry)
            elif type(record) is bytes:
                checked = await asyncio.to_thread(self.book.check_record, record)
                if self.book.take_record(checked):
                    for held in self._held[:]:
                        self._held.remove(held)
                        self._apply(held)
            elif "error" not in frame:
                raise WireError("a malformed frame")
        except EventError as exc:
            _log.warning("the organiser sent an entry this machine refuses: %s", exc)
            return
        self._watch_tables()
        self._changed()

    def _watch_tables(self) -> None:
        game = len(self.book.games)
        if self._watch is None or game <= self._watched or self._closed:
            return
        self._watched = game
        for watching in watch_game(self.identity, self.book, game, self._watch, self._changed):
            task = asyncio.ensure_future(watching)
            self._watching.add(task)
            task.add_done_callback(self._watching.discard)

    def _apply(self, raw: bytes) -> None:
        try:
            signed = self.book.apply(raw)
        except MissingRecords:
            self._held.append(raw)  # its records come next
            return
        if signed is not None and isinstance(signed.entry, Seated):
            self._seated_at[signed.entry.game] = time.monotonic()

    def seated_at(self, game: int) -> float | None:
        """When this machine heard game ``game``'s seating (``time.monotonic``): what
        the turns of its tables' stand-ins count from (``open_table``)."""
        return self._seated_at.get(game)


def _variants(seated: Seated, opened: Opened) -> Variants:
    target = seated.rules.get("target", opened.target)
    try:
        return Variants(target=target if type(target) is int else opened.target)
    except VariantError:
        return Variants(target=opened.target)


def stand_in_step(opened: Opened, table: TableSeats) -> float:
    """Seconds each seat of ``table`` waits for the seats before it to open it, before
    it opens it itself: the turn-up time shared among its seats, so that the last
    stands in within it (a few seconds at least, for a table to be found)."""
    return max(opened.turn_up_s / len(table.seats), STAND_IN_MIN)


async def open_table(identity: Identity, book: EventBook, seat: Seat, *,
                     interfaces: Interfaces | None, endpoint: Endpoint, store: Store | None,
                     views: bool, seated_at: float | None = None) -> NetSession:
    """Sit at ``seat``'s table, opening it or joining it, under the one id the seating
    gives it; ``seated_at``: when this machine heard the seating (``time.monotonic``;
    now by default). Raises ``DiscoveryError``/``LinkError`` (one line) when it cannot.

    The table's seats in order are its hosts in order: the first opens it at once;
    each later one opens it once every seat before it has had its turn (a
    `stand_in_step` each, from the seating) and no table of theirs is found. Until
    then, and after, a seat joins the table of the earliest seat found, looking only
    at seats whose turn has come: a table opened early under a later seat's key
    draws no one from the earlier seat's. The book counts the earliest host's game
    (``event/book.py``), so this is the table that counts.
    """
    opened = book.opened
    assert opened is not None  # a seat comes from a seating of an opened event
    if (seat.game, seat.table.letter) in book.results():
        raise LinkError(f"{seat.name} is played already: its game is in")
    table = seat.table
    me = table.seats.index(identity.public_key)
    since = time.monotonic() if seated_at is None else seated_at
    step = stand_in_step(opened, table)
    back = store.unfinished() if store is not None else None
    if back is not None and (back.table_id, back.host_key) == (
            table_id_for(opened.event_id, seat.game, table.letter), identity.public_key):
        return await _host_table(identity, book, seat, endpoint=endpoint, store=store,
                                 interfaces=interfaces, views=views,
                                 turn_up=float(opened.turn_up_s))  # it hosted it: back at it
    if interfaces is None and me:
        raise LinkError("an event's table is found on mDNS: no interfaces to look on")
    while True:
        turn = min(int((time.monotonic() - since) / step), len(table.seats) - 1)
        others = [table.seats[i] for i in range(turn + 1) if i != me]
        if others and interfaces is not None:
            try:
                return await _join_earliest(identity, book, seat, others, interfaces,
                                            endpoint, store, views)
            except Refused:
                raise  # its table is open, and dealt without this late seat
            except (DiscoveryError, LinkError) as exc:
                _log.info("looking for %s: %s", seat.name, exc)
                if turn < me:
                    await asyncio.sleep(1.0)  # a look that failed at once (no mDNS)
        if turn >= me:
            if me:
                _log.info("%s: no seat before this one opened it: it opens it", seat.name)
            late = time.monotonic() - since
            return await _host_table(identity, book, seat, endpoint=endpoint, store=store,
                                     interfaces=interfaces, views=views,
                                     turn_up=max(opened.turn_up_s - late, step) if me
                                     else float(opened.turn_up_s))


async def _host_table(identity: Identity, book: EventBook, seat: Seat, *, endpoint: Endpoint,
                      store: Store | None, interfaces: Interfaces | None, views: bool,
                      turn_up: float) -> NetSession:
    """Open ``seat``'s table as its host (or stand-in), for its seated players only,
    dealing once they all sit or after ``turn_up`` seconds with two; a stand-in
    with more than half the table (the book counts its game only then)."""
    opened = book.opened
    assert opened is not None
    seated = book.games[seat.game].seated
    table = seat.table
    table_id = table_id_for(opened.event_id, seat.game, table.letter)
    config = TableConfig(variants=_variants(seated, opened), seat_only=table.seats,
                         auto_start=len(table.seats), auto_next=AUTO_NEXT,
                         turn_up=turn_up, views=views, max_seats=max(2, len(table.seats)),
                         deal_with=(DEAL_WITH if table.seats[0] == identity.public_key
                                    else stand_in_quorum(table)))
    back = store.unfinished() if store is not None else None
    if store is not None and back is not None and back.table_id == table_id:
        # This machine crashed hosting it (or standing in): the game goes on from
        # the journal (a guest's join does the same by itself).
        _log.info("back at %s: the game goes on from where it was", seat.name)
        return await NetSession.resume(identity, config, endpoint, store, back,
                                       table_name=seat.name, interfaces=interfaces)
    return await NetSession.host(
        identity, config, endpoint, table_name=seat.name, interfaces=interfaces,
        store=store, table_id=table_id)


async def _join_earliest(identity: Identity, book: EventBook, seat: Seat,
                         hosts: list[bytes], interfaces: Interfaces,
                         endpoint: Endpoint, store: Store | None, views: bool) -> NetSession:
    """Join ``seat``'s table as opened by the earliest of ``hosts`` found on mDNS within
    `LOOK` seconds; a table under another id than its seating's is left at once."""
    ad = await find_seated(seat.name, hosts, interfaces, LOOK)
    session = await join_found(identity, ad, TableConfig(views=views), endpoint, store)
    opened = book.opened
    assert opened is not None
    if session.replica.table_id != table_id_for(opened.event_id, seat.game, seat.table.letter):
        session.close()
        raise LinkError(f"the table {ad.name} found is not the one its seating gives")
    return session


async def play_table(link: EventLink, seat: Seat, bot: Bot, *, interfaces: Interfaces | None,
                     endpoint: Endpoint, store: Store | None) -> int:
    """A computer player's game at ``seat``'s table, then its record handed in. The
    table is left when the event moves on without it (the organiser ended the game,
    or seated the next): a table whose players never came deals nothing."""
    _log.info("%s", seat.line())
    if link.played(seat):
        _log.info("%s is played already: its record is kept", seat.name)
        return 0
    session = await open_table(link.identity, link.book, seat, interfaces=interfaces,
                               endpoint=endpoint, store=store, views=False,
                               seated_at=link.seated_at(seat.game))
    playing = asyncio.ensure_future(run_headless(session, bot=bot, summary=None))
    while not playing.done():
        if link.moved_on(seat.game):
            session.close()
        await asyncio.wait([playing], timeout=1.0)
    link.hand_in()
    return playing.result()


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
                    try:
                        await play_table(link, seat, bot, interfaces=interfaces,
                                         endpoint=endpoint, store=store)
                    except (DiscoveryError, LinkError, OSError) as exc:
                        # Its host never opened it, say: the next game seats us again.
                        _log.warning("%s: cannot sit at it: %s", seat.name, exc)
                else:
                    _log.info("%s (nerts join \"%s\" takes you there)", seat.line(), seat.name)
            opened = book.opened
            if opened is not None and game >= opened.games and book.games[game].finished:
                return True
            changed.clear()
            await wait_event(changed, 1.0)
    finally:
        link.close()
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
