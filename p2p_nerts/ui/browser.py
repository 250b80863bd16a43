"""The network lobby: the tables on the LAN, and the ways to a seat.

The list is the network's own (:attr:`Network.tables`), read afresh every
frame; the browser only remembers which table is chosen, by its unique
instance name, so the choice stays put while other tables come and go.
Joining and opening a table take a moment on the network, so they run as a
task while the screen says what is under way; a failure is one line of
text. A seat won — joined, opened, or a solo table — goes to ``on_session``,
and the app swaps the lobby for that table.

A table with a code is joined through a small form that asks for it. A seat
asked for in a form that is not won brings that form back with the reason
(a wrong code, a typo in the address), so the player can fix it and try
again, or Esc.

Events (an evening's tournament, ``lan.Events``) are rows of their own
above the tables. Enter on one registers the player (asking its code, if it
has one); from then on, each seating that seats them is said in the news,
and Enter on the event takes them to their table.

The player's results open as pages over the list (``pages``): the history,
a game's rounds, a round's replay, the event standings. Each page takes the
keys while it shows; Esc closes it and shows the one under it, and at last
the list again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial

from ..game.bot import DEFAULT_SKILL, SKILLS
from ..game.variants import VariantError, Variants
from ..lan import EventListing, EventPlace, Events, Network, TableListing
from ..protocol.identity import Identity
from ..protocol.replica import COUNTDOWN, DROP_AFTER
from ..session import History, HistoryError, Session, solo_table
from .form import (
    Field,
    Form,
    TextField,
    choice,
    clock_fields,
    form_clocks,
    form_variants,
    variant_fields,
)
from .hands import Hands, Page, player_input, sentence
from .pages import STANDINGS_EVERY, HistoryPage, Results, StandingsPage

#: Frame delays of a solo table (seconds, least and most), like a busy LAN's: a
#: play stays pending a moment and can bounce, as it can at a networked table.
SOLO_BOTS = 2
MAX_BOTS = 7
#: Characters a code field takes: more than any table code, so that a code too
#: long gets the network's reason instead of being cut short unseen.
CODE_FIELD_LIMIT = 100


SoloOpener = Callable[[int, str, Variants], Session]
"""Deals a solo table of so many computer players of a skill, under variants."""


def _solo_keeping_nothing(identity: Identity, bots: int, skill: str,
                          variants: Variants) -> Session:
    return solo_table(identity, bots=bots, skill=skill, variants=variants)


def is_full(table: TableListing) -> bool:
    return table.seats_taken >= table.seats_total


def code_field(label: str) -> TextField:
    """A table code to type; empty means none (where one is needed, the form says so)."""
    return TextField("code", label, limit=CODE_FIELD_LIMIT)


class Browser(Hands):
    """The player's hands in the network lobby."""

    def __init__(self, identity: Identity, network: Network, *, history: History | None = None,
                 results: Results | None = None, solo: SoloOpener | None = None,
                 events: Events | None = None) -> None:
        """``history``: the player's games; ``results``: how the event standings ask
        the LAN; ``solo``: how a solo table is dealt (by default, one that keeps
        nothing); ``events``: the events on the LAN (None: tables only)."""
        super().__init__()
        self.identity = identity
        self.network = network
        self.events = events
        #: The events the player registered for, by instance.
        self.places: dict[str, EventPlace] = {}
        self._told: dict[str, str | None] = {}  # the seat line last said, by event
        #: An event to register for as soon as it is heard (``nerts event join`` at a
        #: screen): its name as typed, and its code.
        self._to_register: tuple[str, str | None] | None = None
        self.history_of = history
        self.results = results
        self.solo_opener: SoloOpener = solo or partial(_solo_keeping_nothing, identity)
        self.standings_every = STANDINGS_EVERY
        #: The pages open over the list (history, a game, a replay, standings): the
        #: last one shows; Esc closes it and shows the one under it.
        self.pages: list[Page] = []
        self.chosen: str | None = None  # the chosen table's instance name
        self.busy: str | None = None  # what is under way: "Joining Ana's table…"
        #: A seat won, with the table code it was won with (the host's lobby shows it).
        self.on_session: Callable[[Session, str | None], None] = lambda _session, _code: None
        self.on_change: Callable[[], None] = lambda: None  # something to redraw
        self.on_quit: Callable[[], None] = lambda: None
        self._task: asyncio.Task[None] | None = None  # a join or an opening under way
        self._browsing: asyncio.Task[None] | None = None

    def open(self) -> None:
        """Start looking for tables, in the background: the screen shows at once."""
        self._browsing = asyncio.get_running_loop().create_task(self._browse())

    async def _browse_events(self) -> None:
        if self.events is None:
            return
        try:
            await self.events.browse_events(self._tables_changed)
        except ConnectionError as exc:
            self.state.error(f"Cannot look for events: {exc}")

    async def _browse(self) -> None:
        await self._browse_events()
        try:
            await self.network.browse(self._tables_changed)
        except ConnectionError as exc:
            self.state.error(f"Cannot look for tables: {exc}; you can still play solo")
        else:
            self.state.say("Looking for tables on your network…")
        self._tables_changed()  # those listed already, as the browse began

    async def close(self) -> None:
        """Stop: a join under way is cancelled, so no seat is won after this."""
        tasks = [task for page in self.pages for task in page.tasks]
        self._close_pages()
        if tasks:
            await asyncio.wait(tasks)
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task])
        if self._browsing is not None:
            await asyncio.wait([self._browsing])  # short; closing mid-start would leak it
        if self.events is not None:
            await self.events.close_events()
        await self.network.close()

    def _tables_changed(self) -> None:
        """The list changed: the table shown as chosen stays chosen (the first one
        listed, until the player moves), so a table that appears above it cannot
        take the player's Enter; one that went leaves the first listed chosen."""
        rows = self.rows()
        if rows and self.chosen not in rows:
            self.chosen = rows[0]
        if self._to_register is not None:
            self._register_named(*self._to_register)
        self.on_change()

    # ------------------------------------------------------------ reading
    def listed_events(self) -> list[EventListing]:
        return list(self.events.events) if self.events is not None else []

    def rows(self) -> list[str]:
        """The instances of the rows, in order: the events, then the tables."""
        return ([e.instance for e in self.listed_events()]
                + [t.instance for t in self.network.tables])

    def selected_event(self) -> EventListing | None:
        """The chosen event, if an event's row is chosen."""
        return next((e for e in self.listed_events() if e.instance == self.chosen), None)

    def selected(self) -> TableListing | None:
        """The chosen table, else the first one listed (None when there are none, or
        when an event's row is chosen)."""
        if self.selected_event() is not None:
            return None
        tables = self.network.tables
        return next((t for t in tables if t.instance == self.chosen),
                    tables[0] if tables else None)

    def speaks(self, table: TableListing) -> bool:
        """Whether the table speaks our protocol version."""
        return table.protocol_version == self.network.version

    def refusal(self, table: TableListing) -> str | None:
        """Why a listed table cannot be joined from here, known before dialling it."""
        if not self.speaks(table):
            return (f"{table.name} speaks protocol v{table.protocol_version}; "
                    f"this nerts speaks v{self.network.version}")
        return None

    # ------------------------------------------------------------ inputs
    @player_input
    def move(self, by: int) -> None:
        rows = self.rows()
        if not rows:
            return
        index = rows.index(self.chosen) if self.chosen in rows else 0
        self.chosen = rows[max(0, min(len(rows) - 1, index + by))]

    @player_input
    def click_table(self, instance: str) -> None:
        """A click chooses a table; a click on the chosen one joins it."""
        current = self.selected()
        if current is not None and current.instance == instance:
            self.join()
        else:
            self.chosen = instance

    @player_input
    def click_event(self, instance: str) -> None:
        """A click chooses an event; a click on the chosen one registers or goes."""
        if self.chosen == instance:
            self.join()
        else:
            self.chosen = instance

    @player_input
    def join(self) -> None:
        event = self.selected_event()
        if event is not None:
            self._at_event(event)
            return
        table = self.selected()
        if table is None:
            self.state.error("No table to join yet")
            return
        why = self.refusal(table)
        if why is not None:
            self.state.error(why)
            return
        if is_full(table):
            fields: list[Field] = [choice("then", "Instead", "wait", (
                ("wait", "wait for a free seat, and sit down"), ("watch", "watch, no seat")))]
            if table.needs_code:
                fields.append(code_field("Table code"))
            self.state.form = Form(f"{table.name} is full", fields, "go",
                                   partial(self._instead, table))
            return
        if table.needs_code:
            self.state.form = Form(f"Join {table.name}", [code_field("Table code")], "join",
                                   partial(self._with_code, table, "Joining",
                                           self.network.join))
            return
        self._seat(f"Joining {table.name}…", lambda: self.network.join(table, None))

    @player_input
    def watch(self) -> None:
        """Watch the chosen table without a seat (full tables too)."""
        table = self.selected()
        if table is None:
            self.state.error("No table to watch yet")
            return
        if not self.speaks(table):
            self.state.error(self.refusal(table) or "")
            return
        if table.needs_code:
            self.state.form = Form(f"Watch {table.name}", [code_field("Table code")], "watch",
                                   partial(self._with_code, table, "Watching",
                                           self.network.watch))
            return
        self._seat(f"Watching {table.name}…", lambda: self.network.watch(table, None))

    @player_input
    def ask_address(self) -> None:
        self.state.form = Form(
            "Join by address", [TextField("address", "Host:port", limit=64),
                                code_field("Code (if any)")],
            "join", self._join_address)

    @player_input
    def create(self) -> None:
        limit = self.network.max_name
        name = f"{self.identity.name}'s table"[:limit].strip()
        self.state.form = Form(
            "Open a table", [TextField("name", "Table name", name, limit=limit),
                             code_field("Code (empty: none)"), *variant_fields(Variants()),
                             *clock_fields(COUNTDOWN, DROP_AFTER)],
            "open the table", self._create)

    @player_input
    def solo(self) -> None:
        self.state.form = Form(
            "Play solo",
            [choice("bots", "Computer players", SOLO_BOTS,
                    [(n, str(n)) for n in range(1, MAX_BOTS + 1)]),
             choice("skill", "Their skill", DEFAULT_SKILL, [(s, s) for s in SKILLS]),
             *variant_fields(Variants())],
            "deal me in", self._solo)

    @player_input
    def history(self) -> None:
        """The player's past games and statistics; from there a game, a round, its replay."""
        if self.history_of is None:
            self.state.error("No history here: this lobby keeps no games")
            return
        try:
            page = HistoryPage(self.identity, self.history_of, self.open_page)
        except HistoryError as exc:
            self.state.error(sentence(str(exc)))
            return
        self.open_page(page)

    @player_input
    def standings(self) -> None:
        """The evening's standings across the tables on the network, live."""
        if self.results is None:
            self.state.error("No standings here: this lobby does not ask the network")
            return
        self.open_page(StandingsPage(self.identity, self.results, every=self.standings_every))

    @player_input
    def quit(self) -> None:
        self.on_quit()

    # ------------------------------------------------------------ events
    def register_when_heard(self, name: str, code: str | None) -> None:
        """Register for the event ``name`` means (its name, or ``NAME@FP`` as listed)
        as soon as it is heard, with ``code``; the lobby says it looks for it."""
        self._to_register = (name, code)
        self.state.say(f"Looking for the event {name}…")

    def _register_named(self, name: str, code: str | None) -> None:
        wanted, events = name.casefold(), self.events
        if events is None:
            return
        event = next((e for e in events.events if wanted in (
            e.name.casefold(), events.event_label(e).casefold())), None)
        if event is None or self.busy is not None:
            return
        self._to_register = None
        self.chosen = event.instance
        if event.needs_code and code is None:
            self._at_event(event)  # the code form
        else:
            self._register(event, code)

    def place_at(self, event: EventListing) -> EventPlace | None:
        """The player's place at ``event``, if they registered for it."""
        return self.places.get(event.instance)

    def _at_event(self, event: EventListing) -> None:
        """Enter on an event: register for it, or go to the table it seats the player at."""
        place = self.places.get(event.instance)
        if place is not None and place.refused is None:
            if place.seat_line is not None:
                self._seat("Going to your table…", place.sit)
            else:
                self.state.say(f"You are registered for {event.name}: your table shows "
                               "here when the organiser seats the next game")
            return
        if event.needs_code:
            self.state.form = Form(f"Register for {event.name}", [code_field("Event code")],
                                   "register", partial(self._register_with_code, event))
            return
        self._register(event, None)

    def _register_with_code(self, event: EventListing, form: Form) -> None:
        code = form.text("code")
        if not code:
            form.error = f"{event.name} asks for its code"
            return
        self.state.form = None
        self._register(event, code, form)

    def _register(self, event: EventListing, code: str | None, form: Form | None = None) -> None:
        if self.busy is not None:
            self.state.error(f"Wait: {self.busy}")
            return
        assert self.events is not None  # an event is listed
        events = self.events
        self.busy = f"Registering for {event.name}…"
        self.state.say(self.busy)

        async def registering() -> None:
            try:
                place = await events.register(event, code, self._event_news)
            except ConnectionError as exc:
                why = sentence(str(exc))
                self.state.error(why)
                if form is not None and self.state.form is None:
                    form.error = why
                    self.state.form = form
            else:
                self.places[event.instance] = place
                self.state.say(f"Registered for {event.name}")
                self._event_news()
            finally:
                self.busy = None
                self.on_change()

        self._task = asyncio.get_running_loop().create_task(registering())

    def _event_news(self) -> None:
        """An event the player follows moved on: a new seat for them is said once."""
        for instance, place in self.places.items():
            line = place.seat_line
            if line is not None and line != self._told.get(instance):
                self.state.say(f"{line}: Enter on the event takes you there")
            self._told[instance] = line
        self.on_change()

    # ------------------------------------------------------------ pages
    @property
    def page(self) -> Page | None:
        """The page on screen, None when the list of tables is."""
        return self.pages[-1] if self.pages else None

    def open_page(self, page: Page) -> None:
        page.on_leave = self._close_page
        page.on_change = self.on_change
        self.pages.append(page)
        page.start()
        self.on_change()

    def _close_page(self) -> None:
        self.pages.pop().stop()
        self.on_change()

    def _close_pages(self) -> None:
        while self.pages:
            self.pages.pop().stop()

    # ------------------------------------------------------------ forms
    def _code(self, form: Form) -> str | None:
        """The form's table code, None when left empty; ValueError when it cannot be one."""
        code = form.text("code")
        if not code:
            return None
        self.network.check_code(code)
        return code

    def _with_code(self, table: TableListing, doing: str,
                   opening: Callable[[TableListing, str | None], Awaitable[Session]],
                   form: Form) -> None:
        """Join or watch (``opening``) a table that asks for a code, with the form's."""
        try:
            code = self._code(form)
        except ValueError as exc:
            form.error = sentence(str(exc))
            return
        if code is None:
            form.error = f"{table.name} asks for its table code"
            return
        self._seat(f"{doing} {table.name}…", lambda: opening(table, code), code)

    def _instead(self, table: TableListing, form: Form) -> None:
        """At a full table: wait for a free seat (``join --wait``), or watch it."""
        if form.value("then") == "watch":
            doing, opening = "Watching", self.network.watch
        else:
            doing, opening = "Waiting for a seat at", partial(self.network.join, wait=True)
        if table.needs_code:
            self._with_code(table, doing, opening, form)
        else:
            self._seat(f"{doing} {table.name}…", lambda: opening(table, None))

    def _join_address(self, form: Form) -> None:
        try:
            address = self.network.address(form.text("address"))
            code = self._code(form)
        except ValueError as exc:
            form.error = sentence(str(exc))
            return
        self._seat(f"Joining the table at {form.text('address')}…",
                   lambda: self.network.join_address(address, code), code)

    def _create(self, form: Form) -> None:
        name = form.text("name")
        if not name:
            form.error = "The table needs a name"
            return
        try:
            code = self._code(form)
            variants = form_variants(form)
        except ValueError as exc:  # a VariantError too
            form.error = sentence(str(exc))
            return
        countdown, drop_after = form_clocks(form)
        self._seat(f"Opening {name}…", lambda: self.network.host(
            name, variants, code, countdown=countdown, drop_after=drop_after), code)

    def _solo(self, form: Form) -> None:
        bots, skill = form.value("bots"), form.value("skill")
        assert isinstance(bots, int) and isinstance(skill, str)
        try:
            variants = form_variants(form)
            variants.check_players(1 + bots)
        except VariantError as exc:
            form.error = sentence(str(exc))
            return

        async def deal() -> Session:
            return self.solo_opener(bots, skill, variants)

        self._seat("Dealing you in…", deal)

    # ------------------------------------------------------------ the network
    def _seat(self, doing: str, opening: Callable[[], Awaitable[Session]],
              code: str | None = None) -> None:
        """Win a seat in the background (joining takes a moment); one at a time.

        The form that asked for it closes, unless another seat is still being
        won; it comes back if this seat is not won. ``code`` is the table code
        the seat is won with.
        """
        if self.busy is not None:
            why = f"Wait: {self.busy}"
            if self.state.form is not None:
                self.state.form.error = why
            else:
                self.state.error(why)
            return
        form, self.state.form = self.state.form, None
        self.busy = doing
        self.state.say(doing)
        self._task = asyncio.get_running_loop().create_task(
            self._await_seat(opening, form, code))

    async def _await_seat(self, opening: Callable[[], Awaitable[Session]], form: Form | None,
                          code: str | None) -> None:
        try:
            session = await opening()
        except ConnectionError as exc:
            why = sentence(str(exc))
            self.state.error(why)
            if form is not None and self.state.form is None:  # another form would be lost
                form.error = why
                self.state.form = form
        else:
            self._close_pages()  # a page opened while the seat was won: the table shows
            self.on_session(session, code)
        finally:
            self.busy = None
            self.on_change()
