"""The journal files and the database: survive the process, restore a replica, keep history."""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from p2p_nerts.protocol.envelope import MAGIC
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import Kind, Record, made_by
from p2p_nerts.protocol.replica import Replica, StartRound
from p2p_nerts.store import DB_FILE, JournalError, Store, StoreBusy, StoreDamaged, StoreError
from p2p_nerts.testing.memnet import TABLE_ID, bot_table


def reread(path: Path, table_id: bytes = TABLE_ID) -> list[Record]:
    """The table's journal as the next process to open the store reads it."""
    with Store(path) as store:
        return store.records(table_id)


def test_records_round_trip_in_order(tmp_path: Path) -> None:
    store = Store(tmp_path / DB_FILE)
    store.join_table(b"t" * 16, b"h" * 32, "127.0.0.1:4000")
    recs = [Record(Kind.ENTRY, b"a"), Record(Kind.MOVE, b"b"), Record(Kind.SECRETS, b"c")]
    store.append(b"t" * 16, recs[:2])
    store.append(b"t" * 16, recs[2:])
    store.append(b"u" * 16, [Record(Kind.ENTRY, b"other table")])
    assert store.records(b"t" * 16) == recs
    table = store.unfinished()
    assert table is not None and table.address == "127.0.0.1:4000"
    store.finish_table(b"t" * 16, {"winner": "p0"})
    assert store.unfinished() is None
    assert store.records(b"t" * 16) == []
    # The game's last frames (goodbyes, acknowledgements) leave no journal behind.
    store.append(b"t" * 16, [Record(Kind.LINK, b"a last ack")])
    assert not (tmp_path / f"{DB_FILE}.journal" / f"{(b't' * 16).hex()}.log").exists()
    assert store.history() == [{"winner": "p0"}]


def test_sitting_down_at_another_table_gives_up_the_unfinished_one(tmp_path: Path) -> None:
    """``--resume`` goes back to the last table only: once that one is over it
    must not go back to an older, abandoned one, whose journal (deck secrets)
    goes as soon as we sit down elsewhere."""
    old, new = b"o" * 16, b"n" * 16
    store = Store(tmp_path / DB_FILE)
    store.join_table(old, b"h" * 32, "127.0.0.1:4000")
    store.append(old, [Record(Kind.SECRETS, b"old deck")])
    store.join_table(new, b"h" * 32, "127.0.0.1:4001")
    store.append(new, [Record(Kind.ENTRY, b"new")])
    assert not (tmp_path / f"{DB_FILE}.journal" / f"{old.hex()}.log").exists()
    assert store.records(old) == []
    table = store.unfinished()
    assert table is not None and table.table_id == new
    store.join_table(new, b"h" * 32, "127.0.0.1:4002")  # back at the same table
    assert store.records(new) == [Record(Kind.ENTRY, b"new")]
    store.join_table(old, b"h" * 32, "127.0.0.1:4000")  # back at the first one
    store.append(old, [Record(Kind.ENTRY, b"old again")])
    assert store.records(old) == [Record(Kind.ENTRY, b"old again")]
    table = store.unfinished()
    assert table is not None and table.table_id == old
    store.finish_table(old, {"winner": "p0"})
    assert store.unfinished() is None
    assert store.records(new) == []
    assert store.history() == [{"winner": "p0"}]  # a table given up has no result


def test_a_killed_writer_loses_nothing_it_appended(tmp_path: Path) -> None:
    """Appends by a process that is then SIGKILLed are all there afterwards."""
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from p2p_nerts.store import Store\n"
        "from p2p_nerts.protocol.journal import Kind, Record\n"
        "s = Store(Path(sys.argv[1]))\n"
        "for i in range(200):\n"
        "    s.append(b'k' * 16, [Record(Kind.ENTRY, i.to_bytes(2, 'big'))])\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    path = tmp_path / DB_FILE
    proc = subprocess.run([sys.executable, "-c", script, str(path)], check=False)
    assert proc.returncode == -9
    got = reread(path, b"k" * 16)
    assert [int.from_bytes(r.data, "big") for r in got] == list(range(200))


def test_replica_restored_from_the_store_matches(tmp_path: Path) -> None:
    net = bot_table(3, seed=5)
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 10, limit=600)
    store = Store(tmp_path / DB_FILE)
    store.append(TABLE_ID, net.journals[1])
    store.close()
    again = reread(tmp_path / DB_FILE)
    old = net.replicas[1]
    back = Replica.restore(old.me, TABLE_ID, host.me.public_key, again, net.now,
                           rng=random.Random(0).randbytes)
    assert back.rs is not None and old.rs is not None
    assert back.rs.tab is not None and old.rs.tab is not None
    assert back.rs.tab.log == old.rs.tab.log
    assert back.rs.log.state_hash() == old.rs.log.state_hash()


