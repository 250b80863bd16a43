"""``nerts`` command line: parse, validate, and hand off to the right session.

``nerts`` alone opens the network lobby (the tables on the LAN; open one,
join one, or play solo). Every bad argument ends in one clear line on stderr
and exit status 2, never a traceback (argparse's own convention).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from . import __version__
from .commands.event import lobby_join
from .commands.play import (
    LOG_FILE,
    NET_COMMANDS,
    CannotPlay,
    Screen,
    add_net_commands,
    run_net,
    run_table,
    setup_logging,
)
from .commands.records import RECORD_COMMANDS, add_record_commands, run_record_command
from .game.bot import DEFAULT_SKILL, SKILLS
from .game.scoring import Match
from .game.simulate import RoundReport, SimConfig, simulate
from .game.variants import TEAMS, VariantError, Variants
from .lines import counted, fail, fitted
from .net.interfaces import interfaces_setting, listen_addresses
from .peer.event_lobby import LanEvents
from .peer.node import Endpoint
from .peer.results import serving_results
from .peer.tables import LanTables
from .protocol.identity import Identity, IdentityError, default_data_dir
from .records.history import left_line
from .session import SOLO_DELAY, LocalTable, Session, solo_table
from .store import DB_FILE, Store, StoreDamaged, StoreError

if TYPE_CHECKING:
    from .ui.config import Player


def add_variant_args(parser: argparse.ArgumentParser) -> None:
    """The variant flags shared by every command that starts a table."""
    g = parser.add_argument_group("variants (each one explained in docs/RULES.md)")
    g.add_argument("--stock-turn", type=int, choices=(1, 3), default=3,
                   help="cards turned from the stock at once (default 3)")
    g.add_argument("--strict-ties", action="store_true",
                   help="same-time plays on one place: only one stays (default: both stay)")
    g.add_argument("--lone-rotate", action="store_true",
                   help="a player stuck alone may move the top stock card to the bottom")
    g.add_argument("--no-penalty", action="store_true",
                   help="no -2 per card left in the Nerts pile (children's rules)")
    g.add_argument("--target", type=int, default=100, help="score that ends the game (100)")
    g.add_argument("--teams", choices=TEAMS, default="none",
                   help="pairs: partners add their scores (4, 6 or 8 players); share: two "
                        "players at each tableau, 3 or 4 tableaux (solo: a bot plays yours "
                        "with you); default none")
    g.add_argument("--jokers", action="store_true", help="each deck adds its two jokers")


def variants_from(args: argparse.Namespace) -> Variants:
    return Variants(
        stock_turn=args.stock_turn, strict_ties=args.strict_ties,
        lone_rotate=args.lone_rotate, penalty=not args.no_penalty, target=args.target,
        teams=args.teams, jokers=args.jokers,
    )


def _skills(text: str) -> tuple[str, ...]:
    skills = tuple(s.strip() for s in text.split(",") if s.strip())
    bad = [s for s in skills if s not in SKILLS]
    if not skills or bad:
        raise argparse.ArgumentTypeError(
            f"skill must be one or more of {', '.join(SKILLS)} (comma-separated)")
    return skills


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors fit a terminal as every line of ours does
    (``lines.fitted``); its subcommands' parsers are of its class."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, fitted(f"{self.prog}: error: {message}", sys.stderr) + "\n")


def version_line() -> str:
    """``nerts --version``: the version, and which build runs.

    The compiled build (``NERTS_COMPILE=1`` at install, see ``setup.py``) puts
    extension modules beside the sources, and Python imports them instead; so a
    module of the package loaded from one says the compiled build runs. By the
    time this is asked the command line has imported the engine and, through the
    session, the replica.
    """
    compiled = any(name.startswith("p2p_nerts.")
                   and (getattr(module, "__file__", None) or "").endswith(tuple(EXTENSION_SUFFIXES))
                   for name, module in list(sys.modules.items()))
    build = "compiled build (mypyc)" if compiled else "pure Python build"
    return f"nerts {__version__}, {build}"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="nerts", description="Nerts on your local network, no server needed. "
        "With no COMMAND: the network lobby, to open a table, join one or play solo.",
        epilog="The rules, every variant and the scoring: docs/RULES.md in the source; "
               "in the game, ? shows the keys and a page of rules.")
    # A command's own --interfaces has no default (argparse.SUPPRESS), so that this
    # one, given before the command, holds unless the command's is given too.
    parser.add_argument("--interfaces", metavar="LIST",
                        help="mDNS interfaces (and, for a table, where it listens): all, "
                             "default or IP addresses (env NERTS_INTERFACES); before or "
                             "after the command")
    parser.add_argument("--version", action="version", version=version_line(),
                        help="show the version and which build runs (compiled or pure), and exit")
    # Each command's parser is a _Parser too (argparse makes them of the root's class).
    sub: argparse._SubParsersAction[argparse.ArgumentParser] = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_Parser)

    sim = sub.add_parser("simulate", help="play whole games between bots, fast, in one process")
    sim.add_argument("--players", type=int, default=4, metavar="N",
                     help="2..8 (default 4; share-a-deck: 6 or 8)")
    sim.add_argument("--rounds", type=int, default=None,
                     help="rounds to play (default: play until someone reaches the target)")
    sim.add_argument("--seed", type=int, default=0,
                     help="seeds the whole game: the deals, the bots' choices and the "
                          "simulated delays (same seed and flags, same game)")
    sim.add_argument("--skill", type=_skills, default=(DEFAULT_SKILL,),
                     help=f"{'|'.join(SKILLS)}, or a comma list cycled over the seats")
    sim.add_argument("--max-delay", type=float, default=120.0, metavar="MS",
                     help="largest simulated network delay in ms (default 120)")
    sim.add_argument("--json", action="store_true", help="one JSON object per round, then totals")
    add_variant_args(sim)
    add_net_commands(sub, add_variant_args)

    solo = sub.add_parser("solo", help="play against computer players in this terminal")
    solo.add_argument("--bots", type=int, choices=range(1, 8), default=2, metavar="N",
                      help="computer players, 1..7 (default 2): each plays a tableau; "
                           "the table is 2 to 8 players (pairs: 4, 6 or 8; share-a-deck: "
                           "2 or 3 bot tableaux)")
    solo.add_argument("--skill", choices=SKILLS, default=DEFAULT_SKILL,
                      help=f"how well they play (default {DEFAULT_SKILL})")
    solo.add_argument("--seed", type=int, default=None,
                      help="seeds the deals and the computer players' choices: same seed "
                           "and flags, same game (not with --loopback)")
    solo.add_argument("--pace", type=float, default=1.0, metavar="F",
                      help="multiply the computer players' think times (0.05: fast test "
                           "games)")
    solo.add_argument("--resume", action="store_true",
                      help="go on with your unfinished solo game (left, or its terminal "
                           "closed): its own seats and rules, the next round")
    solo.add_argument("--loopback", action="store_true",
                      help="play over real sockets on 127.0.0.1, each computer player a peer "
                           "of its own, advertised nowhere (default: in this process, no "
                           "sockets at all)")
    add_variant_args(solo)
    add_record_commands(sub)
    # A usage error the checks after parsing find is reported as argparse reports its
    # own: by the command's parser, with that command's usage line.
    parser.set_defaults(usage_error=parser.error)
    for command in sub.choices.values():
        command.set_defaults(usage_error=command.error)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    usage_error: Callable[[str], NoReturn] = args.usage_error
    try:
        if args.command is None:
            return run_lobby(args)
        if args.command == "solo":
            return run_solo(args)
        if args.command == "simulate":
            return run_simulate(args)
        if args.command in RECORD_COMMANDS:
            if (event := lobby_join(args)) is not None:
                return run_lobby(args, event=event)
            return run_record_command(args)
        assert args.command in NET_COMMANDS
        if args.command != "bot":
            _headless_name(args)
        return run_net(args, variants_from(args) if args.command == "host" else None,
                       terminal_screen)
    except (VariantError, ValueError) as exc:
        usage_error(str(exc))


def run_solo(args: argparse.Namespace) -> int:
    """This terminal's player against ``--bots`` computer players: in process with no
    network, or (``--loopback``) as peers of their own over 127.0.0.1."""
    # Imported here so the headless commands never load the terminal UI.
    from .ui.app import run_app

    variants = variants_from(args)
    try:
        variants.check_players(1 + args.bots)  # a VariantError is a usage error
    except VariantError as exc:
        raise VariantError(f"{exc}: {SOLO_BOTS[variants.teams]}") from None
    if args.loopback and args.seed is not None:
        raise ValueError("--seed fixes the deals of a table in this process; over "
                         "--loopback every seat draws its own deck secret")
    if args.resume and (args.loopback or args.seed is not None):
        raise ValueError("--resume goes on with the game as it was dealt: no --loopback "
                         "or --seed")
    if not 0 < args.pace <= 100:
        raise ValueError("--pace must be above 0 and at most 100")
    if (missing := terminal_missing()) is not None:
        return _fail(missing)
    notes: list[str] = []
    try:
        store = _open_store(notes)  # first: a busy data dir asks nothing, changes nothing
    except (IdentityError, StoreError) as exc:
        return _fail(str(exc))
    table: LocalTable | None = None
    try:
        player = _player()
        if player is None:
            return 1
        if args.loopback:
            return run_loopback_solo(args, player, variants, store)
        if args.resume:
            if store is None:
                return _fail("no game to go on with: the database cannot be read")
            table = _resumed_solo(player.identity, store)
        else:
            table = solo_table(player.identity, bots=args.bots, skill=args.skill,
                               variants=variants, seed=args.seed, store=store,
                               pace=args.pace)
        run_app(table, player.config, [*notes, *player.notes])
    except StoreError as exc:
        return _fail(str(exc))
    except OSError as exc:  # the terminal went away (SIGHUP) as the screen was put back
        _say(f"nerts: the terminal went away: {exc.strerror or exc}")
    finally:
        if store is not None:
            store.close()
    if table is not None:
        _say(left_solo(table) if store is not None else NO_HISTORY + ": nothing kept")
    return 0


def _solo_kept(identity: Identity, store: Store, bots: int, skill: str,
               variants: Variants) -> Session:
    """A solo table dealt from the lobby, journaled and kept in ``store``."""
    return solo_table(identity, bots=bots, skill=skill, variants=variants, store=store)


def _resumed_solo(identity: Identity, store: Store) -> LocalTable:
    """The player's unfinished solo game, every seat back from its journal."""
    table = store.unfinished()
    if table is None:
        raise StoreError("there is no unfinished game to go back to: nerts solo starts one")
    if table.host_key != identity.public_key:
        raise StoreError("your unfinished table is someone else's: nerts join --resume "
                         "goes back to it")
    return LocalTable.resume(identity, store, table, delay=SOLO_DELAY)


