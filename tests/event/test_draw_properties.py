"""Properties of the seating draw over any players, history and seed: every player
seated once at tables as even as can be, the same tables from the same inputs in
any order, no single swap that would part a pair who met, Swiss by standings."""

from __future__ import annotations

import hashlib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from p2p_nerts.event.draw import Met, draw, table_sizes

SETTINGS = settings(max_examples=150, deadline=None)


def _keys(n: int, salt: int) -> list[bytes]:
    return [hashlib.sha256(b"%d/%d" % (salt, i)).digest() for i in range(n)]


@st.composite
def evenings(draw_: st.DrawFn, most: int = 60) -> tuple[list[bytes], Met, bytes, int, int]:
    """Players, pairs met (from earlier seatings of them), a seed, a table size, a game."""
    n = draw_(st.integers(2, most))
    size = draw_(st.integers(3, 5))
    players = _keys(n, draw_(st.integers(0, 10**6)))
    rng = random.Random(draw_(st.integers(0, 2**32)))
    met: dict[frozenset[bytes], int] = {}
    for _ in range(draw_(st.integers(0, 4))):
        order = rng.sample(players, n)
        at = 0
        for seats in table_sizes(n, size):
            table = order[at:at + seats]
            at += seats
            for i, p in enumerate(table):
                for q in table[i + 1:]:
                    met[frozenset((p, q))] = met.get(frozenset((p, q)), 0) + 1
    seed = draw_(st.binary(min_size=32, max_size=32))
    return players, met, seed, size, draw_(st.integers(1, 8))


@SETTINGS
@given(n=st.integers(2, 300), size=st.integers(3, 5))
def test_tables_are_as_even_as_can_be(n: int, size: int) -> None:
    sizes = table_sizes(n, size)
    assert sum(sizes) == n and max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes)[::-1]
    assert max(sizes) <= 5
    if n >= 3:
        assert min(sizes) >= 3
    # At most ``size`` a table whenever tables of 3..size can seat everyone.
    if any(3 * t <= n <= size * t for t in range(1, n + 1)):
        assert max(sizes) <= size
        assert len(sizes) == -(-n // size)  # and as few tables as that allows


@SETTINGS
@given(evenings(), st.randoms(use_true_random=False))
def test_everyone_is_seated_once_and_the_draw_depends_only_on_its_inputs(
        evening: tuple[list[bytes], Met, bytes, int, int], rng: random.Random) -> None:
    players, met, seed, size, game = evening
    tables = draw(players, met, [], seed, size, game)
    assert sorted(p for t in tables for p in t) == sorted(players)
    assert [len(t) for t in tables] == table_sizes(len(players), size)
    shuffled = rng.sample(players, len(players))
    reordered = dict(rng.sample(sorted(met.items(), key=repr), len(met)))
    assert draw(shuffled, reordered, [], seed, size, game) == tables


def _weight(met: Met, p: bytes, table: list[bytes]) -> int:
    return sum(met.get(frozenset((p, q)), 0) ** 2 for q in table if q != p)


@SETTINGS
@given(evenings(most=40))
def test_no_single_swap_would_part_more_who_met(
        evening: tuple[list[bytes], Met, bytes, int, int]) -> None:
    """Pairs met weigh their times met squared: the draw leaves no two players at two
    tables whose swap would lower that weight."""
    players, met, seed, size, game = evening
    tables = draw(players, met, [], seed, size, game)
    for i, ti in enumerate(tables):
        for tj in tables[i + 1:]:
            for p in ti:
                for q in tj:
                    before = _weight(met, p, ti) + _weight(met, q, tj)
                    after = (_weight(met, q, [x for x in ti if x != p])
                             + _weight(met, p, [x for x in tj if x != q]))
                    assert after >= before


@SETTINGS
@given(evenings(most=80))
def test_a_second_game_has_no_rematch_where_one_can_be_avoided(
        evening: tuple[list[bytes], Met, bytes, int, int]) -> None:
    """After one game, everyone can sit with new people when there are as many tables as
    seats at one (each table then takes one player of each first table at most; 13
    players at tables of 4 are 4+3+3+3): the second game's draw has no rematch."""
    players, _met, seed, size, _game = evening
    sizes = table_sizes(len(players), size)
    if len(sizes) < max(sizes):
        return
    first = draw(players, {}, [], seed, size, 1)
    met = {frozenset((p, q)): 1 for t in first for p in t for q in t if p != q}
    second = draw(players, met, [], seed[::-1], size, 2)
    assert not any(frozenset((p, q)) in met for t in second for p in t for q in t if p != q)


@SETTINGS
@given(evenings())
def test_swiss_seats_neighbours_in_the_standings_together(
        evening: tuple[list[bytes], Met, bytes, int, int]) -> None:
    players, met, seed, size, game = evening
    standings = sorted(players)
    sizes = table_sizes(len(players), size)
    fresh = draw(players, {}, standings, seed, size, game, swiss=game)
    at = 0
    for table, seats in zip(fresh, sizes, strict=True):
        assert sorted(table) == standings[at:at + seats]  # nobody met: exactly by standings
        at += seats
    place = {p: i for i, p in enumerate(standings)}
    tables = draw(players, met, standings, seed, size, game, swiss=game)
    assert sorted(p for t in tables for p in t) == standings
    # Rematches parted by swaps between neighbouring tables: nobody moves further.
    home = [index for index, seats in enumerate(sizes) for _ in range(seats)]
    for index, table in enumerate(tables):
        assert all(abs(home[place[p]] - index) <= 1 for p in table)
    assert _rematches(met, tables) <= _rematches(met, fresh)


def _rematches(met: Met, tables: list[list[bytes]]) -> int:
    return sum(_weight(met, p, t) for t in tables for p in t)
