#!/usr/bin/env python3
"""Compile the rules engine (``p2p_nerts/game``) to C with mypyc: an optional speed-up.

With it goes a received play's path in the protocol (``PROTOCOL``: the
envelope, the payloads, per-author sequencing, the clock, the events, the
journal records, and the replica with the sub-machines a play passes
through). The replica stays open to subclasses in Python (the tests' hostile
replicas override its methods); patching its class or an instance, as the
soak's adversaries do, needs the pure package.

The pure-Python package stays the reference and the fallback: nothing imports
or needs the compiled modules, and a checkout without them plays the same.
mypyc turns the already type-checked modules into extension modules that sit
beside their sources, where Python's import prefers them.

- ``compile_engine.py``: compile the package this Python imports (a checkout
  or an editable install; a plain install's copy in site-packages too).
- ``compile_engine.py --out DIR``: copy the package to ``DIR`` and compile the
  copy, leaving the sources alone; use it with ``PYTHONPATH=DIR`` for a script,
  or from ``DIR`` for ``python -m`` and pytest, which put the working directory
  (a checkout's sources) first on the path (CI runs the fast tier in ``DIR``).
- ``compile_engine.py --clean``: remove compiled modules, back to pure Python.

Needs mypy (it brings mypyc; ``pip install -e '.[test]'`` has it) and a C
compiler with the Python headers. Compile again after changing a source file:
a stale compiled module would shadow it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

ENGINE = "game"
#: Paths under the package: what a received play runs through.
PROTOCOL = (
    "protocol/envelope.py",
    "protocol/authors.py",
    "protocol/clock.py",
    "protocol/events.py",
    "protocol/journal.py",
    "protocol/messages/__init__.py",
    "protocol/messages/_codec.py",
    "protocol/messages/_fields.py",
    "protocol/messages/_link.py",
    "protocol/messages/_lobby.py",
    "protocol/messages/_repair.py",
    "protocol/messages/_round.py",
    "protocol/replica/_base.py",
    "protocol/replica/_delivery.py",
    "protocol/replica/_effects.py",
    "protocol/replica/_ephemera.py",
    "protocol/replica/_forks.py",
    "protocol/replica/_heartbeats.py",
    "protocol/replica/_intake.py",
    "protocol/replica/_liveness.py",
    "protocol/replica/_order.py",
    "protocol/replica/_outbox.py",
    "protocol/replica/_recovery.py",
    "protocol/replica/_replica.py",
    "protocol/replica/_rounds.py",
    "protocol/replica/_seating.py",
    "protocol/replica/_state.py",
    "protocol/replica/_step_effects.py",
)


def package_dir() -> Path:
    spec = importlib.util.find_spec("p2p_nerts")
    if spec is None or spec.origin is None:
        raise SystemExit("compile_engine: p2p_nerts is not importable from this Python")
    return Path(spec.origin).parent


def sources(package: Path) -> list[Path]:
    """The modules to compile: the whole engine and a received play's path."""
    return sorted([*(package / ENGINE).glob("*.py"), *(package / p for p in PROTOCOL)])


def compiled_modules(package: Path) -> list[Path]:
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return [built for source in sources(package)
            if (built := source.with_name(source.stem + suffix)).exists()]


def clean(package: Path) -> int:
    for module in compiled_modules(package):
        module.unlink()
    for helper in package.parent.glob("*__mypyc*"):
        helper.unlink()
    return 0


def compile_in(package: Path) -> None:
    """Compile ``package``'s engine in place: C sources and objects in a temporary dir."""
    try:
        from mypyc.build import mypycify
        from setuptools import setup  # type: ignore[import-untyped]
    except ImportError as exc:
        raise SystemExit(f"compile_engine: needs mypy and setuptools ({exc.name} is missing): "
                         "pip install mypy setuptools") from exc
    modules = [str(p.relative_to(package.parent)) for p in sources(package)]
    root = package.parent
    with tempfile.TemporaryDirectory(prefix="nerts-mypyc-") as tmp:
        saved = Path.cwd()
        os.chdir(root)  # mypyc names modules by their paths from here
        try:
            setup(name="p2p-nerts-engine", ext_modules=mypycify(modules, target_dir=tmp),
                  script_args=["-q", "build_ext", "--inplace", "--build-temp", tmp,
                               "--build-lib", tmp])
        finally:
            os.chdir(saved)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="compile a copy of the package in this dir")
    parser.add_argument("--clean", action="store_true", help="remove compiled modules")
    args = parser.parse_args()
    package = package_dir()
    if args.clean:
        return clean(package)
    if args.out is not None:
        target = args.out / "p2p_nerts"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(package, target, ignore=shutil.ignore_patterns(
            "__pycache__", f"*{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"))
        package = target
    compile_in(package)
    built = compiled_modules(package)
    if not built:
        print("compile_engine: mypyc built nothing", file=sys.stderr)
        return 1
    print(f"compiled {len(built)} modules (p2p_nerts/{ENGINE} and "
          f"{len(PROTOCOL)} of p2p_nerts/protocol) in {package}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
