"""Build tables of replicas on the in-memory network, and check rounds on them."""

from __future__ import annotations

from p2p_nerts.game.cards import full_deck
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.memnet import MemNet
from p2p_nerts.protocol.replica import Phase


def play_round(net: MemNet, *, limit: float = 1800.0) -> int:
    """Start the next round and run it to its agreed end; return the round number."""
    host = net.replicas[0]
    number = (host.rs.number if host.rs else 0) + 1
    net.output(0, host.start_round(net.now))

    def done() -> bool:
        return all(r.rs is not None and r.rs.number == number
                   and r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas)

    assert net.run(done, limit=net.now + limit), "round did not end"
    return number


def round_overs(net: MemNet, number: int) -> list[ev.RoundOver]:
    found = []
    for events in net.events:
        mine = [e for e in events if isinstance(e, ev.RoundOver) and e.round == number]
        assert len(mine) == 1
        found.append(mine[0])
    return found


def check_round(net: MemNet, number: int, *, honest: set[int] | None = None) -> ev.RoundOver:
    """Every replica agrees on the round, and every card of every deck is somewhere."""
    overs = round_overs(net, number)
    first = overs[0]
    for other in overs[1:]:
        assert other.foundation_hash == first.foundation_hash
        assert other.results == first.results
        assert other.totals == first.totals
    for i, events in enumerate(net.events):
        assert not any(isinstance(e, ev.Divergence) for e in events), f"replica {i} diverged"
    host = net.replicas[0]
    assert host.rs is not None
    log = host.rs.log
    for replica in net.replicas:
        rs = replica.rs
        assert rs is not None and rs.tab is not None
        assert not rs.tab.in_flight
        mine = rs.me
        assert mine is not None
        held = sorted([*rs.tab.cards(), *(c for c in log.staying_cards() if c >> 6 == mine)])
        assert held == sorted(full_deck(mine, jokers=rs.variants.jokers)), f"seat {mine}"
        assert log.cards_of(mine) == first.results[mine].foundation_cards
    if honest is not None:
        for i in honest:
            seat = net.replicas[i].my_seat
            assert first.verdicts[seat or 0] == "", first.verdicts
    return first
