"""``nerts host/join/bot/watch``: parsing and running a networked seat (or a spectator).

``cli.py`` only adds these parsers and dispatches here, handing in the
terminal screen (``net`` never imports ``ui``). A usage error is a
``ValueError`` (cli turns it into exit status 2); a table that cannot be
found, joined or opened (a wrong or missing table code included) is one line
on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import time
import unicodedata
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from ..game.bot import DEFAULT_SKILL, SKILLS
from ..game.variants import Variants
from ..lines import fail
from ..net.channel import normalize_code
from ..net.discovery import MAX_NAME_CHARS, DiscoveryError, find_table
from ..net.interfaces import Interfaces, interfaces_setting, listen_addresses
from ..net.link import LinkError
from ..net.logs import setup_logging
from ..peer.headless import LINGER, drive_partner, run_headless, table_bot
from ..peer.node import Endpoint, NetSession, TableConfig
from ..peer.results import serving_results
from ..peer.tables import join_found, parse_target
from ..protocol.identity import (
    IDENTITY_FILE,
    Identity,
    IdentityError,
    clean_name,
    default_data_dir,
    load_or_create,
)
from ..protocol.replica import COUNTDOWN, DROP_AFTER, Phase, Replica, clocks_problem
from ..records.history import finished, left_line
from ..session import Session
from ..store import DB_FILE, Store, StoreBusy, StoreError

__all__ = ["LOG_FILE", "NET_COMMANDS", "CannotPlay", "Screen", "Terminal", "add_net_commands",
           "run_net", "run_table", "setup_logging"]

NET_COMMANDS = ("host", "join", "bot", "watch")
FIND_TIMEOUT = 5.0
LOG_FILE = "nerts.log"
MAX_BOT_DIRS = 64
MAX_LINGER = 86400.0
"""Longest ``--linger``: a day, as long as an evening's standings are wanted."""


def add_net_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                     add_variant_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the three subcommands to ``nerts``' subparsers."""
    host = sub.add_parser("host", help="open a table on the LAN and take the first seat")
    _seat_args(host)
    _partner_arg(host)
    host.add_argument("--table-name", metavar="NAME",
                      help=f"name shown in lobbies (at most {MAX_NAME_CHARS} characters; "
                           "default: \"<name>'s table\")")
    host.add_argument("--seats", type=int, default=8, metavar="N",
                      help="seats at the table, 2..8 (8)")
    host.add_argument("--auto-start", type=int, metavar="N",
                      help="start round 1 once N players are seated")
    host.add_argument("--auto-next", type=float, metavar="S",
                      help="start the next round S seconds after one ends")
    host.add_argument("--countdown", type=float, default=COUNTDOWN, metavar="S",
                      help=f"seconds between the deal and the first move, for every seat "
                           f"({COUNTDOWN:g})")
    host.add_argument("--drop-after", type=float, default=DROP_AFTER, metavar="S",
                      help=f"a seat silent this long leaves the round, for every seat "
                           f"({DROP_AFTER:g})")
    add_variant_args(host)
    for name, what in (("join", "take a seat at a table on the LAN"),
                       ("bot", "seat a computer player at a table (join --headless --bot)"),
                       ("watch", "watch a table without a seat (read-only; a table with a "
                                 "code needs it)")):
        parser = sub.add_parser(name, help=what)
        parser.add_argument("table", nargs="?", metavar="TABLE | HOST:PORT",
                            help="a table's name, its start or any part of it, any case "
                                 "(found by mDNS; default: the only table), or its host's "
                                 "address")
        _seat_args(parser, bot=name == "bot", watch=name == "watch")
        if name == "bot":
            parser.add_argument("--skill", dest="bot", choices=tuple(SKILLS),
                                help=f"how well it plays: {'|'.join(SKILLS)} "
                                     f"(default {DEFAULT_SKILL})")
        elif name == "join":
            _partner_arg(parser)
        if name != "watch":
            parser.add_argument("--wait", action="store_true",
                                help="at a full table, wait for a free seat instead of leaving")
        parser.add_argument("--find-timeout", type=float, default=FIND_TIMEOUT, metavar="S",
                            help=f"how long to look for the table ({FIND_TIMEOUT:g} s)")
        for option in _HOSTS_CLOCKS:
            parser.add_argument(option, action=_HostsOnly, default=argparse.SUPPRESS,
                                help=argparse.SUPPRESS)