def left_solo(table: LocalTable) -> str:
    """The one line said as the player leaves a solo table: where the game is now."""
    return left_line(table.kept, table.resumable, "solo")


def _say(line: str) -> None:
    """A line for the player, if their terminal is still there to show it."""
    with contextlib.suppress(OSError):
        print(line, flush=True)


#: What ``--bots`` makes a table the teams allow, said with a solo table's bad count.
SOLO_BOTS = {"none": "use --bots 1 to 7",
             "pairs": "use --bots 3, 5 or 7 (you and 3, 5 or 7 computer players)",
             "share": "use --bots 2 or 3 (their tableaux, two computer players at each, "
                      "and yours, one with you)"}


def run_loopback_solo(args: argparse.Namespace, player: Player, variants: Variants,
                      store: Store | None) -> int:
    """``nerts solo --loopback``: the screen at a table of peers on 127.0.0.1, the game
    kept in ``store`` flagged solo as a solo game in this process is; its log lines go
    to the data dir's log file, as a networked table's do under a screen."""
    from .peer.loopback import loopback_table
    from .ui.app import NertsApp

    setup_logging(player.identity.name, False, default_data_dir() / LOG_FILE)

    async def play() -> int:
        async with loopback_table(player.identity, bots=args.bots, skill=args.skill,
                                  variants=variants, store=store) as table:
            await NertsApp(table.session, player.config, player.notes).run()
        return 0

    return run_table(play(), where=" on 127.0.0.1")


