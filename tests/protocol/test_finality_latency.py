"""How soon my play is final at its author: on the straight ACKs of the others,
never a heartbeat later, whatever order their frames come in (in memory)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import PlayKey
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.messages import Ack, link_message
from p2p_nerts.protocol.replica import Move, Phase, StartRound
from p2p_nerts.protocol.replica._base import HEARTBEAT
from p2p_nerts.testing.memnet import TABLE_ID, bot_table

from ..replica_harness import quiet_deal
from .test_replica import _to_foundation

pytestmark = pytest.mark.fast


def test_an_ack_overtaken_by_a_later_one_does_not_set_its_seat_back() -> None:
    """A peer's heartbeat, sent before it held my play, reaches me after that peer's
    ACK of my play (frames of one peer can come out of order in memory, and
    after a reconnection on a real link). My play is final once the last
    peer's ACK is here: the late heartbeat says less than the ACK before it,
    and taken in its place it would hold my play back until the first peer's
    next ACK to me, a heartbeat later."""
    net = quiet_deal(3, seed=5)
    me, first, last = net.replicas
    rs, now = me.rs, net.now
    assert rs is not None and rs.tab is not None
    theirs = me.authors[first.me.public_key]
    stale = link_message(first.me.public_key, Ack(()), table_id=TABLE_ID, round=rs.number,
                         seq=theirs.delivered, lamport=theirs.lamport, prev=theirs.head)
    out = me.handle(Move(_to_foundation([me], now)), now)
    out.extend(me.apply_own(now))
    (key,) = rs.tab.in_flight
    assert theirs.lamport < key[0]  # the heartbeat is from before my play
    acks = {}
    for peer in (first, last):
        answers = [peer.receive(s.data, now, via=me.me.public_key) for s in out.sends]
        acks[peer] = [s.data for a in answers for s in a.sends if s.to == me.me.public_key]
        assert acks[peer], "a peer acks my play straight to me"
    for data in acks[first]:
        me.receive(data, now, via=first.me.public_key)
    me.receive(stale, now, via=first.me.public_key)
    assert key in rs.tab.in_flight  # the last peer's word is still to come
    told = [me.receive(data, now, via=last.me.public_key).events for data in acks[last]]
    assert key not in rs.tab.in_flight
    assert any(isinstance(e, ev.PlayFinal) and e.mine and e.play.key == key
               for events in told for e in events)


@pytest.mark.parametrize("seed", [3, 4])
def test_at_8_peers_no_play_waits_on_a_heartbeat_to_be_final_at_its_author(seed: int) -> None:
    """A round of 8 bots, frames 1-30 ms on the way and out of order. A play is final
    at its author once every other seat holds it and every play ordered before
    it on its pile (``_order.unsure_before``): the straight ACKs say so about a
    round trip after it. A seat that takes in a play landing before another
    seat's on their pile, after acking that one, owes its author an ACK too;
    without it, that author learned of it from the seat's next ACK to it, up
    to a heartbeat later."""
    net = bot_table(8, seed=seed)
    made: dict[tuple[int, PlayKey], float] = {}
    final: dict[tuple[int, PlayKey], float] = {}
    seen = [0] * len(net.replicas)

    def over() -> bool:
        # Called before each step of the network, at the time of the step before.
        for i, events in enumerate(net.events):
            for e in events[seen[i]:]:
                if isinstance(e, ev.PlayAdded) and e.mine:
                    made[i, e.play.key] = net.now
                elif isinstance(e, ev.PlayFinal) and e.mine:
                    final.setdefault((i, e.play.key), net.now)
            seen[i] = len(events)
        return all(r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas)

    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    assert net.run(over, limit=net.now + 1800), "round did not end"
    # (A play still in the air at the round's end settles with it, untold.)
    assert len(final) > 50
    slowest = max(at - made[play] for play, at in final.items())
    assert slowest < HEARTBEAT / 2, slowest
