"""Event standings: the evening's games, each proven by its record, tallied by player.

Records come from whoever kept them (any player of a game keeps one); each
is verified in full before it counts, and a game reached through several
players counts once. A record that fails is listed with the reason, never
counted. Players are told apart by key fingerprint; the name shown is the
latest one a key went by, with its fingerprint wherever two keys share it.

A game is its people as much as its table id: the host's key and every
seat's key, with what the entries decide. A signature proves who signed,
so a copy of a real game re-signed under fresh keys verifies as well as
the real one: two records that claim one table id for different keys, or
the same rounds with a different result, are a conflict. Neither is
counted, and both are shown, whichever came first; only the player's own
record (kept by this computer's store from a game it sat at) wins over a
copy from the network, which is still shown as the conflict it is.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .history import Game, summarize
from .record import RecordError, decode
from .verify import verify

EVENT_HOURS = 12.0
"""How far back standings look by default: one evening, whenever it began."""

OWN = "this computer"
"""Where this player's own records come from, in standings."""


@dataclass(frozen=True, slots=True)
class Version:
    """One game as a verified record gives it: who took part and what it decided."""

    table_id: str
    host: bytes
    first_round: int
    last_round: int
    #: Its seats' keys and its verified result, canonical: equal for every honest copy.
    content: str

    def conflicts(self, other: Version) -> bool:
        """Whether the two cannot both be true: one table under two hosts, or rounds
        of one table that two records decide differently."""
        if self.table_id != other.table_id or self == other:
            return False
        return self.host != other.host or (self.first_round <= other.last_round
                                           and other.first_round <= self.last_round)


@dataclass(slots=True)
class Heard:
    """A version and every copy of it heard: where from, and its summary."""

    game: Game
    sources: set[str] = field(default_factory=set)
    #: The host's and every seat's key, whole (a game's summary names them by
    #: fingerprint only): what an event matches the game to its seating by.
    keys: frozenset[bytes] = frozenset()

    @property
    def own(self) -> bool:
        return OWN in self.sources


@dataclass(slots=True)
class Conflict:
    """A version that another contradicts: ``counted`` when it is the player's own."""

    game: Game
    sources: list[str]
    counted: bool


@dataclass(slots=True)
class Standings:
    #: The games counted, each once however many kept it.
    games: dict[Version, Game] = field(default_factory=dict)
    #: Every version of a game that another record contradicts, counted or not.
    conflicts: list[Conflict] = field(default_factory=list)
    #: (where from, why) for every record that did not verify.
    refused: list[tuple[str, str]] = field(default_factory=list)
    #: Each counted game's seat keys, whole.
    keys: dict[Version, frozenset[bytes]] = field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        """One row per player, best first: games, wins, points (their totals summed)."""
        players: dict[str, dict[str, Any]] = {}
        for game in _in_order(self.games.values()):
            for p in game["players"]:
                row = players.setdefault(p["fingerprint"], {
                    "name": p["name"], "fingerprint": p["fingerprint"],
                    "games": 0, "wins": 0, "points": 0})
                row["name"] = p["name"]
                row["games"] += 1
                row["wins"] += p["fingerprint"] in game["winners"]
                row["points"] += p["total"]
        return sorted(players.values(),
                      key=lambda r: (-r["wins"], -r["points"], r["name"], r["fingerprint"]))


class Tally:
    """Standings heard a record at a time: each verified as it comes and kept as its
    summary only, so what is held grows with the games, never with the records' bytes.
    The standings (:meth:`standings`) do not depend on the order records came in."""

    def __init__(self, since: float) -> None:
        self.since = since
        self._heard: dict[Version, Heard] = {}
        self._refused: list[tuple[str, str]] = []

    def add(self, source: str, data: bytes | bytearray) -> bool:
        """Verify ``data`` (a record's bytes, from ``source``) and note what it proves;
        False when the bytes are not a game record at all."""
        try:
            record = decode(data)
        except RecordError as exc:
            self.refuse(source, str(exc))
            return False
        try:
            if record.saved_at < self.since:
                return True
            done = verify(record)
            game = summarize(record, done, record.host)
        except RecordError as exc:
            self.refuse(source, str(exc))
            return True
        if game is None or game["winner"] is None:
            return True
        rounds = [r["round"] for r in game["rounds"]]
        keys = [[k.hex() for k in done.round_keys[n]] for n in rounds]
        facts = {k: game[k] for k in ("rules", "players", "rounds", "winner", "winners",
                                      "foundation_hash")}
        version = Version(game["table_id"], record.host, min(rounds), max(rounds),
                          json.dumps([keys, facts], sort_keys=True))
        seats = frozenset(k for n in rounds for k in done.round_keys[n])
        heard = self._heard.setdefault(version, Heard(game, keys=seats))
        heard.sources.add(source)
        if game["ended_at"] < heard.game["ended_at"]:  # one date, whichever copy came first
            heard.game = game
        return True

    @property
    def refusals(self) -> int:
        """How many records were refused so far."""
        return len(self._refused)

    def refuse(self, source: str, reason: str) -> None:
        """A record from ``source`` that counts for nothing, and why."""
        self._refused.append((source, reason))

    def standings(self) -> Standings:
        out = Standings(refused=sorted(self._refused))
        versions = sorted(self._heard, key=lambda v: (v.table_id, v.first_round, v.content))
        own = [v for v in versions if self._heard[v].own]
        # A copy from the network that the player's own record contradicts loses to it;
        # of the rest, any two that contradict each other both stay uncounted.
        beaten = {v for v in versions if v not in own and any(v.conflicts(o) for o in own)}
        standing = [v for v in versions if v not in beaten]
        disputed = {v for v in standing if any(v.conflicts(w) for w in standing)}
        for v in versions:
            heard = self._heard[v]
            if v not in beaten and v not in disputed:
                out.games[v] = heard.game
                out.keys[v] = heard.keys
            if v in beaten or v in disputed or (heard.own and any(v.conflicts(b)
                                                                for b in beaten)):
                out.conflicts.append(Conflict(heard.game, sorted(heard.sources),
                                              v not in beaten and v not in disputed))
        return out


