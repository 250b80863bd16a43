#!/usr/bin/env python3
"""An evening's tournament in memory: 200 players at 50 tables, game after game.

What it measures is the event's own work, as the organiser's machine (and any
player's, and a verifier's) does it with ``p2p_nerts/event/``:

* a seating draw: ``EventBook.next_seating`` for all present players (the
  standings it orders a Swiss game by included), drawn ``--draws`` times a game
  under different seeds; and the check every player's book makes of the
  signed seating (``apply``: the draw run again);
* a standings update: ``EventBook.add_record`` for one table's signed record
  (the record replayed and verified in full, then matched to its seat), and
  ``standings()`` and ``wall()`` after it (what the projector page asks);
* the export of the whole evening and its verification (``nerts verify``).

Every table's game is real: bots play it on the in-memory network
(``p2p_nerts/testing/memnet.py``) under the table id its seating gives, so
each record is the very signed record a table would keep (short games:
``--target`` points, one round or two).

And what the LAN carries on mDNS for such an evening, counted from the
records ``p2p_nerts/net/discovery/`` publishes: each table's service (PTR,
SRV, TXT, A), each player's results service (``peer/results.py``, one per
running ``nerts``), and the event's own service (``_nerts-event._tcp``, one
per event, of the same four records). Their size is that of the mDNS
response packets announcing them; the refresh rate follows from their TTL
(120 s: caches ask again at 80 % of it, and one answer serves every
listener).

Timings are medians and p99 over every sample, on this machine, whatever else
it is doing: figures, not a test. Each comes with a baseline measured in turn
with it: for a draw, the players shuffled by the seed and cut into tables
(what mixing on purpose adds); for a standings update, the record's
verification alone (what matching it to its seat and counting it add).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar

from zeroconf import ServiceInfo
from zeroconf._protocol.outgoing import DNSOutgoing
from zeroconf.const import _FLAGS_AA, _FLAGS_QR_RESPONSE

from p2p_nerts.event.book import EventBook, table_id_for
from p2p_nerts.event.entries import (
    Opened,
    Registered,
    Seated,
    encode,
    organiser_secret,
    seed_chain,
)
from p2p_nerts.event.export import export, verify_export
from p2p_nerts.game.variants import Variants
from p2p_nerts.net.discovery import SERVICE_TYPE, TableAd
from p2p_nerts.net.discovery._advertiser import _service_info
from p2p_nerts.peer.node import fingerprint_hex
from p2p_nerts.peer.results import RESULTS_SERVICE
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.records.record import decode as decode_record
from p2p_nerts.records.record import encode as encode_record
from p2p_nerts.records.record import record_of
from p2p_nerts.records.verify import verify
from p2p_nerts.testing.memnet import bot_table

T = TypeVar("T")
EVENT_SERVICE = "_nerts-event._tcp.local."
#: Seconds between two refreshes of a cached record: 80 % of the 120 s TTL.
REFRESH_S = 0.8 * 120
LAN_ADDRESS = "192.168.1.10"  # (only written into records that are counted, never sent)


def timed(call: Callable[[], T], into: list[float]) -> T:
    start = time.perf_counter()
    result = call()
    into.append(time.perf_counter() - start)
    return result


def spread(samples: Sequence[float]) -> dict[str, float]:
    """Median and p99 in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"n": len(ordered), "median_ms": round(statistics.median(ordered) * 1000, 2),
            "p99_ms": round(p99 * 1000, 2)}


def ratio(samples: Sequence[float], baseline: Sequence[float]) -> float:
    """Median over the baseline's median."""
    return round(statistics.median(samples) / statistics.median(baseline), 2)


