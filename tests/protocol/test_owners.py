"""The replica's rule of where state changes, read from the sources: a round's
``RoundState`` changes only in its own methods (``_state``), the game's phase,
rounds, match and totals only in ``Game``'s (``_game``).

Read from the sources rather than exercised, so a change no test happens to
run is not missed: outside its owner's module, no field of a round is assigned
or deleted, and none of its lists, dicts, sets or heaps is filled or emptied in
place.
"""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import pytest

from p2p_nerts.protocol import replica
from p2p_nerts.protocol.replica import RoundState

pytestmark = pytest.mark.fast

PACKAGE = Path(replica.__file__).parent
ROUND_FIELDS = frozenset(f.name for f in fields(RoundState))
GAME_FIELDS = frozenset({"phase", "rs", "prev_rs", "match", "totals"})
#: What changes a list, dict, set or heap in place.
MUTATORS = frozenset({"add", "append", "clear", "discard", "extend", "insert", "pop",
                      "popitem", "remove", "setdefault", "update"})
HEAP = frozenset({"heappush", "heappop", "heapify", "heapreplace", "heappushpop"})


def _owned(node: ast.expr) -> str | None:
    """The owned field ``node`` reaches (``rs.field``, ``rs.field[...]``,
    ``game.phase``...), or None. Any receiver but ``self`` may hold a round; only
    one named ``game`` holds the game."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
        return None
    receiver = node.value.id
    if receiver == "game" and node.attr in GAME_FIELDS:
        return f"game.{node.attr}"
    if receiver != "self" and node.attr in ROUND_FIELDS:
        return f"{receiver}.{node.attr}"
    return None


def _changes(tree: ast.AST) -> list[tuple[int, str]]:
    """Where ``tree`` changes an owned field in place: (line, what)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets
                       for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in MUTATORS:
                targets = [node.func.value]
            elif node.func.attr in HEAP and node.args:
                targets = [node.args[0]]
        if targets:
            assert isinstance(node, (ast.stmt, ast.expr))
            found += [(node.lineno, what) for t in targets if (what := _owned(t)) is not None]
    return sorted(found)


def test_a_round_and_the_game_change_only_in_their_owners_methods() -> None:
    owners = {"_state.py", "_game.py"}
    changed = {f"{path.name}:{line}: {what}"
               for path in sorted(PACKAGE.glob("*.py")) if path.name not in owners
               for line, what in _changes(ast.parse(path.read_text(), str(path)))}
    assert not changed


def test_the_check_finds_a_change_in_place() -> None:
    """The check above can fail: each way of changing a field in place is found."""
    source = """
rs.end = "nerts"
rs.results, rs.verdicts = (), ()
rs.acks[1] = (2, 3)
rs.ended_at += 1.0
del rs.early_marks[0]
rs.live.discard(2)
heapq.heappush(rs.ordered, item)
game.phase = Phase.OVER
self.live = live
"""
    assert [what for _, what in _changes(ast.parse(source))] == [
        "rs.end", "rs.results", "rs.verdicts", "rs.acks", "rs.ended_at", "rs.early_marks",
        "rs.live", "rs.ordered", "game.phase"]
