"""``nerts history``, ``export``, ``verify`` and ``replay``: thin shells over records.

Each reads the player's store (or a record file), hands the bytes to the pure
code beside this module, and prints; anything wrong is one line on stderr and
exit status 1 (2 for bad usage, argparse's convention).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ..protocol.identity import default_data_dir
from ..store import DB_FILE, Store, StoreError
from .history import history_text, statistics
from .record import GameRecord, RecordError, decode
from .replay import RoundReplay, round_replay
from .verify import replay, verify

RECORD_COMMANDS = ("history", "export", "verify", "replay")


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
    check = sub.add_parser("verify", help="check a game record: signatures, shuffles, "
                                          "every move; print its summary")
    check.add_argument("file", type=Path, metavar="FILE")


def _data_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="the player's data dir (default: NERTS_HOME or ~/.p2p-nerts)")


def run_record_command(args: argparse.Namespace) -> int:
    try:
        if args.command == "verify":
            return _verify(args.file)
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


def load_game(store: Store, number: int) -> GameRecord:
    data = store.game_record(number)
    if data is None:
        raise RecordError(f"there is no game #{number} (nerts history lists them)")
    return decode(data)


def round_to_replay(record: GameRecord, number: int | None) -> RoundReplay:
    """Round ``number`` of the record's game (None: the last), ready to watch."""
    rounds = replay(record).rounds
    if not rounds:
        raise RecordError("no round of this game was scored")
    chosen = max(rounds) if number is None else number
    if chosen not in rounds:
        raise RecordError(f"there is no round {chosen}: this game has rounds "
                          f"{min(rounds)} to {max(rounds)}")
    return round_replay(rounds[chosen])


def _replay(chosen: RoundReplay) -> int:
    # Imported here so that the other commands never load the terminal UI.
    from ..ui.replay import ReplayView

    asyncio.run(ReplayView(chosen).run())
    return 0


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
        data = file.read_bytes()
    except OSError as exc:
        return _fail(f"cannot read {file}: {exc.strerror or exc}")
    try:
        done = verify(decode(data))
    except RecordError as exc:
        return _fail(f"{file}: {exc}")
    for line in done.lines:
        print(json.dumps(line))
    final = done.lines[-1]
    print(f"{file}: verified: {done.entries} signed entries, {final['rounds']} rounds, "
          f"{final['winner']} won", file=sys.stderr)
    return 0


def _fail(message: str) -> int:
    print(f"nerts: {message}", file=sys.stderr)
    return 1
