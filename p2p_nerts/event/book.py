"""The event's book: the one state model of an evening, built from signed entries.

Everything in it follows from two kinds of signed bytes: the event's entries
(``entries.py``: the opening, each player's registration, each game's seating)
and the tables' game records (``records/``). The organiser's machine, every
player's and a verifier far away build the same book from the same bytes, in
any order the records come.

`apply` checks an entry against what the book holds (the right signer, the
right event, players who registered, a draw that follows from its inputs) and
either takes it whole or refuses it with `EventError`, changing nothing.
`add_record` verifies a game record in full (``records.standings.Tally``) and
counts it for the seating it matches: by the table id the seating gave that
table (`table_id_for`), else by its host and seat keys where one table of one
game fits them. The seating says whose table it is, so a copy of its game
signed again under other keys fits nothing and is ignored (where ``nerts
event``, knowing no seating, can only count neither). Standings are counted
from matched games only, and only for the seats the seating gave.

Stand-ins, and which game is a table's. A table's seats in order are its
hosts in order: the first opens it, and where the ones before it never
opened it, the next stands in, under the same table id
(``peer.event_seat.open_table``). A game under the table's id fits the
table when every key in it is one of its seats and its host played in it,
the host being its first seat, or a later seat standing in at a game that
more than half the table's seats played. Of the games that fit, the one of
the earliest seat that hosted one counts, and only if that seat hosted just
one (two different games under one host leave the table uncounted, as
before). This gives no one a gain from lying or going silent:
- a minority of a table (a player and a partner, at a table of four) who
  open a rival table under a later seat's key count for nothing, with or
  without the real game at hand: they can neither split the table's game
  nor, by handing theirs in first, have the table taken for played while
  the real one is still being played; and honest players never join their
  table, since each joins the earliest seat's table whose turn has come;
- a stand-in's game, played by most of the table, is outranked by the
  first seat's if it hosted one: a first seat that keeps quiet, then plays
  a game of its own, only does what a host may do anyway (a host admits
  whom it will), and alone it plays no game at all;
- no record says who was absent: when most of a table plays without its
  first seat, saying it never came, their game counts, as a no-show's does
  (until the first seat's own game, if it played one, comes in). Where the
  first seat and others are absent so that no more than half the seats are
  left, those left lose that game, as the whole table did before stand-ins.
The organiser's seating is what orders the seats, so neither a player nor
a verifier chooses who stands in for whom.

Standings order: wins, then total points, then the tie-break, opponents' wins:
for every game a player played, the wins (over the whole event) of the others
at that table, summed. A player who met strong opposition is placed above one
with the same wins and points who met weak; it is the Buchholz score of Swiss
tournaments, counted over tables. Players still level share a place.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..protocol.identity import fingerprint_of
from ..records.history import Game
from ..records.standings import Checked, Tally, Version
from .draw import Met, draw, swiss_from
from .entries import (
    MAX_PLAYERS,
    Entry,
    EventError,
    Finished,
    Opened,
    Registered,
    Seated,
    Signed,
    TableSeats,
    code_check,
    code_proof,
    decode,
    follows,
    letter,
)

__all__ = ["CheckedRecord", "EventBook", "GameState", "MissingRecords", "Row", "TableResult",
           "check_code", "stand_in_quorum", "table_id_for"]

_TABLE_ID: Final = b"p2p-nerts/event-table\x00"


def table_id_for(event_id: bytes, game: int, table: str) -> bytes:
    """The table id a seating's table opens under: one per event, game and letter,
    so its record names the very seat it was drawn for."""
    digest = hashlib.sha256(_TABLE_ID + event_id + game.to_bytes(2, "big") + table.encode())
    return digest.digest()[:16]


@dataclass(frozen=True, slots=True)
class TableResult:
    """A game one table played, as its record proves it."""

    version: Version
    game: Game
    #: The seats' keys (and the host's), whole.
    keys: frozenset[bytes]


@dataclass(frozen=True, slots=True)
class CheckedRecord:
    """A record's bytes and what verifying them found (`EventBook.check_record`)."""

    data: bytes
    found: Checked


@dataclass(slots=True)
class Live:
    """What the organiser's machine sees of a table being played (unsigned, for show)."""

    state: str
    round: int
    scores: dict[bytes, int]


