"""A long game keeps memory flat: finished rounds are forgotten, and whoever asks
for a forgotten entry catches up from the host's snapshot.

Each replica keeps every author's entries from the start of the round before
the current one (and only as far as every seat has acknowledged them); a
RESEND for an older one is answered by the host with a SNAPSHOT, which a
newcomer or a peer far behind takes up, replaying the rest from what every
peer still holds.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.scoring import Match
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.botdriver import BotDriver
from p2p_nerts.protocol.envelope import Entry, EnvelopeError, open_entry
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import Kind, snapshot_of
from p2p_nerts.protocol.messages import (
    AckMark,
    Head,
    MsgType,
    Resend,
    Seat,
    Snapshot,
    Total,
    parse_payload,
    seal_message,
)
from p2p_nerts.protocol.replica import Phase, Replica
from p2p_nerts.protocol.replica._base import settings_of
from p2p_nerts.protocol.replica._catchup import CANNOT_CATCH_UP, Pruning
from p2p_nerts.protocol.replica._effects import Emit
from p2p_nerts.testing.memnet import TABLE_ID, MemNet, bot_table

from ..replica_harness import check_round, play_round, round_overs

ROUNDS = 5


def _long_game(seed: int, rounds: int = ROUNDS) -> MemNet:
    net = bot_table(3, seed=seed, variants=Variants(target=10_000))
    for _ in range(rounds):
        check_round(net, play_round(net))
    return net


def _held_rounds(r: Replica) -> set[int]:
    return {open_entry(frame).round for log in r.authors.values()
            for frame in log.entries.values()}


def _ask(asker: Identity, peer: Replica, author: bytes, seq: int, now: float) -> list[bytes]:
    """What ``peer`` sends ``asker`` for a RESEND of ``author``'s entry ``seq``."""
    ask = seal_message(asker, Resend(author, seq, seq), table_id=TABLE_ID, round=1, seq=1,
                       lamport=1).raw
    out = peer.receive(ask, now, via=asker.public_key)
    return [send.data for send in out.sends if send.to == asker.public_key]


def _newcomer(net: MemNet, seed: int) -> tuple[int, Replica]:
    host = net.replicas[0]
    late = Replica(Identity.from_seed(bytes([seed]) * 32, "Cy"), TABLE_ID, host.me.public_key,
                   rng=random.Random(seed).randbytes, countdown=0.0, drop_after=5.0)
    return net.join(late, BotDriver(late, Bot(SKILLS["hard"], random.Random(seed)))), late


def test_after_many_rounds_a_replica_holds_entries_of_the_last_rounds_only() -> None:
    net = _long_game(seed=41)
    for r in net.replicas:
        # Round 5 is over; 4 and 5 are held (and what was signed between 3 and 4).
        assert _held_rounds(r) <= {ROUNDS - 2, ROUNDS - 1, ROUNDS}, r.me.name
        assert all(log.floor > 0 for log in r.authors.values())
        # Sequencing goes on where it was: the heads and numbers are all kept.
        assert all(log.delivered >= log.floor for log in r.authors.values())
    heads = [{k: (log.delivered, log.head) for k, log in r.authors.items()} for r in net.replicas]
    assert heads[0] == heads[1] == heads[2]
    number = play_round(net)  # and the game goes on, agreed
    check_round(net, number)


def test_a_resend_for_a_forgotten_entry_gets_the_hosts_snapshot() -> None:
    net = _long_game(seed=42)
    host, guest = net.replicas[0], net.replicas[1]
    asker = Identity.from_seed(b"\x42" * 32, "Eve")
    key = host.me.public_key
    assert host.authors[key].floor > 1
    [frame] = _ask(asker, host, key, 1, net.now)
    entry = open_entry(frame)  # signed by the host
    assert entry.author == key and entry.type == MsgType.SNAPSHOT
    snapshot = parse_payload(entry.type, entry.payload)
    assert isinstance(snapshot, Snapshot)
    assert snapshot.round == ROUNDS - 1 and not snapshot.over
    assert [s.key for s in snapshot.seats] == [s.key for s in host.view().seats]
    assert {h.author for h in snapshot.heads} == {a for a, log in host.authors.items()
                                                  if log.delivered}
    assert all(h.seq >= host.authors[h.author].floor for h in snapshot.heads)
    # Only the host answers with its snapshot; a guest sends what it holds, verbatim.
    assert _ask(asker, guest, key, 1, net.now) == []
    held = host.authors[key].floor + 1
    assert _ask(asker, guest, key, held, net.now) == [host.authors[key].entries[held]]