def _partner_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--partner", metavar="SKILL", choices=tuple(SKILLS),
                   help="at a share-a-deck table, a computer player plays your tableau with "
                        "you (when nobody sits beside you)")


_HOSTS_CLOCKS = ("--countdown", "--drop-after")
"""The table's clocks: every seat plays by the host's (they travel in SETTINGS)."""


class _HostsOnly(argparse.Action):
    """Refuses a table clock given to a guest, saying whose it is.

    A guest's own value would do nothing (the host's SETTINGS decide), and
    these options once set each seat's own clock: a quiet no-op would let a
    player believe they had changed it.
    """

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        parser.error(f"{option_string} is the table's, set by its host "
                     f"(nerts host {option_string}): every seat plays by the host's")


def _seat_args(p: argparse.ArgumentParser, *, bot: bool = False, watch: bool = False) -> None:
    """The options of a seat. ``nerts bot`` is headless and a bot already: its help
    lists neither ``--headless`` nor ``--bot`` (``--skill`` says how well it plays),
    though it still takes both, as ``join`` does, so scripts written for ``join``
    run unchanged. A spectator (``watch``) has no seat: its help lists none of
    ``--bot``, ``--resume``, ``--seed`` and ``--pace``, which it refuses in a line
    saying why."""
    p.add_argument("--name", help="your display name (default: the one in your settings, "
                                  "else the one saved with your key)")
    p.add_argument("--data-dir", type=Path, metavar="DIR",
                   help="where your key and your tables' records live (default: $NERTS_HOME "
                        "or the XDG data dir; for nerts bot, a free bots/N dir in it: each bot "
                        "running is a player of its own)")
    p.add_argument("--bind", default="", metavar="ADDR",
                   help="address(es) to accept peers on, comma-separated (default: the "
                        "--interfaces addresses when given, else every interface)")
    p.add_argument("--port", type=int, default=0, help="TCP port to listen on (default: any)")
    p.add_argument("--advertise-port", type=int, metavar="PORT",
                   help="port other peers should dial (behind a relay or port forward)")
    p.add_argument("--interfaces", metavar="LIST", default=argparse.SUPPRESS,
                   help="interfaces for mDNS, and for the TCP listener unless --bind is "
                        "given: all, default or IP addresses (env NERTS_INTERFACES)")
    p.add_argument("--headless", action="store_true",
                   help=argparse.SUPPRESS if bot else
                   f"no screen: log lines on stderr (with a screen they go to {LOG_FILE} "
                   "in the data dir)")
    p.add_argument("--bot", metavar="SKILL", choices=tuple(SKILLS),
                   help=argparse.SUPPRESS if bot or watch else
                   f"a computer player ({'|'.join(SKILLS)}) plays this seat (headless)")
    p.add_argument("--pace", type=float, default=1.0, metavar="F",
                   help=argparse.SUPPRESS if watch else
                   "multiply the bot's think times (0.05: fast test games)")
    p.add_argument("--summary", type=Path, metavar="FILE",
                   help="write one JSON object per round, then the result")
    p.add_argument("--linger", type=float, default=LINGER, metavar="S",
                   help=f"headless: stay S seconds after the game ends (default {LINGER:g}), "
                        "serving its result to event standings; a signal ends it sooner")
    who = "the bot's choices" if bot else "the computer player's choices (--bot, --partner)"
    p.add_argument("--seed", type=int,
                   help=argparse.SUPPRESS if watch else
                   f"seeds {who}, not the deal: at a network table every seat draws "
                   "its own deck secret")
    p.add_argument("--code", metavar="CODE",
                   help="the table code: a host lets in only those who know it and encrypts "
                        "the table's traffic; a guest gives the table's code (env NERTS_CODE, "
                        "which other users of this computer cannot read, unlike the command line)")
    p.add_argument("--resume", action="store_true",
                   help=argparse.SUPPRESS if watch else
                   "go back to your last unfinished table after a crash")
    p.add_argument("-v", "--verbose", action="store_true", help="log the network's details")


