"""The player's data: the crash-recovery journal, and the tables and games played.

The journal is one append-only file per table, beside the SQLite database
that keeps the tables sat at and the results. Each :meth:`Store.append` is a
single ``write`` of its records (each framed with its length, kind and a
CRC-32): when it returns the bytes are the operating system's, so a
``kill -9`` loses nothing. Journal records are written *before* the frames
they describe are sent. :meth:`Store.sync` makes them durable (``fsync``):
the session calls it once per batch it routes that holds something this seat
made (a network seat: an entry it signed, which makes its round secrets and
decisions before it durable too), just after that batch's frames leave the
machine where the machine's boot can be told (:func:`boot_id`), else before:
what a power cut between the two can take, and how a seat restored in a later
boot makes up for it, is ``protocol/resume.py``'s. What we only received, they
still hold and resend. A
record torn by a crash is cut off the file before anything more is appended:
records after a fragment would make the journal damaged for good.

A journal is compacted in each break between rounds (:meth:`Store.compact`,
``replica.compact``: a ``--resume`` then replays the last two rounds closed
and the one under way, not the game): the new journal is written beside the
old (``.tmp``), ``fsync``ed and renamed over it, and the directory
``fsync``ed, so a crash at any moment leaves the old journal or the new one
whole. It starts from the records this process appended (the file is read
and checked once, as the first append cuts a torn tail; after a failed write
or compaction, again from the file). The signed entries it no longer holds go
first to the table's ``.past`` file (appended, ``fsync``ed): the game's record
reads them at the end (:meth:`Store.written`). A crash between the two appends
them again at the next compaction: a record keeps each once.

Why files and not SQLite rows: every frame a peer receives is journaled
before its acknowledgement goes out, so the append is on the path of every
play. A SQLite transaction cost 14 µs here with its code in the CPU's caches,
and 158 µs without (writing two 4 KiB pages each time); a ``write`` costs
0.6 µs and 33 µs. With the journal in SQLite a play took 23-29 % longer to
reach every peer of a 4- or 8-peer table than with no journal at all; with
these files it arrives 18-19 % sooner than with SQLite (``scripts/bench_net.py``).

SQLite (WAL mode, ``synchronous=NORMAL``, no automatic checkpoint: it held
single writes for up to 5 ms here) now takes only a few writes a game; the
player's session calls :meth:`Store.checkpoint` between rounds.

One process at a time uses a store: it holds an exclusive lock on
``<db>.lock`` while the store is open (the kernel lets go if it dies, so a
crashed seat can ``--resume`` at once). Two processes with one data dir would
also share one key, which no table seats twice, and append to one journal.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import struct
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .protocol.envelope import TABLE_ID_LEN
from .protocol.journal import Kind, Record
from .protocol.replica import compact

if sys.platform != "win32":
    import fcntl

DB_FILE = "nerts.sqlite3"
SOLO = "solo"
"""The flag of a game played against computer players in this process: the player's
history keeps it, but it is served to no one's event standings (nobody else sat
at that table)."""
ABANDONED = "abandoned"
"""The flag of a game kept before its end, which can no longer go on."""
UNFINISHED = "unfinished"
"""The flag of a game kept before its end that ``--resume`` goes on with."""
_RECORD_HEADER = struct.Struct(">IBI")  # data length, kind, CRC-32 of kind byte and data

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    table_id  BLOB PRIMARY KEY,
    host_key  BLOB NOT NULL,
    address   TEXT NOT NULL,
    joined_at REAL NOT NULL,
    finished  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS results (
    table_id BLOB NOT NULL,
    ended_at REAL NOT NULL,
    summary  TEXT NOT NULL
);
-- The journal's rows before it moved to files (they could hold deck secrets).
DROP TABLE IF EXISTS journal;
"""

#: The solo tables (``session.LocalTable``): what seats the same computer players
#: again at ``nerts solo --resume``, as a journal cannot (they sign in this
#: process: their keys, as secret as the player's own, kept in the same data dir).
_SOLO_SCHEMA = """
CREATE TABLE IF NOT EXISTS solo (
    table_id BLOB PRIMARY KEY,
    setup    TEXT NOT NULL
);
"""
SOLO_ADDRESS = "this process"
"""Where a solo table is, as the tables sat at note it: nowhere on a network."""

