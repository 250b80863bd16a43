"""``nerts event open`` and ``nerts event join``: running an event, and taking part in one.

``nerts event`` alone is still the standings of the tables on the network
(``commands.records``); these are its subcommands. ``open`` runs the event
from this machine (``peer.event_host``): it journals it in the data dir
(``--resume`` goes on with it after a crash), serves it to the players and
advertises it on mDNS; ``--start-with N`` seats each game by itself once N
registered players are connected and the last game is over (an organiser
at no keyboard: a test, a lab). ``join`` registers this player
(``peer.event_seat``) and follows the event; ``--bot`` plays each game's
table by itself. Either one prints the standings as JSON once the last game
is over.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from ..event.book import EventBook
from ..event.entries import MAX_GAMES, EventError
from ..event.export import export
from ..game.bot import DEFAULT_SKILL, SKILLS
from ..lines import fail
from ..net.channel import normalize_code
from ..net.discovery import find_event
from ..net.interfaces import Interfaces, interfaces_setting, listen_addresses
from ..net.logs import setup_logging
from ..peer.event_host import EventSettings, Organiser, OrganiserDesk
from ..peer.event_seat import EventLink, take_part
from ..peer.headless import table_bot
from ..peer.node import Endpoint
from ..peer.tables import parse_target
from ..protocol.identity import IDENTITY_FILE, IdentityError, default_data_dir, load_or_create
from ..store import DB_FILE, Store, StoreError
from ..waits import wait_event
from .play import LOG_FILE, run_table

__all__ = ["EVENT_COMMANDS", "FIND_EVENT", "JOURNAL", "add_event_commands", "lobby_join",
           "run_event_command"]

EVENT_COMMANDS = ("open", "join")
FIND_EVENT = 3.0
"""Seconds ``nerts event join`` looks for the event on the network, unless told."""
JOURNAL = "event.journal"
"""The organiser's journal of its event, in its data dir (unless ``--journal``)."""
_log = logging.getLogger("nerts")
_CHECK = 0.25  # seconds between a headless organiser's looks at who is connected


def add_event_commands(events: Any) -> None:
    """``open`` and ``join`` on ``nerts event``'s subparsers (``events``)."""
    opening = events.add_parser("open", help="run an event from this machine: players "
                                             "register, each game is seated and its tables "
                                             "deal themselves")
    opening.add_argument("name", metavar="NAME", help="the event's name, as lobbies show it")
    opening.add_argument("--games", type=int, default=3, metavar="N",
                         help=f"games in the event, 1..{MAX_GAMES} (3)")
    opening.add_argument("--table-size", type=int, default=4, metavar="N",
                         help="players at a table, 3..5 (4)")
    opening.add_argument("--target", type=int, default=100, metavar="T",
                         help="a game is played until someone reaches T points (100)")
    opening.add_argument("--turn-up", type=int, default=120, metavar="S",
                         help="seconds a seated player has to sit down before the table "
                              "deals without them (120)")
    opening.add_argument("--resume", action="store_true",
                         help="go on with the event journaled here (after a crash)")
    opening.add_argument("--journal", type=Path, metavar="FILE",
                         help=f"where the event is journaled (default: {JOURNAL} in the "
                              "data dir)")
    opening.add_argument("--start-with", type=int, metavar="N",
                         help="no keyboard: seat each game by itself once N registered "
                              "players are connected and the last game is over")
    opening.add_argument("--headless", action="store_true",
                         help="no screen: log lines on stderr, the games seated by "
                              "--start-with or not at all")
    opening.add_argument("--bind", default="", metavar="ADDR",
                         help="address(es) to serve the event on (default: the "
                              "--interfaces addresses when given, else every interface)")
    opening.add_argument("--port", type=int, default=0, help="TCP port (default: any)")
    joining = events.add_parser("join", help="register for an event on the network and "
                                             "follow its seatings")
    joining.add_argument("event", metavar="NAME | HOST:PORT",
                         help="the event's name (found by mDNS), or its organiser's address")
    joining.add_argument("--bot", metavar="SKILL", nargs="?", const=DEFAULT_SKILL,
                         choices=tuple(SKILLS),
                         help="a computer player takes part, and goes to its tables by itself")
    joining.add_argument("--pace", type=float, default=1.0, metavar="F",
                         help="multiply the bot's think times (0.05: fast test games)")
    joining.add_argument("--seed", type=int, help="seeds the bot's choices")
    joining.add_argument("--headless", action="store_true",
                         help="no screen: the seatings in log lines (a terminal otherwise "
                              "opens the lobby, registered for the event)")
    # No default of its own (SUPPRESS): nerts event's, given before the command,
    # holds unless given here too; neither given, FIND_EVENT.
    joining.add_argument("--listen", type=float, default=argparse.SUPPRESS, metavar="S",
                         help=f"how long to look for the event on the network ({FIND_EVENT:g})")
    for parser in (opening, joining):
        # A bad value is reported by the subcommand's parser, with its usage line.
        parser.set_defaults(usage_error=parser.error)
        parser.add_argument("--code", metavar="CODE",
                            help="the event's code: only those who know it register")
        parser.add_argument("--name", dest="player_name", metavar="NAME",
                            help="your display name (default: the one saved with your key)")
        # No default of their own (SUPPRESS), so that nerts event's, given before
        # the command, holds unless given here too.
        parser.add_argument("--data-dir", type=Path, metavar="DIR", default=argparse.SUPPRESS,
                            help="your key and records (default: $NERTS_HOME or the XDG "
                                 "data dir)")
        parser.add_argument("--interfaces", metavar="LIST", default=argparse.SUPPRESS,
                            help="interfaces for mDNS: all, default or IP addresses "
                                 "(env NERTS_INTERFACES)")
        parser.add_argument("--export", type=Path, metavar="FILE",
                            help="write the whole event there (every signed entry and game "
                                 "record, for nerts verify) once its last game is over, or "
                                 "as the organiser's screen quits")
        parser.add_argument("--summary", type=Path, metavar="FILE",
                            help="write the final standings there (one JSON line) instead "
                                 "of on stdout")
        parser.add_argument("-v", "--verbose", action="store_true",
                            help="log the network's details")