def test_a_newcomer_after_several_rounds_takes_up_the_snapshot_and_plays() -> None:
    net = _long_game(seed=43, rounds=4)
    host = net.replicas[0]
    index, late = _newcomer(net, 43)
    assert net.run(lambda: late.me.public_key in {s.key for s in host.view().seats}
                   and late.rs is not None and late.rs.number == 4
                   and late.phase is Phase.BETWEEN, limit=net.now + 120)
    # It replayed the rounds the table still held, from the snapshot of round 3's
    # start, and agrees on them; the earlier ones it took on the host's word.
    assert not any(isinstance(e, ev.RoundOver) and e.round < 3 for e in net.events[index])
    for number in (3, 4):
        assert len({(o.foundation_hash, o.results) for o in round_overs(net, number)}) == 1
    assert late.totals == host.totals
    assert late.authors[host.me.public_key].floor > 0
    # Its journal brings it back to the same place.
    back = Replica.restore(late.me, TABLE_ID, host.me.public_key, net.journals[index],
                           net.now, countdown=0.0, drop_after=5.0)
    assert back.totals == late.totals and back.view().seats == late.view().seats
    assert {k: log.delivered for k, log in back.authors.items()} == {
        k: log.delivered for k, log in late.authors.items()}
    number = play_round(net)
    check_round(net, number, honest={0, 1, 2, 3})
    assert late.rs is not None and late.rs.me is not None


def test_a_seat_restored_after_pruning_holds_what_it_held_and_plays_on() -> None:
    net = _long_game(seed=44, rounds=4)
    k = 2
    before = net.replicas[k]
    journal = net.journals[k]
    assert journal[0].kind is Kind.SNAPSHOT and snapshot_of(journal[0]).round == ROUNDS - 2
    back = Replica.restore(before.me, TABLE_ID, net.replicas[0].me.public_key,
                           journal, net.now, countdown=0.0, drop_after=5.0)
    assert {key: (log.delivered, log.head) for key, log in back.authors.items()} == {
        key: (log.delivered, log.head) for key, log in before.authors.items()}
    for key, log in back.authors.items():
        # The compacted journal starts as round 3 began, as the live memory does (the
        # live one may keep the entry at that point too: see AuthorLog.prune).
        held = before.authors[key]
        assert held.floor <= log.floor <= held.floor + 1
        assert log.entries == {s: f for s, f in held.entries.items() if s > log.floor}
    assert back._pruning.floor == before._pruning.floor  # it answers as it did
    net.replicas[k] = back
    net.drivers[k] = BotDriver(back, Bot(SKILLS["hard"], random.Random(k)))
    number = play_round(net)
    check_round(net, number)


def test_a_snapshot_is_taken_up_once_and_only_from_the_host() -> None:
    net = _long_game(seed=45, rounds=3)
    host, guest = net.replicas[0], net.replicas[1]
    late = Replica(Identity.from_seed(b"\x45" * 32, "Cy"), TABLE_ID, host.me.public_key)
    [frame] = _ask(late.me, host, host.me.public_key, 1, net.now)
    snapshot = parse_payload(MsgType.SNAPSHOT, open_entry(frame).payload)
    # The same snapshot signed by a guest is not taken up: only the host seats anyone.
    forged = seal_message(guest.me, snapshot, table_id=TABLE_ID, round=3, seq=guest.view().seq,
                          lamport=guest.clock.time, prev=guest.authors[guest.me.public_key].head)
    late.receive(forged.raw, net.now, via=guest.me.public_key)
    assert late.rs is None and late.view().seats == ()
    out = late.receive(frame, net.now, via=host.me.public_key)
    assert late.rs is not None and late.rs.number == 2 and late.phase is Phase.SHUFFLE
    assert [s.key for s in late.view().seats] == [s.key for s in host.view().seats]
    assert [r.data for r in out.journal] == [frame]  # journaled: a restart takes it up too
    again = late.receive(frame, net.now, via=host.me.public_key)
    assert again.journal == [] and late.rs.number == 2


