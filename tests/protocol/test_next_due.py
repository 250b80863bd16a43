"""``Replica.next_due``: the replica says when it next needs a tick, and is right.

Two promises, each checked on whole games over a lossy network:
- never late: a tick before ``next_due()`` does nothing at all (no frame, no
  event, no journal record), so a shell that sleeps until then misses nothing;
- enough: replicas ticked only when they say (as the shells now run them) play
  every round to the end and agree, with faults that need resends and drops,
  and with far fewer ticks than a fixed 50 ms tick.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.replica import Outbound, Phase, Replica, StartRound
from p2p_nerts.testing.memnet import Faults, bot_table

from ..replica_harness import check_round, play_round


def nothing(out: Outbound) -> bool:
    return not out.sends and not out.events and not out.journal


class Probed(Replica):
    """Before each tick, asks when it is due; a tick made before then must do
    nothing at all (a reading of ``next_due`` changes nothing). A subclass, not a
    patched instance: the compiled replica's methods cannot be replaced."""

    early: ClassVar[int] = 0  # ticks made before a replica was due, at the whole table
    broken: ClassVar[list[str]] = []

    def tick(self, now: float) -> Outbound:
        due = self.next_due()
        out = super().tick(now)
        if due > now + 1e-5:  # next_due says a hair past each bound
            Probed.early += 1
            if not nothing(out):
                Probed.broken.append(f"{self.me.name} at {now:.3f} (due {due:.3f}): {out}")
        return out


@pytest.mark.parametrize("seed", [1, 2])
def test_a_tick_before_next_due_does_nothing(seed: int) -> None:
    Probed.early, Probed.broken = 0, []
    net = bot_table(4, seed, faults=Faults(max_delay=0.08, duplicate=0.1, drop=0.1, tick=0.01),
                    classes=dict.fromkeys(range(4), Probed))
    number = play_round(net)
    check_round(net, number, honest={0, 1, 2, 3})
    assert Probed.early > 100  # the fine tick mostly came before anything was due
    assert Probed.broken == []


def test_a_silent_seat_is_voted_out_on_time() -> None:
    """The drop vote's deadline is one of next_due's: a seat that goes dead mid-round
    is dropped by replicas that tick only when due, soon after ``drop_after``
    (5 s at bot_table), and the others finish the round."""
    net = bot_table(3, seed=5, faults=Faults(on_due=True))
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.phase is Phase.PLAYING and net.now > 2.0, limit=60.0)
    net.down.add(2)  # dead: no ticks, nothing in or out
    net.drivers.pop(2)
    gone = net.now

    def dropped() -> bool:
        return all(any(isinstance(e, ev.PeerDropped) and e.seat == 2 for e in net.events[i])
                   for i in (0, 1))

    assert net.run(dropped, limit=gone + 60.0)
    assert net.now - gone < 5.0 + 2.0  # the silence bound and a vote's round trip
    assert net.run(lambda: all(r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas[:2]),
                   limit=net.now + 1800.0)


@pytest.mark.parametrize("players", [2, 4])
def test_replicas_ticked_only_when_due_play_to_game_over(players: int) -> None:
    faults = Faults(max_delay=0.05, duplicate=0.05, drop=0.05, on_due=True)
    net = bot_table(players, seed=players + 20, faults=faults, variants=Variants(target=15))
    while net.replicas[0].phase is not Phase.OVER:
        number = play_round(net)
        check_round(net, number, honest=set(range(players)))
    # A fixed 50 ms tick would have ticked every replica 20 times a simulated second.
    assert net.ticks < 0.5 * 20 * net.now * players


def test_an_idle_table_sleeps() -> None:
    """Seated in the lobby, with no host dealing by itself: nothing to do but the
    heartbeat (and no heartbeat before anyone signed anything else)."""
    net = bot_table(3, seed=7, faults=Faults(on_due=True))
    for replica in net.replicas:
        assert replica.next_due() - replica.now >= 0.0
    now = net.now
    for replica in net.replicas:
        replica.tick(now)
        assert replica.next_due() > now + 0.2  # a heartbeat's wait, not a poll
