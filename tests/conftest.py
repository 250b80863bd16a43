"""Shared test hygiene."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from p2p_nerts.net.testing import PeerProcess


@pytest.fixture(autouse=True)
def _no_stray_peers() -> Iterator[None]:
    """No peer process outlives the test that started it, however the test ends."""
    yield
    PeerProcess.kill_all()
