"""Heartbeats on their own: who is due my marks, and when (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import FoundationLog, Play
from p2p_nerts.game.tableau import NERTS
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.messages import Audit, MsgType, Nerts, Stuck, Summary
from p2p_nerts.protocol.messages import Play as PlayMsg
from p2p_nerts.protocol.replica._base import HEARTBEAT, Phase
from p2p_nerts.protocol.replica._heartbeats import (
    BEATS_PER_DROP,
    PLAY_HEARTBEAT,
    SINGLE_SLACK,
    Heartbeats,
    at_once,
    decides,
    every,
)
from p2p_nerts.protocol.replica._state import Ordered, RoundState

pytestmark = pytest.mark.fast

A, B = b"\x0a" * 32, b"\x0b" * 32


def test_with_nobody_acked_the_heartbeat_goes_to_everyone_every_heartbeat() -> None:
    beats = Heartbeats()
    assert beats.due(10.0, HEARTBEAT) == (frozenset(), [])
    assert beats.due(10.0 + HEARTBEAT / 2, HEARTBEAT) == (None, [])
    assert beats.due(10.0 + 1.5 * HEARTBEAT, HEARTBEAT) == (frozenset(), [])


def test_no_peer_waits_longer_than_a_heartbeat_for_my_marks() -> None:
    """A peer acked since the last heartbeat is left out of the next, and gets its
    own a HEARTBEAT after its ACK unless acked again meanwhile."""
    beats = Heartbeats()
    beats.due(10.0, HEARTBEAT)
    beats.acked(A, 10.1)
    beats.acked(B, 10.3)
    assert beats.due(10.55, HEARTBEAT) == (frozenset({A, B}), [])
    assert beats.due(10.65, HEARTBEAT) == (None, [A])  # 0.55 s after its ACK
    beats.acked(B, 10.7)  # B plays again: still nothing due for it
    assert beats.due(10.85, HEARTBEAT) == (None, [])
    assert beats.due(11.1, HEARTBEAT) == (frozenset({B}), [])  # A is back in the heartbeat
    assert beats.due(11.25, HEARTBEAT) == (None, [B])
    assert beats.due(11.65, HEARTBEAT) == (frozenset(), [])  # nobody acked since: everyone


def test_soon_makes_everyone_due_at_the_next_tick() -> None:
    """An AUDIT or SUMMARY in: every peer hears at once that I hold it."""
    beats = Heartbeats()
    beats.due(10.0, HEARTBEAT)
    beats.acked(A, 10.1)
    beats.soon()
    assert beats.due(10.15, HEARTBEAT) == (frozenset(), [])  # everyone, A included
    assert beats.due(10.2, HEARTBEAT) == (None, [])


def _playing() -> RoundState:
    keys = tuple(bytes([i]) * 32 for i in range(3))
    return RoundState(number=1, keys=keys, names=("me", "b", "c"), variants=Variants(), me=0,
                      live={0, 1, 2}, log=FoundationLog(strict_ties=False))


def test_while_only_plays_wait_the_heartbeat_is_longer_and_a_quarter_of_drop_after_at_most(
) -> None:
    """A play's fate at its author rests on the straight ACKs: while a round is
    played and only plays wait for their turn, the heartbeat goes less often,
    yet a seat heard through its heartbeats alone is heard BEATS_PER_DROP times
    within the table's drop_after (never less often than HEARTBEAT otherwise)."""
    rs = _playing()
    ace = make_card(1, 0, 1)
    rs.took_play(1, Play(5, 1, ace, ace, NERTS),
                 Ordered(5, 1, MsgType.PLAY, PlayMsg(ace, ace, NERTS, 0, 0), 1))
    assert every(Phase.PLAYING, rs, 6.0) == PLAY_HEARTBEAT == 6.0 / BEATS_PER_DROP
    assert every(Phase.PLAYING, rs, 5.0) == 5.0 / BEATS_PER_DROP
    assert every(Phase.PLAYING, rs, 3600.0) == PLAY_HEARTBEAT
    assert every(Phase.PLAYING, rs, 0.5) == every(Phase.PLAYING, rs, 1.0) == HEARTBEAT
    for phase in (Phase.LOBBY, Phase.SHUFFLE, Phase.SCORING, Phase.BETWEEN, Phase.OVER):
        assert every(phase, rs, 6.0) == HEARTBEAT
    assert every(Phase.PLAYING, None, 6.0) == HEARTBEAT


