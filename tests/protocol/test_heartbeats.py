"""Heartbeats on their own: who is due my marks, and when (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import FoundationLog, Play
from p2p_nerts.game.tableau import NERTS
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.replica._base import HEARTBEAT
from p2p_nerts.protocol.replica._heartbeats import Heartbeats
from p2p_nerts.protocol.replica._state import RoundState

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


def test_a_play_is_owed_an_ack_and_so_is_every_other_seat_s_it_lands_before_on_its_pile() -> None:
    """Their fate hangs on it, and their authors had my ACK before I held it."""
    keys = tuple(bytes([i]) * 32 for i in range(4))
    rs = RoundState(number=1, keys=keys, names=("me", "b", "c", "d"), variants=Variants(),
                    me=0, live={0, 1, 2, 3}, log=FoundationLog(strict_ties=False))
    ace, other_ace = make_card(1, 0, 1), make_card(2, 1, 1)
    beats = Heartbeats()

    def took(play: Play) -> set[bytes]:
        rs.log.add(play)
        beats.owed.clear()
        beats.owe(rs, play)
        return set(beats.owed)

    assert took(Play(5, 1, ace, ace, NERTS)) == {keys[1]}
    rs.log.add(Play(9, 0, make_card(0, 0, 2), ace, NERTS))  # mine
    assert took(Play(7, 2, other_ace, other_ace, NERTS)) == {keys[2]}  # another pile
    assert took(Play(8, 3, make_card(3, 0, 2), ace, NERTS)) == {keys[3]}  # before mine
    assert took(Play(6, 2, make_card(2, 0, 2), ace, NERTS)) == {keys[2], keys[3]}
