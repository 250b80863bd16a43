"""A long game makes no long journal: as each round closes the journal is rewritten
to start where the round before it began, and ``--resume`` replays only that.

In memory (the memnet compacts each replica's journal as a store does) and
through the store's files: the rewrite is crash-safe (a new file, ``fsync``,
rename), and the entries it takes out stay for the game's record.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.envelope import open_entry, open_link_entry
from p2p_nerts.protocol.identity import PUBLIC_KEY_LEN
from p2p_nerts.protocol.journal import Kind, Record, boot_record, snapshot_of, unpack, written_in
from p2p_nerts.protocol.replica import Outbound, Phase, Replica, StartRound, compact, compacts
from p2p_nerts.records.record import record_of
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.testing.memnet import TABLE_ID, MemNet, bot_table

from ..replica_harness import (
    assert_one_agreed_game,
    check_round,
    crash_and_restore,
    play_round,
    state_of,
)


def _round_of(record: Record) -> int | None:
    if record.kind is Kind.ENTRY:
        return open_entry(record.data).round
    if record.kind is Kind.LINK:
        key, raw = record.data[:PUBLIC_KEY_LEN], record.data[PUBLIC_KEY_LEN:]
        return open_link_entry(raw, key).round
    if record.kind in (Kind.SECRETS, Kind.MOVE):
        number = unpack(record)[0]
        assert isinstance(number, int)
        return number
    return None


def _size(records: list[Record]) -> int:
    return sum(len(r.data) for r in records)


#: What a replica's call gave its store: journal records, and whether it closed a
#: round (the store is then compacted).
Batch = tuple[list[Record], bool]


def _batches(monkeypatch: pytest.MonkeyPatch, k: int) -> list[Batch]:
    """Every batch replica ``k`` produces from now on, as a session hands them to its
    store."""
    batches: list[Batch] = []
    route = MemNet._route

    def routed(net: MemNet, sender: int, out: Outbound) -> None:
        if sender == k and (out.journal or compacts(out.events)):
            batches.append((list(out.journal), compacts(out.events)))
        route(net, sender, out)

    monkeypatch.setattr(MemNet, "_route", routed)
    return batches


def _whole(batches: list[Batch]) -> list[Record]:
    """The journal as it would be without compaction."""
    return [r for records, _ in batches for r in records]


def _feed(store: Store, batches: list[Batch]) -> None:
    """Write the batches as the session does: append each, compact in the breaks."""
    for records, closes in batches:
        store.append(TABLE_ID, records)
        if closes:
            store.compact(TABLE_ID)


def _restored(net: MemNet, k: int, records: list[Record]) -> Replica:
    me = net.replicas[k]
    return Replica.restore(me.me, TABLE_ID, net.replicas[0].me.public_key, records, net.now,
                           rng=random.Random(1).randbytes, countdown=0.0, drop_after=5.0)


def _long_game(seed: int, rounds: int) -> MemNet:
    net = bot_table(3, seed=seed, variants=Variants(target=10_000))
    for _ in range(rounds):
        check_round(net, play_round(net))
    return net


def test_the_journal_holds_the_last_two_rounds_however_long_the_game(
        monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _batches(monkeypatch, 1)
    net = bot_table(3, seed=51, variants=Variants(target=10_000))
    sizes = []
    for _ in range(8):
        number = play_round(net)
        check_round(net, number)
        for journal in net.journals:
            if number > 1:
                assert journal[0].kind is Kind.SNAPSHOT
                assert snapshot_of(journal[0]).round == number - 1
            # Nothing of the rounds before the previous one (but what peers a moment
            # behind dated with it as this one began: their ACKs, a READY).
            rounds = [n for r in journal if (n := _round_of(r)) is not None]
            assert min(rounds) >= number - 2, (number, sorted(set(rounds)))
            mine = {_round_of(r) for r in journal if r.kind in (Kind.SECRETS, Kind.MOVE)}
            assert mine == {number - 1, number} - {0}
        sizes.append(_size(net.journals[1]))
    assert max(sizes[2:]) < 2 * sizes[1]  # flat after round 2 (rounds differ in length)
    assert sizes[-1] * 3 < _size(_whole(batches))
    for k, journal in enumerate(net.journals):
        # The signed entries it no longer holds went to the record's side.
        assert {r.data for r in net.pasts[k]}.isdisjoint(r.data for r in journal)
        assert {r.data for r in net.written(k) if r.kind is Kind.ENTRY} >= {
            frame for log in net.replicas[k].authors.values() for frame in log.entries.values()}


def test_a_compacted_journal_still_names_the_boot_it_was_written_in(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The boot named before the note goes right after it; one named later stays."""
    batches = _batches(monkeypatch, 1)
    net = _long_game(53, 3)
    whole = [boot_record(b"boot-1"), *_whole(batches)]
    done = compact(whole)
    assert done is not None and done.kept[0].kind is Kind.SNAPSHOT
    assert done.kept[1] == boot_record(b"boot-1") and written_in(done.kept, b"boot-1")
    assert not written_in(done.kept, b"boot-2") and not written_in(_whole(batches), b"boot-1")
    later = compact([*whole[:-1], boot_record(b"boot-2"), whole[-1]])
    assert later is not None and written_in(later.kept, b"boot-2")
    assert state_of(_restored(net, 1, list(done.kept))) == state_of(net.replicas[1])


