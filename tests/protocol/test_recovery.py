"""A replica killed mid-round comes back from its journal and plays on."""

from __future__ import annotations

import random

import pytest

from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.audit import UNAUDITED
from p2p_nerts.protocol.envelope import open_entry
from p2p_nerts.protocol.messages import MsgType, Resend, seal_message
from p2p_nerts.protocol.replica import HEARTBEAT, Open, Phase, Replica, StartRound
from p2p_nerts.testing.memnet import TABLE_ID, bot_table

from ..replica_harness import (
    AskBack,
    assert_one_agreed_game,
    check_round,
    crash_and_restore,
    random_table,
    replica_with,
)


def test_killed_peer_restarts_with_same_tableau_and_the_game_completes() -> None:
    net = bot_table(4, seed=12)
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 15, limit=600)
    crash_and_restore(net, 2, outage=2.0)  # back before the others would drop it
    assert net.run(lambda: all(r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas),
                   limit=net.now + 1800)
    check_round(net, 1, honest={0, 1, 2, 3})
    assert not any(isinstance(e, ev.PeerDropped) for events in net.events for e in events)
    # ... and the next round is played by everyone, the restarted peer included.
    from ..replica_harness import play_round

    number = play_round(net)
    check_round(net, number, honest={0, 1, 2, 3})


def test_a_restarted_seat_plays_by_the_hosts_clocks_not_its_own_options() -> None:
    """The journal holds the host's SETTINGS: the restore takes its clocks from there."""
    net = bot_table(3, seed=14, classes={0: replica_with(countdown=1.0, drop_after=4.0)})
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 10, limit=600)
    back = crash_and_restore(net, 1, outage=1.0)  # options: countdown 0, drop_after 5
    assert (back.seating.countdown, back.seating.drop_after) == (1.0, 4.0)
    assert net.run(lambda: all(r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas),
                   limit=net.now + 1800)
    check_round(net, 1, honest={0, 1, 2})


def test_peer_back_too_late_was_dropped_but_its_cards_still_count() -> None:
    net = bot_table(3, seed=13)
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 12, limit=600)
    back = crash_and_restore(net, 1, outage=12.0)  # longer than drop_after (5 s)
    seat = back.view().my_seat
    assert net.run(lambda: all(r.phase in (Phase.BETWEEN, Phase.OVER)
                               for i, r in enumerate(net.replicas) if i != 1),
                   limit=net.now + 1800)
    overs = [next(e for e in net.events[i] if isinstance(e, ev.RoundOver)) for i in (0, 2)]
    assert overs[0].foundation_hash == overs[1].foundation_hash
    assert overs[0].results == overs[1].results
    assert overs[0].verdicts[seat or 0] == UNAUDITED
    assert overs[0].results[seat or 0].foundation_cards > 0
    # The restarted seat catches up, learns it was dropped, and agrees all the same.
    assert net.run(lambda: back.phase in (Phase.BETWEEN, Phase.OVER), limit=net.now + 600)
    mine = next(e for e in net.events[1] if isinstance(e, ev.RoundOver))
    assert (mine.foundation_hash, mine.results) == (overs[0].foundation_hash, overs[0].results)
    assert not any(isinstance(e, ev.Flagged) for events in net.events for e in events)


@pytest.mark.parametrize("outage", [8.0, 40.0, 90.0])
def test_peer_dropped_while_down_sits_down_in_the_hosts_next_round(outage: float) -> None:
    """The host deals on by itself a second after each close (the chase the waiting
    list ends): the restarted peer, however far behind (90 s: three whole rounds,
    replayed from the others' logs), asks back at once and is seated in the very
    next round the host deals, agreeing on what it missed."""
    net = bot_table(4, seed=14)
    host = net.replicas[0]
    host.seating.auto_next = 1.0
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 10, limit=600)
    back = crash_and_restore(net, 2, outage=outage)
    assert host.rs is not None
    crashed_in, dealing = 1, host.rs.number + 1  # its roster is fixed by now
    asked: set[int] = set()

    def ask_back() -> bool:
        # What NetSession does: ask for the seat once per round while out of it.
        rs = back.rs
        out = rs is None or rs.me is None or rs.me not in rs.live
        number = rs.number if rs is not None else 0
        if out and number not in asked:
            asked.add(number)
            net.output(2, back.handle(Open(), net.now))
        hs = host.rs
        return (hs is not None and hs.number > crashed_in and hs.seat_of(back.me.public_key)
                in hs.live and host.phase is Phase.PLAYING)

    assert net.run(ask_back, limit=net.now + 600)
    assert host.rs is not None and host.rs.number == dealing

    def all_scored() -> bool:
        number = host.rs.number if host.rs is not None else None
        return all(r.rs is not None and r.rs.number == number
                   and r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas)

    assert net.run(all_scored, limit=net.now + 1800)
    check_round(net, host.rs.number, honest={0, 1, 2, 3})
    first = [next((e for e in events if isinstance(e, ev.RoundOver) and e.round == crashed_in),
                  None) for events in net.events]
    assert len({(o.foundation_hash, o.results) for o in first if o is not None}) == 1
    # Three rounds behind, it finds round 1 forgotten by the others: it takes the
    # table up from the host's snapshot instead, and never scores that round.
    assert (first[2] is None) == (outage == 90.0)


