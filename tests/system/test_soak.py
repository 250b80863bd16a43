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
from typing import Any

import pytest

SOAK = Path(__file__).resolve().parents[2] / "scripts" / "soak.py"

pytestmark = pytest.mark.timeout(150)


def run_soak(*options: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(SOAK), *options, "--json"],
                          capture_output=True, text=True, timeout=140, check=False)
    assert done.stdout, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert report["ok"] == (done.returncode == 0), done.stderr[-3000:]
    return report


@pytest.mark.slow
def test_short_soak_agrees_everywhere_and_loses_no_card() -> None:
    report = run_soak("--short")
    assert report["divergences"] == 0, report
    assert report["rounds_completed"] == report["rounds_asked"] == 2, report
    assert not report["card_problems"] and not report["audit_problems"], report
    faults = report["faults"]
    assert faults["killed"] == 1 and faults["delayed"] and faults["duplicated"]
    assert report["rejected"].get("duplicate", 0) > 0
    assert report["ok"], report


#: liar -> what the honest peers must say of it (p1) in some round.
EXPECTED = {
    "equivocate": "flagged: p1 (equivocation: signed two entries numbered",
    "silent-cheater": "verdicts: p1 (unaudited); flagged: nobody; forfeits: p1 -26",
    "false-call": "verdicts: p1 (impossible move: ",
}


@pytest.mark.parametrize("adversary",
                         ["equivocate", "silent-cheater", "false-call", "stale-journal"])
def test_an_adversary_at_the_table_costs_the_honest_peers_nothing(adversary: str) -> None:
    """p1 misbehaves: every honest peer agrees on every round, no honest peer is
    flagged, every honest seat's round and total score as it played them, and the
    honest peers' verdicts and flags say what p1 did."""
    # A resumed honest seat must not be dropped only because a busy machine started
    # it slowly; a liar that goes silent must be, so the table plays on.
    slow_start = ("--drop-after", "30") if adversary == "stale-journal" else ()
    report = run_soak("--rounds", "2", "--players", "4", "--adversary", adversary, *slow_start)
    assert report["divergences"] == 0 and not report["audit_problems"], report
    assert not report["honest_flagged"] and not report["card_problems"], report
    assert not report["score_problems"] and report["honest_totals"], report
    assert all(got == played for got, played in report["honest_totals"].values()), report
    honest = 4 if adversary == "stale-journal" else 3  # a stale journal is no liar
    lines = report["round_lines"]
    assert [line.split(";")[0] for line in lines] == [
        f"round {n}: {honest}/{honest} honest peers agree" for n in (1, 2)], lines
    if adversary == "stale-journal":
        assert report["adversary"]["records_cut"] >= 1 and report["faults"]["killed"] == 1
        assert not report["flags"], report  # resumed behind the table, it signs nothing twice
    else:
        assert any(EXPECTED[adversary] in line for line in lines), lines
    assert report["ok"], report
