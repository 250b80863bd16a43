"""A seat's writes to its store: held while the shell routes a batch, then done in order.

It lives apart from :class:`~p2p_nerts.peer.shell.NetShell` because the shell
decides *when* the store is written (before the batch's frames leave:
write-ahead; and before its listeners hear of it) and this holds *what* is
written: the journal, with one ``fsync`` for a batch that holds an entry this
seat signed (group commit), and the other writes (the table's facts,
checkpoints, the history) in the order they came. The first write that
fails is logged and the store given up: the seat plays on without crash
recovery.

The ``fsync`` comes just after the batch's frames leave where the machine's
boot can be told (``boot``), and before them elsewhere: on a busy machine it
was most of the time from a move to its frames' leaving (``docs/PROTOCOL.md``,
Durability). What it guarded against there (a power cut in between) the
journal's boot covers instead: see ``protocol/resume.py``.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence

from ..protocol.envelope import author_of
from ..protocol.journal import Kind, Record
from ..store import Store, StoreError, boot_id

__all__ = ["HeldWrites"]

_log = logging.getLogger(__name__)


class HeldWrites:
    """The writes to ``store`` not done yet (none, and nothing held, without a store)."""

    def __init__(self, store: Store | None) -> None:
        #: The seat's store; None without one, or once a write to it failed.
        self.store = store
        self._writes: list[Callable[[Store], None]] = []
        self._sync_due = False  # the held writes include an entry this seat signed (Store.sync)
        #: The last held write, when it appends to a journal: the next batch's records
        #: for that journal join it (one ``write`` for all of them).
        self._append: _Append | None = None
        #: The machine's boot (``store.boot_id``), when it can be told and there is a
        #: store: the replica's journal names it, and :meth:`flush` leaves the
        #: ``fsync`` to :meth:`sync`, after the batch's frames have left.
        self.boot = boot_id() if store is not None else None

    def hold(self, write: Callable[[Store], None]) -> None:
        """Do ``write`` at the next :meth:`flush`."""
        if self.store is not None:
            self._writes.append(write)
            self._append = None

    def write(self, write: Callable[[Store], None]) -> None:
        """Do ``write`` now, after every write held before it (the journal's first)."""
        self.hold(write)
        self.flush()
        self.sync()

    def journal(self, table_id: bytes, journal: Sequence[Record], me: bytes) -> None:
        """Append ``journal`` to the table's at the next :meth:`flush`, synced to the disk
        first if it holds an entry ``me`` signed (so a power cut cannot make us sign
        a second entry under a number the others already hold).

        What else this seat made (its moves, its round secrets, its notes) is
        synced with the next entry it signs, which is where it starts to matter:
        nobody holds anything that follows from it before that entry goes out
        (the moves are in its plays and its audit, the secrets in its COMMIT and
        REVEAL), and one ``fsync`` makes the whole file durable. A bot's turn of
        the stock then costs no ``fsync`` of its own, which also held the event
        loop (and the plays that came in meanwhile) for the disk.
        """
        if self.store is None:
            return
        self._sync_due = self._sync_due or any(
            r.kind is Kind.ENTRY and author_of(r.data) == me for r in journal)
        append = self._append
        if append is not None and append.table_id == table_id:
            append.records += journal
            return
        self._append = append = _Append(table_id, list(journal))
        self._writes.append(append)

    def flush(self, *, quiet: bool = False) -> None:
        """Do the held writes in order, and the ``fsync`` they need unless the machine's
        boot is known (then :meth:`sync` does it, once the batch is out); if one
        fails, say so once and play on without recovery.

        ``quiet``: the batch being routed sends nothing and tells its listeners
        nothing (most ACKs heard: a peer's word on how far it holds each chain),
        so nobody, a peer or a listener, learns anything that follows from what it
        journals yet: the writes wait for the next batch that does, and go in one
        ``write`` with its own, still before anything of it leaves. A crash in
        between loses only what nothing had come of (the peers say it again).
        """
        if quiet and not self._sync_due:
            return
        writes, self._writes, self._append = self._writes, [], None
        for write in writes:
            self._do(write)
        if self.boot is None:
            self.sync()

    def sync(self) -> None:
        """The group commit: one ``fsync`` for what the batches since the last made
        this seat, if they made anything."""
        if self._sync_due:
            self._sync_due = False
            self._do(lambda store: store.sync())

    def _do(self, write: Callable[[Store], None]) -> None:
        if self.store is None:
            return
        try:
            write(self.store)
        except (sqlite3.Error, OSError, StoreError) as exc:
            _log.error("cannot write to the journal (%s): playing on without crash "
                       "recovery", exc)
            self.store = None


class _Append:
    """A held append of records to one table's journal (``Store.append``)."""

    def __init__(self, table_id: bytes, records: list[Record]) -> None:
        self.table_id = table_id
        self.records = records

    def __call__(self, store: Store) -> None:
        store.append(self.table_id, self.records)
