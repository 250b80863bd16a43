"""The read-only view a front end reads a replica through (``Replica.view()``)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.moves import foundation_target
from p2p_nerts.game.tableau import NERTS, WASTE, WORK0, WORK_PILES
from p2p_nerts.protocol import RoundView, TableView
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Resend, View, seal_message
from p2p_nerts.protocol.replica import Move, Phase, Replica, VoteStuck
from p2p_nerts.testing.memnet import TABLE_ID, bot_table

from ..replica_harness import play_round, quiet_deal, vote_anywhere


def test_before_the_first_deal_the_view_shows_the_lobby() -> None:
    net = bot_table(3, seed=4)
    host, guest = net.replicas[0], net.replicas[1]
    view = guest.view()
    assert view.phase is Phase.LOBBY and view.round is None and view.round_of(1) is None
    assert view.totals is None and view.team_totals == ()
    assert view.seats == host.seating.seats and len(view.seats) == 3
    assert view.my_key == guest.me.public_key and view.my_seat == 1
    assert view.seated == {s.key for s in view.seats} and not view.dropped
    assert view.host_key == host.me.public_key
    assert not view.is_host and host.view().is_host
    # A bot says it is ready: the host's view shows it once the READY is in.
    assert net.run(lambda: host.view().ready(guest.me.public_key), limit=net.now + 10)
    assert view.variants == guest.seating.variants
    assert (view.countdown, view.drop_after) == (guest.seating.countdown, guest.seating.drop_after)
    assert view.blocked() == "no round is being played" and not view.can_move()


def test_the_view_reflects_the_round_being_played() -> None:
    net = quiet_deal(3, seed=5)
    for replica in net.replicas:
        rs, view = replica.rs, replica.view()
        rnd = view.round
        assert rs is not None and rnd is not None
        assert view.phase is Phase.PLAYING and view.can_move() and view.blocked() is None
        assert (rnd.number, rnd.names, rnd.keys, rnd.me) == (1, rs.names, rs.keys, rs.me)
        assert rnd.variants == rs.variants and rnd.live == frozenset(rs.live) == {0, 1, 2}
        # The tableau and the foundations are the replica's own, handed out to read.
        assert rnd.tableau is rs.tab and rnd.foundations is rs.log
        assert rnd.stuck == (False, False, False) and not view.voted
        assert rnd.started and rnd.end is None and rnd.call is None and rnd.results == ()
        assert dict(rnd.views) == rs.views and set(rnd.views) == {0, 1, 2} - {rs.me}
        assert view.totals == (0, 0, 0)
        assert view.team_totals == tuple((name, 0) for name in rs.names)
        assert view.round_of(1) is not None and view.round_of(2) is None
        assert view.my_seat == rs.me and not view.dropped
        assert view.seq == replica.authors[replica.me.public_key].delivered
        for key in rs.keys:
            assert view.heard_at(key) == replica.last_heard.get(key)


def test_the_view_tells_players_from_watchers_and_strangers() -> None:
    net = bot_table(3, seed=4)
    host, guest = net.replicas[0], net.replicas[1]
    view = host.view()
    wat = Identity.from_seed(b"\x77" * 32, "Wat")
    stranger = wat.public_key
    assert view.player(guest.me.public_key) and view.player(host.me.public_key)
    assert not view.player(stranger) and not view.watcher(stranger)
    # A key without a place asks for the table's entries: a watcher, not a player.
    ask = seal_message(wat, Resend(host.me.public_key, 1, 1), table_id=TABLE_ID, round=0,
                       seq=1, lamport=1)
    host.receive(ask.raw, net.now, via=stranger)
    assert view.watcher(stranger) and not view.player(stranger)
    assert not view.watcher(guest.me.public_key) and not view.equivocators


def _fields(view: TableView | RoundView) -> list[str]:
    cls = type(view)
    return [name for name in dir(cls) if isinstance(getattr(cls, name), property)]


def test_the_view_cannot_be_changed() -> None:
    net = quiet_deal(2, seed=6)
    view = net.replicas[0].view()
    rnd = view.round
    assert rnd is not None
    for target in (view, rnd):
        fields = _fields(target)
        assert fields, "the view exposes properties"
        for name in fields:
            with pytest.raises(AttributeError):
                setattr(target, name, None)
        with pytest.raises(AttributeError):
            target.anything = 1  # type: ignore[union-attr]
    # What it hands out is read-only too: no list, set or dict of the replica's.
    with pytest.raises(TypeError):
        rnd.views[0] = View(13, None, (), None, 0)  # type: ignore[index]
    with pytest.raises(TypeError):
        rnd.flagged[0] = "by a screen"  # type: ignore[index]
    assert isinstance(rnd.live, frozenset) and isinstance(rnd.stuck, tuple)
    assert isinstance(view.totals, tuple) and isinstance(view.seats, tuple)
    assert isinstance(view.seated, frozenset)
    with pytest.raises(TypeError):
        view.equivocators[b"k"] = None  # type: ignore[index]


def _a_card_that_goes_up(replica: Replica) -> Move | None:
    rnd = replica.view().round
    assert rnd is not None and rnd.tableau is not None
    tab = rnd.tableau
    for src in (NERTS, WASTE, *range(WORK0, WORK0 + WORK_PILES)):
        target = foundation_target(tab, src, rnd.foundations)
        if target is not None:
            return Move(target)
    return None


def test_the_view_changes_when_the_replica_does(monkeypatch: pytest.MonkeyPatch) -> None:
    vote_anywhere(monkeypatch)  # a stuck vote at a fresh deal
    net = quiet_deal(3, seed=4)
    me = net.replicas[1]
    view = me.view()
    rnd = view.round
    assert rnd is not None and rnd.me == 1
    # A card up: the view held from before shows it on the foundations.
    move = _a_card_that_goes_up(me)
    assert move is not None, "seed 4 deals seat 1 a card that goes up"
    up = rnd.foundations.cards_of(1)
    net.output(1, me.handle(move, net.now))
    net.output(1, me.apply_own(net.now))
    assert rnd.foundations.cards_of(1) == up + 1
    # A stuck vote: the seat's vote is on at once, and in the total order once final.
    stuck_before = rnd.stuck
    net.output(1, me.handle(VoteStuck(True), net.now))
    assert view.voted and not stuck_before[1]  # what was read stays what it was
    assert net.run(lambda: rnd.stuck[1], limit=net.now + 10)


def test_the_view_follows_the_rounds() -> None:
    net = bot_table(3, seed=8)
    me = net.replicas[2]
    view = me.view()
    assert play_round(net) == 1
    first = view.round
    assert first is not None and first.number == 1 and first.end is not None
    assert len(first.results) == 3 and view.phase is Phase.BETWEEN
    assert view.totals == tuple(me.totals[key] for key in first.keys)
    assert view.totals == tuple(r.score for r in first.results)
    assert play_round(net) == 2
    second = view.round
    assert second is not None and second.number == 2 and first.number == 1
    held = view.round_of(1)
    assert held is not None and held.results == first.results
