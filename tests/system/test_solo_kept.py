"""`nerts solo` killed after a round (SIGHUP: its terminal closed; SIGTERM) loses no round:
`nerts history` has it, and `nerts solo --resume` goes on with the game. In a real
terminal (tmux, on a server of the test's own), when tmux is installed.

Every wait is on a condition (the screen, the player's database, the process), with
deadlines generous enough for a machine under load; the computer players think
twenty times faster than at a real table (``--pace 0.05``), and under share-a-deck
one plays the player's tableau too, so every round ends by itself.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from p2p_nerts.store import DB_FILE

pytestmark = [pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
              pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 300.0  # seconds for anything to happen: a round, a start, an exit
SOLO = ["solo", "--teams", "share", "--bots", "2", "--skill", "hard", "--pace", "0.05",
        "--target", "5000"]
EXITED = "nerts exited with "


class Terminal:
    """A tmux server of this test's own, and one window running a command in it.

    Each start has a server of its own: a server told to go (``close``) may still
    hold its socket a moment, and a new session on that socket then fails."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.started = 0
        self.socket = self._socket()

    def _socket(self) -> str:
        return f"nerts-kept-{os.getpid()}-{id(self)}-{self.started}"

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True,
                              text=True, timeout=30, check=True).stdout

    def start(self, *args: str) -> int:
        """Run ``nerts ARGS`` in a fresh 100x32 window; the nerts process's id."""
        self.started += 1
        self.socket = self._socket()
        nerts = shlex.join([sys.executable, "-m", "p2p_nerts", *args])
        command = (f"cd {shlex.quote(str(ROOT))} && env NERTS_HOME={shlex.quote(str(self.home))}"
                   f" PYTHONPATH={shlex.quote(str(ROOT))} TERM=xterm-256color {nerts};"
                   f" echo '{EXITED}'$?; sleep 600")
        self.tmux("new-session", "-d", "-s", "nerts", "-x", "100", "-y", "32", command)
        shell = int(self.tmux("display-message", "-p", "-t", "nerts", "#{pane_pid}"))
        wait_until(lambda: bool(_children(shell)), "nerts to start")
        return _children(shell)[0]

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "nerts")

    def shows(self, text: str) -> None:
        wait_until(lambda: text in self.screen(), f"the screen to show {text!r}", self.screen)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "nerts", *keys)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True,
                       timeout=30, check=False)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def wait_until(done: Callable[[], bool], what: str,
               showing: Callable[[], str] = lambda: "") -> None:
    give_up = time.monotonic() + DEADLINE
    while not done():
        if time.monotonic() > give_up:
            pytest.fail(f"timed out waiting for {what}\n{showing()}")
        time.sleep(0.2)


def kept_rounds(home: Path) -> list[tuple[int, list[int]]]:
    """The games in the player's database as a running nerts has written them (read-only:
    that nerts holds the store): each one's number and rounds."""
    db = home / DB_FILE
    if not db.exists():
        return []
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            rows = conn.execute("SELECT id, summary FROM games ORDER BY id").fetchall()
    except sqlite3.Error:
        return []  # not made yet
    return [(n, [r["round"] for r in json.loads(summary)["rounds"]]) for n, summary in rows]


def history(home: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "p2p_nerts", "history", "--json"],
                          env={**os.environ, "NERTS_HOME": str(home), "PYTHONPATH": str(ROOT)},
                          cwd=ROOT, capture_output=True, text=True, timeout=DEADLINE,
                          check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text('name = "Kept"\n', encoding="utf-8")
    term = Terminal(home)
    try:
        yield term
    finally:
        term.close()


@pytest.mark.slow
@pytest.mark.parametrize("end", ["SIGHUP", "SIGTERM", "closed terminal", "SIGKILL"])
def test_a_solo_game_killed_after_a_round_is_kept_and_goes_on(
        terminal: Terminal, end: str) -> None:
    """SIGHUP and SIGTERM leave the table as a quit does; a terminal closed (SIGHUP, no
    terminal left to draw on) and a crash (SIGKILL) end the process where it is: each
    time, the round played is in the history and the game goes on from its journals."""
    home = terminal.home
    pid = terminal.start(*SOLO)
    terminal.shows("deal")
    terminal.keys("Enter")
    wait_until(lambda: any(rounds == [1] for _n, rounds in kept_rounds(home)),
               "round 1 in the history", terminal.screen)
    [(number, _rounds)] = kept_rounds(home)
    if end == "closed terminal":
        terminal.close()
    else:
        os.kill(pid, getattr(signal, end))
    wait_until(lambda: gone(pid), "nerts to end", terminal.screen)
    if end in ("SIGHUP", "SIGTERM"):
        terminal.shows(EXITED + "0")
        assert (f"game #{number} kept: nerts history; nerts solo --resume goes on with it"
                in terminal.screen())
        assert "Traceback" not in terminal.screen()

    [game] = history(home)["games"]
    assert game["number"] == number
    assert [r["round"] for r in game["rounds"]] == [1]
    assert game["flags"] == ["unfinished", "solo"]  # not abandoned: it can go on
    totals = {p["fingerprint"]: p["total"] for p in game["players"]}
    terminal.close()

    pid = terminal.start("solo", "--resume")
    terminal.shows("deal the next round")  # the game as it was left, between rounds
    terminal.keys("Enter")
    wait_until(lambda: (number, [1, 2]) in kept_rounds(home), "round 2 in the same game",
               terminal.screen)
    terminal.keys("q")
    terminal.shows("Leave the table?")
    terminal.keys("y")
    terminal.shows(EXITED + "0")
    assert (f"game #{number} kept: nerts history; nerts solo --resume goes on with it"
            in terminal.screen())

    [game] = history(home)["games"]
    assert game["number"] == number and [r["round"] for r in game["rounds"]] == [1, 2]
    second = game["rounds"][1]["scores"]
    assert {p["fingerprint"]: p["total"] for p in game["players"]} == {
        fp: total + second.get(fp, 0) for fp, total in totals.items()}
