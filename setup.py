"""The compiled build: the engine and a received play's path as mypyc extension modules.

Everything else about the package is in ``pyproject.toml``; this file only
decides which extension modules a wheel carries. None, by default: the
pure-Python package is the reference, plays exactly alike, and is what a
machine without a C compiler gets. ``NERTS_COMPILE=1`` (or the config setting
``compile=1``, which the in-tree backend in ``build_backend/`` turns into it)
compiles the modules below with mypyc into extension modules that Python
imports instead of their sources (``nerts --version`` says which build runs).

Compiled with the engine (``ENGINE``) goes what a received play passes through
(``PROTOCOL``: the envelope, the payloads, per-author sequencing, the clock, the
events, the journal records, and the replica with its sub-machines). The
replica stays open to subclasses in Python (the tests' hostile replicas
override its methods); patching its class or an instance, as the soak's
adversaries and ``bench_net`` do, needs the pure package.

With the switch on but no working C compiler (or no Python headers, or no
mypy), the build says why in one line on stderr and builds the pure package.
A failure of mypyc itself stops the build: a compiled build asked for and
silently not made would hide it.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
from pathlib import Path

from setuptools import Extension, setup

#: The switch: the backend checks it (or the config setting ``compile``) and sets
#: it to 1 or 0 for this file in every hook, 1 only for the wheel of a compiled build.
SWITCH = "NERTS_COMPILE"
#: The rules engine, every module of it.
ENGINE = "p2p_nerts/game"
#: What a received play runs through, under the package.
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
    "protocol/replica/_game.py",
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
)


def sources() -> list[str]:
    """The modules to compile, as paths from the project's root (mypyc names them so)."""
    game = sorted(str(path) for path in Path(ENGINE).glob("*.py"))
    return [*game, *(f"p2p_nerts/{path}" for path in PROTOCOL)]


def cannot_compile() -> str | None:
    """Why this machine cannot build the extension modules, or None when it can.

    A C file that includes Python's header is compiled with the compiler and the
    flags setuptools would use (``CC`` and the rest honoured), so a missing
    compiler or missing headers show here, before mypyc starts.
    """
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypy (which brings mypyc) is not installed in the build environment"
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.errors import (
        CompileError,
        DistutilsExecError,
        DistutilsPlatformError,
    )
    from setuptools._distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory(prefix="nerts-cc-") as tmp:
        probe = Path(tmp, "probe.c")
        probe.write_text("#include <Python.h>\nint probe(void) { return 0; }\n")
        try:
            compiler.compile([str(probe)], output_dir=tmp,
                             include_dirs=[sysconfig.get_path("include")])
        except (CompileError, DistutilsExecError, DistutilsPlatformError, OSError) as exc:
            reason = " ".join(str(exc).split())
            return f"no working C compiler with Python's headers ({reason})"
    return None


def extension_modules() -> list[Extension]:
    if os.environ.get(SWITCH) != "1":
        return []
    reason = cannot_compile()
    if reason is not None:
        print(f"p2p-nerts: {SWITCH}=1 but {reason}: building the pure-Python package",
              file=sys.stderr)
        return []
    from mypyc.build import mypycify

    return mypycify(sources(), opt_level="3")


setup(ext_modules=extension_modules())
