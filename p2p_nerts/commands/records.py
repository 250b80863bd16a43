"""``nerts history``, ``export``, ``verify``, ``replay`` and ``event``: thin shells.

Each reads the player's store (or a record file), hands the bytes to the pure
code beside this module, and prints; anything wrong is one line on stderr and
exit status 1 (2 for bad usage, argparse's convention).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from ..event.entries import EventError
from ..event.export import MAX_EXPORT, is_export, verify_export
from ..lines import fail
from ..net.interfaces import Interfaces, interfaces_setting
from ..peer import results
from ..protocol.identity import default_data_dir
from ..records.history import history_text, load_game, round_to_replay, statistics
from ..records.record import MAX_RECORD, RecordError, decode
from ..records.replay import RoundReplay
from ..records.standings import EVENT_HOURS, standings_csv, standings_json, standings_text
from ..records.verify import verify
from ..store import DB_FILE, Store, StoreError, own_records
from .event import EVENT_COMMANDS, FIND_EVENT, add_event_commands, run_event_command
from .wall import add_serve_command, run_serve

RECORD_COMMANDS = ("history", "export", "verify", "replay", "event")


def add_record_commands(sub: Any) -> None:
    """The commands on ``nerts``'s subparsers (``sub``: argparse's subparsers action)."""
    history = sub.add_parser("history", help="the games you played, newest first, and your "
                                             "statistics")
    history.add_argument("--json", action="store_true",
                         help="one JSON object: the games and the statistics")
    _data_dir(history)
    export = sub.add_parser("export", help="write a game's signed record to a file")
    export.add_argument("game", type=int, metavar="GAME", help="its number in nerts history")
    export.add_argument("file", type=Path, metavar="FILE")
    _data_dir(export)
    again = sub.add_parser("replay", help="watch a round of a game again, move by move")
    again.add_argument("game", type=int, metavar="GAME", help="its number in nerts history")
    again.add_argument("--round", type=int, default=None, metavar="N",
                       help="which round (default: the last)")
    _data_dir(again)
    event = sub.add_parser("event", help="standings across the tables on the network: "
                                         "every game's record verified, then counted",
                           description="With no COMMAND: the standings across the tables "
                                       "on the network, every game's record verified, then "
                                       "counted. open and join run an event and take part "
                                       "in one.")
    event.add_argument("--hours", type=float, default=EVENT_HOURS,
                       help=f"count games that ended this many hours ago or later "
                            f"(default {EVENT_HOURS:g})")
    shown = event.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="one JSON object")
    shown.add_argument("--csv", action="store_true", help="CSV: place, name, fingerprint, "
                                                          "games, wins, points")
    event.add_argument("--watch", type=float, default=None, metavar="SECONDS",
                       help="ask again every SECONDS and show the standings as they change")
    # No default here: join's (FIND_EVENT) is not the standings' (results.LISTEN).
    event.add_argument("--listen", type=float, default=None, metavar="SECONDS",
                       help="how long to look for players on the network "
                            f"(default {results.LISTEN:g}; join: for the event, "
                            f"{FIND_EVENT:g})")
    event.add_argument("--interfaces", metavar="LIST", default=argparse.SUPPRESS,
                       help="mDNS interfaces: all, default or IP addresses "
                            "(env NERTS_INTERFACES)")
    _data_dir(event)
    events = event.add_subparsers(dest="event_command", metavar="COMMAND")
    add_event_commands(events)
    add_serve_command(events)
    check = sub.add_parser("verify", help="check a game record: signatures, shuffles, "
                                          "every move; print its summary (a game left "
                                          "early: as far as it went); or an event's "
                                          "export: every seating and record, and its "
                                          "standings")
    check.add_argument("file", type=Path, metavar="FILE")


def _data_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", type=Path, default=None, metavar="DIR",
                        help="the player's data dir (default: $NERTS_HOME, else "
                             "~/.local/share/p2p-nerts)")


def run_record_command(args: argparse.Namespace) -> int:
    try:
        if args.command == "verify":
            return _verify(args.file)
        if args.command == "event":
            return _event(args)
        with Store((args.data_dir or default_data_dir()) / DB_FILE) as store:
            if args.command == "history":
                return _history(store, args.json)
            if args.command == "replay":
                game = load_game(store, args.game)
            else:
                return _export(store, args.game, args.file)
        return _replay(round_to_replay(game, args.round))
    except (StoreError, RecordError) as exc:
        return _fail(str(exc))


def _replay(chosen: RoundReplay) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _fail("nerts replay plays in a terminal: run it in one")
    # Imported here so that the other commands never load the terminal UI.
    from ..ui.replay import ReplayView

    try:
        asyncio.run(ReplayView(chosen).run())
    except (EOFError, KeyboardInterrupt):  # the terminal went away
        return 130
    return 0


def _event(args: argparse.Namespace) -> int:
    if args.event_command in EVENT_COMMANDS:
        return run_event_command(args)
    if args.listen is None:
        args.listen = results.LISTEN
    if not 0 < args.hours <= 24 * 366:
        raise ValueError("--hours must be above 0 and at most a year")
    if args.watch is not None and not 1 <= args.watch <= 3600:
        raise ValueError("--watch must be 1..3600 seconds")
    if not 0 < args.listen <= 60:
        raise ValueError("--listen must be above 0 and at most 60 seconds")
    interfaces = interfaces_setting(args.interfaces)
    data_dir = args.data_dir or default_data_dir()
    if args.event_command == "serve":
        return run_serve(args, interfaces, data_dir)
    try:
        return asyncio.run(_standings(args, interfaces, data_dir))
    except OSError as exc:  # mDNS could not start on these interfaces
        return _fail(f"cannot look for results on the network: {exc.strerror or exc}")
    except KeyboardInterrupt:
        return 130


INCOMPLETE = 3
"""``nerts event``'s exit status when it could not count everything it should have:
a player heard of but not asked, a table seen whose games it could not fetch, or
nobody on the network answering at all."""
_NOBODY = ("nobody on the network answered (is multicast blocked here?): only this "
           "computer's games are counted")


async def _standings(args: argparse.Namespace, interfaces: Interfaces, data_dir: Path) -> int:
    shown = None
    while True:
        since = time.time() - args.hours * 3600
        missed: list[tuple[str, str]] = []
        seen = await results.look(interfaces, args.listen)
        standings = await results.tallied(seen.servers, since,
                                          partial(own_records, data_dir), missed)
        tables = results.unfetched(seen)
        gaps = [f"NOT COUNTED (from {where}): could not fetch its games: {why}"
                for where, why in missed]
        gaps += [f"NOT COUNTED: table {table} seen, its games not fetched: {why}"
                 for table, why in tables]
        if not seen.servers:
            gaps.append(f"NOT COMPLETE: {_NOBODY}")
        if args.json:
            text = json.dumps(standings_json(standings) | {
                "incomplete": [{"from": where, "why": why} for where, why in missed]
                + [{"table": table, "why": why} for table, why in tables]
                + ([{"from": None, "why": _NOBODY}] if not seen.servers else [])})
        elif args.csv:
            text = standings_csv(standings).rstrip("\n")
        else:
            text = "\n".join([*standings_text(standings), *gaps])
        if text != shown:
            print(text, flush=True)
            shown = text
        if args.csv and gaps:
            print("\n".join(gaps), file=sys.stderr)
        if args.watch is None:
            return INCOMPLETE if gaps else 0
        await asyncio.sleep(args.watch)


def _history(store: Store, as_json: bool) -> int:
    games = store.games()
    me = games[0][1]["me"] if games else ""
    if as_json:
        print(json.dumps({"me": me, "games": [{"number": n, **g} for n, g in games],
                          "statistics": statistics([g for _n, g in games], me)}))
    else:
        print("\n".join(history_text(games, me)))
    return 0


def _export(store: Store, number: int, file: Path) -> int:
    data = store.game_record(number)
    if data is None:
        return _fail(f"there is no game #{number} (nerts history lists them)")
    try:
        file.write_bytes(data)
    except OSError as exc:
        return _fail(f"cannot write {file}: {exc.strerror or exc}")
    print(f"game #{number} written to {file}", file=sys.stderr)
    return 0


def _verify(file: Path) -> int:
    try:
        with file.open("rb") as f:
            data = f.read(MAX_RECORD + 1)  # no further: whatever the file is, it ends
            if is_export(data):  # a whole event: its records, seatings and standings
                data += f.read(MAX_EXPORT + 1 - len(data))
    except OSError as exc:
        return _fail(f"cannot read {file}: {exc.strerror or exc}")
    if is_export(data):
        try:
            event = verify_export(data)
        except EventError as exc:
            return _fail(f"{file}: {exc}")
        print("\n".join(event.lines()))
        print(f"{file}: verified: {event.summary()}", file=sys.stderr)
        return 0
    try:
        done = verify(decode(data), unfinished=True)
    except RecordError as exc:
        return _fail(f"{file}: {exc}")
    for line in done.lines:
        print(json.dumps(line))
    if not done.game_over:  # left before its end: honest as far as it went
        print(f"{file}: unfinished: verified to round {done.verified_to}: "
              f"{done.entries} signed entries", file=sys.stderr)
        return 0
    final = done.lines[-1]
    print(f"{file}: verified: {done.entries} signed entries, {final['rounds']} rounds, "
          f"{final['winner']} won", file=sys.stderr)
    return 0


def _fail(message: str) -> int:
    return fail(message)
