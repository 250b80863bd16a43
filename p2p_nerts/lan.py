"""What the network lobby needs from the LAN: a port, as ``session`` is a table's.

The UI never imports ``net`` or ``peer`` (the layers depend inward), so the lobby
is written against these two protocols and ``cli`` hands in an object built
on ``net`` that fits them (``peer.tables.LanTables``; ``net.discovery.TableAd``
already fits :class:`TableListing`). Tests hand in a fake and drive the lobby without
sockets.

Failures are plain exceptions with a line for the player, so that no ``net``
error type leaks into the UI: ``ConnectionError`` when a table cannot be
found, reached, joined or opened (a missing or wrong table code included),
``ValueError`` when typed text is not an address or not a table code.

Events (an evening's tournament) are a port of their own, :class:`Events`
(``peer.event_lobby.LanEvents``): a lobby without it shows tables only.

A table code is the text the players agreed on, as typed; ``None`` is no
code. Only ``net`` knows what a valid code is, so the lobby asks
:meth:`Network.check_code` rather than keeping a copy of the rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from .game.variants import Variants
from .session import Session


class TableListing(Protocol):
    """One table as the LAN advertises it."""

    @property
    def name(self) -> str: ...
    @property
    def instance(self) -> str:
        """Unique on the LAN (two tables may share a name): how the lobby keeps its place."""
        ...
    @property
    def seats_taken(self) -> int: ...
    @property
    def seats_total(self) -> int: ...
    @property
    def variant(self) -> str: ...
    @property
    def protocol_version(self) -> int: ...
    @property
    def needs_code(self) -> bool: ...
    @property
    def host(self) -> str:
        """The host player's name ("" from a host that does not say)."""
        ...
    @property
    def fingerprint(self) -> str:
        """The host's key fingerprint, lowercase hex: tells apart two tables of one name."""
        ...
    @property
    def state(self) -> str:
        """``lobby`` (seating players), ``playing``, ``break`` (between rounds) or ``over``."""
        ...
    @property
    def next_deal(self) -> int | None:
        """Between rounds, when the host deals again (Unix time, s); None: a person deals."""
        ...


class Network(Protocol):
    """The tables on the LAN, and the ways to sit at one."""

    @property
    def version(self) -> int:
        """The protocol version this program speaks (a table on another cannot be joined)."""
        ...

    @property
    def max_name(self) -> int:
        """The longest table name the LAN carries."""
        ...

    @property
    def tables(self) -> Sequence[TableListing]:
        """The tables advertised now, in display order."""
        ...

    async def browse(self, changed: Callable[[], None]) -> None:
        """Start looking; ``changed()`` runs whenever a table appears, changes or goes."""
        ...

    async def join(self, table: TableListing, code: str | None, *,
                   wait: bool = False) -> Session:
        """A seat at a listed table (the latest ad of that instance; gone: ConnectionError).

        With ``wait``, a full table is joined all the same, and the seat taken
        as soon as one frees up (``nerts join --wait``).
        """
        ...

    def address(self, text: str) -> tuple[str, int]:
        """``HOST:PORT`` typed by the player, as an address; ValueError says what is wrong."""
        ...

    def check_code(self, text: str) -> None:
        """Whether typed text can be a table code; ValueError says what is wrong."""
        ...

    def label(self, table: TableListing) -> str:
        """``Main table@22d7``: how the lobby names a listed table, in the form
        ``nerts join`` takes back (the start of the host's fingerprint, longer
        where another table of that name shares it), so that what a player
        sees can be typed."""
        ...

    async def watch(self, table: TableListing, code: str | None) -> Session:
        """A read-only view of a listed table: no seat, every entry checked."""
        ...

    async def join_address(self, address: tuple[str, int], code: str | None) -> Session:
        """A seat at the table whose host listens at ``address``."""
        ...

    async def host(self, name: str, variants: Variants, code: str | None, *,
                   countdown: float, drop_after: float) -> Session:
        """Open a new table, advertised on the LAN, with the first seat ours.

        With a ``code``, only players who give it get in (and the table's
        traffic is encrypted); the ad says a code is needed, never the code.
        ``countdown`` and ``drop_after`` are the table's clocks, which every
        seat plays by.
        """
        ...

    async def close(self) -> None:
        """Stop looking (the sessions handed out live on by themselves)."""
        ...


class EventListing(Protocol):
    """An event (an evening's tournament) as the LAN advertises it."""

    @property
    def name(self) -> str: ...
    @property
    def instance(self) -> str:
        """Unique on the LAN: how the lobby keeps its place (never a table's)."""
        ...
    @property
    def fingerprint(self) -> str:
        """The organiser's key fingerprint, lowercase hex."""
        ...
    @property
    def needs_code(self) -> bool: ...
    @property
    def game(self) -> int:
        """The last game seated (0: registering for the first)."""
        ...
    @property
    def games(self) -> int: ...


class EventPlace(Protocol):
    """This player's place at an event they registered for (:meth:`Events.register`)."""

    @property
    def registered(self) -> bool:
        """The organiser took the registration (this machine heard it back, signed)."""
        ...
    @property
    def refused(self) -> str | None:
        """Why the organiser refused it, if it did."""
        ...
    @property
    def seat_line(self) -> str | None:
        """``Game 2: table C, with Ana, Ben``: where the game under way seats the
        player (None: not seated in it, or no game yet)."""
        ...
    async def sit(self) -> Session:
        """A seat at the table the game under way seats the player at (ConnectionError
        when it cannot be found or joined)."""
        ...
    def close(self) -> None:
        """Stop following the event."""
        ...


class Events(Protocol):
    """The events on the LAN, and registering for one."""

    @property
    def events(self) -> Sequence[EventListing]: ...

    async def browse_events(self, changed: Callable[[], None]) -> None:
        """Start looking; ``changed()`` runs whenever an event appears, changes or goes."""
        ...

    def event_label(self, event: EventListing) -> str:
        """``Friday cup@22d7``: as ``nerts event join`` takes it."""
        ...

    async def register(self, event: EventListing, code: str | None,
                       changed: Callable[[], None]) -> EventPlace:
        """Register for ``event`` (with its code, if it has one) and follow it,
        ``changed()`` after each news; ConnectionError (one line) when refused or
        out of reach."""
        ...

    async def close_events(self) -> None:
        """Stop looking, and following every event registered for."""
        ...


class EventDesk(Protocol):
    """The organiser's machine at its event (``nerts event open`` at a terminal): what
    its screen shows and the one thing it does, starting the next game."""

    @property
    def title(self) -> str:
        """``Friday cup · game 1 of 3 · port 40123``."""
        ...
    def players(self) -> Sequence[tuple[str, str, bool]]:
        """Each registered player: name, key fingerprint, connected now."""
        ...
    def tables(self) -> Sequence[str]:
        """The game under way, a line per table (its players and what it is doing)."""
        ...
    def start_game(self, *, force: bool = False) -> str:
        """Seat the next game among the players connected: what to say of it. ValueError
        (one line) when it cannot (with ``force``, tables still playing are ended)."""
        ...
    def subscribe(self, changed: Callable[[], None]) -> None:
        """``changed()`` after each registration, connection, seating or result."""
        ...
