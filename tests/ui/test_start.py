"""Starting the game: ``python -m p2p_nerts``, a screen that hears the session's first
events, and a clear line (not a traceback) when there is no terminal to draw in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prompt_toolkit.input import create_pipe_input

from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.session import Listener, LocalTable
from p2p_nerts.testing.screen import FixedOutput
from p2p_nerts.ui.app import NertsApp
from p2p_nerts.ui.config import Config


def _nerts(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NERTS_HOME": str(tmp_path / "home")}
    return subprocess.run([sys.executable, "-m", "p2p_nerts", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, env=env, timeout=60, check=False)


def test_python_m_runs_the_nerts_command(tmp_path: Path) -> None:
    done = _nerts(tmp_path, "--help")
    assert done.returncode == 0
    assert done.stdout.startswith("usage: nerts ") and "simulate" in done.stdout


class BackloggedTable(LocalTable):
    """A table that, as a networked session does, hands its first listener the events
    it had before anyone listened, from inside ``subscribe``."""

    def subscribe(self, listener: Listener) -> None:
        super().subscribe(listener)
        listener(ev.Notice("heard before the screen was up"))


def test_the_screen_hears_a_backlog_handed_over_at_subscribe() -> None:
    table = BackloggedTable(Identity.from_seed(b"\x05" * 32, "Tess"), bots=1, seed=1)
    with create_pipe_input() as pipe:
        ui = NertsApp(table, Config(), input=pipe, output=FixedOutput(100, 32))
    assert [line.text for line in ui.ctl.state.lines] == ["heard before the screen was up"]


def test_without_a_terminal_solo_ends_in_one_clear_line(tmp_path: Path) -> None:
    done = _nerts(tmp_path, "solo")
    assert done.returncode == 1
    assert done.stderr.startswith("nerts: the game needs a terminal, and stdin is not one")
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "home").exists()  # nothing was made for a game never played


def test_without_a_terminal_the_lobby_and_a_screen_seat_say_so_too(tmp_path: Path) -> None:
    for args in (("--interfaces", "127.0.0.1"), ("join", "127.0.0.1:9", "--bind", "127.0.0.1")):
        done = _nerts(tmp_path, *args)
        assert done.returncode == 1, args
        assert "the game needs a terminal" in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.splitlines()) == 1, done.stderr
