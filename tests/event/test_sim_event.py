"""``scripts/sim_event.py`` on a small evening: it runs the event's own code end to end
(seatings drawn and checked, real records counted, the export verified) and counts
the mDNS records the LAN would carry."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

SIM = Path(__file__).resolve().parents[2] / "scripts" / "sim_event.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sim_event", SIM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_small_evening_runs_and_its_figures_add_up() -> None:
    sim = _script()
    result = sim.main(["--players", "13", "--games", "2", "--draws", "3"])
    assert (result["players"], result["tables"], result["games"]) == (13, 4, 2)
    assert result["draw"]["n"] == 6 and result["standings_update"]["n"] == 8
    assert result["export"]["records"] == 8
    mdns = result["mdns"]
    assert mdns["per_table"]["records"] == 4  # PTR, SRV, TXT, one A
    assert mdns["records"] == 4 * 4 + 13 * 4 + 4
    assert "13 players, 4 tables, 2 games" in sim.show(result)


def test_each_timing_has_its_baseline() -> None:
    sim = _script()
    result = sim.main(["--players", "9", "--games", "1", "--draws", "2", "--table-size", "3"])
    assert result["draw_baseline"]["n"] == 2 and result["draw_ratio"] > 0
    assert result["update_baseline"]["n"] == 3 and result["update_ratio"] > 0
    keys = [bytes([i]) * 32 for i in range(9)]
    baseline = sim.chunked(keys, bytes(32), 3)
    assert [len(t) for t in baseline] == [3, 3, 3]
    assert sorted(k for t in baseline for k in t) == keys
