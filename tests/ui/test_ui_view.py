"""The UI reads the table only through its read-only view (``Replica.view()``).

Checked on the sources, so that a screen reading the replica's state again
(``replica.rs``, a ``RoundState``) fails here rather than when that state
changes shape.
"""

from __future__ import annotations

import ast
from pathlib import Path

import p2p_nerts.ui

UI = Path(p2p_nerts.ui.__file__).parent
#: Names of the replica's own state and of its reads that a view replaces.
INTERNALS = frozenset({"rs", "prev_rs", "round_numbered", "RoundState", "Replica"})


def reads_past_the_view(source: str, filename: str = "<source>") -> list[str]:
    """Each place in ``source`` that reads the replica other than through its view:
    an attribute or import named after the replica's internals, or ``.replica``
    used for anything but ``.replica.view()``."""
    tree = ast.parse(source, filename)
    through_view = {id(node.func.value) for node in ast.walk(tree)
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "view" and isinstance(node.func.value, ast.Attribute)
                    and node.func.value.attr == "replica"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in INTERNALS:
            found.append(f"{filename}:{node.lineno}: .{node.attr}")
        elif (isinstance(node, ast.Attribute) and node.attr == "replica"
              and id(node) not in through_view):
            found.append(f"{filename}:{node.lineno}: .replica but not .replica.view()")
        elif isinstance(node, ast.ImportFrom):
            found += [f"{filename}:{node.lineno}: imports {alias.name}"
                      for alias in node.names if alias.name in INTERNALS]
    return found


def test_no_ui_module_reads_the_replica_past_its_view() -> None:
    sources = sorted(UI.glob("*.py"))
    assert len(sources) > 10 and UI / "table.py" in sources
    found = [place for path in sources
             for place in reads_past_the_view(path.read_text(), path.name)]
    assert found == []


def test_the_check_sees_what_it_forbids() -> None:
    assert reads_past_the_view("x = ctl.session.replica.view().round") == []
    assert reads_past_the_view("rs = ctl.replica.rs") == [
        "<source>:1: .rs", "<source>:1: .replica but not .replica.view()"]
    assert reads_past_the_view("phase = session.replica.phase") == [
        "<source>:1: .replica but not .replica.view()"]
    assert reads_past_the_view("from ..protocol.replica import RoundState") == [
        "<source>:1: imports RoundState"]
    assert reads_past_the_view("from ..protocol.replica import round_numbered") == [
        "<source>:1: imports round_numbered"]