Screen = Callable[[Session, str | None], Awaitable[None]]
"""Plays at a session in this terminal until the player quits. The second argument is
the table code it was opened or joined with: the session does not keep it, and the
host's screen shows it for reading out to the players who join."""
Terminal = Callable[[Path, str | None], tuple[Identity, Screen]]
"""Given the data dir and ``--name``: the player's identity and their screen (``cli``
provides it, so that ``net`` never imports the UI)."""


def run_net(args: argparse.Namespace, variants: Variants | None, terminal: Terminal) -> int:
    """Run ``host``/``join``/``bot``; ValueError for bad usage, else the exit status."""
    if args.command == "watch" and (args.bot or args.resume or args.seed is not None
                                    or args.pace != 1.0):
        raise ValueError("a spectator has no seat: --bot, --resume, --seed and --pace are "
                         "for join and bot")
    if args.command == "bot" or args.bot:
        args.headless = True
        args.bot = args.bot or DEFAULT_SKILL
    _check(args)
    interfaces = interfaces_setting(args.interfaces)
    summary = _open_summary(args)
    try:
        return _seat_and_play(args, variants, terminal, interfaces, summary)
    finally:
        if summary is not None:
            summary.close()


def _open_summary(args: argparse.Namespace) -> TextIO | None:
    """``--summary``, opened before anything else: a file that cannot be written is bad
    usage, and is found before a key or a table record is made."""
    if args.summary is None:
        return None
    try:
        # A resumed seat adds to its summary: the rounds before the crash are in it.
        file: TextIO = args.summary.open("a" if args.resume else "w", encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"--summary: cannot write {args.summary}: {exc.strerror or exc}"
                         ) from None
    return file


def _seat_and_play(args: argparse.Namespace, variants: Variants | None, terminal: Terminal,
                   interfaces: Interfaces, summary: TextIO | None) -> int:
    """The player, their store and their seat; then play until the table ends or they quit."""
    try:
        data_dir, store = _open_data(args)  # first: a busy data dir changes nothing
    except (StoreError, CannotPlay) as exc:
        return fail(str(exc))
    try:
        return _seat(args, data_dir, store, variants, terminal, interfaces, summary)
    finally:
        store.close()


def _open_data(args: argparse.Namespace) -> tuple[Path, Store]:
    """The seat's data dir and its store, which this process then holds.

    ``nerts bot`` without ``--data-dir`` is a player of its own, with its own
    key and journal, in the first free dir of ``bots/1``, ``bots/2``... of the
    player's data dir: any number of bots run beside the player's own seat on
    one machine. With ``--resume`` it takes the first free one that has an
    unfinished table: the bot that crashed.
    """
    if args.data_dir is not None or args.command != "bot":
        data_dir = args.data_dir or default_data_dir()
        return data_dir, Store(data_dir / DB_FILE)
    bots = default_data_dir() / "bots"
    for n in range(1, MAX_BOT_DIRS + 1):
        data_dir = bots / str(n)
        if args.resume and not data_dir.exists():
            break
        try:
            store = Store(data_dir / DB_FILE)
        except StoreBusy:
            continue
        try:
            if not args.resume or store.unfinished() is not None:
                return data_dir, store
        except StoreError:
            store.close()
            raise
        store.close()
    if args.resume:
        raise CannotPlay(f"no bot in {bots} has an unfinished table to go back to")
    raise CannotPlay(f"{MAX_BOT_DIRS} bots already run from {bots}: give this one "
                     "its own --data-dir")