@pytest.mark.sweep
@pytest.mark.parametrize("seed", [0, 2])
def test_a_peer_killed_again_and_again_comes_back_exactly_each_time(seed: int) -> None:
    """Every restart replays the whole journal, its earlier restarts' records included.

    Long games reach the moves a bot makes right after taking back a stuck vote,
    whose journal records were once dropped (the restart then failed).
    """
    net = bot_table(3, seed=seed)
    host = net.replicas[0]
    host.seating.auto_next = 0.5
    net.output(0, host.handle(StartRound(), net.now))
    rng = random.Random(seed)
    for _ in range(6):
        until = net.now + rng.uniform(5, 25)

        def waited(t: float = until) -> bool:
            return net.now >= t or host.phase is Phase.OVER

        assert net.run(waited, limit=until + 1)
        if host.phase is Phase.OVER:
            break
        back = crash_and_restore(net, 1 + rng.randrange(2), outage=1.0)
        assert back.rs is not None
    assert net.run(lambda: all(r.phase is Phase.OVER for r in net.replicas),
                   limit=net.now + 3600)
    totals = {tuple(sorted(r.totals.items())) for r in net.replicas}
    assert len(totals) == 1
    assert not any(isinstance(e, ev.Divergence | ev.Flagged) for events in net.events
                   for e in events)


@pytest.mark.parametrize(("seed", "host_too"), [
    *((seed, False) for seed in (3, 8, 19, 35, 51, 69, 102, 118, 336)),
    *((seed, True) for seed in (3, 7, 8, 20, 110)),
])
@pytest.mark.sweep
def test_random_crash_schedules_end_in_one_agreed_game(seed: int, host_too: bool) -> None:
    """Peers killed at random moments (the host too, in some), some back in time,
    some dropped and seated again, on a lossy network: one game, the same on
    every replica."""
    rng = random.Random(seed)
    net = random_table(rng, seed, auto_next=(0.2, 1.0, 3.0))
    ask_back = AskBack(net)
    for _ in range(rng.choice([1, 2, 3])):
        until = net.now + rng.uniform(1, 30)

        def waited(t: float = until) -> bool:
            return ask_back() or net.now >= t or net.replicas[0].phase is Phase.OVER

        net.run(waited, limit=until + 1)
        if net.replicas[0].phase is Phase.OVER:
            break
        crash_and_restore(net, rng.randrange(0 if host_too else 1, len(net.replicas)),
                           outage=rng.choice([0.5, 3, 7, 15, 30]))
    assert net.run(lambda: ask_back() or all(r.phase is Phase.OVER for r in net.replicas),
                   limit=net.now + 3600)
    assert_one_agreed_game(net)



def test_a_vote_held_back_while_resuming_is_never_signed_into_a_later_round() -> None:
    """Back from a crash, a seat cut off from everyone votes the silent seats out,
    but signs nothing until the table has told it where its chain ends. That word
    may come in the same batch as the entries that move it on to a round it
    holds no seat in: the votes were for the round it crashed in, and go with it.
    Signed into the new round they were entries no peer accepts (itself
    included: its next restart failed on its own journal)."""
    net = bot_table(4, seed=14, classes={0: replica_with(countdown=0.0, drop_after=2.0)})
    host = net.replicas[0]
    host.seating.auto_next = 1.0
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 10, limit=600)
    back = crash_and_restore(net, 2, outage=40.0)  # dropped; the table plays round 2
    assert host.rs is not None and host.rs.number > 1 and back.rs is not None
    net.cut.add(2)  # it hears nobody for longer than drop_after
    quiet = net.now + 2.5
    assert net.run(lambda: net.now >= quiet, limit=quiet + 1)
    assert back._recovery.resume is not None and back._recovery.resume.deferred, "votes held back"
    # What a real link hands over at once: the host's answer to its first RESEND
    # (the snapshot, for the round it crashed in is forgotten by now), every entry
    # the host holds, and each peer's next ACK (which tells it where its chain ends).
    now = net.now + HEARTBEAT
    ask = seal_message(back.me, Resend(host.me.public_key, 1, 1), table_id=TABLE_ID, round=1,
                       seq=1, lamport=1).raw
    frames = [(send.data, host.me.public_key)
              for send in host.receive(ask, now, via=back.me.public_key).sends
              if send.to == back.me.public_key]
    assert [open_entry(frame).type for frame, _ in frames] == [MsgType.SNAPSHOT]
    frames += [(frame, host.me.public_key) for log in host.authors.values()
               for _, frame in sorted(log.entries.items())]
    for peer in (net.replicas[i] for i in (0, 1, 3)):
        frames += [(send.data, peer.me.public_key) for send in peer.tick(now).sends
                   if send.to in (None, back.me.public_key)]
    net.output(2, back.receive_batch(frames, now))
    net.output(2, back.tick(now + 0.05))
    assert back._recovery.resume is None and back.rs is not None and back.rs.number > 1  # moved on
    mine = [open_entry(frame) for frame in back.authors[back.me.public_key].entries.values()]
    assert not [e for e in mine if e.type == MsgType.DROP and e.round > 1], mine
    # Its journal replays: it can come back again.
    Replica.restore(back.me, TABLE_ID, host.me.public_key, net.journals[2], net.now,
                    countdown=0.0, drop_after=5.0)
