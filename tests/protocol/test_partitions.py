"""The network splits and heals: logs merge by the same rules, nothing diverges or is lost."""

from __future__ import annotations

import random

import pytest

from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.audit import UNAUDITED
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.testing.memnet import MemNet, bot_table

from ..replica_harness import AskBack, assert_one_agreed_game, check_round, random_table


def _split(net: MemNet, groups: list[set[int]], seconds: float) -> None:
    net.groups = groups
    until = net.now + seconds
    assert net.run(lambda: net.now >= until, limit=until + 1)
    net.groups = []


def _start(net: MemNet, plays: int) -> None:
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= plays, limit=600)


def _finish(net: MemNet) -> None:
    assert net.run(lambda: all(r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas),
                   limit=net.now + 1800)


def test_even_split_stalls_finality_then_merges_on_heal() -> None:
    """2 | 2 for longer than the drop timeout: nobody can be voted out, all merge."""
    net = bot_table(4, seed=31)
    _start(net, plays=10)
    _split(net, [{0, 1}, {2, 3}], seconds=15.0)
    pending = [len(r.rs.tab.in_flight) for r in net.replicas if r.rs and r.rs.tab]
    assert any(pending), "while split, plays cannot become final"
    # Votes were cast (counted, or waiting for their turn: the other side is not heard).
    assert all(r.rs and (any(r.rs.drop_votes.values()) or r.rs.drop_queue)
               for r in net.replicas)
    _finish(net)
    check_round(net, 1, honest={0, 1, 2, 3})
    assert not any(isinstance(e, ev.PeerDropped) for events in net.events for e in events)
    # Everyone hears the other side again and takes its votes back: none is left
    # to help drop anybody in a later split.
    assert all(r.rs and not any(r.rs.drop_votes.values()) and not r.rs.drop_queue
               for r in net.replicas)


def test_short_split_heals_without_anyone_noticing() -> None:
    net = bot_table(5, seed=32)
    _start(net, plays=10)
    _split(net, [{0, 2, 4}, {1, 3}], seconds=2.0)
    _finish(net)
    check_round(net, 1, honest=set(range(5)))


def test_lone_side_is_dropped_and_its_later_plays_come_back_to_it() -> None:
    """3 | 1 past the timeout: the three go on; on heal the one merges and agrees."""
    net = bot_table(4, seed=33)
    _start(net, plays=10)
    _split(net, [{0, 1, 2}, {3}], seconds=20.0)
    _finish(net)
    alone = net.replicas[3].view().my_seat
    overs = [next(e for e in events if isinstance(e, ev.RoundOver)) for events in net.events]
    assert len({(o.foundation_hash, o.results) for o in overs}) == 1
    assert overs[0].verdicts[alone or 0] == UNAUDITED
    lone = net.replicas[3].rs
    assert lone is not None and lone.tab is not None and not lone.tab.in_flight
    # Every card of the lone seat is in its tableau or on the agreed foundations.
    from p2p_nerts.game.cards import full_deck

    log = net.replicas[0].rs.log if net.replicas[0].rs else None
    assert log is not None
    mine = lone.me or 0
    held = sorted([*lone.tab.cards(), *(c for c in log.staying_cards() if c >> 6 == mine)])
    assert held == sorted(full_deck(mine))
    assert not any(isinstance(e, ev.Flagged) for events in net.events for e in events)


def test_two_seats_that_lose_each_other_do_not_play_on_as_two_tables() -> None:
    """1 | 1: each could vote the other out alone. Only the senior seat (the host's)
    plays on; the other waits, and on the heal learns it was dropped: one result."""
    net = bot_table(2, seed=33)
    _start(net, plays=6)
    _split(net, [{0}, {1}], seconds=15.0)
    host, guest = net.replicas
    assert host.rs is not None and guest.rs is not None
    senior = host.view().my_seat  # the host's seat, wherever the host has arranged it
    assert senior in host.rs.live and senior in guest.rs.live, "nobody drops the senior seat"
    _finish(net)
    overs = [next(e for e in events if isinstance(e, ev.RoundOver)) for events in net.events]
    assert len({(o.foundation_hash, o.results) for o in overs}) == 1
    assert not any(isinstance(e, ev.Divergence) for events in net.events for e in events)


def test_the_last_two_seats_split_after_a_drop_still_agree() -> None:
    net = bot_table(3, seed=34)
    _start(net, plays=8)
    _split(net, [{0, 1}, {2}], seconds=10.0)  # seat of replica 2 is dropped
    _split(net, [{0}, {1}], seconds=15.0)
    _finish(net)
    overs = [[e for e in events if isinstance(e, ev.RoundOver)][-1] for events in net.events]
    assert len({(o.foundation_hash, o.results) for o in overs}) == 1
    assert not any(isinstance(e, ev.Divergence) for events in net.events for e in events)


@pytest.mark.sweep
@pytest.mark.parametrize("seed", [2, 5, 9, 13, 75, 830, 1003, 1103])
def test_random_split_schedules_end_in_one_agreed_game(seed: int) -> None:
    """Splits of every shape, short and long, on a lossy network, whole games:
    every replica ends with the same rounds and the same totals."""
    rng = random.Random(seed)
    net = random_table(rng, seed, auto_next=(0.2, 1.0))
    host, ask_back, n = net.replicas[0], AskBack(net), len(net.replicas)
    for _ in range(rng.choice([1, 2, 3, 4])):
        until = net.now + rng.uniform(1, 20)

        def waited(t: float = until) -> bool:
            return ask_back() or net.now >= t or host.phase is Phase.OVER

        net.run(waited, limit=until + 1)
        if host.phase is Phase.OVER:
            break
        members = list(range(n))
        rng.shuffle(members)
        side = set(members[:rng.randrange(1, n)])
        if 0 not in side and rng.random() < 0.5:
            side = set(range(n)) - side
        net.groups = [side, set(range(n)) - side]
        until = net.now + rng.choice([0.5, 2, 4, 8, 15])

        def healed(t: float = until) -> bool:
            return ask_back() or net.now >= t

        net.run(healed, limit=until + 1)
        net.groups = []
    assert net.run(lambda: ask_back() or all(r.phase is Phase.OVER for r in net.replicas),
                   limit=net.now + 3000)
    assert_one_agreed_game(net)
