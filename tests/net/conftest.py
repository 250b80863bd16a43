"""Fixtures of the tests that open sockets on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import zeroconf

from ..netkit import AnsweringPorts


@pytest.fixture
def quick_mdns(monkeypatch: pytest.MonkeyPatch) -> None:
    """RFC 6762 probe/announce/goodbye spacing is for real networks; loopback needs none.

    The same trick as python-zeroconf's own ``quick_timing`` test fixture.
    """
    for name, value in (("_CHECK_TIME", 10), ("_REGISTER_TIME", 10), ("_UNREGISTER_TIME", 10),
                        ("_PROBE_RANDOM_DELAY_INTERVAL", (1, 5))):
        monkeypatch.setattr(zeroconf._core, name, value, raising=False)


@pytest.fixture
def answering() -> Iterator[AnsweringPorts]:
    """Ports that answer a lobby's dial, for the ads of tables nobody hosts."""
    ports = AnsweringPorts()
    yield ports
    ports.close()
