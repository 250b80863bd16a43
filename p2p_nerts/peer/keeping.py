"""A seat's game going into the player's history: its record, copied and replayed.

It lives apart from :class:`~p2p_nerts.peer.node.NetSession` because no frame
depends on it: the session routes frames between its replica and the mesh,
while keeping the game is bookkeeping that follows the rounds' and the game's
end (and the others' signed results after it) and the seat's way out. The
shell hands :class:`GameKeeping` its events (:meth:`GameKeeping.heard`) and
asks it at those moments, handing it the replica, the store and the table's
name as they are then (the store goes if a write fails); every write to the
store goes back through the shell (``write``), in order with its journal.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from ..protocol import events as ev
from ..protocol.journal import Kind, Record
from ..protocol.replica import Phase, Replica
from ..records.history import Kept, to_keep
from ..records.record import GameRecord, merged, record_of
from ..store import JournalError, Store, StoreError

__all__ = ["GameKeeping"]

_log = logging.getLogger(__name__)


async def _settled(future: asyncio.Future[Any]) -> None:
    """Wait for ``future`` however it ends (its own callback reports a failure)."""
    await asyncio.wait([future])


class GameKeeping:
    """What a seat keeps of its game for the history, and when it keeps it.

    ``write`` is the shell's way to the store (``HeldWrites.write``).
    With ``keep_entries``, the signed entries the seat journals are kept in
    :attr:`entries` (see :meth:`journaled`).
    """

    def __init__(self, write: Callable[[Callable[[Store], None]], None], *,
                 keep_entries: bool = False) -> None:
        self._write = write
        self._keeping: asyncio.Future[None] | None = None  # the game going into the history
        #: The keeping of the games played before this one at the table (played again).
        self._before: list[asyncio.Future[None]] = []
        self._record: GameRecord | None = None  # its record, as the game ended
        self._reckoned: GameRecord | None = None  # the last record replayed for the history
        #: The signed entries this seat journals, kept in memory, where the game is
        #: kept in a history but not journaled to a store (``nerts solo --loopback``,
        #: whose table cannot be resumed): the replica forgets finished rounds, and
        #: the game's record needs every entry (``records.record.record_of``).
        self.entries: list[Record] | None = [] if keep_entries else None

    def journaled(self, journal: Iterable[Record]) -> None:
        """The seat journals ``journal``: keep its signed entries, if :attr:`entries` are kept."""
        if self.entries is not None:
            self.entries += (r for r in journal if r.kind is Kind.ENTRY)

    def heard(self, event: ev.Event, r: Replica, store: Store | None, table_name: str) -> None:
        """A round ended: a break, when the store may take its time (its checkpoint).
        The game ended here: copy its record now, keep it if every seat has signed
        already, and mark the table finished (its journal stays: the host may
        deal a new game there, and we may come back for it). The table moved on to
        a new game (its roster dealt): the one before is kept as it was copied, if
        the others' signatures never all came, and this one is kept apart (the
        table can be resumed again, from its shuffle on)."""
        if isinstance(event, ev.RoundOver):
            self._write(lambda store: store.checkpoint())
        elif isinstance(event, ev.GameOver):
            self._record = None if store is None else self._journaled_record(r, store, table_name)
            self.when_signed(r, store, table_name)
            table_id = r.table_id
            result: dict[str, object] = {"winner": event.winner, "totals": list(event.totals)}
            self._write(lambda store: store.finish_table(table_id, result, staying=True))
        elif self._record is not None and r.phase is not Phase.OVER:  # a new game's roster
            ended, self._record, self._reckoned = self._record, None, None
            self._before.append(self._keeping or self._reckon(ended, r.me.public_key))
            self._keeping = None
            table_id = r.table_id
            self._write(lambda store: store.play_again(table_id))

    def when_signed(self, r: Replica, store: Store | None, table_name: str) -> None:
        """Put the game in the history once every seat that finished it has signed its
        result here (or, however far it got, on the way out: :meth:`on_leaving`).

        A record without every signature does not verify: kept at the game's
        end, before the others' came, it would be served to event standings
        that refuse it as long as this seat stays at the table.
        """
        rs = r.rs
        if self._keeping is None and rs is not None and rs.live <= rs.signed_results.keys():
            self._keeping = self._keep(r, store, table_name)

    async def on_leaving(self, r: Replica | None, store: Store | None, table_name: str) -> None:
        """Keep the game again on the way out: its last entries (its signed results)
        come after it ends; a game given up before the end is kept as abandoned."""
        for keeping in (*self._before, self._keeping):
            if keeping is not None:
                await keeping  # the copy from the game's end must not land after this one
        last = self._keep(r, store, table_name)
        if last is not None:
            await last

    def _keep(self, r: Replica | None, store: Store | None,
              table_name: str) -> asyncio.Future[None] | None:
        """Put the game in the player's history, with its record (see ``records``).

        The record is copied now, from the replica (the last rounds) and the
        journal (the rounds it has forgotten; at the game's end, before the
        journal goes), or from the copy made then; its replay (every
        signature and audit checked again) runs in a worker thread, and the
        store is written back here, on the event loop, like every other write.
        Kept again on the way out, the game is replayed again only if entries
        came since (most games: none, and a replay is the whole game's CPU again).
        """
        if store is None or r is None or r.match is None:
            return None
        if self._record is None:  # a game given up before its end
            self._record = self._journaled_record(r, store, table_name)
        record = merged(record_of(r, table_name, self._record.saved_at), self._record.entries)
        if record == self._reckoned:
            return None  # nothing came since it was kept: the same replay, the same result
        return self._reckon(record, r.me.public_key)

    def _reckon(self, record: GameRecord, me: bytes) -> asyncio.Future[None]:
        """Replay ``record`` in a worker thread, for ``me``, and put its last game in the
        history (:meth:`_keep`)."""
        loop = asyncio.get_running_loop()
        reckoned = loop.run_in_executor(None, to_keep, record, me)

        def write(kept: Kept, store: Store) -> None:
            try:
                kept.into(store)
            except StoreError as exc:  # the history only: the journal goes on
                _log.error("cannot keep the game in the history: %s", exc)

        def done(future: asyncio.Future[Kept | None]) -> None:
            if future.cancelled():
                return
            if future.exception() is not None:
                _log.error("cannot keep the game in the history: %r", future.exception())
                return
            self._reckoned = record
            if (kept := future.result()) is not None:
                self._write(partial(write, kept))

        reckoned.add_done_callback(done)
        return asyncio.ensure_future(_settled(reckoned))

    @staticmethod
    def _journaled_record(r: Replica, store: Store, table_name: str) -> GameRecord:
        """The game's record from the replica (its last rounds) and the store (the
        rounds it has forgotten: ``Store.written``), dated as it is copied: at
        the game's end, and kept so however long the seat stays (the standings'
        window reads the date); a game given up, as it is left."""
        try:
            journal = store.written(r.table_id)
        except JournalError as exc:
            _log.error("cannot read the game's journal for its record: %s", exc)
            journal = []
        return record_of(r, table_name, time.time(), journal)