def chunked(players: Sequence[bytes], seed: bytes, table_size: int) -> list[list[bytes]]:
    """The draw's baseline: the players shuffled by the seed and cut into tables, mixing
    nobody on purpose (what any seating costs at least)."""
    order = sorted(players, key=lambda p: hashlib.sha256(seed + p).digest())
    tables = -(-len(order) // table_size)
    return [order[i::tables] for i in range(tables)]


def played(keys: Sequence[bytes], people: dict[bytes, Identity], table_id: bytes,
           seed: int, target: int) -> bytes:
    """A table's game played to its end by bots; its record, as a seat keeps it."""
    net = bot_table(len(keys), seed=seed, variants=Variants(target=target), table_id=table_id,
                    ids=[people[k] for k in keys])
    net.replicas[0].seating.auto_next = 0.2
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    if not net.run(lambda: all(r.phase is Phase.OVER and r.rs is not None
                               and len(r.rs.signed_results) == len(keys)
                               for r in net.replicas), limit=3600):
        raise RuntimeError("a table's game did not end")
    return encode_record(record_of(net.replicas[0], "event table", 1_700_000_000.0,
                                   net.written(0)))


def service_records(info: ServiceInfo) -> tuple[int, int]:
    """How many records a service publishes, and the bytes of the response announcing it."""
    records = [info.dns_pointer(), info.dns_service(), info.dns_text(), *info.dns_addresses()]
    out = DNSOutgoing(_FLAGS_QR_RESPONSE | _FLAGS_AA)
    for record in records:
        out.add_answer_at_time(record, 0)
    return len(records), sum(len(p) for p in out.packets())


def lan(players: int, tables: int, people: Sequence[Identity]) -> dict[str, Any]:
    """What the LAN carries on mDNS: the records of every table, player and the event."""
    host = people[0]
    fp = fingerprint_hex(host.public_key)
    table = _service_info(TableAd(
        name="Friday cup AX", fingerprint=fp, protocol_version=1, seats_taken=4,
        seats_total=4, variant=Variants().summary(), needs_code=False, port=40000,
        addresses=(LAN_ADDRESS,), instance="Friday cup AX-abcd1234", host=host.name,
        state="playing", next_deal=1_700_000_000, revision=12),
        f"nerts-{fp[:12]}-abcd1234.local.")
    result = ServiceInfo(RESULTS_SERVICE, f"nerts-{fp[:12]}-abc123.{RESULTS_SERVICE}",
                         port=40001, properties={"fp": fp, "v": "1"},
                         server=f"nerts-results-{fp[:12]}-abc123.local.",
                         parsed_addresses=[LAN_ADDRESS])
    event = ServiceInfo(EVENT_SERVICE, f"Friday cup-abc123.{EVENT_SERVICE}", port=40002,
                        properties={"v": "1", "name": "Friday cup", "fp": fp, "code": "0",
                                    "game": "3", "games": "5"},
                        server=f"nerts-event-{fp[:12]}-abc123.local.",
                        parsed_addresses=[LAN_ADDRESS])
    (t_n, t_b), (r_n, r_b), (e_n, e_b) = (service_records(i) for i in (table, result, event))
    records = tables * t_n + players * r_n + e_n
    announced = tables * t_b + players * r_b + e_b
    return {"per_table": {"records": t_n, "bytes": t_b, "type": SERVICE_TYPE},
            "per_player": {"records": r_n, "bytes": r_b, "type": RESULTS_SERVICE},
            "per_event": {"records": e_n, "bytes": e_b, "type": EVENT_SERVICE},
            "records": records, "bytes_all_announced": announced,
            "refresh_bytes_per_s": round(announced / REFRESH_S)}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--table-size", type=int, default=4)
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--target", type=int, default=10, help="points a table's game is to")
    parser.add_argument("--draws", type=int, default=20, help="draws timed per game")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)

    def person(i: int) -> Identity:
        return Identity.from_seed(hashlib.sha256(b"sim player %d" % i).digest(), f"P{i:03d}")

    organiser = Identity.from_seed(hashlib.sha256(b"sim organiser").digest(), "Organiser")
    people = [person(i) for i in range(args.players)]
    by_key = {p.public_key: p for p in people}
    event_id = hashlib.sha256(b"sim event").digest()[:16]
    book = EventBook()
    seeds = seed_chain(organiser_secret(organiser, event_id), args.games)
    book.apply(encode(Opened(event_id, "Friday cup", organiser.public_key, args.games,
                             args.table_size, args.target, None, 120, 1_700_000_000,
                             seeds[0]), organiser))
    registering: list[float] = []
    for p in people:
        timed(partial(book.apply, encode(Registered(event_id, p.public_key, p.name), p)),
              registering)
    drawing: list[float] = []
    checking: list[float] = []
    updating: list[float] = []
    chunking: list[float] = []  # the baselines, measured in turn with what they compare to
    verifying_only: list[float] = []
    standing: list[float] = []
    walls: list[float] = []
    tables = 0
    for game in range(1, args.games + 1):
        present = list(book.registrations)
        for k in range(args.draws):
            seed = hashlib.sha256(b"%d/%d" % (game, k)).digest()
            timed(partial(book.next_seating, present, seed), drawing)
            timed(partial(chunked, present, seed, args.table_size), chunking)
        seated: Seated = book.next_seating(present, seeds[game])
        raw = encode(seated, organiser)
        timed(partial(book.apply, raw), checking)
        tables = max(tables, len(seated.tables))
        records = [played(t.seats, by_key, table_id_for(event_id, game, t.letter),
                          game * 1000 + i, args.target) for i, t in enumerate(seated.tables)]
        for data in records:
            timed(partial(verify, decode_record(data)), verifying_only)
            if not timed(partial(book.add_record, data), updating):
                raise RuntimeError("a table's record did not count")
            timed(book.standings, standing)
            timed(book.wall, walls)
        print(f"game {game}: {len(seated.tables)} tables, "
              f"{sum(r.games for r in book.standings())} seats counted", file=sys.stderr)
    exporting: list[float] = []
    data = timed(partial(export, book), exporting)
    verifying: list[float] = []
    verified = timed(partial(verify_export, data), verifying)
    if verified.standings != book.standings():
        raise RuntimeError("the export's standings differ from the book's")
    return {
        "players": args.players, "tables": tables, "games": args.games,
        "registration": spread(registering),
        "draw": spread(drawing), "seating_check": spread(checking),
        "draw_baseline": spread(chunking), "draw_ratio": ratio(drawing, chunking),
        "standings_update": spread(updating), "standings": spread(standing),
        "update_baseline": spread(verifying_only),
        "update_ratio": ratio(updating, verifying_only),
        "wall": spread(walls),
        "export": {"bytes": len(data), "records": len(book.records),
                   "verify_s": round(verifying[0], 2)},
        "mdns": lan(args.players, tables, people),
    }


