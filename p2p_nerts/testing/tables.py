"""A table's game played to its end by bots in memory, and its signed record: what an
event's tests and its simulation (``scripts/sim_event.py``) count."""

from __future__ import annotations

from collections.abc import Sequence

from ..game.variants import Variants
from ..protocol.identity import Identity
from ..protocol.replica import Phase, StartRound
from ..records.record import encode, record_of
from .memnet import bot_table


def played_record(players: Sequence[Identity], table_id: bytes, *, seed: int,
                  target: int = 10, saved_at: float = 1_700_000_000.0) -> bytes:
    """``players`` (the first hosts) play one game to ``target`` at table ``table_id``;
    the record the host keeps of it, as a record file's bytes."""
    net = bot_table(len(players), seed=seed, variants=Variants(target=target),
                    table_id=table_id, ids=players)
    net.replicas[0].seating.auto_next = 0.2
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    if not net.run(lambda: all(r.phase is Phase.OVER and r.rs is not None
                               and len(r.rs.signed_results) == len(players)
                               for r in net.replicas), limit=3600):
        raise RuntimeError("the table's game did not end")
    return encode(record_of(net.replicas[0], "event table", saved_at, net.written(0)))