def test_a_compacted_journal_restores_what_the_whole_one_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _batches(monkeypatch, 1)
    net = bot_table(3, seed=52, variants=Variants(target=10_000))
    for _ in range(4):
        check_round(net, play_round(net))
    net.output(0, net.replicas[0].handle(StartRound(), net.now))  # round 5, under way
    assert net.run(lambda: len(net.replicas[1].rs.log) >= 12  # type: ignore[union-attr]
                   and net.replicas[1].phase is Phase.PLAYING, limit=net.now + 600)
    whole = _whole(batches)
    assert snapshot_of(net.journals[1][0]).round == 3  # compacted as round 4 closed
    assert len(net.journals[1]) < len(whole)
    live = state_of(net.replicas[1])
    assert state_of(_restored(net, 1, whole)) == live
    assert state_of(_restored(net, 1, net.journals[1])) == live


@pytest.mark.parametrize("k", [0, 2])
def test_a_seat_killed_after_compactions_comes_back_from_the_snapshot_and_plays_on(
        k: int) -> None:
    net = _long_game(seed=53 + k, rounds=5)
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    assert net.run(lambda: all(r.view().can_move() for r in net.replicas), limit=net.now + 120)
    host = net.replicas[0]
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 6, limit=net.now + 600)
    assert snapshot_of(net.journals[k][0]).round == 4  # compacted as round 5 closed
    back = crash_and_restore(net, k, outage=1.0)  # the very state it had (seq, clock...)
    assert back.prev_rs is not None and back.prev_rs.number == 5
    assert net.run(lambda: all(r.phase is Phase.BETWEEN for r in net.replicas),
                   limit=net.now + 1800)
    check_round(net, 6, honest={0, 1, 2})
    check_round(net, play_round(net), honest={0, 1, 2})
    assert_one_agreed_game(net)  # nobody flagged: it signed no number twice


# ------------------------------------------------------------------ the store's files
def _files(path: Path) -> list[str]:
    return sorted(p.name for p in (path.parent / f"{DB_FILE}.journal").iterdir())


def test_the_store_compacts_its_journal_file_as_the_memnet_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _batches(monkeypatch, 1)
    net = _long_game(seed=54, rounds=4)
    path = tmp_path / DB_FILE
    with Store(path) as store:
        _feed(store, batches)
    name = TABLE_ID.hex()
    assert _files(path) == [f"{name}.log", f"{name}.past"]  # no .tmp left
    with Store(path) as store:  # the next process
        assert store.records(TABLE_ID) == net.journals[1]
        assert store.written(TABLE_ID) == net.written(1)
        back = _restored(net, 1, store.records(TABLE_ID))
        assert state_of(back) == state_of(net.replicas[1])
        # The game's record is whole: what the uncompacted journal would give.
        whole = _whole(batches)
        assert (record_of(net.replicas[1], "t", 0.0, store.written(TABLE_ID))
                == record_of(net.replicas[1], "t", 0.0, whole))
        store.finish_table(TABLE_ID, {"winner": "p0"})
    assert _files(path) == []  # a finished game leaves no journal, past or temporary file