def _seat(args: argparse.Namespace, data_dir: Path, store: Store, variants: Variants | None,
          terminal: Terminal, interfaces: Interfaces, summary: TextIO | None) -> int:
    screen: Screen | None = None
    try:
        if args.headless:
            identity = load_or_create(data_dir / IDENTITY_FILE, args.name,
                                      kind="Bot" if args.command == "bot" else "Player")
        else:
            identity, screen = terminal(data_dir, args.name)
    except (IdentityError, CannotPlay) as exc:
        return fail(str(exc))
    except (EOFError, KeyboardInterrupt):
        return 1
    setup_logging(identity.name, args.verbose, None if args.headless else data_dir / LOG_FILE)
    config = TableConfig(
        variants=variants or Variants(), countdown=getattr(args, "countdown", COUNTDOWN),
        drop_after=getattr(args, "drop_after", DROP_AFTER),
        auto_start=getattr(args, "auto_start", None), auto_next=getattr(args, "auto_next", None),
        max_seats=getattr(args, "seats", 8), code=args.code,
        wait_for_seat=getattr(args, "wait", False), views=not args.headless)
    endpoint = Endpoint(listen_addresses(args.bind, interfaces), args.port,
                        args.advertise_port)
    # Every seat serves its player's kept games to the LAN's standings views while it
    # runs, as the lobby does (a spectator's store is its player's too).
    return run_table(serving_results(
        store, identity, interfaces,
        _play(args, identity, config, endpoint, interfaces, store, summary, screen),
        bind=args.bind))


def run_table(play: Coroutine[Any, Any, int], *, where: str = "",
              refused: tuple[type[Exception], ...] = ()) -> int:
    """Play a networked table (or an event's tables) to its end: its exit status, or
    one line on stderr and 1 for what goes wrong (130 for Ctrl-C). ``where`` names
    the network in that line; ``refused``: more errors that are the user's to sort
    out, said alike."""
    theirs: tuple[type[Exception], ...] = (DiscoveryError, LinkError, CannotPlay, StoreError,
                                           *refused)
    try:
        return asyncio.run(play)
    except theirs as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"network error{where}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        return 130


class CannotPlay(Exception):
    """Something the player must sort out first (the message says what)."""


async def _play(args: argparse.Namespace, identity: Identity, config: TableConfig,
                endpoint: Endpoint, interfaces: Interfaces, store: Store,
                summary: TextIO | None, screen: Screen | None) -> int:
    name = getattr(args, "table_name", None) or _default_table_name(identity.name)
    if args.resume:
        session = await _resume(args, identity, config, endpoint, interfaces, store, name)
        logging.getLogger("nerts").info("back at table %r", session.table_name)
    elif args.command == "host":
        session = await NetSession.host(identity, config, endpoint, table_name=name,
                                        interfaces=interfaces, store=store)
        logging.getLogger("nerts").info("table %r open on port %d%s", name, session.port,
                                        "; joining needs the table code" if args.code else "")
    else:
        session = await _join(args, identity, config, endpoint, interfaces, store)
        logging.getLogger("nerts").info("%s table %r", "watching" if session.watching
                                        else "joined", session.table_name)
    if screen is not None:
        partner = (asyncio.ensure_future(
            drive_partner(session, table_bot(args.partner, pace=args.pace, seed=args.seed),
                          time.monotonic))
            if getattr(args, "partner", None) else None)
        await screen(session, args.code)
        if partner is not None:
            session.close()  # done already when the player left the table
            await partner  # it ends with the session
        if not session.watching:
            print(where_the_game_is(store, session.replica, args.command), flush=True)
        return 0
    bot = table_bot(args.bot, pace=args.pace, seed=args.seed) if args.bot else None
    return await run_headless(session, bot=bot, summary=summary, linger=args.linger)


def where_the_game_is(store: Store, replica: Replica, command: str) -> str:
    """The line said as the player leaves a networked table at their screen, as at a
    solo table (``records.history.left_line``): ``--resume`` goes on with a game
    dealt, not over, that is the store's unfinished table; the store holds all the
    session had to write by then. The game kept is the table's newest, but not one
    finished while this one goes on (the game before it, played again at the
    table)."""
    table_id, over = replica.table_id, replica.phase is Phase.OVER
    try:
        resumable = (replica.game_goes_on and (table := store.unfinished()) is not None
                     and table.table_id == table_id)
        kept = next((number for number, game in store.games()
                     if game.get("table_id") == table_id.hex()
                     and (over or not finished(game))), None)
    except StoreError as exc:
        return f"your history cannot be read: {exc}"
    return left_line(kept, resumable, command)


