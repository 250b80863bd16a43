"""The replica's deadlock rule is game.deadlock's: the same cases as ``nerts simulate``."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import Fate
from p2p_nerts.game.moves import card_target, work_target
from p2p_nerts.game.tableau import NERTS, SOURCES, WASTE, Target
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.replica import Move, Phase, Replica, Turn, VoteStuck
from p2p_nerts.testing.memnet import MemNet

from ..replica_harness import check_round, quiet_deal, round_overs, vote_anywhere


def _all_vote_stuck(net: MemNet) -> None:
    for i, r in enumerate(net.replicas):
        net.output(i, r.handle(VoteStuck(True), net.now))
    settled = net.now + 2
    assert net.run(lambda: net.now >= settled, limit=settled + 1)


def _rotations(net: MemNet) -> list[int]:
    return [r.rs.rotations if r.rs else -1 for r in net.replicas]


def _find(net: MemNet, pick: str) -> tuple[int, Target]:
    """A seat and a move of the kind asked (a card up, or a work move), turning stocks."""
    for _turns in range(40):
        for i, r in enumerate(net.replicas):
            rs = r.rs
            assert rs is not None and rs.tab is not None
            tab = rs.tab
            for src in SOURCES:
                card = tab.top(src)
                if card is None:
                    continue
                found = (card_target(tab, src, card, rs.log) if pick == "up"
                         else work_target(tab, src) if src in (NERTS, WASTE) else None)
                if found is not None:
                    return i, found
        for i, r in enumerate(net.replicas):
            net.output(i, r.handle(Turn(), net.now))
    raise AssertionError(f"no {pick} move in this deal")


def _dealt() -> MemNet:
    net = quiet_deal(2, seed=3)
    _all_vote_stuck(net)
    assert _rotations(net) == [1, 1]
    return net


def test_stuck_again_after_only_a_work_move_ends_the_round_on_every_peer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    vote_anywhere(monkeypatch)  # the rule's mechanics, at a fresh deal
    net = _dealt()
    i, target = _find(net, "work")
    net.output(i, net.replicas[i].handle(Move(target), net.now))
    _all_vote_stuck(net)
    assert all(r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas)
    over = check_round(net, 1, honest={0, 1})
    assert over.end == "deadlock" and _rotations(net) == [1, 1]


def test_stuck_again_after_a_card_went_up_rotates_again_on_every_peer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    vote_anywhere(monkeypatch)  # the rule's mechanics, at a fresh deal
    net = _dealt()
    i, target = _find(net, "up")
    net.output(i, net.replicas[i].handle(Move(target), net.now))
    settled = net.now + 2
    assert net.run(lambda: net.now >= settled, limit=settled + 1)
    host: Replica = net.replicas[0]
    assert host.rs is not None and any(host.rs.log.fate(p.key) is Fate.STAY
                                       for p in host.rs.log.plays())
    _all_vote_stuck(net)
    assert _rotations(net) == [2, 2]
    assert all(r.phase is Phase.PLAYING for r in net.replicas)
    assert all(any(isinstance(e, ev.Rotated) and e.count == 2 for e in events)
               for events in net.events)
    _all_vote_stuck(net)
    assert round_overs(net, 1)[0].end == "deadlock"
