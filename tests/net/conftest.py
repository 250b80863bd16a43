"""Fixtures of the tests that open sockets on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..netkit import AnsweringPorts


@pytest.fixture
def answering() -> Iterator[AnsweringPorts]:
    """Ports that answer a lobby's dial, for the ads of tables nobody hosts."""
    ports = AnsweringPorts()
    yield ports
    ports.close()