def run_lobby(args: argparse.Namespace, *, event: tuple[str, str | None] | None = None) -> int:
    """``nerts`` alone: the network lobby, in this terminal, until the player quits;
    ``event``: an event's name and code, to register for as soon as it is heard
    (``nerts event join`` at a terminal)."""
    from .ui.app import NertsApp
    from .ui.browser import Browser

    interfaces = interfaces_setting(args.interfaces)
    if (missing := terminal_missing()) is not None:
        return _fail(missing)
    notes: list[str] = []
    try:
        store = _open_store(notes)  # first: a busy data dir asks nothing, changes nothing
    except (IdentityError, StoreError) as exc:
        return _fail(str(exc))
    try:
        player = _player()
        if player is None:
            return 1
        # Logs would tear the screen: they go to the data dir's log file.
        setup_logging(player.identity.name, False, default_data_dir() / LOG_FILE)
        tables = LanTables(player.identity, interfaces, store=store,
                           partner=player.config.partner)
        solo = None if store is None else functools.partial(_solo_kept, player.identity, store)
        events = LanEvents(player.identity, interfaces, store=store,
                           endpoint=Endpoint(listen_addresses("", interfaces)))
        lobby = Browser(player.identity, tables, history=store, results=tables.results,
                        solo=solo, events=events)
        if event is not None:
            lobby.register_when_heard(*event)
        app = NertsApp(None, player.config, [*notes, *player.notes], browser=lobby).run()
        asyncio.run(app if store is None
                    else serving_results(store, player.identity, interfaces, app))
    finally:
        if store is not None:
            store.close()
    return 0


