"""SQLite under the data directory: the crash-recovery journal, and game history.

WAL mode with ``synchronous=NORMAL``: a commit has reached the operating system
before ``append`` returns, so a ``kill -9`` loses nothing (a power cut may lose
the last moments, which the other peers still hold and resend). Journal
records are written *before* the frames they describe are sent.

The store is written from the event loop, so nothing may stall it while a
round is played: SQLite's automatic checkpoint (copying the WAL back into the
database, with an fsync, every 1000 pages) held single appends for up to 5 ms
here. It is off; the player's session calls :meth:`Store.checkpoint` between
rounds, when a few milliseconds cost nothing.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .protocol.journal import Kind, Record

DB_FILE = "nerts.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    table_id  BLOB PRIMARY KEY,
    host_key  BLOB NOT NULL,
    address   TEXT NOT NULL,
    joined_at REAL NOT NULL,
    finished  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS journal (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id BLOB NOT NULL,
    kind     INTEGER NOT NULL,
    data     BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS journal_by_table ON journal (table_id, id);
CREATE TABLE IF NOT EXISTS results (
    table_id BLOB NOT NULL,
    ended_at REAL NOT NULL,
    summary  TEXT NOT NULL
);
"""


class StoreError(Exception):
    """The data file cannot be used (corrupt, locked, not a database)."""


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
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA wal_autocheckpoint=0")
            self._db.executescript(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot use {path}: {exc}") from None

    def close(self) -> None:
        self._db.close()

    def join_table(self, table_id: bytes, host_key: bytes, address: str) -> None:
        """Remember a table as soon as we sit down (address: how to reach it again)."""
        with self._tx():
            self._db.execute(
                "INSERT INTO tables (table_id, host_key, address, joined_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (table_id) DO UPDATE SET address = excluded.address",
                (table_id, host_key, address, time.time()))

    def append(self, table_id: bytes, records: Iterable[Record]) -> None:
        """Add journal records in one transaction (call before sending their frames)."""
        rows = [(table_id, int(r.kind), r.data) for r in records]
        if rows:
            with self._tx():
                self._db.executemany(
                    "INSERT INTO journal (table_id, kind, data) VALUES (?, ?, ?)", rows)

    def checkpoint(self) -> None:
        """Move the WAL into the database (between rounds: see the module's docstring).

        Afterwards the next append starts the WAL over, so it never holds more
        than about a round.
        """
        try:
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot checkpoint the journal: {exc}") from None

    def records(self, table_id: bytes) -> list[Record]:
        try:
            rows = self._db.execute(
                "SELECT kind, data FROM journal WHERE table_id = ? ORDER BY id", (table_id,))
            return [Record(Kind(kind), bytes(data)) for kind, data in rows]
        except (sqlite3.Error, ValueError) as exc:
            raise StoreError(f"the journal is damaged: {exc}") from None

    def unfinished(self) -> TableRecord | None:
        """The most recent table whose game did not end: what ``--resume`` goes back to."""
        row = self._db.execute(
            "SELECT table_id, host_key, address, joined_at, finished FROM tables"
            " WHERE finished = 0 ORDER BY joined_at DESC LIMIT 1").fetchone()
        if row is None:
            return None
        return TableRecord(bytes(row[0]), bytes(row[1]), row[2], row[3], bool(row[4]))

    def finish_table(self, table_id: bytes, summary: dict[str, object]) -> None:
        """The game is over: keep its result, drop its journal."""
        with self._tx():
            self._db.execute("UPDATE tables SET finished = 1 WHERE table_id = ?", (table_id,))
            self._db.execute("DELETE FROM journal WHERE table_id = ?", (table_id,))
            self._db.execute("INSERT INTO results VALUES (?, ?, ?)",
                             (table_id, time.time(), json.dumps(summary)))

    def history(self) -> list[dict[str, object]]:
        rows = self._db.execute("SELECT summary FROM results ORDER BY ended_at")
        return [json.loads(summary) for (summary,) in rows]

    def _tx(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN")

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")
