"""The package's layers, as the README draws them, read from the sources.

Every import of one ``p2p_nerts`` module by another counts (at the top, inside a
function, under ``TYPE_CHECKING``): a layer may import only the layers below
it, listed here once, and no module reaches itself through others. Read from
the sources rather than from ``sys.modules``, so an import no test happened to
run is not missed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import p2p_nerts

ROOT = Path(p2p_nerts.__file__).parent

#: What each layer (a top-level module or package of p2p_nerts) may import.
BELOW: dict[str, set[str]] = {
    "lines": set(),
    "waits": set(),
    "game": set(),
    "protocol": {"game"},
    "store": {"protocol"},
    "records": {"game", "protocol", "store", "lines"},
    "event": {"game", "protocol", "records"},
    "session": {"game", "protocol", "records", "store", "waits"},
    "lan": {"game", "session"},
    "net": {"protocol"},
    "testing": {"game", "protocol", "records", "session", "net"},
    "ui": {"game", "protocol", "records", "session", "lan", "lines"},
    "peer": {"game", "protocol", "store", "records", "event", "session", "lan", "net",
             "lines", "waits"},
    "commands": {"game", "protocol", "store", "records", "event", "session", "lan", "net",
                 "peer", "ui", "lines", "waits"},
    "cli": {"game", "protocol", "store", "records", "event", "session", "lan", "net",
            "peer", "ui", "commands", "lines", "waits", ""},
    "__main__": {"cli"},
}


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _imports(module: str) -> set[str]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:  # a submodule imported by name is that module
                whole = f"{target}.{alias.name}"
                found.add(whole if whole in MODULES else target)
    return {m for m in found if m in MODULES and m != module}


GRAPH = {m: _imports(m) for m in MODULES}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_layer_imports_only_the_layers_below_it() -> None:
    assert {_layer(m) for m in MODULES} - {""} <= set(BELOW), "a layer the list lacks"
    wrong = sorted(f"{m} -> {t}" for m, targets in GRAPH.items() for t in targets
                   if _layer(t) != _layer(m) and _layer(t) not in BELOW.get(_layer(m), set()))
    assert wrong == []


def test_no_module_reaches_itself_through_others() -> None:
    """No import circle, type-only or function-local ones included (Tarjan's
    strongly connected components, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in GRAPH:
        if root in index:
            continue
        work = [(root, iter(sorted(GRAPH[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(GRAPH[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    assert circles == []


def test_the_check_sees_an_arrow_that_breaks_a_layer() -> None:
    """The reader finds what it must: the UI's imports include the session port,
    and a relative import inside a package resolves to its module."""
    assert "p2p_nerts.session" in GRAPH["p2p_nerts.ui.app"] | {
        t for m in MODULES if m.startswith("p2p_nerts.ui") for t in GRAPH[m]}
    assert "p2p_nerts.protocol.replica._base" in GRAPH["p2p_nerts.protocol.replica"]
