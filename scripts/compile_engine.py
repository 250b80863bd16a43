#!/usr/bin/env python3
"""Build the compiled package from these sources into a directory, for the benchmarks.

A thin wrapper over the package's own build: ``pip wheel`` with the config
setting ``compile=1`` (``setup.py`` says what is compiled, and why), in pip's
clean build environment, then the wheel installed without its dependencies
into ``DIR`` with ``pip install --target``. The sources stay as they are, so
a checkout keeps playing pure; use the build with ``PYTHONPATH=DIR`` for a
script, or from ``DIR`` for ``python -m`` and pytest, which put the working
directory (a checkout's sources) first on the path. ``bench_engine.py`` and
``bench_replica.py`` take such a ``DIR`` as ``--compiled DIR``.

To install the compiled build itself: ``NERTS_COMPILE=1 pip install .``.

Usage: ``scripts/compile_engine.py --out DIR`` (needs pip, a C compiler and
the Python headers; the build fetches mypy for itself). Build again after
changing a source file: the build in ``DIR`` does not follow the sources.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build(out: Path) -> str:
    """Build the compiled wheel and install it into ``out``; the wheel's name is returned.

    Exits with one line when the build fails or falls back to pure Python (no C
    compiler or headers: the build's own line says which).
    """
    with tempfile.TemporaryDirectory(prefix="nerts-wheel-") as wheels:
        built = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--wheel-dir", wheels,
             "--config-settings", "compile=1", str(ROOT)],
            capture_output=True, text=True, check=False)
        if built.returncode != 0:
            sys.stderr.write(built.stdout[-4000:] + built.stderr[-4000:])
            raise SystemExit("compile_engine: the build failed (its output is above)")
        [wheel] = Path(wheels).glob("p2p_nerts-*.whl")
        if wheel.name.endswith("-none-any.whl"):
            why = [line.strip() for line in built.stdout.splitlines() if "p2p-nerts:" in line]
            raise SystemExit("compile_engine: the build made the pure package: "
                             + (" ".join(why) or "no extension modules"))
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade",
                        "--target", str(out), str(wheel)], check=True)
        return wheel.name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="install the compiled build here")
    args = parser.parse_args()
    wheel = build(args.out)
    print(f"built {wheel} and installed it in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