def test_a_crash_during_compaction_leaves_the_old_journal_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _batches(monkeypatch, 1)
    net = _long_game(seed=55, rounds=4)
    path = tmp_path / DB_FILE
    real, renames = os.replace, []

    def killed(src: str | Path, dst: str | Path) -> None:
        renames.append(dst)
        if len(renames) == 2:  # the second compaction dies before its rename
            Path(src).write_bytes(b"\x00\x00\x01torn")  # ...with its new file half written
            raise OSError("killed")
        real(src, dst)

    monkeypatch.setattr(os, "replace", killed)
    store = Store(path)
    fed = 0
    with pytest.raises(OSError, match="killed"):
        for batch in batches:
            fed += 1
            _feed(store, [batch])
    store.close()
    monkeypatch.setattr(os, "replace", real)
    (tmp_path / f"{DB_FILE}.journal" / f"{TABLE_ID.hex()}.log.tmp").write_bytes(b"torn")
    with Store(path) as store:
        old = store.records(TABLE_ID)  # the journal before that compaction, whole
        undone = compact(old)
        assert undone is not None and len(undone.kept) < len(old)
        assert state_of(_restored(net, 1, old)) == state_of(_restored(net, 1, list(undone.kept)))
        _feed(store, batches[fed:])  # the seat plays on; the next compactions go through
        assert store.records(TABLE_ID) == net.journals[1]
        assert not (tmp_path / f"{DB_FILE}.journal" / f"{TABLE_ID.hex()}.log.tmp").exists()
        # Entries archived by the compaction that died are archived again: once each
        # in the record.
        assert {r.data for r in store.written(TABLE_ID)} == {r.data for r in net.written(1)}
        assert (record_of(net.replicas[1], "t", 0.0, store.written(TABLE_ID))
                == record_of(net.replicas[1], "t", 0.0, net.written(1)))


def test_a_torn_tail_of_the_past_file_is_cut_off_before_more_is_archived(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _batches(monkeypatch, 1)
    net = _long_game(seed=56, rounds=4)
    path = tmp_path / DB_FILE
    breaks = [i for i, (_, closes) in enumerate(batches) if closes]
    with Store(path) as store:
        _feed(store, batches[:breaks[2]])  # rounds 1 and 2 closed: a compaction so far
    past = tmp_path / f"{DB_FILE}.journal" / f"{TABLE_ID.hex()}.past"
    past.write_bytes(past.read_bytes()[:-5])  # a crash tore its last append
    with Store(path) as store:
        _feed(store, batches[breaks[2]:])
        assert store.records(TABLE_ID) == net.journals[1]
    with Store(path) as store:  # reads back whole: only the torn entry is missing
        written = {r.data for r in store.written(TABLE_ID)}
        assert len({r.data for r in net.written(1)} - written) == 1


def test_a_seat_reads_its_journal_once_and_compacts_from_what_it_appended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _batches(monkeypatch, 1)
    net = _long_game(seed=57, rounds=4)
    path = tmp_path / DB_FILE
    journal = tmp_path / f"{DB_FILE}.journal" / f"{TABLE_ID.hex()}.log"
    real, reads = Path.read_bytes, []

    def read_bytes(self: Path) -> bytes:
        reads.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with Store(path) as store:
        _feed(store, batches)
        assert store.records(TABLE_ID) == net.journals[1]
        assert reads.count(journal) == 1  # as it first appended: not at each compaction
    with Store(path) as store:
        assert store.records(TABLE_ID) == net.journals[1]


def test_a_compaction_that_fails_is_done_again_from_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a failed rename left is read back, not what the seat meant to write."""
    batches = _batches(monkeypatch, 1)
    net = _long_game(seed=58, rounds=4)
    real, renames = os.replace, []

    def failing(src: str | Path, dst: str | Path) -> None:
        renames.append(dst)
        if len(renames) == 2:  # the second compaction: the disk refuses the rename
            raise OSError("no")
        real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with Store(tmp_path / DB_FILE) as store:
        for batch in batches:
            try:
                _feed(store, [batch])
            except OSError:
                assert len(renames) == 2  # the failed one: the seat plays on
        assert len(renames) > 2 and store.records(TABLE_ID) == net.journals[1]
        assert {r.data for r in store.written(TABLE_ID)} == {r.data for r in net.written(1)}
