"""Drops happen at a point of the total order: whatever order the votes, their
withdrawals and the other entries arrive in, every peer ends the round alike."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import Fate
from p2p_nerts.game.simulate import cards_accounted
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.messages import Drop
from p2p_nerts.protocol.replica import LeaveTable, Move, Phase, StartRound
from p2p_nerts.testing.memnet import Faults, MemNet, bot_table

from ..replica_harness import deal_and_play, quiet_deal
from .test_replica import _to_foundation

#: Reordering, duplicating and losing frames: votes, withdrawals and plays meet
#: in a different order on every peer.
ROUGH = Faults(min_delay=0.001, max_delay=0.25, duplicate=0.05, drop=0.03)
DROP_AFTER = 5.0  # bot_table's


def _run_for(net: MemNet, seconds: float) -> None:
    until = net.now + seconds
    assert net.run(lambda: net.now >= until, limit=until + 1)


def _finish(net: MemNet) -> None:
    assert net.run(lambda: all(r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas),
                   limit=net.now + 1800)


def _agreed(net: MemNet, number: int = 1) -> ev.RoundOver:
    """Every peer's last word on the round is the same, and nobody is accused."""
    last = []
    for events in net.events:
        assert not any(isinstance(e, ev.Divergence | ev.Flagged) for e in events)
        last.append([e for e in events if isinstance(e, ev.RoundOver) and e.round == number][-1])
    assert len({(o.foundation_hash, o.results, o.verdicts, o.totals) for o in last}) == 1, last
    return last[0]


def _dropped(net: MemNet) -> set[int]:
    """The seats dropped in the round, as every peer saw it (the same on each)."""
    seen = [{e.seat for e in events if isinstance(e, ev.PeerDropped)} for events in net.events]
    assert all(s == seen[0] for s in seen), seen
    for r in net.replicas:
        assert r.rs is not None and set(range(len(r.rs.keys))) - r.rs.live == seen[0]
    return seen[0]


# 13 and 14: a vote counted on the seat cut off before a DROP it had been handed,
# ordered before that vote, was in its tally (the others counted them in order).
# 16 and 28: a play past the dropped seat's cut was still on its pile when the
# next play there was judged, so an honest seat was flagged (see void_play).
@pytest.mark.parametrize("seed", [1, 2, 3, 13, 14, 16, 28])
@pytest.mark.parametrize("heal", [DROP_AFTER - 0.3, DROP_AFTER + 0.2, DROP_AFTER + 0.6, 8.0])
def test_a_drop_racing_its_withdrawals_ends_alike_everywhere(seed: int, heal: float) -> None:
    """One seat is cut off for about the drop timeout: some votes are out when it is
    heard again and their withdrawals race the last votes. Dropped or not, every
    peer (the seat too) ends with the same round."""
    net = bot_table(4, seed=seed, faults=ROUGH)
    deal_and_play(net, plays=8)
    net.groups = [{0, 1, 2}, {3}]
    _run_for(net, heal)
    net.groups = []
    _finish(net)
    _agreed(net)


# 12 and 28 (first 4): the dropped seat's own play past its cut went at its turn
# while still in the air on its tableau, which then had nothing to settle it by.
@pytest.mark.parametrize("seed", [4, 5, 12, 28])
@pytest.mark.parametrize("first", [3, 4])
def test_two_drops_one_after_the_other_in_either_order_end_alike(seed: int, first: int) -> None:
    """Two seats drop out of five, one after the other, in either order: their votes
    and the drops' effects interleave with play differently on every peer. Medium
    bots: the round must last past both drops, and hard ones may call Nerts first."""
    net = bot_table(5, seed=seed, faults=ROUGH, skill="medium")
    deal_and_play(net, plays=8)
    second = 7 - first
    net.groups = [{0, 1, 2, second}, {first}]
    _run_for(net, DROP_AFTER + 3)
    net.groups = [{0, 1, 2}, {first}, {second}]
    _run_for(net, DROP_AFTER + 3)
    net.groups = []
    _finish(net)
    over = _agreed(net)
    seats = {net.replicas[k].view().my_seat for k in (first, second)}
    assert _dropped(net) == seats
    assert all(over.verdicts[s] == "unaudited" for s in seats if s is not None)


