"""Shared test hygiene, and the tiers.

Tests live by layer: ``game``, ``protocol``, ``ui`` and ``event`` run in memory (no
sockets, no processes) and, but for the long randomised sweeps (marked
``sweep``), carry the ``fast`` marker, so ``pytest -m fast`` checks the pure
core alone, quickly enough to run after every change; ``net`` opens real
sockets on 127.0.0.1 and ``system`` runs whole programs (peer processes, the
terminal, the namespace lab). Each test is marked with its layer's name too.

The order tests run in: those marked ``slow`` first, then the rest of ``system``
and ``net``, then the in-memory layers (each group in its collected order). Under
``--dist worksteal`` a worker that runs dry steals the end of another's queue,
so the run ends on whatever is last: a test of a minute started there is a
minute added to the wall time, where the in-memory tests, seconds at most each,
even the workers out. Worksteal first hands each worker an equal run of the
collection, one after the other, so the tests are dealt out in turn, one run per
worker: every worker starts on its share of the slow ones, not the first on all.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import zeroconf

from p2p_nerts.testing.peers import PeerProcess

IN_MEMORY = {"game", "protocol", "ui", "event"}
LAYERS = IN_MEMORY | {"net", "system"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        layer = item.path.relative_to(here).parts[0]
        if layer in LAYERS:
            item.add_marker(layer)
            if layer in IN_MEMORY and item.get_closest_marker("sweep") is None:
                item.add_marker("fast")
    items.sort(key=_longest_first)  # stable: each group keeps its collected order
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    items[:] = [item for turn in range(workers) for item in items[turn::workers]]


def _longest_first(item: pytest.Item) -> int:
    """The group ``item`` runs in: 0 ``slow``, 1 the other ``system`` and ``net``
    tests, 2 the rest (in memory: seconds at most)."""
    if item.get_closest_marker("slow") is not None:
        return 0
    if item.get_closest_marker("system") or item.get_closest_marker("net"):
        return 1
    return 2


@pytest.fixture(autouse=True)
def _no_stray_peers() -> Iterator[None]:
    """No peer process outlives the test that started it, however the test ends."""
    yield
    PeerProcess.kill_all()


@pytest.fixture
def quick_mdns(monkeypatch: pytest.MonkeyPatch) -> None:
    """RFC 6762 probe/announce/goodbye spacing is for real networks; loopback needs none.

    The same trick as python-zeroconf's own ``quick_timing`` test fixture.
    """
    for name, value in (("_CHECK_TIME", 10), ("_REGISTER_TIME", 10), ("_UNREGISTER_TIME", 10),
                        ("_PROBE_RANDOM_DELAY_INTERVAL", (1, 5))):
        monkeypatch.setattr(zeroconf._core, name, value, raising=False)