async def _resume(args: argparse.Namespace, identity: Identity, config: TableConfig,
                  endpoint: Endpoint, interfaces: Interfaces, store: Store,
                  table_name: str) -> NetSession:
    table = store.unfinished()
    if table is None:
        raise CannotPlay("there is no unfinished table to go back to")
    if store.solo(table.table_id) is not None:
        raise CannotPlay("your unfinished game is a solo one: nerts solo --resume goes on "
                         "with it")
    hosting = table.host_key == identity.public_key
    if hosting != (args.command == "host"):
        raise CannotPlay("you host your unfinished table: use nerts host --resume" if hosting
                         else "your unfinished table has another host: use nerts join --resume")
    return await NetSession.resume(identity, config, endpoint, store, table,
                                   table_name=table_name, interfaces=interfaces)


async def _join(args: argparse.Namespace, identity: Identity, config: TableConfig,
                endpoint: Endpoint, interfaces: Interfaces, store: Store) -> NetSession:
    """Join by address, or find the table by mDNS and try its addresses in turn."""
    address = parse_target(args.table)
    watch = args.command == "watch"
    if address is not None:
        if watch:
            return await NetSession.watch(identity, address, config, endpoint)
        return await NetSession.join(identity, address, config, endpoint, store=store)
    ad = await find_table(args.table, interfaces, args.find_timeout)
    return await join_found(identity, ad, config, endpoint, None if watch else store,
                            watch=watch)


def _default_table_name(name: str) -> str:
    return f"{name}'s table"[:MAX_NAME_CHARS].strip()


def _check(args: argparse.Namespace) -> None:
    """Every option's value, before anything is made (``args`` keeps the cleaned forms)."""
    if args.name is not None:
        try:
            args.name = clean_name(args.name)
        except ValueError as exc:
            raise ValueError(f"--name: {exc}") from None
    for option in ("port", "advertise_port"):
        value = getattr(args, option)
        if value is not None and not 0 <= value <= 65535:
            raise ValueError(f"--{option.replace('_', '-')} must be 0..65535")
    if args.code is None:
        args.code = os.environ.get("NERTS_CODE") or None
    if args.code is not None:
        try:
            normalize_code(args.code)
        except ValueError as exc:
            raise ValueError(f"--code: {exc}") from None
    if not 0 < args.pace <= 100:
        raise ValueError("--pace must be above 0 and at most 100")
    if not LINGER <= args.linger <= MAX_LINGER:
        raise ValueError(f"--linger must be {LINGER:g}..{MAX_LINGER:g} seconds")
    if getattr(args, "partner", None) and args.headless:
        raise ValueError("--partner plays beside a player at the screen; a headless --bot "
                         "seats its own partner")
    if args.command == "host":
        problem = clocks_problem(args.countdown, args.drop_after)  # what SETTINGS carries
        if problem is not None:
            raise ValueError(f"--countdown/--drop-after: {problem}")
        if not 2 <= args.seats <= 8:
            raise ValueError("--seats must be 2..8")
        if args.auto_start is not None and not 2 <= args.auto_start <= args.seats:
            raise ValueError("--auto-start must be 2..--seats: a table is 2 to 8 players")
        if args.auto_next is not None and not 0 <= args.auto_next <= 3600:
            raise ValueError("--auto-next must be 0..3600 seconds")
        if args.table_name is not None:
            name = unicodedata.normalize("NFC", args.table_name).strip()
            if not 0 < len(name) <= MAX_NAME_CHARS or not name.isprintable():
                raise ValueError(
                    f"--table-name must have 1 to {MAX_NAME_CHARS} printable characters")
            args.table_name = name
    elif not 0 < args.find_timeout <= 3600:
        raise ValueError("--find-timeout must be above 0 and at most 3600 seconds")
    elif args.resume and args.table:
        raise ValueError("--resume goes back to your last table: name no TABLE")
    if args.command != "host":
        parse_target(args.table)  # a HOST:PORT with a bad port, before any search