@dataclass(slots=True)
class GameState:
    """One game of the event: its seating, whether it is over, its tables' results."""

    seated: Seated
    finished: bool = False
    live: dict[str, Live] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Row:
    """A player's line of the standings."""

    place: int
    player: bytes
    name: str
    games: int
    wins: int
    points: int
    #: Opponents' wins (see the module's docstring).
    tiebreak: int

    @property
    def fp(self) -> str:
        return fingerprint_of(self.player)

    def shown(self) -> dict[str, Any]:
        return {"place": self.place, "name": self.name, "fp": self.fp, "games": self.games,
                "wins": self.wins, "points": self.points, "tiebreak": self.tiebreak}


class EventBook:
    """One event's entries and records, checked, and what follows from them.

    ``code``: the event's code, known to the organiser's book only, which then
    refuses a registration without the right proof; any other book checks
    what it can (a proof of the right form) and sees the organiser's verdict
    in whom the seatings seat.
    """

    def __init__(self, code: str | None = None) -> None:
        self.code = code
        self.opened: Opened | None = None
        self.registrations: dict[bytes, Registered] = {}
        self.games: dict[int, GameState] = {}
        #: Every entry taken, as signed, in the order taken.
        self.entries: list[bytes] = []
        self._entry_set: set[bytes] = set()
        #: Every record taken (verified bytes, each once), in the order taken.
        self.records: list[bytes] = []
        self._record_ids: set[bytes] = set()
        self._tally = Tally(since=0.0)
        self._results: dict[tuple[int, str], TableResult] | None = None

    # -- entries ---------------------------------------------------------------

    def apply(self, data: bytes) -> Signed | None:
        """Check and take one entry's bytes; None when the book already holds it.
        EventError (one line) when refused: the book is then as it was."""
        signed = decode(data)
        if signed.raw in self._entry_set:
            return None
        self._check(signed)
        self._take(signed.entry)
        self.entries.append(signed.raw)
        self._entry_set.add(signed.raw)
        return signed

    def _check(self, signed: Signed) -> None:
        entry = signed.entry
        if isinstance(entry, Opened):
            if self.opened is not None:
                raise EventError("the event is already open (a second opening is refused)")
            return
        opened = self.opened
        if opened is None:
            raise EventError("an entry of an event not opened yet")
        if entry.event_id != opened.event_id:
            raise EventError("an entry of another event")
        if isinstance(entry, Registered):
            self._check_registration(opened, entry)
            return
        if signed.author != opened.organiser:
            raise EventError("only the organiser signs seatings and ends of games")
        if isinstance(entry, Seated):
            self._check_seating(opened, entry)
        else:
            self._check_finished(entry)

    def _check_registration(self, opened: Opened, entry: Registered) -> None:
        if entry.player in self.registrations:
            raise EventError(f"{entry.name} ({fingerprint_of(entry.player)}) registered "
                             "already, under another entry")
        if len(self.registrations) >= MAX_PLAYERS:
            raise EventError(f"the event is full ({MAX_PLAYERS} players)")
        if opened.code_check is None:
            if entry.code_proof:
                raise EventError("a code proof for an event that has no code")
        elif not entry.code_proof:
            raise EventError(f"{entry.name} registered without the event's code")
        elif self.code is not None and entry.code_proof != code_proof(
                opened.event_id, entry.player, self.code):
            raise EventError(f"{entry.name} registered with a wrong code")

    def _check_seating(self, opened: Opened, entry: Seated) -> None:
        expected = len(self.games) + 1
        if entry.game != expected:
            raise EventError(f"a seating for game {entry.game}, where game {expected} "
                             "is next")
        if entry.game > opened.games:
            raise EventError(f"a seating for game {entry.game} of an event of "
                             f"{opened.games} games")
        unknown = [p for p in entry.players if p not in self.registrations]
        if unknown:
            raise EventError(f"game {entry.game} seats {fingerprint_of(unknown[0])}, who "
                             "did not register")
        for index, table in enumerate(entry.tables):
            if table.letter != letter(index) or not table.seats or table.host != table.seats[0]:
                raise EventError(f"game {entry.game}: table {table.letter}'s host must be "
                                 "its first seat")
        if opened.seed_commit is not None:
            before = (opened.seed_commit if entry.game == 1
                      else self.games[entry.game - 1].seated.seed)
            if not follows(entry.seed, before):
                raise EventError(f"game {entry.game}'s seed is not the one the opening "
                                 "committed to")
        if entry.counted and entry.game < swiss_from(opened.games):
            raise EventError(f"game {entry.game} is drawn to mix players, by no standings, "
                             "but its seating names results it counted")
        held = {r.version.table_id for r in self._matched().values()}
        lacking = sorted(c for c in set(entry.counted) if c.hex() not in held)
        if lacking:
            raise MissingRecords(entry.game, tuple(lacking))
        tables = [list(t.seats) for t in entry.tables]
        expected_tables = self.drawn(entry.game, entry.players, entry.seed, entry.counted)
        if tables != expected_tables:
            raise EventError(f"game {entry.game}'s seating is not what its draw gives "
                             "(re-run from its players, seed and standings)")

    def _check_finished(self, entry: Finished) -> None:
        state = self.games.get(entry.game)
        if state is None:
            raise EventError(f"the end of game {entry.game}, which was never seated")
        if state.finished:
            raise EventError(f"game {entry.game} is over already")

    def _take(self, entry: Entry) -> None:
        match entry:
            case Opened():
                self.opened = entry
            case Registered():
                self.registrations[entry.player] = entry
            case Seated():
                self.games[entry.game] = GameState(entry)
                self._results = None
            case Finished():
                self.games[entry.game].finished = True

    # -- the draw --------------------------------------------------------------

    def met(self, before: int) -> dict[frozenset[bytes], int]:
        """How often each pair sat at one table in the seatings of games before
        ``before`` (as drawn: who was seated together, whether or not both came)."""
        met: dict[frozenset[bytes], int] = {}
        for number in range(1, before):
            for table in self.games[number].seated.tables:
                for i, p in enumerate(table.seats):
                    for q in table.seats[i + 1:]:
                        pair = frozenset((p, q))
                        met[pair] = met.get(pair, 0) + 1
        return met

    def counted_now(self) -> tuple[bytes, ...]:
        """The table ids of every result matched so far: what a draw now counts."""
        return tuple(sorted(bytes.fromhex(r.version.table_id)
                            for r in self._matched().values()))

    def drawn(self, game: int, players: Sequence[bytes], seed: bytes,
              counted: Sequence[bytes]) -> list[list[bytes]]:
        """The tables game ``game``'s draw gives: its inputs are the seatings before
        it, the standings of the results ``counted`` names, and ``seed``."""
        opened = self._opened()
        ranking = [row.player for row in self.standings(only=set(counted))]
        met: Met = self.met(game)
        return draw(list(players), met, ranking, seed, opened.table_size, game,
                    swiss=swiss_from(opened.games))

    def next_seating(self, present: Iterable[bytes], seed: bytes,
                     rules: Mapping[str, int | str | bool] | None = None) -> Seated:
        """The next game's seating among ``present`` registered players, drawn and
        ready for the organiser to sign (``entries.encode``)."""
        opened = self._opened()
        game = len(self.games) + 1
        if game > opened.games:
            raise EventError(f"all {opened.games} games are seated")
        players = sorted(p for p in set(present) if p in self.registrations)
        counted = self.counted_now() if game >= swiss_from(opened.games) else ()
        tables = self.drawn(game, players, seed, counted)
        return Seated(opened.event_id, game, seed, tuple(players),
                      tuple(TableSeats(letter(i), t[0], tuple(t)) for i, t in enumerate(tables)),
                      dict(rules or {"target": opened.target}), counted)

    def _opened(self) -> Opened:
        if self.opened is None:
            raise EventError("the event is not open")
        return self.opened

    # -- records and standings -------------------------------------------------

    def add_record(self, data: bytes) -> bool:
        """Verify a table's signed record and keep it; it counts where it matches a
        seating. True when it changed what the book's results are."""
        if bytes(data) in self._record_ids:
            return False
        return self.take_record(self.check_record(data))

    def check_record(self, data: bytes) -> CheckedRecord:
        """A record verified in full (the slow half of `add_record`), the book left as
        it is: safe to run in another thread while the book is read and changed."""
        return CheckedRecord(bytes(data), self._tally.check(data))

    def take_record(self, checked: CheckedRecord) -> bool:
        """Keep a record `check_record` verified (quick); True when it changed what the
        book's results are."""
        if checked.data in self._record_ids:
            return False
        found = checked.found
        if not found.record or found.refused is not None:
            self._tally.take("record", found)
            return False
        before = self._matched()
        self._tally.take("record", found)
        self._results = None
        self._record_ids.add(checked.data)
        self.records.append(checked.data)
        return self._matched() != before

    def refused(self) -> list[str]:
        """Why each record that did not verify was refused, in the order they came."""
        return [why for _source, why in self._tally.refused]

    def results(self) -> dict[tuple[int, str], TableResult]:
        """Each (game, table letter) a verified record proves."""
        return dict(self._matched())

    def _matched(self) -> dict[tuple[int, str], TableResult]:
        if self._results is None:
            self._results = self._match()
        return self._results

    def _match(self) -> dict[tuple[int, str], TableResult]:
        """Each seated table's game: the verified version of a game that fits it, by
        the table id the seating gave it (its host its first seat, or a stand-in at a
        game most of its seats played; only seats it gave), else by its first seat as
        host and seat keys where it fits one table only; of those, the earliest
        seat's (see the module). A copy
        signed again under other keys fits no table and is ignored; two versions
        under the earliest host (its very players signed two games under its id)
        leave the table uncounted."""
        opened = self.opened
        if opened is None:
            return {}
        by_id: dict[bytes, tuple[int, TableSeats]] = {}
        for number, state in self.games.items():
            for table in state.seated.tables:
                by_id[table_id_for(opened.event_id, number, table.letter)] = (number, table)
        fitting: dict[tuple[int, str], list[TableResult]] = {}
        loose: list[TableResult] = []
        for version, heard in self._tally.heard():
            result = TableResult(version, heard.game, heard.keys)
            found = by_id.get(bytes.fromhex(version.table_id))
            if found is not None and _fits(result, found[1], stand_in=True):
                fitting.setdefault((found[0], found[1].letter), []).append(result)
            elif found is None:
                loose.append(result)
        by_id_found = set(fitting)
        for result in loose:
            fits = [(n, t.letter) for n, state in self.games.items()
                    for t in state.seated.tables if (n, t.letter) not in by_id_found
                    and _fits(result, t, stand_in=False)]
            if len(fits) == 1:
                fitting.setdefault(fits[0], []).append(result)
        counted = {key: _earliest(self._table(*key), results)
                   for key, results in fitting.items()}
        return {key: result for key, result in counted.items() if result is not None}

    def standings(self, only: set[bytes] | None = None) -> list[Row]:
        """Every registered player's line, best first; ``only``: count just the
        results of those table ids (the standings a draw was made from)."""
        wanted = None if only is None else {t.hex() for t in only}
        results = [(key, r) for key, r in self._matched().items()
                   if wanted is None or r.version.table_id in wanted]
        games: dict[bytes, int] = {}
        wins: dict[bytes, int] = {}
        points: dict[bytes, int] = {}
        tables: list[list[bytes]] = []
        for (number, table_letter), result in sorted(results, key=lambda kr: kr[0]):
            table = self._table(number, table_letter)
            by_fp = {fingerprint_of(k): k for k in table.seats}
            played = []
            for p in result.game["players"]:
                key = by_fp.get(p["fingerprint"])
                if key is None:
                    continue
                played.append(key)
                games[key] = games.get(key, 0) + 1
                points[key] = points.get(key, 0) + int(p["total"])
                wins[key] = wins.get(key, 0) + (p["fingerprint"] in result.game["winners"])
            tables.append(played)
        tiebreak: dict[bytes, int] = {}
        for played in tables:
            for p in played:
                tiebreak[p] = tiebreak.get(p, 0) + sum(wins.get(q, 0) for q in played if q != p)
        players = [p for p in self.registrations if only is None or p in games]
        ordered = sorted(players, key=lambda p: (-wins.get(p, 0), -points.get(p, 0),
                                                 -tiebreak.get(p, 0), p))
        rows: list[Row] = []
        for index, p in enumerate(ordered):
            score = (wins.get(p, 0), points.get(p, 0), tiebreak.get(p, 0))
            place = index + 1
            if rows and (rows[-1].wins, rows[-1].points, rows[-1].tiebreak) == score:
                place = rows[-1].place
            rows.append(Row(place, p, self.registrations[p].name, games.get(p, 0),
                            *score))
        return rows

    def _table(self, game: int, table_letter: str) -> TableSeats:
        return next(t for t in self.games[game].seated.tables if t.letter == table_letter)

    # -- what the screens and the wall show ----------------------------------

    def follow(self, game: int, table: str, state: str, round: int,
               scores: Mapping[bytes, int]) -> None:
        """What the organiser's machine sees of a table now (for show only: standings
        count records, never this)."""
        if game not in self.games or all(t.letter != table for t in
                                          self.games[game].seated.tables):
            raise EventError(f"there is no table {table} in game {game}")
        self.games[game].live[table] = Live(state, round, dict(scores))

    def state(self) -> str:
        opened = self._opened()
        if not self.games:
            return "registering"
        current = self.games[len(self.games)]
        if current.finished:
            return "finished" if len(self.games) >= opened.games else "registering"
        if current.live or any(n == len(self.games) for n, _t in self._matched()):
            return "playing"
        return "seating"

    def wall(self) -> dict[str, Any]:
        """The JSON-able snapshot the projector page and ``/standings.json`` show."""
        opened = self._opened()
        current = len(self.games)
        names = {p: r.name for p, r in self.registrations.items()}
        tables: list[dict[str, Any]] = []
        if current:
            state = self.games[current]
            done = self._matched()
            for table in state.seated.tables:
                result = done.get((current, table.letter))
                live = state.live.get(table.letter)
                if result is not None:
                    totals = {p["fingerprint"]: int(p["total"]) for p in result.game["players"]}
                    tables.append({"game": current, "table": table.letter, "state": "over",
                                   "round": len(result.game["rounds"]),
                                   "players": [{"name": names[k], "fp": fingerprint_of(k),
                                                "score": totals.get(fingerprint_of(k), 0)}
                                               for k in table.seats]})
                else:
                    tables.append({"game": current, "table": table.letter,
                                   "state": live.state if live else "waiting",
                                   "round": live.round if live else 0,
                                   "players": [{"name": names[k], "fp": fingerprint_of(k),
                                                "score": live.scores.get(k, 0) if live else 0}
                                               for k in table.seats]})
        upcoming = None
        if current and not self.games[current].finished:
            upcoming = {"game": current, "tables": [
                {"table": t.letter, "players": [{"name": names[k], "fp": fingerprint_of(k)}
                                                for k in t.seats]}
                for t in self.games[current].seated.tables]}
        seated = set(self.games[current].seated.players) if current else set()
        return {"event": {"name": opened.name, "game": current, "games": opened.games,
                          "state": self.state()},
                "standings": [row.shown() for row in self.standings()],
                "tables": tables,
                "next": upcoming,
                "missing": sorted(names[p] for p in self.registrations if p not in seated)
                if current else []}


