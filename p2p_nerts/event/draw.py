"""The seating draw: who sits with whom in one game, from inputs anyone can hold.

Pure and deterministic: the same players, pairs already met, standings, seed,
table size and game number give the same tables on every machine, in any
implementation (the only randomness is SHA-256 of the seed and a key), so a
player who holds the event's entries draws each seating again and sees
whether the organiser followed the rule.

Tables hold 3 to 5 players, as even as can be: as few tables as the table size
allows, sizes differing by one at most, larger tables first (13 players at
most 4 a table: 4+3+3+3). Only an event of fewer than three (or one that
cannot split, as 4 players at most 3 a table) sits at one table.

Mixing, the first games: the players are dealt to tables in an order drawn
from the seed, each to the table where they have met the fewest so far; then
players are swapped between tables while a swap lowers the number of times
the players at each table met before (a pair met twice weighs twice). Swiss,
the later games (``swiss_from`` on): the players in standings order fill the
tables from the first, and players of neighbouring tables are swapped only
where that lowers rematches, so each table still holds players of like
standing.

Each table's host (who opens it) is its first seat: the player among them
the seed ranks first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Final

from .entries import MAX_TABLE, MIN_TABLE, EventError

__all__ = ["Met", "draw", "swiss_from", "table_sizes"]

Met = Mapping[frozenset[bytes], int]
"""How often each pair of players has sat at one table already."""

_DOMAIN: Final = b"p2p-nerts/event-draw\x00"
#: Swap passes over every pair at most: each pass that swaps lowers the cost, which
#: is a whole number, so this only bounds a pathological input.
_MAX_PASSES: Final = 50


def table_sizes(n: int, table_size: int) -> list[int]:
    """How many sit at each table: as even as can be, larger first, 3..``table_size``."""
    if not MIN_TABLE <= table_size <= MAX_TABLE:
        raise EventError(f"a table seats {MIN_TABLE} to {MAX_TABLE} players, "
                         f"not {table_size}")
    if n < 2:
        raise EventError("a game needs two players at least")
    tables = -(-n // table_size)
    if n < MIN_TABLE * tables:  # cannot split into tables of three or more
        tables = max(1, n // MIN_TABLE)
    base, extra = divmod(n, tables)
    return [base + 1] * extra + [base] * (tables - extra)


def swiss_from(games: int) -> int:
    """The first game drawn by standings: the second half of the event's games
    (never the first game: nothing is known of anyone yet)."""
    return max(2, -(-games // 2) + 1)


def draw(players: Sequence[bytes], met: Met, standings: Sequence[bytes], seed: bytes,
         table_size: int, game_no: int, *, swiss: int | None = None) -> list[list[bytes]]:
    """The tables of game ``game_no``: each a list of keys, its host first.

    ``standings`` are keys best first (players absent from it come after, in the
    seed's order); ``swiss`` the first game drawn by standings (None: never).
    """
    if len(set(players)) != len(players):
        raise EventError("a player twice in a draw")
    sizes = table_sizes(len(players), table_size)
    rank = {p: _lot(seed, p) for p in players}
    by_lot = sorted(players, key=rank.__getitem__)
    if swiss is not None and game_no >= swiss:
        place = {p: i for i, p in enumerate(standings)}
        ordered = sorted(by_lot, key=lambda p: place.get(p, len(place)))
        tables = _filled(ordered, sizes)
        _improve(tables, met, neighbours_only=True)
    else:
        tables = _dealt(by_lot, sizes, met)
        _improve(tables, met, neighbours_only=False)
    return [sorted(t, key=rank.__getitem__) for t in tables]


def _lot(seed: bytes, player: bytes) -> bytes:
    return hashlib.sha256(_DOMAIN + seed + player).digest()


def _filled(ordered: list[bytes], sizes: list[int]) -> list[list[bytes]]:
    tables, at = [], 0
    for size in sizes:
        tables.append(ordered[at:at + size])
        at += size
    return tables


def _dealt(order: list[bytes], sizes: list[int], met: Met) -> list[list[bytes]]:
    """Each player in turn to the table with room where they met fewest (the emptiest,
    then the first, among equals)."""
    tables: list[list[bytes]] = [[] for _ in sizes]
    for p in order:
        best = min((i for i, t in enumerate(tables) if len(t) < sizes[i]),
                   key=lambda i: (_cost_with(p, tables[i], met), len(tables[i]), i))
        tables[best].append(p)
    return tables


def _cost_with(p: bytes, table: Sequence[bytes], met: Met) -> int:
    return sum(met.get(frozenset((p, q)), 0) for q in table if q != p)


def _improve(tables: list[list[bytes]], met: Met, *, neighbours_only: bool) -> None:
    """Swap players between tables while a swap lowers rematches, in a fixed order:
    first improving swap found, then on from there, until a pass swaps nothing."""
    if not met:
        return
    for _ in range(_MAX_PASSES):
        swapped = False
        for i in range(len(tables)):
            others = (range(i + 1, min(i + 2, len(tables))) if neighbours_only
                      else range(i + 1, len(tables)))
            for j in others:
                for a in range(len(tables[i])):
                    for b in range(len(tables[j])):
                        p, q = tables[i][a], tables[j][b]
                        before = _cost_with(p, tables[i], met) + _cost_with(q, tables[j], met)
                        rest_i = [x for x in tables[i] if x != p]
                        rest_j = [x for x in tables[j] if x != q]
                        after = _cost_with(q, rest_i, met) + _cost_with(p, rest_j, met)
                        if after < before:
                            tables[i][a], tables[j][b] = q, p
                            swapped = True
        if not swapped:
            return