@pytest.mark.parametrize("waits", ["stuck", "nerts", "drop"])
def test_while_anything_but_a_play_waits_for_its_turn_the_heartbeat_is_heartbeat(
        waits: str) -> None:
    """A stuck vote, a Nerts call, a DROP vote to count (a fork's proof, an agreed
    drop, an audit alike): what the table decides waits for its turn, and with
    it every play ordered before it, which every seat's marks must cover."""
    rs = _playing()
    if waits == "drop":
        rs.drop_said(7, 1, 2, 3, 2)
    else:
        payload = Stuck(True, 0) if waits == "stuck" else Nerts()
        rs.await_turn(Ordered(7, 1, MsgType.STUCK if waits == "stuck" else MsgType.NERTS,
                              payload, 2))
    assert every(Phase.PLAYING, rs, 6.0) == HEARTBEAT
    if waits == "drop":
        rs.drop_vote_done()
    else:
        rs.take_turn()
    assert every(Phase.PLAYING, rs, 6.0) == PLAY_HEARTBEAT


def test_a_vote_or_a_call_gets_my_marks_out_at_once_an_audit_or_summary_only_the_last() -> None:
    """A stuck vote, a Nerts call (mine too: its turn waits for my word on every
    play before it, as for the others'), at once; the round is scored once every
    live seat's audit has had its turn, agreed once every summary has, so an
    AUDIT or SUMMARY only once it is the last still to come (a seat agreed
    dropped is not waited for)."""
    rs = _playing()
    assert at_once(rs, MsgType.STUCK) and at_once(rs, MsgType.NERTS)
    assert at_once(rs, MsgType.DROP) and at_once(rs, MsgType.FORK)
    for kind, payload, said in ((MsgType.AUDIT, Audit(b"d" * 32, ()), True),
                                (MsgType.SUMMARY, Summary(b"h" * 32, (1, 2, 3)), False)):
        for seat in (2, 0):
            rs.closing_said(seat, Ordered(9, seat, kind, payload, 3), audit=said)
            assert not at_once(rs, kind)
        rs.drop_agreed(1, 0)
        assert at_once(rs, kind)  # the dropped seat's is not waited for
        rs.dropping.clear()
        rs.closing_said(1, Ordered(9, 1, kind, payload, 3), audit=said)
        assert at_once(rs, kind)


def test_a_play_ordered_before_a_waiting_call_gets_my_marks_out_at_once() -> None:
    """The call's turn waits for every seat's word on each play before it: one that
    came after the marks the call sent out is named by none of them."""
    rs = _playing()
    ace, two = make_card(1, 0, 1), make_card(2, 0, 2)
    early, late = Play(5, 1, ace, ace, NERTS), Play(12, 2, two, ace, NERTS)
    for play, seq in ((early, 1), (late, 1)):
        rs.took_play(play.author, play, Ordered(play.lamport, play.author, MsgType.PLAY,
                                                PlayMsg(play.card, play.card, NERTS, 0, 0), seq))
    assert not decides(rs, early) and not decides(rs, late)  # nothing else waits
    rs.nerts_said(2, Ordered(10, 2, MsgType.NERTS, Nerts(), 2))
    assert rs.unplayed == 1
    assert decides(rs, early) and not decides(rs, late)
    assert rs.take_turn().kind == MsgType.PLAY and rs.unplayed == 1
    assert rs.take_turn().kind == MsgType.NERTS and rs.unplayed == 0
    assert not decides(rs, early)


def test_a_seat_s_entries_past_its_cut_leave_the_count_of_what_waits_but_plays() -> None:
    rs = _playing()
    rs.stuck_said(1, True, Ordered(7, 1, MsgType.STUCK, Stuck(True, 0), 4))
    rs.stuck_said(2, True, Ordered(8, 2, MsgType.STUCK, Stuck(True, 0), 2))
    assert rs.unplayed == 2 and every(Phase.PLAYING, rs, 6.0) == HEARTBEAT
    rs.forget_after(1, 3)
    assert rs.unplayed == 1
    rs.forget_after(2, 1)
    assert rs.unplayed == 0 and every(Phase.PLAYING, rs, 6.0) == PLAY_HEARTBEAT


def test_the_longer_heartbeat_of_play_leaves_out_and_singles_as_the_heartbeat_does() -> None:
    beats = Heartbeats()
    assert beats.due(10.0, PLAY_HEARTBEAT) == (frozenset(), [])
    beats.acked(A, 10.2)
    assert beats.next_due(PLAY_HEARTBEAT) == 10.0 + PLAY_HEARTBEAT
    assert beats.due(10.0 + HEARTBEAT, PLAY_HEARTBEAT) == (None, [])  # not HEARTBEAT's
    assert beats.due(10.0 + PLAY_HEARTBEAT, PLAY_HEARTBEAT) == (frozenset({A}), [])
    assert beats.next_due(PLAY_HEARTBEAT) == 10.2 + PLAY_HEARTBEAT + SINGLE_SLACK
    assert beats.due(10.2 + PLAY_HEARTBEAT + SINGLE_SLACK, PLAY_HEARTBEAT) == (None, [A])
    # Something other than a play in: the heartbeat is HEARTBEAT again, counted
    # from the last one.
    assert beats.next_due(HEARTBEAT) == 10.0 + PLAY_HEARTBEAT + HEARTBEAT


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