def lobby_join(args: argparse.Namespace) -> tuple[str, str | None] | None:
    """``nerts event join`` by a player at a terminal (no ``--bot``, no ``--headless``):
    the event and code to open the lobby registered for, where the seatings show and
    Enter takes the player to their table (``cli`` runs it, as the commands never
    load the UI); None for any other command. ValueError for the options the lobby,
    which plays as its own player, cannot honour."""
    if not (args.command == "event" and args.event_command == "join" and args.bot is None
            and not args.headless and sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    if args.data_dir is not None or args.player_name is not None:
        raise ValueError("at a terminal, nerts event join opens your lobby, as its own "
                         "player ($NERTS_HOME): --data-dir and --name are for --bot or "
                         "--headless")
    return args.event, args.code


def run_event_command(args: argparse.Namespace) -> int:
    """``nerts event open`` or ``join``: ValueError for bad usage, else the exit status."""
    if args.code is not None:
        try:
            normalize_code(args.code)
        except ValueError as exc:
            raise ValueError(f"--code: {exc}") from None
    if args.event_command == "open":
        if not 1 <= args.games <= MAX_GAMES:
            raise ValueError(f"--games must be 1..{MAX_GAMES}")
        if not 3 <= args.table_size <= 5:
            raise ValueError("--table-size must be 3..5")
        if not 1 <= args.target <= 10_000:
            raise ValueError("--target must be 1..10000")
        if not 0 <= args.turn_up <= 3600:
            raise ValueError("--turn-up must be 0..3600 seconds")
        if args.start_with is not None and not 2 <= args.start_with <= 500:
            raise ValueError("--start-with must be 2..500 players")
        if not 0 <= args.port <= 65535:
            raise ValueError("--port must be 0..65535")
    else:
        if not 0 < args.pace <= 100:
            raise ValueError("--pace must be above 0 and at most 100")
        if args.listen is None:  # given neither before join nor after it
            args.listen = FIND_EVENT
        if not 0 < args.listen <= 60:
            raise ValueError("--listen must be above 0 and at most 60 seconds")
    interfaces = interfaces_setting(args.interfaces)
    data_dir = args.data_dir or default_data_dir()
    try:
        identity = load_or_create(data_dir / IDENTITY_FILE, args.player_name,
                                  kind="Bot" if getattr(args, "bot", None) else "Player")
    except IdentityError as exc:
        return fail(str(exc))
    screen = (args.event_command == "open" and args.start_with is None
              and not args.headless and sys.stdin.isatty() and sys.stdout.isatty())
    # Under a screen, log lines would tear it: they go to the data dir's log file.
    setup_logging(identity.name, args.verbose, data_dir / LOG_FILE if screen else None)
    if args.event_command == "open":
        return run_table(_organise(args, identity, interfaces, data_dir, screen=screen),
                         refused=(EventError,))
    try:
        store = Store(data_dir / DB_FILE)
    except StoreError as exc:
        return fail(str(exc))
    with store:
        return run_table(_take_part(args, identity, interfaces, store), refused=(EventError,))


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    return stop


async def _organise(args: argparse.Namespace, identity: Any, interfaces: Interfaces,
                    data_dir: Path, *, screen: bool) -> int:
    settings = EventSettings(args.name, args.games, args.table_size, args.target, args.code,
                             args.turn_up)
    organiser = Organiser.open(identity, args.journal or data_dir / JOURNAL, settings,
                               resume=args.resume)
    organiser.subscribe(_Narrator(organiser).changed)  # players may come back at once
    try:
        await organiser.start(interfaces, bind=listen_addresses(args.bind, interfaces),
                              port=args.port)
        opened = organiser.opened
        _log.info("event %r %s on port %d: %d registered, game %d of %d", opened.name,
                  "resumed" if args.resume else "open", organiser.port,
                  len(organiser.registered), organiser.game, opened.games)
        if screen:
            # Imported here so that the headless commands never load the terminal UI.
            from ..ui.desk import EventScreen

            await EventScreen(OrganiserDesk(organiser)).run()
            return _exported(args, organiser.book)
        stop = _stop_on_signals()
        if args.start_with is None:
            await stop.wait()
            return 0
        while not stop.is_set():
            if _over(organiser):
                return _exported(args, organiser.book) or _final(
                    args, organiser.book.wall()["standings"])
            deserted = organiser.deserted()
            if deserted and deserted == organiser.unplayed():
                _log.warning("game %d: table(s) %s never opened; the game ends without them",
                             organiser.game, ", ".join(deserted))
                organiser.end_game()
            if _ready(organiser, args.start_with):
                seated = organiser.start_game()
                _log.info("game %d seated: %s", seated.game, "; ".join(
                    f"table {t.letter}: " + ", ".join(
                        organiser.book.registrations[k].name for k in t.seats)
                    for t in seated.tables))
            await wait_event(stop, _CHECK)
        return 0
    finally:
        await organiser.close()


def _over(organiser: Organiser) -> bool:
    book = organiser.book
    return organiser.game >= organiser.opened.games and book.games[organiser.game].finished


def _ready(organiser: Organiser, start_with: int) -> bool:
    """A headless organiser seats the next game now."""
    game = organiser.game
    return (game < organiser.opened.games and len(organiser.connected) >= start_with
            and (game == 0 or organiser.book.games[game].finished))


class _Narrator:
    """The organiser's log: each registration, connection and result once."""

    def __init__(self, organiser: Organiser) -> None:
        self._organiser = organiser
        self._said: tuple[int, int, int] = (-1, -1, -1)

    def changed(self) -> None:
        o = self._organiser
        now = (len(o.registered), len(o.connected), len(o.book.results()))
        if now != self._said:
            self._said = now
            _log.info("%d registered, %d connected, %d table results", *now)


async def _take_part(args: argparse.Namespace, identity: Any, interfaces: Interfaces,
                     store: Store) -> int:
    address = parse_target(args.event)
    if address is None:
        ad = await find_event(args.event, interfaces, args.listen)
        if not ad.addresses:
            return fail(f"the event {ad.label} gave no address")
        address = (ad.addresses[0], ad.port)
    changed = asyncio.Event()
    link = EventLink(identity, address, register=True, code=args.code, store=store,
                     changed=changed.set)
    bot = table_bot(args.bot, pace=args.pace, seed=args.seed) if args.bot else None
    taking_part = asyncio.ensure_future(take_part(
        link, bot, changed, interfaces=interfaces,
        endpoint=Endpoint(listen_addresses("", interfaces)), store=store))
    stop = asyncio.ensure_future(_stop_on_signals().wait())
    try:
        await asyncio.wait([taking_part, stop], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
        if not taking_part.done():
            taking_part.cancel()
            await asyncio.gather(taking_part, return_exceptions=True)
    if not taking_part.cancelled() and taking_part.result():
        return _exported(args, link.book) or _final(args, link.book.wall()["standings"])
    return 0


def _exported(args: argparse.Namespace, book: EventBook) -> int:
    """``--export``: the whole event, written as one file; 0, or 1 with a line."""
    if args.export is None:
        return 0
    try:
        args.export.write_bytes(export(book))
    except OSError as exc:
        return fail(f"cannot write {args.export}: {exc.strerror or exc}")
    _log.info("the event is written to %s (nerts verify checks it)", args.export)
    return 0


def _final(args: argparse.Namespace, standings: list[dict[str, Any]]) -> int:
    """The event is over: its standings, one JSON line (``--summary``, else stdout)."""
    line = json.dumps(standings)
    if args.summary is None:
        print(line, flush=True)
        return 0
    try:
        args.summary.write_text(line + "\n", encoding="utf-8")
    except OSError as exc:
        return fail(f"cannot write {args.summary}: {exc.strerror or exc}")
    return 0