def test_appends_write_only_the_tables_journal_file(tmp_path: Path) -> None:
    """The journal is on the path of every play: appends are one write to the
    table's own file and leave the database alone (its WAL is folded in between
    rounds, by checkpoint)."""
    store = Store(tmp_path / "n.db")
    db, wal = tmp_path / "n.db", tmp_path / "n.db-wal"
    sizes = db.stat().st_size, wal.stat().st_size
    records = [Record(Kind.ENTRY, bytes(200))]
    for _ in range(1500):
        store.append(TABLE_ID, records)
    assert (db.stat().st_size, wal.stat().st_size) == sizes
    journal = tmp_path / "n.db.journal" / f"{TABLE_ID.hex()}.log"
    assert journal.stat().st_size == 1500 * (9 + 200)
    # Private: a round's records hold this player's deck secret until its audit.
    assert journal.stat().st_mode & 0o777 == 0o600
    assert journal.parent.stat().st_mode & 0o777 == 0o700
    store.join_table(TABLE_ID, b"h" * 32, "127.0.0.1:4000")
    store.checkpoint()
    store.close()
    assert len(reread(tmp_path / "n.db")) == 1500


def test_a_record_torn_by_a_power_cut_is_left_out_and_damage_is_an_error(
        tmp_path: Path) -> None:
    store = Store(tmp_path / DB_FILE)
    recs = [Record(Kind.ENTRY, b"first"), Record(Kind.MOVE, b"second"),
            Record(Kind.LINK, b"third")]
    store.append(TABLE_ID, recs)
    store.close()
    journal = tmp_path / f"{DB_FILE}.journal" / f"{TABLE_ID.hex()}.log"
    whole = journal.read_bytes()
    for cut in range(1, 9 + len(b"third")):  # the last record, cut anywhere
        journal.write_bytes(whole[:-cut])
        assert reread(tmp_path / DB_FILE) == recs[:2]
    journal.write_bytes(whole[:-1] + b"X")  # garbled, as the last one: torn too
    assert reread(tmp_path / DB_FILE) == recs[:2]
    damaged = bytearray(whole)
    damaged[9 + 2] ^= 0xFF  # a byte of the first record's data, with more after it
    journal.write_bytes(bytes(damaged))
    with pytest.raises(StoreError, match="damaged at byte 0"):
        reread(tmp_path / DB_FILE)
    assert reread(tmp_path / DB_FILE, b"n" * 16) == []  # no journal: nothing to replay


def test_the_journal_table_of_older_versions_goes(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE journal (table_id BLOB, kind INTEGER, data BLOB)")
        db.execute("INSERT INTO journal VALUES (?, 1, ?)", (TABLE_ID, b"secret"))
    db.close()
    Store(path).close()
    with contextlib.closing(sqlite3.connect(path)) as db:
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert "journal" not in names and {"tables", "results"} <= names


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreDamaged, match=f"^the database {path} cannot be read .*: move it "
                                           f"aside for a fresh one \\(mv {path} {path}.damaged;"):
        Store(path)


def test_one_process_at_a_time_uses_a_store(tmp_path: Path) -> None:
    """A second ``nerts`` with the same data dir would have the same key (no table
    seats a key twice) and append to the same journals: it is told so, and
    changes nothing. The lock goes with the store, or with its process."""
    path = tmp_path / DB_FILE
    store = Store(path)
    store.append(TABLE_ID, [Record(Kind.ENTRY, b"mine")])
    with pytest.raises(StoreBusy, match=f"another nerts is using {tmp_path}"):
        Store(path)
    script = "import sys\nfrom pathlib import Path\nfrom p2p_nerts.store import Store\n" \
             "Store(Path(sys.argv[1]))\n"
    other = subprocess.run([sys.executable, "-c", script, str(path)], check=False,
                           capture_output=True, text=True)
    assert other.returncode == 1 and "StoreBusy: another nerts is using" in other.stderr
    store.close()
    store.close()  # twice is harmless
    assert reread(path) == [Record(Kind.ENTRY, b"mine")]
    killed = subprocess.run([sys.executable, "-c", script + "import os, signal\n"
                             "os.kill(os.getpid(), signal.SIGKILL)\n", str(path)], check=False)
    assert killed.returncode == -9
    assert reread(path) == [Record(Kind.ENTRY, b"mine")]  # a crashed process holds nothing


def test_a_torn_tail_is_cut_off_before_anything_is_appended(tmp_path: Path) -> None:
    """A crash tears the last record; the next run appends after the last whole one,
    so the journal reads back whole however often the seat resumes."""
    path = tmp_path / DB_FILE
    recs = [Record(Kind.ENTRY, b"first"), Record(Kind.MOVE, b"second")]
    with Store(path) as store:
        store.append(TABLE_ID, recs)
    journal = tmp_path / f"{DB_FILE}.journal" / f"{TABLE_ID.hex()}.log"
    whole = journal.read_bytes()
    journal.write_bytes(whole[:-3])  # the second record, torn
    with Store(path) as store:  # a run that appends without reading first
        store.append(TABLE_ID, [Record(Kind.LINK, b"third")])
    assert reread(path) == [recs[0], Record(Kind.LINK, b"third")]
    journal.write_bytes(journal.read_bytes() + b"\x00\x00")  # torn again, in a header
    with Store(path) as store:  # a resume: read, then play on
        assert store.records(TABLE_ID) == [recs[0], Record(Kind.LINK, b"third")]
        store.append(TABLE_ID, [Record(Kind.MOVE, b"fourth")])
    for _ in range(2):
        assert reread(path) == [recs[0], Record(Kind.LINK, b"third"),
                                Record(Kind.MOVE, b"fourth")]