def test_a_snapshot_it_cannot_take_up_is_said_once_and_changes_nothing() -> None:
    """A peer that has begun the snapshot's round yet holds less than it names
    (entries it had acknowledged, lost since) cannot replay what the table has
    forgotten: it says so once, and stays where it is."""
    net = _long_game(seed=46, rounds=3)
    host = net.replicas[0]
    key = host.me.public_key
    late = Replica(Identity.from_seed(b"\x46" * 32, "Cy"), TABLE_ID, key)
    [frame] = _ask(late.me, host, key, 1, net.now)
    late.receive(frame, net.now, via=key)
    assert late.rs is not None and late.rs.number == 2
    snapshot = parse_payload(MsgType.SNAPSHOT, open_entry(frame).payload)
    assert isinstance(snapshot, Snapshot)
    held = late.authors[key].delivered
    ahead = replace(snapshot, heads=tuple(h._replace(seq=h.seq + 5) if h.author == key else h
                                          for h in snapshot.heads))
    signed = seal_message(host.me, ahead, table_id=TABLE_ID, round=3, seq=host.view().seq,
                          lamport=host.clock.time, prev=host.authors[key].head).raw
    outs = [late.receive(signed, net.now, via=key) for _ in range(2)]
    notices = [e.text for out in outs for e in out.events if isinstance(e, ev.Notice)]
    assert len(notices) == 1 and "cannot catch up" in notices[0]
    assert all(out.journal == [] for out in outs)
    assert late.rs.number == 2 and late.authors[key].delivered == held


# The pruning sub-machine on its own: the effects it returns for the facade.
HOST_ID = Identity.from_seed(b"h" * 32, "host")
ME, OTHER = b"m" * 32, b"o" * 32


def _note(number: int, seats: tuple[Seat, ...], heads: tuple[Head, ...],
          rules: Variants | None = None) -> Snapshot:
    return Snapshot(number, False, seats, settings_of(rules or Variants(), 1.5, 12.0),
                    (Total(ME, 30),), 2, heads)


def _offer(snapshot: Snapshot, author: Identity = HOST_ID) -> Entry:
    return open_entry(seal_message(author, snapshot, table_id=TABLE_ID, round=1, seq=1,
                                   lamport=1).raw)


SEATED = (Seat(HOST_ID.public_key, "host"), Seat(ME, "me"))
HEADS = (Head(HOST_ID.public_key, 7, 40, b"i" * 64),)


def test_a_snapshot_offered_is_taken_up_only_from_the_host_and_for_a_later_round() -> None:
    pruning, snapshot = Pruning(), _note(3, SEATED, HEADS)
    entry = _offer(snapshot)
    host = HOST_ID.public_key
    assert pruning.offered(entry, snapshot, host_key=host, is_host=False, authors={},
                           number=1) == Variants()
    assert pruning.offered(entry, snapshot, host_key=host, is_host=True, authors={},
                           number=1) == []
    assert pruning.offered(entry, snapshot, host_key=OTHER, is_host=False, authors={},
                           number=1) == []
    held = AuthorLog(host)
    held.take_up(7, 40, b"i" * 64)  # we hold as far as it: not behind
    assert pruning.offered(entry, snapshot, host_key=host, is_host=False,
                           authors={host: held}, number=1) == []
    # Its round begun already: said once.
    assert pruning.offered(entry, snapshot, host_key=host, is_host=False, authors={},
                           number=3) == [Emit(ev.Notice(CANNOT_CATCH_UP))]
    assert pruning.offered(entry, snapshot, host_key=host, is_host=False, authors={},
                           number=3) == []
    alone = _note(4, SEATED[:1], HEADS)
    with pytest.raises(EnvelopeError, match="bad_field:snapshot"):
        pruning.offered(_offer(alone), alone, host_key=host, is_host=False, authors={},
                        number=1)


def test_taking_a_snapshot_up_sets_the_table_as_noted() -> None:
    pruning, snapshot = Pruning(), _note(3, SEATED, HEADS)
    rules = Variants()
    assert pruning.take_up(snapshot, rules) == ({ME: 30}, Match(rules, 2, [0, 0], 2),
                                                Phase.BETWEEN)
    assert pruning.begun == ({HOST_ID.public_key: 7}, snapshot)


def test_as_a_round_begins_what_every_seat_holds_of_the_round_before_the_last_is_forgotten() -> (
        None):
    pruning, me, other = Pruning(), HOST_ID.public_key, ME
    first = _note(1, SEATED, (Head(me, 4, 10, b"a" * 64), Head(other, 3, 9, b"b" * 64)))
    assert pruning.begin(first, me) == {}  # nothing before
    pruning.heard(other, [AckMark(me, 4), AckMark(other, 2)])
    second = _note(2, SEATED, (Head(me, 9, 30, b"c" * 64),))
    # As far as the first note, and only as far as the other seat holds.
    assert pruning.begin(second, me) == {me: 4, other: 2}
