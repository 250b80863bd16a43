"""The host's break waits for a newcomer who is still sitting down.

A player seated as a round closes may first replay the table's entries
(everything since the first deal); dealt in before it holds its seat, it
would stall the shuffle. So a host dealing by itself (``auto_next``) waits
until the newcomer's acknowledgements show it holds the ROSTER that seated it,
at most ``SIT_DOWN_WAIT`` seconds past the break.
"""

from __future__ import annotations

import random

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.botdriver import BotDriver
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import SIT_DOWN_WAIT, Phase, Replica, StartRound
from p2p_nerts.testing.memnet import TABLE_ID, bot_table

BREAK = 1.0


def test_the_break_waits_for_a_newcomer_to_hold_its_seat() -> None:
    net = bot_table(2, seed=31, variants=Variants(target=10_000))
    host = net.replicas[0]
    host.seating.auto_next = BREAK
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.phase is Phase.PLAYING, limit=net.now + 60)
    late = Replica(Identity.from_seed(b"\x31" * 32, "Cy"), TABLE_ID, host.me.public_key,
                   rng=random.Random(31).randbytes, countdown=0.0, drop_after=5.0)
    index = net.join(late, BotDriver(late, Bot(SKILLS["hard"], random.Random(31))))
    assert net.run(lambda: host.seating.waiting != {}, limit=net.now + 10)
    net.cut.add(index)  # it cannot hear the table for now: it cannot catch up
    assert net.run(lambda: host.phase is Phase.BETWEEN, limit=net.now + 1800)
    closed = net.now
    assert late.me.public_key in {s.key for s in host.view().seats}
    assert set(host.seating.sitting_down) == {late.me.public_key}
    assert not net.run(lambda: host.phase is not Phase.BETWEEN, limit=closed + BREAK + 5)
    net.cut.discard(index)
    assert net.run(lambda: host.phase is not Phase.BETWEEN, limit=net.now + SIT_DOWN_WAIT)
    assert host.seating.sitting_down == {}
    assert host.rs is not None and late.me.public_key in host.rs.keys


def test_the_break_waits_no_longer_than_its_bound() -> None:
    net = bot_table(2, seed=32, variants=Variants(target=10_000))
    host = net.replicas[0]
    host.seating.auto_next = BREAK
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.phase is Phase.PLAYING, limit=net.now + 60)
    late = Replica(Identity.from_seed(b"\x32" * 32, "Cy"), TABLE_ID, host.me.public_key)
    index = net.join(late, BotDriver(late, Bot(SKILLS["hard"], random.Random(32))))
    assert net.run(lambda: host.seating.waiting != {}, limit=net.now + 10)
    net.down.add(index)  # gone for good (no goodbye)
    assert net.run(lambda: host.phase is Phase.BETWEEN, limit=net.now + 1800)
    closed = net.now
    assert net.run(lambda: host.phase is not Phase.BETWEEN,
                   limit=closed + BREAK + SIT_DOWN_WAIT + 2)
    assert net.now >= closed + BREAK + SIT_DOWN_WAIT - 0.5