#: Games kept for history, replays and export (records/): a game is its table
#: and its first round, so keeping it again as late entries arrive replaces it.
_GAMES_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id          INTEGER PRIMARY KEY,
    table_id    BLOB NOT NULL,
    first_round INTEGER NOT NULL,
    ended_at    REAL NOT NULL,
    summary     TEXT NOT NULL,
    record      BLOB NOT NULL,
    UNIQUE (table_id, first_round)
);
"""


#: What a host opened its table with that no signed entry says (the entries hold
#: the rules and clocks): its name, its seats and when it deals by itself. A host
#: back from a crash (``--resume``) opens the same table again from it.
_HOSTING_SCHEMA = """
CREATE TABLE IF NOT EXISTS hosting (
    table_id BLOB PRIMARY KEY,
    facts    TEXT NOT NULL
);
"""


class StoreError(Exception):
    """The data file cannot be used (corrupt, locked, not a database)."""


class JournalError(StoreError):
    """A table's journal cannot be replayed (damaged, or a record that makes no sense).

    The message names the file and what to do: recovery of that table is
    impossible, but the player can still play (at another table, or this one
    afresh) once the file is moved aside.
    """


class StoreBusy(StoreError):
    """Another process has this store open."""


class StoreDamaged(StoreError):
    """The database is not one SQLite can read: the message names it and says how to
    move it aside (play can go on without a history meanwhile)."""


def damaged(path: Path, exc: Exception) -> str:
    """What to say of a database that cannot be read, and what to do about it."""
    return (f"the database {path} cannot be read ({exc}): move it aside for a fresh one "
            f"(mv {path} {path}.damaged; its -wal file too), your key is kept apart")


@dataclass(frozen=True, slots=True)
class TableRecord:
    """A table this player sat at: enough to find it again after a crash."""

    table_id: bytes
    host_key: bytes
    address: str
    joined_at: float
    finished: bool


class Store:
    """One player's database."""

    def __init__(self, path: Path) -> None:
        #: The journals: one file per table, named by its id (private: they hold
        #: this player's deck secrets until the round's audit opens them).
        self._journals = path.with_name(path.name + ".journal")
        self._path = path
        self._open: dict[bytes, int] = {}  # file descriptors, by table id
        self._unsynced: set[bytes] = set()  # tables appended to since the last sync
        self._past_cut: set[bytes] = set()  # tables whose .past this process checked
        #: Each open journal's records as this process wrote them (read once, as
        #: the first append cut any torn tail, then kept as appended): compaction
        #: starts from them instead of reading and checking the file again.
        self._known: dict[bytes, list[Record]] = {}
        #: Tables over or given up here: the last frames of a game (goodbyes,
        #: acknowledgements) must not make their journal again.
        self._closed: set[bytes] = set()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._lock = _lock(path.with_name(path.name + ".lock"))
        except OSError as exc:
            raise StoreError(f"cannot use {path}: {exc}") from None
        try:
            self._journals.mkdir(mode=0o700, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA wal_autocheckpoint=0")
            self._db.executescript(_SCHEMA)
            self._db.executescript(_GAMES_SCHEMA)
            self._db.executescript(_SOLO_SCHEMA)
            self._db.executescript(_HOSTING_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            _unlock(self._lock)
            if isinstance(exc, sqlite3.DatabaseError) and not isinstance(
                    exc, sqlite3.OperationalError):  # not locked, nor out of reach: damaged
                raise StoreDamaged(damaged(path, exc)) from None
            raise StoreError(f"cannot use {path}: {exc}") from None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._open.values():
            os.close(fd)
        self._open.clear()
        self._unsynced.clear()
        self._known.clear()
        self._db.close()
        _unlock(self._lock)
        self._lock = None

    def join_table(self, table_id: bytes, host_key: bytes, address: str) -> None:
        """Remember a table as soon as we sit down (address: how to reach it again).

        Sitting down at another table gives up any unfinished one: ``--resume``
        goes back to the last table only (and must not go back to an older
        one once the last is over), so their journals, which hold deck
        secrets, go too.
        """
        with self._damage(), self._tx():
            given_up = [bytes(row[0]) for row in self._db.execute(
                "SELECT table_id FROM tables WHERE finished = 0 AND table_id != ?",
                (table_id,))]
            self._db.execute("UPDATE tables SET finished = 1 WHERE finished = 0"
                             " AND table_id != ?", (table_id,))
            self._db.execute(
                "INSERT INTO tables (table_id, host_key, address, joined_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (table_id) DO UPDATE SET address = excluded.address,"
                " joined_at = excluded.joined_at, finished = 0",
                (table_id, host_key, address, time.time()))
        self._closed.discard(table_id)  # back at a table given up: it is the last one again
        # And a finished game's journal, kept for a next game at its table
        # (``finish_table(staying=True)``).
        stayed = {path.name[:2 * TABLE_ID_LEN] for path in self._journals.glob("*")}
        for old in {*given_up, *(bytes.fromhex(name) for name in stayed
                                 if _is_hex(name, 2 * TABLE_ID_LEN))} - {table_id}:
            self._drop_journal(old)

    def sit_solo(self, table_id: bytes, host_key: bytes, setup: dict[str, Any]) -> None:
        """Remember a solo table as the player sits down (:meth:`join_table`), and what
        it is made of (``setup``: ``session.SoloSetup``'s, read back by :meth:`solo`).

        Its journals are one per seat, every seat playing in this process: the
        player's under ``table_id``, each computer player's under ``table_id``
        followed by one byte (:func:`seat_journal`); they go with the table's.
        """
        with self._damage(), self._tx():
            self._db.execute("INSERT OR REPLACE INTO solo VALUES (?, ?)",
                             (table_id, json.dumps(setup)))
        self.join_table(table_id, host_key, SOLO_ADDRESS)

    def solo(self, table_id: bytes) -> dict[str, Any] | None:
        """A solo table's setup (:meth:`sit_solo`); None for a table on the network."""
        with self._damage():
            row = self._db.execute("SELECT setup FROM solo WHERE table_id = ?",
                                   (table_id,)).fetchone()
        if row is None:
            return None
        try:
            setup = json.loads(row[0])
        except ValueError:
            setup = None
        if not isinstance(setup, dict):
            raise StoreError(f"the database {self._path} holds a solo table it cannot read: "
                             "start a new game (nerts solo)")
        return setup

    def append(self, table_id: bytes, records: Iterable[Record]) -> None:
        """Add journal records in one write (call before sending their frames).

        ``table_id`` names the journal: a table's, or one seat's of a solo table
        (:func:`seat_journal`). Raises OSError when the disk will not take them.
        """
        records = tuple(records)
        data = b"".join(map(_framed, records))
        if not data or table_id[:TABLE_ID_LEN] in self._closed:
            return
        fd = self._open.get(table_id)
        if fd is None:
            # First append of this process: no fragment before it.
            self._known[table_id] = self._cut_torn_tail(table_id)
            fd = self._open[table_id] = _append_to(self._journal(table_id))
        try:
            _write(fd, data)
        except OSError:
            self._known.pop(table_id, None)  # part of it may be there: the file says
            raise
        self._unsynced.add(table_id)
        if (known := self._known.get(table_id)) is not None:
            known.extend(records)

    def compact(self, table_id: bytes) -> None:
        """Rewrite the journal from where the previous round began (between rounds:
        ``replica.compacts``; see the module's docstring). Raises OSError when
        the disk will not take it (the old journal is then whole), JournalError
        when the journal makes no sense."""
        if table_id[:TABLE_ID_LEN] in self._closed:
            return
        path = self._journal(table_id)
        known = self._known.pop(table_id, None)  # back once the new journal is in place
        try:
            done = compact(self._cut_torn_tail(table_id) if known is None else known)
        except ValueError as exc:
            raise JournalError(f"cannot compact the journal {path} ({exc}): move it aside "
                               "to play on without it") from None
        if done is None:
            if known is not None:
                self._known[table_id] = known
            return
        if done.past:
            past = self._past(table_id)
            if table_id not in self._past_cut:
                self._cut_torn_tail(table_id, past)
                self._past_cut.add(table_id)
            _write_durably(past, done.past, _append_to)
        new = path.with_name(path.name + ".tmp")
        try:
            _write_durably(new, done.kept, _create)
            if (fd := self._open.pop(table_id, None)) is not None:
                os.close(fd)  # (Windows renames no file held open)
            try:
                os.replace(new, path)
            finally:
                self._open[table_id] = _append_to(path)  # the new file, or still the old
        except OSError:
            new.unlink(missing_ok=True)
            raise
        self._unsynced.discard(table_id)  # all of it was just made durable
        _sync_dir(path.parent)
        self._known[table_id] = list(done.kept)

    def sync(self) -> None:
        """Make every record appended so far durable: one ``fsync`` per journal written to.

        Raises OSError when the disk will not take them.
        """
        for table_id in sorted(self._unsynced):
            fd = self._open.get(table_id)
            if fd is not None:
                os.fsync(fd)
        self._unsynced.clear()

    def check(self) -> None:
        """Read the whole database once (SQLite's quick check): StoreDamaged if a page
        of it is garbage, found as play starts rather than as a game is kept."""
        with self._damage():
            problems = [row[0] for row in self._db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise StoreDamaged(damaged(self._path, sqlite3.DatabaseError(problems[0])))

    def checkpoint(self) -> None:
        """Move SQLite's WAL into the database (between rounds: see the module's docstring)."""
        with self._damage():
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def records(self, table_id: bytes) -> list[Record]:
        """The table's journal, in the order it was written (empty if there is none).

        A last record cut short or garbled is one a crash tore as it was
        written: it is left out, and cut off the file. Damage anywhere else is
        a JournalError. A journal this process appends to is not read again.
        """
        known = self._known.get(table_id)
        return self._cut_torn_tail(table_id) if known is None else list(known)

    def written(self, table_id: bytes) -> list[Record]:
        """What a game record reads of the table's journal: the signed entries that
        compaction moved out of it (to its ``.past`` file), then the journal."""
        return [*self._cut_torn_tail(table_id, self._past(table_id)), *self.records(table_id)]

    def journal_path(self, table_id: bytes) -> Path:
        """Where the table's journal lives (named in messages about it)."""
        return self._journal(table_id)

    def _cut_torn_tail(self, table_id: bytes, path: Path | None = None) -> list[Record]:
        """Read the journal (or the table's other file at ``path``); truncate it after
        its last whole record; its records."""
        path = path or self._journal(table_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise JournalError(f"cannot read the journal {path}: {exc.strerror or exc}"
                               ) from None
        records, good = _parse(data, path)
        if good < len(data):
            try:
                os.truncate(path, good)
            except OSError as exc:
                raise JournalError(f"cannot repair the journal {path} (its last record is "
                                   f"torn): {exc.strerror or exc}") from None
        return records

    def note_hosting(self, table_id: bytes, facts: dict[str, object]) -> None:
        """Keep what the host opened ``table_id`` with (``_HOSTING_SCHEMA``)."""
        with self._damage(), self._tx():
            self._db.execute("INSERT OR REPLACE INTO hosting VALUES (?, ?)",
                             (table_id, json.dumps(facts)))

    def hosting(self, table_id: bytes) -> dict[str, object]:
        """What :meth:`note_hosting` kept of ``table_id`` (empty if nothing, or if it
        cannot be read: the caller checks each fact)."""
        with self._damage():
            row = self._db.execute("SELECT facts FROM hosting WHERE table_id = ?",
                                   (table_id,)).fetchone()
        try:
            facts = json.loads(row[0]) if row is not None else {}
        except (TypeError, ValueError):
            return {}
        return facts if isinstance(facts, dict) else {}

    def unfinished(self) -> TableRecord | None:
        """The most recent table whose game did not end: what ``--resume`` goes back to."""
        with self._damage():
            row = self._db.execute(
                "SELECT table_id, host_key, address, joined_at, finished FROM tables"
                " WHERE finished = 0 ORDER BY joined_at DESC LIMIT 1").fetchone()
        if row is None:
            return None
        return TableRecord(bytes(row[0]), bytes(row[1]), row[2], row[3], bool(row[4]))

    def finish_table(self, table_id: bytes, summary: dict[str, object], *,
                     staying: bool = False) -> None:
        """The game is over: keep its result, drop its journal.

        ``staying``: a table on the network, whose host may deal a new game there
        (:meth:`play_again`): the journal stays, as that game's record and its
        crash recovery start from the table's first entries, and a seat that
        comes back for it picks up its own chain (:meth:`last_table`). It goes
        as the player sits at another table (:meth:`join_table`).
        """
        with self._damage(), self._tx():
            self._db.execute("UPDATE tables SET finished = 1 WHERE table_id = ?", (table_id,))
            if not staying:
                self._db.execute("DELETE FROM hosting WHERE table_id = ?", (table_id,))
            self._db.execute("INSERT INTO results VALUES (?, ?, ?)",
                             (table_id, time.time(), json.dumps(summary)))
        if not staying:
            self._drop_journal(table_id)

    def play_again(self, table_id: bytes) -> None:
        """A new game at a table whose game was over (``finish_table(staying=True)``):
        it can be resumed again."""
        with self._damage(), self._tx():
            self._db.execute("UPDATE tables SET finished = 0 WHERE table_id = ?", (table_id,))

    def last_table(self) -> TableRecord | None:
        """The table this player sat at last, if its journal is kept: a game going on
        (:meth:`unfinished`), or one over where the host may deal again
        (``finish_table(staying=True)``)."""
        with self._damage():
            row = self._db.execute(
                "SELECT table_id, host_key, address, joined_at, finished FROM tables"
                " ORDER BY joined_at DESC LIMIT 1").fetchone()
        # Whether its journal is there, not what it holds: the caller reads that
        # (``Replica.restore``), and a long game's journal is read once.
        if row is None or not (row[4] == 0 or self._journal(bytes(row[0])).is_file()):
            return None
        return TableRecord(bytes(row[0]), bytes(row[1]), row[2], row[3], bool(row[4]))

    def history(self) -> list[dict[str, object]]:
        with self._damage():
            rows = self._db.execute("SELECT summary FROM results ORDER BY ended_at").fetchall()
        return [json.loads(summary) for (summary,) in rows]

    def keep_game(self, table_id: bytes, first_round: int, ended_at: float,
                  summary: dict[str, Any], record: bytes) -> int:
        """Keep a finished (or abandoned) game and its record; returns its number.

        The same game kept again (more of its entries have come) replaces the
        first copy and keeps its number.
        """
        try:
            with self._tx():
                self._db.execute(
                    "INSERT INTO games (table_id, first_round, ended_at, summary, record)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (table_id, first_round) DO UPDATE"
                    " SET ended_at = excluded.ended_at, summary = excluded.summary,"
                    " record = excluded.record",
                    (table_id, first_round, ended_at, json.dumps(summary), record))
                row = self._db.execute(
                    "SELECT id FROM games WHERE table_id = ? AND first_round = ?",
                    (table_id, first_round)).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot keep the game: {exc}") from None
        return int(row[0])

    def games(self) -> list[tuple[int, dict[str, Any]]]:
        """Every game kept, newest first: (number, summary). A game kept before its end
        is flagged ``abandoned``, but ``unfinished`` while it is the table ``--resume``
        goes back to (:meth:`unfinished`): that one can still go on."""
        try:
            rows = self._db.execute(
                "SELECT id, summary FROM games ORDER BY ended_at DESC, id DESC").fetchall()
            games = [(int(n), json.loads(summary)) for n, summary in rows]
        except (sqlite3.Error, ValueError) as exc:
            raise StoreError(f"cannot read the games: {exc}") from None
        table = self.unfinished()
        for _number, game in games:
            if table is not None and game.get("table_id") == table.table_id.hex():
                game["flags"] = [UNFINISHED if flag == ABANDONED else flag
                                 for flag in game.get("flags", [])]
        return games

    def records_since(self, since: float) -> list[bytes]:
        """The records of the games that ended at ``since`` or later, newest first
        (not the :data:`SOLO` ones)."""
        try:
            rows = self._db.execute(
                "SELECT record FROM games WHERE ended_at >= ? AND NOT EXISTS ("
                "SELECT 1 FROM json_each(summary, '$.flags') WHERE value = ?)"
                " ORDER BY ended_at DESC, id DESC", (since, SOLO)).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the games: {exc}") from None
        return [bytes(row[0]) for row in rows]

    def game_record(self, number: int) -> bytes | None:
        """Game ``number``'s record (``records.record``), or None if there is none."""
        try:
            row = self._db.execute("SELECT record FROM games WHERE id = ?",
                                   (number,)).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the game: {exc}") from None
        return None if row is None else bytes(row[0])

    @contextlib.contextmanager
    def _damage(self) -> Iterator[None]:
        """Turn a database that fails under a query into one line naming the file."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise StoreDamaged(damaged(self._path, exc)) from None

    def _tx(self) -> _Transaction:
        return _Transaction(self._db)

    def _drop_journal(self, table_id: bytes) -> None:
        """Drop the table's journals: its own, and a solo table's seats' (named after it)."""
        self._closed.add(table_id)
        for key in [k for k in self._open if k.startswith(table_id)]:
            os.close(self._open.pop(key))
        self._unsynced = {k for k in self._unsynced if not k.startswith(table_id)}
        self._known = {k: v for k, v in self._known.items() if not k.startswith(table_id)}
        for path in self._journals.glob(f"{table_id.hex()}*"):
            path.unlink(missing_ok=True)

    def _journal(self, table_id: bytes) -> Path:
        return self._journals / f"{table_id.hex()}.log"

    def _past(self, table_id: bytes) -> Path:
        return self._journals / f"{table_id.hex()}.past"


def _is_hex(text: str, length: int) -> bool:
    return len(text) == length and all(c in "0123456789abcdef" for c in text)


def seat_journal(table_id: bytes, seat: int) -> bytes:
    """What names seat ``seat``'s journal at a solo table (seat 0, the player's, is
    the table's own, as at a table on the network)."""
    return table_id if seat == 0 else table_id + bytes([seat])


#: Where Linux says which boot of the machine this is (a random id per boot).
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def boot_id() -> bytes | None:
    """This boot of the machine (None where the system does not say).

    A journal that names it was not cut short by a restart of the machine
    since (``journal.written_in``), so a batch may leave before its ``fsync``
    (the shell's ``_route``); where the boot cannot be told, it leaves after.
    """
    try:
        text = BOOT_ID.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text.encode() if text else None


def _lock(path: Path) -> int | None:
    """Lock ``path`` for this process, or raise StoreBusy (None: no locks on Windows)."""
    if sys.platform == "win32":
        return None
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreBusy(f"another nerts is using {path.parent}: each one running needs its "
                        "own data dir (--data-dir, or NERTS_HOME)") from None
    return fd


def _unlock(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # closing the last descriptor lets go of the lock


def _append_to(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)


def _create(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:  # a regular file takes it all at once, but write may say otherwise
        view = view[os.write(fd, view):]


def _write_durably(path: Path, records: Iterable[Record],
                   opening: Callable[[Path], int]) -> None:
    fd = opening(path)
    try:
        _write(fd, b"".join(_framed(r) for r in records))
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (there is no such call on Windows)."""
    if sys.platform != "win32":
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _parse(data: bytes, path: Path) -> tuple[list[Record], int]:
    """A journal's records, and where the last whole one ends (before a torn tail)."""
    records: list[Record] = []
    at = 0
    while at + _RECORD_HEADER.size <= len(data):
        length, kind, crc = _RECORD_HEADER.unpack_from(data, at)
        end = at + _RECORD_HEADER.size + length
        body = data[at + _RECORD_HEADER.size:end]
        if end > len(data) or _crc(kind, body) != crc:
            if end >= len(data):
                break  # torn as it was written: the last moments before a crash
            raise JournalError(_damaged(path, at))
        try:
            records.append(Record(Kind(kind), body))
        except ValueError:
            raise JournalError(_damaged(path, at)) from None
        at = end
    return records, at


def _damaged(path: Path, at: int) -> str:
    return (f"the journal {path} is damaged at byte {at}: this table cannot be resumed; "
            "move the file aside to play on without it")


def _framed(record: Record) -> bytes:
    kind, data = record.kind, record.data
    return _RECORD_HEADER.pack(len(data), kind, zlib.crc32(data, _KIND_CRC[kind])) + data


def _crc(kind: int, data: bytes) -> int:
    return zlib.crc32(data, _KIND_CRC.get(kind, zlib.crc32(bytes([kind]))))


#: The CRC of each kind byte, where a record's CRC starts (it covers kind and data).
_KIND_CRC = {int(kind): zlib.crc32(bytes([kind])) for kind in Kind}


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN")

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")


def own_records(data_dir: Path, since: float) -> list[bytes]:
    """This player's own games' records since ``since`` (Unix time), read from the
    store in ``data_dir``; none where there is none, or where a running nerts holds
    it (that nerts serves them itself)."""
    if not (data_dir / DB_FILE).exists():
        return []
    try:
        with Store(data_dir / DB_FILE) as store:
            return store.records_since(since)
    except StoreBusy:
        return []
