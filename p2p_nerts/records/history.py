"""A player's history: each game as its record decides it, and statistics over them.

A game's line in the history is read from its record by the verifier's
replay, never from what this peer's screen happened to show: every player
of a game keeps the same entries, so every player's history gives the same
scores. Players are told apart by key fingerprint (names are not unique).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..game.scoring import Match, team_names, team_of
from ..lines import counted
from ..protocol import events as ev
from ..protocol.identity import fingerprint_of
from ..protocol.journal import Record
from ..protocol.replica import Replica
from ..store import ABANDONED, SOLO, UNFINISHED, Store
from .record import GameRecord, RecordError, decode, encode, record_of
from .replay import RoundReplay, round_replay
from .verify import Replayed, replay

Game = dict[str, Any]
"""One game's summary, as kept in the store and printed by ``nerts history --json``."""


def summarize(record: GameRecord, done: Replayed, me: bytes) -> Game | None:
    """The last game of ``record`` (its rounds since any earlier game ended), or None
    when no round of it was scored."""
    ends = [i for i, e in enumerate(done.events) if isinstance(e, ev.GameOver)]
    finished = done.game_over
    # A table may play several games: this one began after the one before ended.
    before = ends[:-1] if finished else ends
    earlier = before[-1] if before else -1
    last: dict[int, ev.RoundOver] = {}  # a round scored again after a late drop: the last word
    for index, e in enumerate(done.events):
        if isinstance(e, ev.RoundOver) and index > earlier:
            last[e.round] = e
    if not last:
        return None
    rounds = [last[n] for n in sorted(last)]
    keys = {n: done.round_keys[n] for n in last}
    players: dict[str, dict[str, Any]] = {}
    for e in rounds:
        for r in e.results:
            fp = fingerprint_of(keys[e.round][r.seat])
            players[fp] = {"name": e.names[r.seat], "fingerprint": fp,
                           "total": e.totals[r.seat]}
    final = rounds[-1]
    variants = done.round_variants[final.round]
    match = Match.new(variants, len(final.totals))
    match.totals = list(final.totals)
    winner_team = match.winner() if finished else None
    winners: list[str] = []
    winner = None
    if winner_team is not None:
        winner = team_names(final.names, variants)[winner_team]
        winners = [fingerprint_of(keys[final.round][r.seat]) for r in final.results
                   if team_of(r.seat, variants) == winner_team]
    flags = [] if finished else [ABANDONED]
    flags += done.problems
    host = fingerprint_of(record.host)
    return {
        "table": record.table,  # the record's unsigned header: only its keeper's own word
        "table_id": record.table_id.hex(),
        # The host as its signed entries name it (its seat's name, if it sat).
        "host": {"name": next((p["name"] for p in players.values() if p["fingerprint"] == host),
                              None), "fingerprint": host},
        "first_round": rounds[0].round,
        "ended_at": record.saved_at,
        "me": fingerprint_of(me),
        "rules": variants.summary(),
        "players": list(players.values()),
        "rounds": [{"round": e.round, "end": e.end,
                    "scores": {fingerprint_of(keys[e.round][r.seat]): r.score
                               for r in e.results},
                    "called": next((fingerprint_of(keys[e.round][r.seat])
                                    for r in e.results if r.called), None)}
                   for e in rounds],
        "winner": winner,
        "winners": winners,
        "foundation_hash": final.foundation_hash.hex(),  # the last round's: names the result
        "flags": flags,
    }


def statistics(games: Sequence[Game], me: str) -> dict[str, Any]:
    """The player ``me`` (a fingerprint) over ``games``: overall and per opponent."""
    played = [g for g in games if any(p["fingerprint"] == me for p in g["players"])]
    scores = [r["scores"][me] for g in played for r in g["rounds"] if me in r["scores"]]
    opponents: dict[str, dict[str, Any]] = {}
    for g in played:
        won = me in g["winners"]
        for p in g["players"]:
            fp = p["fingerprint"]
            if fp == me:
                continue
            o = opponents.setdefault(fp, {"name": p["name"], "fingerprint": fp, "games": 0,
                                          "my_wins": 0, "their_wins": 0})
            o["name"] = p["name"]  # the latest name a key went by
            o["games"] += 1
            o["my_wins"] += won
            o["their_wins"] += fp in g["winners"]
    return {
        "games": len(played),
        "finished": sum(1 for g in played if finished(g)),
        "wins": sum(1 for g in played if me in g["winners"]),
        "rounds": len(scores),
        "average_per_round": round(sum(scores) / len(scores), 2) if scores else None,
        "nerts_calls": sum(1 for g in played for r in g["rounds"] if r["called"] == me),
        "best_round": max(scores, default=None),
        "opponents": sorted(opponents.values(), key=lambda o: (-o["games"], o["name"])),
    }


NO_GAMES = "No games yet: play one, and it is kept here."


