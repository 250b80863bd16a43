"""Event standings: the evening's games, each proven by its record, tallied by player.

Records come from whoever kept them (any player of a game keeps one); each
is verified in full before it counts, and a game reached through several
players counts once. A record that fails is listed with the reason, never
counted. Players are told apart by key fingerprint; the name shown is the
latest one a key went by.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .history import Game, summarize
from .record import RecordError, decode
from .verify import verify

EVENT_HOURS = 12.0
"""How far back standings look by default: one evening, whenever it began."""


@dataclass(slots=True)
class Standings:
    #: By table, first round and final foundations: one game however many kept it.
    games: dict[tuple[str, int, str], Game] = field(default_factory=dict)
    #: (where from, why) for every record that did not verify.
    refused: list[tuple[str, str]] = field(default_factory=list)

    def rows(self) -> list[dict[str, Any]]:
        """One row per player, best first: games, wins, points (their totals summed)."""
        players: dict[str, dict[str, Any]] = {}
        for game in sorted(self.games.values(), key=lambda g: g["ended_at"]):
            for p in game["players"]:
                row = players.setdefault(p["fingerprint"], {
                    "name": p["name"], "fingerprint": p["fingerprint"],
                    "games": 0, "wins": 0, "points": 0})
                row["name"] = p["name"]
                row["games"] += 1
                row["wins"] += p["fingerprint"] in game["winners"]
                row["points"] += p["total"]
        return sorted(players.values(), key=lambda r: (-r["wins"], -r["points"], r["name"]))


def tally(records: Iterable[tuple[str, bytes]], since: float) -> Standings:
    """Verify and count ``(source, record bytes)`` of games that ended at ``since`` or later."""
    out = Standings()
    for source, data in records:
        try:
            record = decode(data)
            if record.saved_at < since:
                continue
            game = summarize(record, verify(record), record.host)
        except RecordError as exc:
            out.refused.append((source, str(exc)))
            continue
        if game is not None and game["winner"] is not None:
            key = (game["table_id"], game["first_round"], game["foundation_hash"])
            out.games.setdefault(key, game)
    return out


def standings_text(s: Standings) -> list[str]:
    rows = s.rows()
    lines = [f"{len(s.games)} game{'' if len(s.games) == 1 else 's'} verified"]
    if rows:
        width = max(len(r["name"]) for r in rows)
        lines.append(f"  {'':3} {'Player':<{width}}  {'Games':>5} {'Wins':>4} {'Points':>6}  "
                     "Fingerprint")
        for place, r in enumerate(rows, start=1):
            lines.append(f"  {place:>2}. {r['name']:<{width}}  {r['games']:>5} {r['wins']:>4} "
                         f"{r['points']:>6}  {r['fingerprint']}")
    for game in sorted(s.games.values(), key=lambda g: g["ended_at"]):
        totals = ", ".join(f"{p['name']} {p['total']}"
                           for p in sorted(game["players"], key=lambda p: -p["total"]))
        # Named as the lobby and ``nerts join`` name a table: NAME@ the start of its
        # host's fingerprint (a game's "me", tallied here, is its host).
        table = f"{game['table']}@{str(game['me']).replace('-', '')[:4]}"
        lines.append(f"  game at {table}: {game['winner']} won ({totals})")
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
            "games": [{k: g[k] for k in ("table", "table_id", "ended_at", "winner", "players")}
                      for g in sorted(s.games.values(), key=lambda g: g["ended_at"])],
            "refused": [{"from": source, "reason": reason} for source, reason in s.refused]}