NO_HISTORY = "played without a history"


def _open_store(notes: list[str]) -> Store | None:
    """The data dir's store, which this process then holds (one ``nerts`` per data dir).

    Raises IdentityError or StoreError (one line) if the dir cannot be used or
    another ``nerts`` holds it. A database that cannot be read is one line on
    stderr naming it and how to move it aside, and None: play starts without a
    history, and the screen says so once (``notes``).
    """
    from .protocol.identity import check_data_dir

    data_dir = default_data_dir()
    check_data_dir(data_dir)
    try:
        store = Store(data_dir / DB_FILE)
        try:
            store.check()
        except StoreDamaged:
            store.close()
            raise
    except StoreDamaged as exc:
        from .ui.config import shown

        _fail(str(exc))
        notes.append(f"No history this time: {shown(data_dir / DB_FILE)} is damaged")
        return None
    return store


def terminal_missing() -> str | None:
    """Why the game cannot be drawn here (stdin or stdout is not a terminal), or None."""
    if sys.stdin.isatty() and sys.stdout.isatty():
        return None
    which = "stdin" if not sys.stdin.isatty() else "stdout"
    return (f"the game needs a terminal, and {which} is not one; without a screen, "
            "play a seat with nerts host --headless, nerts join --headless or nerts bot")


def _fail(message: str) -> int:
    return fail(message)


def _player() -> Player | None:
    """The player at this terminal (asked for a name on the first run); None: could not."""
    from .protocol.identity import IdentityError
    from .ui.config import prepare_player

    try:
        return prepare_player(ask=input if sys.stdin.isatty() else None)
    except IdentityError as exc:
        print(f"nerts: {exc}", file=sys.stderr)
    except (EOFError, KeyboardInterrupt):
        pass
    return None


def _headless_name(args: argparse.Namespace) -> None:
    """A headless seat of ``host`` or ``join`` is the player's own: without ``--name``
    it takes the name in the player's settings, as their screen would."""
    if args.name is not None or not (args.headless or args.bot):
        return
    from .ui.config import config_path, load_config

    config, notes = load_config(config_path(args.data_dir))
    for note in notes:
        print(f"nerts: {note}", file=sys.stderr)
    args.name = config.name


