"""The word in each other seat's box: in the round and heard ("ok", "silent"), on
its way out ("leaving"), or out of it, and then why ("left", "dropped", and
"rejoining" once a dropped seat is heard again: it has its seat back from the
next round); and the line that says what holds a round."""

from __future__ import annotations

from p2p_nerts.protocol.replica import LeaveTable, Phase, Replica, RoundView
from p2p_nerts.testing.memnet import MemNet, bot_table
from p2p_nerts.ui.others import SILENT_AFTER, health, held_up

from ..replica_harness import deal_and_play


def _under_way(seats: int, *stopped: int) -> tuple[MemNet, Replica, RoundView]:
    """A round of ``seats`` dealt and 8 cards up, the bots of ``stopped`` playing no
    more: the table, its host and the host's view of the round."""
    net = bot_table(seats, seed=5)
    host = deal_and_play(net, plays=8)
    rnd = host.view().round
    assert rnd is not None
    for i in stopped:
        del net.drivers[i]
    return net, host, rnd


def test_a_seat_out_of_the_round_says_whether_it_left_was_dropped_or_is_back() -> None:
    gone, quitter = 3, 2
    net, host, rnd = _under_way(4, gone, quitter)
    seat = {i: rnd.keys.index(net.replicas[i].me.public_key) for i in (gone, quitter)}

    def word(i: int) -> str:
        view = host.view()
        assert view.round is not None
        return health(view, view.round, seat[i])[1]

    assert word(gone) == word(quitter) == "ok"
    net.output(quitter, net.replicas[quitter].handle(LeaveTable(), net.now))
    net.cut.add(quitter)
    assert net.run(lambda: word(quitter) == "leaving", limit=net.now + 1)
    assert net.run(lambda: seat[quitter] not in rnd.live, limit=net.now + 30)
    assert word(quitter) == "left"
    net.cut.add(gone)
    assert net.run(lambda: word(gone) == "silent", limit=net.now + 30)
    assert net.run(lambda: seat[gone] not in rnd.live, limit=net.now + 60)
    assert host.phase is Phase.PLAYING and word(gone) == "dropped"
    # The dropped seat's link comes back: it is heard within a heartbeat, and says so
    # while the round it was dropped from goes on.
    net.cut.discard(gone)
    assert net.run(lambda: word(gone) == "rejoining", limit=net.now + SILENT_AFTER)
    assert host.phase is Phase.PLAYING and seat[gone] not in rnd.live
    assert word(quitter) == "left"


def test_two_seats_silent_at_once_are_said_to_hold_the_round_until_they_are_back() -> None:
    net, host, rnd = _under_way(5, 3, 4)
    assert held_up(host.view(), rnd) is None
    net.cut |= {3, 4}
    seats = sorted(rnd.keys.index(net.replicas[i].me.public_key) for i in (3, 4))
    assert net.run(lambda: held_up(host.view(), rnd) is not None, limit=net.now + 30)
    said = held_up(host.view(), rnd)
    assert said == (f"{rnd.names[seats[0]]} and {rnd.names[seats[1]]} silent: "
                    "the round waits until they are back")
    assert host.phase is Phase.PLAYING and len(rnd.live) == 5  # held, as it says
    net.cut.clear()  # both back: their words settle the votes, and the round goes on
    assert net.run(lambda: held_up(host.view(), rnd) is None, limit=net.now + 30)
    assert net.run(lambda: host.phase is not Phase.PLAYING, limit=net.now + 600)


def test_a_seat_leaving_while_another_is_silent_is_counted_but_not_named() -> None:
    """Its drop waits for the silent seat's word too, but it is not coming back."""
    quitter, silent = 3, 4
    net, host, rnd = _under_way(5, quitter, silent)
    net.output(quitter, net.replicas[quitter].handle(LeaveTable(), net.now))
    net.cut |= {quitter, silent}
    name = rnd.names[rnd.keys.index(net.replicas[silent].me.public_key)]
    assert net.run(lambda: held_up(host.view(), rnd) is not None, limit=net.now + 30)
    assert held_up(host.view(), rnd) == f"{name} silent: the round waits until {name} is back"
