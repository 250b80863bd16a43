"""The seating draw: even tables of 3 to 5, the same from the same inputs, pairs who
met kept apart, Swiss by standings later."""

from __future__ import annotations

import hashlib

import pytest

from p2p_nerts.event.draw import draw, swiss_from, table_sizes
from p2p_nerts.event.entries import EventError


def _keys(n: int) -> list[bytes]:
    return [hashlib.sha256(b"k%d" % i).digest() for i in range(n)]


@pytest.mark.parametrize(("n", "size", "sizes"), [
    (13, 4, [4, 3, 3, 3]), (12, 4, [4, 4, 4]), (12, 3, [3, 3, 3, 3]), (11, 5, [4, 4, 3]),
    (2, 4, [2]), (3, 4, [3]), (5, 4, [5]), (7, 3, [4, 3]), (200, 4, [4] * 50)])
def test_tables_are_as_even_as_can_be(n: int, size: int, sizes: list[int]) -> None:
    assert table_sizes(n, size) == sizes


def test_impossible_draws_are_refused() -> None:
    with pytest.raises(EventError, match="two players"):
        table_sizes(1, 4)
    with pytest.raises(EventError, match="3 to 5"):
        table_sizes(10, 6)
    with pytest.raises(EventError, match="twice"):
        draw([b"a" * 32, b"a" * 32, b"b" * 32], {}, [], bytes(32), 4, 1)


def test_the_draw_is_a_function_of_its_inputs() -> None:
    keys = _keys(13)
    one = draw(keys, {}, [], bytes(32), 4, 1)
    assert draw(list(reversed(keys)), {}, [], bytes(32), 4, 1) == one
    assert draw(keys, {}, [], bytes(31) + b"\x01", 4, 1) != one


def test_players_who_met_are_kept_apart_when_they_can_be() -> None:
    keys = _keys(16)
    first = draw(keys, {}, [], bytes(32), 4, 1)
    met = {frozenset((p, q)): 1 for t in first for p in t for q in t if p != q}
    second = draw(keys, met, [], bytes(32), 4, 2)
    assert all(frozenset((p, q)) not in met for t in second for p in t for q in t if p != q)


def test_swiss_seats_by_standings() -> None:
    keys = _keys(12)
    standings = sorted(keys)
    tables = draw(keys, {}, standings, bytes(32), 4, 3, swiss=3)
    assert [sorted(t) for t in tables] == [standings[0:4], standings[4:8], standings[8:12]]
    assert swiss_from(4) == 3 and swiss_from(1) == 2 and swiss_from(5) == 4
