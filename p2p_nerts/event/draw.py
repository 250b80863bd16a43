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
tables from the first, and two players of neighbouring tables are swapped
where that lowers rematches, each player once at most, so nobody sits further
than the next table from their place in the standings.

Each table's host (who opens it) is its first seat: the player among them
the seed ranks first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from .entries import MAX_TABLE, MIN_TABLE, EventError

__all__ = ["Met", "draw", "swiss_from", "table_sizes"]

Met = Mapping[frozenset[bytes], int]
"""How often each pair of players has sat at one table already."""

_DOMAIN: Final = b"p2p-nerts/event-draw\x00"
#: Swap passes over every pair at most: each pass that swaps lowers the cost, which
#: is a whole number, so this only bounds a pathological input.
_MAX_PASSES: Final = 50
#: Deals tried for a mixing game at most, while rematches remain.
_ATTEMPTS: Final = 32


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
        seating = _Seating(ordered, met, sizes)
        seating.fill(range(len(ordered)))
        seating.improve(neighbours_only=True)
        tables = seating.tables()
    else:
        tables = _mixed(by_lot, met, sizes, seed)
    return [sorted(t, key=rank.__getitem__) for t in tables]


def _lot(seed: bytes, player: bytes, attempt: int = 0) -> bytes:
    extra = attempt.to_bytes(2, "big") if attempt else b""
    return hashlib.sha256(_DOMAIN + seed + extra + player).digest()


def _mixed(by_lot: list[bytes], met: Met, sizes: list[int], seed: bytes) -> list[list[bytes]]:
    """The best of a few deals (the seed's lots, then lots drawn again), each dealt and
    then improved by swaps: the first of least cost, or the first with no rematch."""
    best: _Seating | None = None
    index = {p: i for i, p in enumerate(by_lot)}
    for attempt in range(_ATTEMPTS if met else 1):
        order = (by_lot if attempt == 0
                 else sorted(by_lot, key=lambda p: _lot(seed, p, attempt)))
        seating = _Seating(by_lot, met, sizes)
        seating.deal([index[p] for p in order])
        seating.improve(neighbours_only=False)
        if best is None or seating.cost() < best.cost():
            best = seating
        if best.cost() == 0:
            break
    assert best is not None
    return best.tables()


class _Seating:
    """Players (by index) at tables, with what each would cost at each table: the
    weight of the pairs they would sit with (times met, squared), kept up to date
    as players move, so a swap is weighed in constant time."""

    def __init__(self, players: list[bytes], met: Met, sizes: list[int]) -> None:
        self.players = players
        self.sizes = sizes
        n = len(players)
        index = {p: i for i, p in enumerate(players)}
        self.weight = [[0] * n for _ in range(n)]
        for pair, times in met.items():
            if len(pair) == 2 and times > 0:
                a, b = (index.get(p) for p in pair)
                if a is not None and b is not None:
                    self.weight[a][b] = self.weight[b][a] = times * times
        self.at: list[list[int]] = [[] for _ in sizes]
        #: cost[x][t]: the weight of x's pairs with the players at table t (x aside).
        self.costs = [[0] * len(sizes) for _ in range(n)]
        #: Where `fill` sat each player first (Swiss: by standings).
        self.home = [0] * n

    def _sit(self, x: int, t: int) -> None:
        self.at[t].append(x)
        for y, w in enumerate(self.weight[x]):
            if w:
                self.costs[y][t] += w

    def fill(self, order: Iterable[int]) -> None:
        """Tables filled in turn, in ``order``: each player's home table."""
        t = 0
        for x in order:
            while len(self.at[t]) == self.sizes[t]:
                t += 1
            self._sit(x, t)
            self.home[x] = t

    def deal(self, order: Iterable[int]) -> None:
        """Each player in turn to the table with room where they weigh least (the
        emptiest, then the first, among equals)."""
        for x in order:
            c = self.costs[x]
            best = min((t for t in range(len(self.sizes)) if len(self.at[t]) < self.sizes[t]),
                       key=lambda t: (c[t], len(self.at[t]), t))
            self._sit(x, best)

    def improve(self, *, neighbours_only: bool) -> None:
        """Swap players between tables while a swap lowers the cost, in a fixed order
        (tables, then seats, in turn; each improving swap made as found) until a pass
        swaps nothing. ``neighbours_only``: only two players each at their home table,
        the tables next to each other."""
        tables = len(self.sizes)
        for _ in range(_MAX_PASSES):
            swapped = False
            for i in range(tables):
                last = min(i + 2, tables) if neighbours_only else tables
                for j in range(i + 1, last):
                    for a in range(len(self.at[i])):
                        for b in range(len(self.at[j])):
                            p, q = self.at[i][a], self.at[j][b]
                            if neighbours_only and (self.home[p], self.home[q]) != (i, j):
                                continue  # a player moves one table at most
                            w = self.weight[p][q]
                            cp, cq = self.costs[p], self.costs[q]
                            if cq[i] + cp[j] - 2 * w < cp[i] + cq[j]:
                                self._swap(i, a, j, b)
                                swapped = True
            if not swapped:
                return

    def _swap(self, i: int, a: int, j: int, b: int) -> None:
        p, q = self.at[i][a], self.at[j][b]
        self.at[i][a], self.at[j][b] = q, p
        wp, wq = self.weight[p], self.weight[q]
        for y, cy in enumerate(self.costs):
            d = wq[y] - wp[y]
            if d:
                cy[i] += d
                cy[j] -= d

    def cost(self) -> int:
        """The weight of every pair seated together (each pair once)."""
        return sum(self.costs[x][t] for t, table in enumerate(self.at) for x in table) // 2

    def tables(self) -> list[list[bytes]]:
        return [[self.players[x] for x in table] for table in self.at]