def tally(records: Iterable[tuple[str, bytes]], since: float) -> Standings:
    """Verify and count ``(source, record bytes)`` of games that ended at ``since`` or later."""
    counting = Tally(since)
    for source, data in records:
        counting.add(source, data)
    return counting.standings()


def standings_text(s: Standings) -> list[str]:
    rows = s.rows()
    named = _Names(s)
    lines = [f"{len(s.games)} game{'' if len(s.games) == 1 else 's'} verified"]
    if rows:
        width = max(len(r["name"]) for r in rows)
        lines.append(f"  {'':3} {'Player':<{width}}  {'Games':>5} {'Wins':>4} {'Points':>6}  "
                     "Fingerprint")
        for place, r in enumerate(rows, start=1):
            lines.append(f"  {place:>2}. {r['name']:<{width}}  {r['games']:>5} {r['wins']:>4} "
                         f"{r['points']:>6}  {r['fingerprint']}")
    for game in _in_order(s.games.values()):
        lines.append(f"  game {named.game(game)}")
    for c in s.conflicts:
        verdict = ("counted: your own record of it" if c.counted
                   else "NOT COUNTED: another record of this table says otherwise")
        lines.append(f"  CONFLICT (from {', '.join(c.sources)}): game {named.game(c.game)}; "
                     f"{verdict}")
    for source, reason in s.refused:
        lines.append(f"  NOT COUNTED (from {source}): {reason}")
    return lines


def standings_csv(s: Standings) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["place", "name", "fingerprint", "games", "wins", "points"])
    for place, r in enumerate(s.rows(), start=1):
        writer.writerow([place, r["name"], r["fingerprint"], r["games"], r["wins"], r["points"]])
    return out.getvalue()


def standings_json(s: Standings) -> dict[str, Any]:
    return {"standings": s.rows(),
            "games": [_shown(g) for g in _in_order(s.games.values())],
            "conflicts": [{**_shown(c.game), "from": c.sources, "counted": c.counted}
                          for c in s.conflicts],
            "refused": [{"from": source, "reason": reason} for source, reason in s.refused]}


def _shown(game: Game) -> dict[str, Any]:
    """What standings show of a game: only what its signed entries say (a record's
    table name is its keeper's unsigned word, so the host names the table)."""
    return {k: game[k] for k in ("table_id", "host", "ended_at", "winner", "winners",
                                 "players")}


def _in_order(games: Iterable[Game]) -> list[Game]:
    return sorted(games, key=lambda g: (g["ended_at"], g["table_id"], g["rounds"][0]["round"]))


class _Names:
    """Players' names as standings print them: a name two keys share comes with the
    fingerprint of the key meant."""

    def __init__(self, s: Standings) -> None:
        keys: dict[str, set[str]] = {}
        for game in [*s.games.values(), *(c.game for c in s.conflicts)]:
            for p in game["players"]:
                keys.setdefault(p["name"], set()).add(p["fingerprint"])
        self._shared = {name for name, fps in keys.items() if len(fps) > 1}

    def player(self, name: str, fp: str) -> str:
        return f"{name} ({fp})" if name in self._shared else name

    def game(self, game: Game) -> str:
        """A game in a line: its table (by its host), who won, every total."""
        names = {p["fingerprint"]: p["name"] for p in game["players"]}
        host = game["host"]
        # The host's signed name, with the start of its fingerprint, as the lobby
        # and ``nerts join`` tell two tables apart (NAME@FINGERPRINT).
        at = str(host["fingerprint"]).replace("-", "")[:4]
        table = (f"hosted by {host['name']}@{at}" if host["name"] is not None
                 else f"hosted by {host['fingerprint']}")
        winner = game["winner"]
        if any(names[fp] in self._shared for fp in game["winners"]):
            winner = " + ".join(self.player(names[fp], fp) for fp in game["winners"])
        totals = ", ".join(f"{self.player(p['name'], p['fingerprint'])} {p['total']}"
                           for p in sorted(game["players"], key=lambda p: -p["total"]))
        return f"{table}: {winner} won ({totals})"