def test_damage_in_the_middle_names_the_journal(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE
    with Store(path) as store:
        store.append(TABLE_ID, [Record(Kind.ENTRY, b"first"), Record(Kind.MOVE, b"second")])
    journal = tmp_path / f"{DB_FILE}.journal" / f"{TABLE_ID.hex()}.log"
    damaged = bytearray(journal.read_bytes())
    damaged[10] ^= 0xFF
    journal.write_bytes(bytes(damaged))
    with pytest.raises(JournalError, match=f"journal {journal} is damaged at byte 0.*move"):
        reread(path)
    with Store(path) as store, pytest.raises(JournalError):
        store.append(TABLE_ID, [Record(Kind.MOVE, b"never after damage")])
    assert journal.read_bytes() == bytes(damaged)  # nothing changed


def test_a_corrupt_database_page_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE
    with Store(path) as store:
        for n in range(300):  # a few pages of tables
            store.join_table(n.to_bytes(16, "big"), b"h" * 32, "127.0.0.1:4000")
        store.checkpoint()
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 3 * page
    data[page:2 * page] = b"\xa5" * page  # the root page of the tables, garbage
    path.write_bytes(bytes(data))
    with Store(path) as store:
        with pytest.raises(StoreDamaged, match=f"the database {path} cannot be read.*aside"):
            store.check()  # as play starts, not as a game is kept
        with pytest.raises(StoreError, match=f"the database {path} cannot be read.*aside"):
            store.unfinished()
        with pytest.raises(StoreError, match="cannot be read"):
            store.join_table(b"x" * 16, b"h" * 32, "127.0.0.1:4000")


def test_sync_makes_each_written_journal_durable_once(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    with Store(tmp_path / DB_FILE) as store:
        store.sync()
        assert synced == []  # nothing written: nothing to wait for
        for _ in range(3):
            store.append(TABLE_ID, [Record(Kind.ENTRY, b"x")])
        store.sync()
        store.sync()
        assert len(synced) == 1


def test_made_by_tells_this_seats_records_from_received_ones() -> None:
    me, other = Identity.generate("Me"), Identity.generate("Other")

    def entry(identity: Identity) -> Record:
        return Record(Kind.ENTRY, MAGIC + identity.public_key + b"rest")

    assert made_by(entry(me), me.public_key)
    assert not made_by(entry(other), me.public_key)
    assert made_by(Record(Kind.SECRETS, b""), me.public_key)
    assert made_by(Record(Kind.MOVE, b""), me.public_key)
    assert not made_by(Record(Kind.LINK, me.public_key + b"ack"), me.public_key)


def test_a_finished_game_on_the_network_keeps_its_journal_until_another_table(
        tmp_path: Path) -> None:
    """A game over at a table on the network keeps the journal: the host may deal a
    new game there, which goes on in it and can be resumed, and a seat back for it
    picks up its chain (``last_table``). It goes as the player sits at another
    table, after a crash as after leaving."""
    table, other = b"t" * 16, b"u" * 16
    with Store(tmp_path / DB_FILE) as store:
        store.join_table(table, b"h" * 32, "127.0.0.1:4000")
        store.append(table, [Record(Kind.ENTRY, b"first game")])
        store.finish_table(table, {"winner": "p0"}, staying=True)
        assert store.unfinished() is None
        last = store.last_table()
        assert last is not None and (last.table_id, last.finished) == (table, True)
        store.append(table, [Record(Kind.ENTRY, b"a late signature")])
        assert [r.data for r in store.written(table)] == [b"first game", b"a late signature"]
        store.play_again(table)
        again = store.unfinished()
        assert again is not None and again.table_id == table
        store.finish_table(table, {"winner": "p1"}, staying=True)
        assert [r["winner"] for r in store.history()] == ["p0", "p1"]
        store.join_table(other, b"h" * 32, "127.0.0.1:4000")
        assert store.written(table) == []
        store.append(other, [Record(Kind.ENTRY, b"kept, then a crash")])
        store.finish_table(other, {"winner": "p0"}, staying=True)
        store.finish_table(table, {"winner": "p0"})  # a solo table's: its journal goes
    with Store(tmp_path / DB_FILE) as store:
        last = store.last_table()
        assert last is not None and last.table_id == other
        store.join_table(table, b"h" * 32, "127.0.0.1:4000")
        assert store.written(other) == []
        store.finish_table(table, {"winner": "p0"})
        assert store.last_table() is None