class MissingRecords(EventError):
    """A seating drawn from results this book does not hold yet: fetch them (their
    table ids are ``table_ids``) and apply it again."""

    def __init__(self, game: int, table_ids: tuple[bytes, ...]) -> None:
        super().__init__(f"game {game}'s seating was drawn from {len(table_ids)} game "
                         "result(s) not at hand yet")
        self.game = game
        self.table_ids = table_ids


def stand_in_quorum(table: TableSeats) -> int:
    """The fewest players at a stand-in's game that make it count: more than half
    the table's seats (see the module's docstring). A stand-in deals with no fewer."""
    return len(table.seats) // 2 + 1


def _fits(result: TableResult, table: TableSeats, *, stand_in: bool) -> bool:
    """Whether a game's keys are the table's: only seats it gave, and a host who
    played in it: its first seat, or (``stand_in``) a later one at a game that more
    than half its seats played (see the module's docstring)."""
    host = result.version.host
    return (host in result.keys and result.keys <= set(table.seats)
            and (host == table.host or (stand_in and host in table.seats
                                        and len(result.keys) >= stand_in_quorum(table))))


def _earliest(table: TableSeats, results: Sequence[TableResult]) -> TableResult | None:
    """The table's game among those that fit it: the one of the earliest seat that
    hosted any, None where that seat hosted two (see the module's docstring)."""
    first = min(table.seats.index(r.version.host) for r in results)
    theirs = [r for r in results if r.version.host == table.seats[first]]
    return theirs[0] if len(theirs) == 1 else None


def check_code(opened: Opened, code: str) -> bool:
    """Whether ``code`` is the event's (what a player's machine asks before it registers)."""
    return opened.code_check is not None and code_check(opened.event_id, code) == opened.code_check