def show(result: dict[str, Any]) -> str:
    def line(label: str, s: dict[str, float]) -> str:
        return f"  {label:<38} median {s['median_ms']:>8.2f} ms   p99 {s['p99_ms']:>8.2f} ms" \
               f"   ({s['n']} samples)"

    m = result["mdns"]
    return "\n".join([
        f"{result['players']} players, {result['tables']} tables, {result['games']} games",
        line("registration (apply)", result["registration"]),
        line("seating draw (next_seating)", result["draw"]),
        line("  baseline: shuffle and cut", result["draw_baseline"])
        + f"   x{result['draw_ratio']}",
        line("seating check (apply: re-drawn)", result["seating_check"]),
        line("standings update (add_record)", result["standings_update"]),
        line("  baseline: the record's verify alone", result["update_baseline"])
        + f"   x{result['update_ratio']}",
        line("standings (after each record)", result["standings"]),
        line("wall snapshot (after each record)", result["wall"]),
        f"  export: {result['export']['bytes']} bytes, {result['export']['records']} records, "
        f"verified in {result['export']['verify_s']} s",
        f"mDNS: {m['records']} records on the LAN: {result['tables']} tables x "
        f"{m['per_table']['records']} ({m['per_table']['bytes']} B), "
        f"{result['players']} players x {m['per_player']['records']} "
        f"({m['per_player']['bytes']} B), the event {m['per_event']['records']} "
        f"({m['per_event']['bytes']} B)",
        f"  all announced once: {m['bytes_all_announced']} bytes; kept fresh (each record "
        f"answered once per {REFRESH_S:g} s): about {m['refresh_bytes_per_s']} bytes/s",
    ])


if __name__ == "__main__":
    outcome = main()
    print(json.dumps(outcome) if "--json" in sys.argv[1:] else show(outcome))
