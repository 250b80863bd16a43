"""``scripts/soak.py --short``: 8 bot processes, 2 rounds through faulty relays, one crash.

The script is the harness (it is also run for 30 rounds by hand); this test
holds it to its contract: no divergence, every round agreed by every peer,
every card accounted for, and the faults it claims really happened.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SOAK = Path(__file__).resolve().parents[2] / "scripts" / "soak.py"

pytestmark = pytest.mark.timeout(150)


def test_short_soak_agrees_everywhere_and_loses_no_card() -> None:
    done = subprocess.run([sys.executable, str(SOAK), "--short", "--json"],
                          capture_output=True, text=True, timeout=140, check=False)
    assert done.stdout, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["divergences"] == 0, report
    assert report["rounds_completed"] == report["rounds_asked"] == 2, report
    assert not report["card_problems"] and not report["audit_problems"], report
    faults = report["faults"]
    assert faults["killed"] == 1 and faults["delayed"] and faults["duplicated"]
    assert report["rejected"].get("duplicate", 0) > 0
    assert report["ok"] and done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("adversary", ["silent-cheater", "false-call"])
def test_an_adversary_at_the_table_is_flagged_and_costs_the_honest_peers_nothing(
        adversary: str) -> None:
    """A modified client seated at p1: every honest peer agrees on every round, the
    round it cheated in counts for nobody, and it is the only one flagged."""
    done = subprocess.run([sys.executable, str(SOAK), "--rounds", "2", "--players", "4",
                           "--adversary", adversary, "--json"],
                          capture_output=True, text=True, timeout=140, check=False)
    assert done.stdout, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["divergences"] == 0 and not report["audit_problems"], report
    assert not report["flags"], report  # no honest peer flagged
    first = report["round_lines"][0]
    assert first.startswith("round 1: 3 honest peers agree; flagged: p1 ("), first
    assert "void for everyone" in first
    assert report["ok"] and done.returncode == 0, done.stderr[-3000:]