def history_text(games: Sequence[tuple[int, Game]], me: str) -> list[str]:
    """Lines for ``nerts history``: one per game, newest first, then the statistics."""
    if not games:
        return [NO_GAMES]
    return [*(game_line(number, g, me) for number, g in games), "",
            *statistics_text(statistics([g for _n, g in games], me))]


def finished(g: Game) -> bool:
    """Whether the kept game ``g`` was played to its end (neither abandoned nor
    unfinished)."""
    return ABANDONED not in g["flags"] and UNFINISHED not in g["flags"]


def left_line(kept: int | None, resumable: bool, command: str) -> str:
    """The one line said as the player leaves a table: where its game is now.
    ``kept``: its number in the history, if a round of it is kept; ``resumable``:
    ``nerts COMMAND --resume`` goes on with it (``command``: solo, host or join)."""
    goes_on = f"nerts {command} --resume goes on with"
    if kept is None:
        return (f"no round finished: {goes_on} the game" if resumable
                else "no round played: nothing kept")
    return f"game #{kept} kept: nerts history" + (f"; {goes_on} it" if resumable else "")


def _goes_on(g: Game, me: str) -> str:
    """An unfinished game in words: the command that goes on with it."""
    command = ("solo" if SOLO in g["flags"] else
               "host" if g["host"]["fingerprint"] == me else "join")
    return f"unfinished: nerts {command} --resume goes on"


def game_line(number: int, g: Game, me: str) -> str:
    """A game in a line: when, where, how many rounds, who won, every total (``*``: me)."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(g["ended_at"]))
    totals = ", ".join(f"{p['name']}{'*' if p['fingerprint'] == me else ''} {p['total']}"
                       for p in sorted(g["players"], key=lambda p: -p["total"]))
    result = f"{g['winner']} won" if g["winner"] else "no winner"
    said = [_goes_on(g, me) if f == UNFINISHED else f for f in g["flags"]]
    flags = f" [{'; '.join(said)}]" if said else ""
    return (f"#{number} {when}  {g['table']}  {counted(len(g['rounds']), 'round')}  "
            f"{result}: {totals}{flags}")


def round_line(g: Game, r: dict[str, Any]) -> str:
    """One round of a game: how it ended, each player's score, who called Nerts."""
    names = {p["fingerprint"]: p["name"] for p in g["players"]}
    scores = ", ".join(f"{names.get(fp, fp)} {score:+d}" for fp, score in
                       sorted(r["scores"].items(), key=lambda item: -item[1]))
    called = f", Nerts called by {names.get(r['called'], r['called'])}" if r["called"] else ""
    return f"Round {r['round']} ({r['end']}{called}): {scores}"


def statistics_text(s: dict[str, Any]) -> list[str]:
    """The :func:`statistics` in words: the player's own line, then one per opponent."""
    lines = [f"You: {counted(s['games'], 'game')}, {counted(s['wins'], 'win')}, "
             f"{s['average_per_round'] if s['rounds'] else '-'} points a round, "
             f"{counted(s['nerts_calls'], 'Nerts call')}, best round "
             f"{s['best_round'] if s['best_round'] is not None else '-'}"]
    for o in s["opponents"]:
        lines.append(f"  vs {o['name']} ({o['fingerprint']}): {counted(o['games'], 'game')}, "
                     f"you won {o['my_wins']}, they won {o['their_wins']}")
    return lines


def load_game(store: Store, number: int) -> GameRecord:
    """Game ``number`` of the store's history, as its record."""
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


def keep(store: Store, replica: Replica, table: str, saved_at: float,
         flags: Sequence[str] = (), journal: Iterable[Record] = ()) -> int | None:
    """Keep the game at ``replica``'s table in ``store`` (its summary and its whole
    record, with the rounds it forgot from its ``journal``); returns its number,
    or None when no round of it was scored. ``flags`` join the game's own
    (:data:`~p2p_nerts.store.SOLO`)."""
    kept = to_keep(record_of(replica, table, saved_at, journal), replica.me.public_key, flags)
    return None if kept is None else kept.into(store)


@dataclass(frozen=True, slots=True)
class Kept:
    """A game ready for the store: its summary and its record's bytes."""

    record: GameRecord
    game: Game
    data: bytes

    def into(self, store: Store) -> int:
        return store.keep_game(self.record.table_id, self.game["first_round"],
                               self.record.saved_at, self.game, self.data)


def to_keep(record: GameRecord, me: bytes, flags: Sequence[str] = ()) -> Kept | None:
    """The record's game as ``me`` keeps it (None: no round of it was scored).

    Pure and self-contained (the record is a copy of the table's entries), so
    a session can reckon it away from its event loop: a long game's replay
    checks every signature and every audit again.
    """
    game = summarize(record, replay(record), me)
    if game is None:
        return None
    game["flags"] += flags
    return Kept(record, game, encode(record))
