"""Heartbeats on their own: who is due my marks, and when (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.protocol.replica._base import HEARTBEAT
from p2p_nerts.protocol.replica._heartbeats import Heartbeats

pytestmark = pytest.mark.fast

A, B = b"\x0a" * 32, b"\x0b" * 32


def test_with_nobody_acked_the_heartbeat_goes_to_everyone_every_heartbeat() -> None:
    beats = Heartbeats()
    assert beats.due(10.0) == (frozenset(), [])
    assert beats.due(10.0 + HEARTBEAT / 2) == (None, [])
    assert beats.due(10.0 + 1.5 * HEARTBEAT) == (frozenset(), [])


def test_no_peer_waits_longer_than_a_heartbeat_for_my_marks() -> None:
    """A peer acked since the last heartbeat is left out of the next, and gets its
    own a HEARTBEAT after its ACK unless acked again meanwhile."""
    beats = Heartbeats()
    beats.due(10.0)
    beats.acked(A, 10.1)
    beats.acked(B, 10.3)
    assert beats.due(10.55) == (frozenset({A, B}), [])
    assert beats.due(10.65) == (None, [A])  # 0.55 s after its ACK
    beats.acked(B, 10.7)  # B plays again: still nothing due for it
    assert beats.due(10.85) == (None, [])
    assert beats.due(11.1) == (frozenset({B}), [])  # A is back in the heartbeat
    assert beats.due(11.25) == (None, [B])
    assert beats.due(11.65) == (frozenset(), [])  # nobody acked since: everyone


def test_soon_makes_everyone_due_at_the_next_tick() -> None:
    """An AUDIT or SUMMARY in: every peer hears at once that I hold it."""
    beats = Heartbeats()
    beats.due(10.0)
    beats.acked(A, 10.1)
    beats.soon()
    assert beats.due(10.15) == (frozenset(), [])  # everyone, A included
    assert beats.due(10.2) == (None, [])