def terminal_screen(data_dir: Path, name: str | None) -> tuple[Identity, Screen]:
    """The player and their full-screen table, for ``nerts host`` and ``nerts join``."""
    from .protocol.identity import IDENTITY_FILE, load_or_create
    from .ui.app import NertsApp
    from .ui.config import prepare_player

    if (missing := terminal_missing()) is not None:
        raise CannotPlay(missing)
    player = prepare_player(data_dir, ask=input if sys.stdin.isatty() and not name else None)
    identity = (load_or_create(data_dir / IDENTITY_FILE, name) if name else player.identity)

    async def screen(session: Session, code: str | None) -> None:
        await NertsApp(session, player.config, player.notes, code=code).run()

    return identity, screen


def run_simulate(args: argparse.Namespace) -> int:
    if args.rounds is not None and args.rounds < 1:
        raise ValueError("--rounds must be at least 1")
    if not 1.0 <= args.max_delay <= 5000.0:
        raise ValueError("--max-delay must be 1..5000 ms")
    cfg = SimConfig(players=args.players, variants=variants_from(args), skills=args.skill,
                    seed=args.seed, min_delay=min(0.005, args.max_delay / 1000),
                    max_delay=args.max_delay / 1000)
    names = seat_names(cfg)
    totals = [0] * cfg.seats
    for item in simulate(cfg, args.rounds):
        if isinstance(item, Match):
            final = final_json(cfg, item, names)
            print(json.dumps(final) if args.json else final_text(final))
        else:
            for r in item.results:
                totals[r.seat] += r.score
            line = round_json(cfg, item, names, totals)
            print(json.dumps(line) if args.json else round_text(line))
        sys.stdout.flush()
    return 0


def seat_names(cfg: SimConfig) -> list[str]:
    if cfg.variants.teams == "share":
        return [f"bot{2 * s + 1}+bot{2 * s + 2}" for s in range(cfg.seats)]
    return [f"bot{s + 1}" for s in range(cfg.seats)]


def round_json(cfg: SimConfig, rep: RoundReport, names: list[str],
               totals: list[int]) -> dict[str, object]:
    return {
        "round": rep.round,
        "end": rep.end,
        "caller": names[rep.caller] if rep.caller is not None else None,
        "players": [
            {
                "name": names[r.seat], "seat": r.seat, "skill": cfg.skill_of(r.seat),
                "foundation_cards": r.foundation_cards, "nerts_left": r.nerts_left,
                "score": r.score, "total": totals[r.seat], "called_nerts": r.called,
            }
            for r in rep.results
        ],
        "collisions": rep.collisions,
        "bounces": rep.bounces,
        "stuck_rotations": rep.rotations,
        "moves": rep.moves,
        "foundation_plays": rep.plays,
        "foundation_hash": rep.foundation_hash,
        "sim_seconds": rep.sim_seconds,
    }


def final_json(cfg: SimConfig, match: Match, names: list[str]) -> dict[str, object]:
    winner = match.winner()
    out: dict[str, object] = {
        "final": True,
        "rounds": match.rounds,
        "totals": {names[s]: t for s, t in enumerate(match.totals)},
        "winner": None,
    }
    if cfg.variants.teams == "pairs":
        teams = dict(match.named_totals(names))
        out["team_totals"] = teams
        if winner is not None:
            out["winner"] = list(teams)[winner]
    elif winner is not None:
        out["winner"] = names[winner]
    return out


def round_text(line: dict[str, object]) -> str:
    players = line["players"]
    assert isinstance(players, list)
    rows = [f"Round {line['round']}: {line['end']}"
            + (f" (called by {line['caller']})" if line["caller"] else "")
            + f", {line['moves']} moves, {line['collisions']} collisions,"
              f" {line['bounces']} bounces, {line['stuck_rotations']} stuck rotations"]
    rows += [f"  {p['name']:<12} up {p['foundation_cards']:>3}  nerts left {p['nerts_left']:>2}"
             f"  score {p['score']:>4}  total {p['total']:>4}" for p in players]
    return "\n".join(rows)


def final_text(final: dict[str, object]) -> str:
    rounds = final["rounds"]
    assert isinstance(rounds, int)
    return f"Game over after {counted(rounds, 'round')}. Winner: {final['winner'] or 'none'}"


if __name__ == "__main__":
    sys.exit(main())
