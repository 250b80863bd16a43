"""Events for the tests: an organiser, players, and the tables of a seating played by
bots to a real signed record."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

from p2p_nerts.event.book import EventBook, table_id_for
from p2p_nerts.event.entries import Opened, Registered, Seated, code_check, code_proof, encode
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.records.record import encode as encode_record
from p2p_nerts.testing.memnet import bot_table

from ..replica_harness import game_record

EVENT_ID = bytes(range(100, 116))
ORGANISER = Identity.from_seed(hashlib.sha256(b"organiser").digest(), "Orga")
SEED = bytes(32)


@functools.cache
def player(i: int) -> Identity:
    return Identity.from_seed(hashlib.sha256(b"player %d" % i).digest(), f"P{i:02d}")


def players(n: int) -> list[Identity]:
    return [player(i) for i in range(n)]


def opened(games: int = 4, table_size: int = 4, code: str | None = None) -> bytes:
    return encode(Opened(EVENT_ID, "Friday Nerts", ORGANISER.public_key, games, table_size,
                         10, None if code is None else code_check(EVENT_ID, code), 120,
                         1_700_000_000), ORGANISER)


def registered(who: Identity, code: str | None = None) -> bytes:
    proof = b"" if code is None else code_proof(EVENT_ID, who.public_key, code)
    return encode(Registered(EVENT_ID, who.public_key, who.name, proof), who)


def event(n: int, games: int = 4, table_size: int = 4) -> EventBook:
    """A book with the event open and ``n`` players registered."""
    book = EventBook()
    book.apply(opened(games, table_size))
    for who in players(n):
        book.apply(registered(who))
    return book


def seat(book: EventBook, present: Sequence[bytes] | None = None,
         seed: bytes = SEED) -> bytes:
    """Draw, sign and apply the next seating; its bytes."""
    seated = book.next_seating(book.registrations if present is None else present, seed)
    raw = encode(seated, ORGANISER)
    book.apply(raw)
    return raw


@functools.cache
def _played(keys: tuple[bytes, ...], table_id: bytes, seed: int) -> bytes:
    ids = [next(p for p in players(60) if p.public_key == k) for k in keys]
    net = bot_table(len(ids), seed=seed, variants=Variants(target=10), table_id=table_id,
                    ids=ids)
    net.replicas[0].seating.auto_next = 0.2
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    assert net.run(lambda: all(r.phase is Phase.OVER and r.rs is not None
                               and len(r.rs.signed_results) == len(ids)
                               for r in net.replicas), limit=3600)
    return encode_record(game_record(net, 0, "event table", 1_700_000_100.0))


def play(seated: Seated, letter: str, *, without: Sequence[bytes] = (),
         table_id: bytes | None = None) -> bytes:
    """Table ``letter`` of a seating played to its end by bots (``without``: seats who
    did not turn up); its record's bytes."""
    table = next(t for t in seated.tables if t.letter == letter)
    keys = tuple(k for k in table.seats if k not in without)
    tid = table_id or table_id_for(seated.event_id, seated.game, letter)
    return _played(keys, tid, seated.game * 31 + ord(letter[-1]))


def play_all(book: EventBook) -> list[bytes]:
    """Every table of the book's last seating played; their records, added to it."""
    seated = book.games[len(book.games)].seated
    records = [play(seated, t.letter) for t in seated.tables]
    for data in records:
        assert book.add_record(data)
    return records
