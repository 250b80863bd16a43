"""scripts/tui_smoke: `nerts solo` in a real terminal (tmux), when tmux is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tui_smoke"


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_solo_in_a_real_terminal_shows_the_table_and_quits() -> None:
    result = subprocess.run([str(SCRIPT)], env={**os.environ, "PYTHON": sys.executable},
                            capture_output=True, text=True, timeout=90, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "You: Smoke" in result.stdout and "Foundations" in result.stdout