@pytest.mark.parametrize("seed", [6, 7, 8])
def test_a_seat_dropped_during_the_shuffle_ends_alike_everywhere(seed: int) -> None:
    """Cut off after its COMMIT, before its REVEAL is out: the others deal from their
    own shares; back, the seat learns it was dropped and agrees."""
    net = bot_table(4, seed=seed, faults=ROUGH)
    victim = net.replicas[3]
    net.output(0, net.replicas[0].handle(StartRound(), net.now))

    def committed() -> bool:
        rs = victim.rs
        return rs is not None and rs.me is not None and rs.me in rs.commits

    assert net.run(committed, limit=net.now + 60)
    net.cut.add(3)
    _run_for(net, DROP_AFTER + 3)
    net.cut.discard(3)
    _finish(net)
    _agreed(net)
    seat = victim.view().my_seat
    assert seat is not None and _dropped(net) == {seat}
    host = net.replicas[0].rs
    assert host is not None and host.joint is not None
    assert all(r.rs is not None and r.rs.joint == host.joint for r in net.replicas)


def test_a_play_cut_by_a_drop_after_it_had_settled_comes_back_to_its_player() -> None:
    """Its play was held by everyone, so it had settled at its player; the votes
    that drop the seat were signed before they held it (their cut falls short
    of it) and are ordered after it. Every replica takes the play back out, and
    the card goes back to its player: it is never lost."""
    net = quiet_deal(3, seed=5)
    victim = net.replicas[2]
    rs = victim.rs
    assert rs is not None and rs.tab is not None and rs.me is not None
    target = _to_foundation([victim], net.now)
    net.output(2, victim.handle(Move(target), net.now))
    key = max(k for k in rs.play_seq if k[1] == rs.me)
    assert net.run(lambda: key not in rs.tab.in_flight, limit=net.now + 10)  # type: ignore[union-attr]
    assert rs.log.fate(key) is Fate.STAY
    for i in (0, 1):  # as if each had voted before the play reached it
        voter = net.replicas[i]
        voter._send(Drop(victim.me.public_key, rs.play_seq[key] - 1))
        net.output(i, voter._flush())
    assert net.run(lambda: all(r.rs is not None and rs.me not in r.rs.live for r in net.replicas),
                   limit=net.now + 30)
    assert victim.view().dropped and not net.replicas[0].view().dropped
    assert all(r.rs is not None and key not in r.rs.log for r in net.replicas)
    assert cards_accounted(rs.me, rs.tab, rs.log, jokers=False)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(("seats", "leaving"), [(4, (2, 3)), (5, (1, 4)), (4, (0, 2)),
                                                (8, (2, 5, 6))])
def test_seats_leaving_in_one_round_are_dropped_alike_and_the_round_ends(
        seed: int, seats: int, leaving: tuple[int, ...]) -> None:
    """Several players quit in one round (the host among them, in one case), their
    GOODBYEs and the others' votes arriving in any order: each leaver needed the
    others' votes, so the round once waited for ever. Those left finish it, and
    agree on it; a leaver's seat is dropped on every one of them."""
    net = bot_table(seats, seed=seed, faults=ROUGH, skill="medium")
    deal_and_play(net, plays=8)
    for i in leaving:
        del net.drivers[i]
        net.output(i, net.replicas[i].handle(LeaveTable(), net.now))
    net.cut |= set(leaving)
    staying = [i for i in range(seats) if i not in leaving]
    assert net.run(lambda: all(net.replicas[i].phase in (Phase.BETWEEN, Phase.OVER)
                               for i in staying), limit=net.now + 600)
    overs = []
    for i in staying:
        assert not any(isinstance(e, ev.Divergence | ev.Flagged) for e in net.events[i])
        overs.append([e for e in net.events[i] if isinstance(e, ev.RoundOver)][-1])
    assert len({(o.foundation_hash, o.results, o.verdicts, o.totals) for o in overs}) == 1
    gone = {net.replicas[staying[0]].view().round_of(1).keys.index(  # type: ignore[union-attr]
        net.replicas[i].me.public_key) for i in leaving}
    for i in staying:
        rs = net.replicas[i].rs
        assert rs is not None and set(range(seats)) - rs.live == gone
