"""The event's core is sans-I/O: nothing it imports, however indirectly, is network,
peer, screen or session code (read from the sources, so no import is missed for
not having run)."""

from __future__ import annotations

import ast
from pathlib import Path

import p2p_nerts

ROOT = Path(p2p_nerts.__file__).parent
FORBIDDEN = ("p2p_nerts.net", "p2p_nerts.peer", "p2p_nerts.ui", "p2p_nerts.session",
             "p2p_nerts.lan", "p2p_nerts.cli", "p2p_nerts.commands")


def _source(module: str) -> Path | None:
    parts = module.split(".")[1:]
    package = ROOT.joinpath(*parts, "__init__.py")
    if package.exists():
        return package
    plain = ROOT.joinpath(*parts[:-1], parts[-1] + ".py") if parts else None
    return plain if plain is not None and plain.exists() else None


def _imports(module: str, path: Path) -> set[str]:
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found |= {f"{target}.{a.name}" for a in node.names}
    return {m for m in found if m.startswith("p2p_nerts")}


def _closure(start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        path = _source(module)
        if module in seen or path is None:
            continue
        seen.add(module)
        todo += sorted(_imports(module, path))
        parent = module.rsplit(".", 1)[0]
        if parent != module:
            todo.append(parent)
    return seen


def test_the_event_package_imports_only_game_protocol_and_records() -> None:
    reached = _closure("p2p_nerts.event.export") | _closure("p2p_nerts.event.journal")
    assert "p2p_nerts.records.standings" in reached and "p2p_nerts.event.book" in reached
    assert sorted(m for m in reached if m.startswith(FORBIDDEN)) == []


def test_the_check_would_see_a_forbidden_import() -> None:
    assert any(m.startswith("p2p_nerts.net") for m in _closure("p2p_nerts.commands.records"))
