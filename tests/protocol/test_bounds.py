"""What a peer keeps for others: strangers get nothing kept, RESEND answers and held
entries are bounded (sans I/O, in memory)."""

from __future__ import annotations

import pytest

from p2p_nerts.protocol.authors import MAX_HELD_BYTES, AuthorLog
from p2p_nerts.protocol.budget import TokenBucket
from p2p_nerts.protocol.envelope import open_entry
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Ack, AckMark, Audit, Join, Ready, Resend, seal_message
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.protocol.replica import _intake as intake_module
from p2p_nerts.protocol.replica._base import MAX_AUTHORS
from p2p_nerts.testing.memnet import TABLE_ID, bot_table

pytestmark = pytest.mark.fast


def stranger(n: int) -> Identity:
    return Identity.from_seed(n.to_bytes(4, "big") * 8, f"stranger{n}")


def test_a_token_bucket_gives_its_burst_then_its_rate() -> None:
    bucket = TokenBucket(rate=4, burst=5)
    assert [bucket.take(0.0) for _ in range(6)] == [True] * 5 + [False]
    assert bucket.room(2.0) == 5  # refilled, never above the burst
    assert bucket.take(2.0, 5) and not bucket.take(2.0)
    assert bucket.take(2.25) and not bucket.take(2.25)  # a quarter second: one token


def test_a_strangers_entries_are_checked_dropped_and_never_journaled() -> None:
    net = bot_table(2, seed=3)
    for i, r in enumerate(net.replicas):
        before = dict(r.authors), len(net.journals[i])
        who = stranger(40 + i)
        for seq in range(1, 201):
            raw = seal_message(who, Ready(True), table_id=TABLE_ID, round=0, seq=seq,
                               lamport=seq).raw
            net.output(i, r.receive(raw, net.now))
        assert r.rejected["stranger"] == 200
        assert who.public_key not in r.authors and dict(r.authors) == before[0]
        assert len(net.journals[i]) == before[1]  # nothing written for them


def test_a_stranger_asking_for_a_seat_is_heard_by_the_host_only() -> None:
    net = bot_table(2, seed=4)
    host, guest = net.replicas
    newcomer = stranger(50)
    join = seal_message(newcomer, Join("Nu", None), table_id=TABLE_ID,
                        round=0, seq=1, lamport=1).raw
    guest.receive(join, net.now)
    assert guest.rejected["stranger"] == 1
    host.receive(join, net.now)
    assert newcomer.public_key in host.view().seated


def test_nothing_is_held_early_for_a_key_without_a_place() -> None:
    net = bot_table(2, seed=5)
    host = net.replicas[0]
    who = stranger(60)
    join = seal_message(who, Join("Nu", None), table_id=TABLE_ID, round=0,
                        seq=5, lamport=5).raw  # its first four never came
    host.receive(join, net.now)
    assert host.rejected["stranger"] == 1
    log = host.authors.get(who.public_key)
    assert log is None or not log.held


def test_held_entries_are_bounded_in_bytes_per_author() -> None:
    who = stranger(70)
    log = AuthorLog(who.public_key)
    audit = Audit(bytes(32), tuple((1, i) for i in range(1500)))
    big = [seal_message(who, audit, table_id=TABLE_ID, round=1, seq=s, lamport=s)
           for s in range(2, 200)]
    kept = [log.offer(e) for e in big]
    held = sum(len(e.raw) for e in log.held.values())
    assert "duplicate" in kept and held <= MAX_HELD_BYTES
    assert held > MAX_HELD_BYTES - 2 * len(big[0].raw)  # filled up to the bound


def test_resend_answers_keep_to_a_budget_per_asker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(intake_module, "RESEND_BYTES", 500)
    monkeypatch.setattr(intake_module, "RESEND_BURST", 1000)
    net = bot_table(2, seed=6)
    host, guest = net.replicas
    net.output(0, host.handle(StartRound(), net.now))
    log = host.authors[host.me.public_key]
    assert net.run(lambda: sum(map(len, log.entries.values())) > 3000, limit=600)
    net.now += 10  # the budget full again
    ask = [seal_message(guest.me, Resend(host.me.public_key, 1, 1000), table_id=TABLE_ID,
                        round=0, seq=guest.view().seq, lamport=guest.clock.time + 1 + n).raw
           for n in range(20)]
    sent = 0
    for raw in ask:  # asked over and over at one moment: the burst, no more
        out = host.receive(raw, net.now)
        sent += sum(len(s.data) for s in out.sends if s.to == guest.me.public_key
                    and open_entry(s.data).author == host.me.public_key)
    assert 0 < sent <= 1000
    assert host.rejected["resend_budget"] >= 1
    later = host.receive(ask[0], net.now + 1.0)  # a second later: about a second's worth
    again = sum(len(s.data) for s in later.sends if s.to == guest.me.public_key)
    assert 0 < again <= 1000


def test_a_strangers_ack_is_never_journaled() -> None:
    net = bot_table(2, seed=7)
    host = net.replicas[0]
    before = len(net.journals[0])
    who = stranger(80)
    ack = seal_message(who, Ack((AckMark(host.me.public_key, 1),)), table_id=TABLE_ID,
                       round=0, seq=1, lamport=1).raw
    net.output(0, host.receive(ack, net.now))
    assert len(net.journals[0]) == before


def test_resends_from_fresh_keys_keep_what_a_guest_holds_by_key_capped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every RESEND under a key made for it alone (a stranger signs with as many as
    it likes): what the guest keeps by key stays within the chains it keeps, and
    all those askers together are answered within one budget.
    ``scripts/fresh_keys.py`` measures the memory for 100,000 of them."""
    monkeypatch.setattr(intake_module, "RESEND_BYTES", 500)
    monkeypatch.setattr(intake_module, "RESEND_BURST", 5000)
    net = bot_table(3, seed=8)
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    assert net.run(lambda: net.replicas[1].phase is Phase.PLAYING, limit=30)
    guest, host_key = net.replicas[1], net.replicas[0].me.public_key
    places = guest._places  # the bound is on the replica's own state
    seats = set(guest.view().seated)
    sent = 0
    for _ in range(4 * MAX_AUTHORS):
        who = Identity.generate("x")
        raw = seal_message(who, Resend(host_key, 1, 1024), table_id=TABLE_ID, round=0,
                           seq=1, lamport=1).raw
        out = guest.receive(raw, net.now)  # all at one moment: the burst, no more
        sent += sum(len(s.data) for s in out.sends if s.to == who.public_key)
        assert len(places.authors) <= MAX_AUTHORS and len(places.last_heard) <= MAX_AUTHORS
        assert len(places.watchers) <= MAX_AUTHORS and places.placed <= seats
        assert places.resends.budgets() <= len(seats) + 1
    assert places.watchers  # the latest askers watch
    assert 0 < sent <= 5000 and guest.rejected["resend_budget"] > 0
