"""Check a game record by playing it again: a fresh replica reads every entry.

Nothing of the verifier's own is trusted or added: the entries go through the
very replica the players ran, as a seat-less peer would receive them. It
checks every entry's signature (once: the verifier opens again only an entry
it refused, to say what is wrong with it), the commit–reveal shuffle, the
host's rules and seats, and replays every seat's audit (deck and move log)
against the foundation order, exactly as each player did. What it decides is
written by the players' own :class:`~p2p_nerts.peer.headless.SummaryWriter`,
so a good record prints the very lines the players' ``--summary`` did.

Finality: players learn that nothing earlier can still arrive from their
peers' acknowledgements, which are link messages (unsigned, never kept).
The record holds every entry, so once all are read nothing can arrive any
more: the verifier then tells its replica so, with acknowledgements in each
seat's name for exactly what it holds. Entries decide every outcome (same
entries, same result whatever the arrival order); acknowledgements only say
when it may be decided.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgpack

from ..game.variants import Variants
from ..protocol import events as ev
from ..protocol.envelope import (
    BODY_FIELDS,
    HEADER_LEN,
    Entry,
    EnvelopeError,
    author_of,
    open_entry,
)
from ..protocol.identity import Identity, fingerprint_of
from ..protocol.messages import Ack, AckMark, MsgType, Result, link_message, parse_payload
from ..protocol.replica import Phase, Replica, RoundState, round_numbered
from .record import GameRecord, RecordError
from .summary import SummaryWriter

#: Refusals an honest table produces too: an entry sent as its round closed, or
#: by a seat just dropped, comes too late and changes nothing.
_HONEST_REFUSALS = frozenset({"late", "dropped", "duplicate"})
_VERIFIER = Identity.from_seed(bytes(32), "verifier")
_SEQ = BODY_FIELDS.index("seq")


@dataclass(slots=True)
class Replayed:
    """What a fresh replica made of a record."""

    replica: Replica
    lines: list[dict[str, Any]]  # the --summary lines, ``local`` parts empty
    events: list[ev.Event]
    problems: list[str] = field(default_factory=list)
    entries: int = 0
    #: Each scored round's seats (keys) and rules, as they were in that round.
    round_keys: dict[int, tuple[bytes, ...]] = field(default_factory=dict)
    round_variants: dict[int, Variants] = field(default_factory=dict)
    #: Each scored round's whole state, as it was scored (what replays read).
    rounds: dict[int, RoundState] = field(default_factory=dict)

    @property
    def game_over(self) -> bool:
        return self.replica.phase is Phase.OVER

    @property
    def verified_to(self) -> int:
        """The last round the record scores (0: none)."""
        return max(self.rounds, default=0)


def replay(record: GameRecord) -> Replayed:
    """Run the record's entries through a fresh replica; note every problem found."""
    # Every later round's entries wait for the earlier rounds to close, which
    # they do only once the whole record is read (``_everything_heard``): the
    # replica holds what the record holds, however long the game. It hears their
    # authors as players from the start: their JOINs come before the ROSTER
    # that seats them.
    replica = Replica(_VERIFIER, record.table_id, record.host, countdown=0.0,
                      max_held=(len(record.entries), sum(map(len, record.entries))),
                      players={author_of(raw) for raw in record.entries})
    out = io.StringIO()
    writer = SummaryWriter(replica, out)
    events: list[ev.Event] = []
    problems: list[str] = []
    held: dict[bytes, set[int]] = {}
    done = Replayed(replica, [], events, problems, len(record.entries))

    def take(new: list[ev.Event]) -> None:
        for event in new:
            if isinstance(event, ev.RoundOver):
                rs = round_numbered(event.round, replica.rs, replica.prev_rs)
                assert rs is not None  # the call that scored it began one round at most
                done.round_keys[event.round] = rs.keys
                done.round_variants[event.round] = rs.variants
                done.rounds[event.round] = rs
            elif isinstance(event, ev.RoundAgreed | ev.Divergence):
                # A seat-less replica closes a round on its own reckoning: the
                # record must also hold every live seat's signed word on it.
                rs = round_numbered(event.round, replica.rs, replica.prev_rs)
                assert rs is not None
                silent = sorted(rs.live - rs.summaries.keys())
                if silent:
                    problems.append(f"round {event.round}: no signed summary from "
                                    f"{', '.join(rs.names[s] for s in silent)}")
            writer.on_event(event)
            events.append(event)
            problem = _problem(event)
            if problem is not None:
                problems.append(problem)

    for index, raw in enumerate(record.entries, start=1):
        before = Counter(replica.rejected)
        take(replica.receive(raw, 0.0).events)
        refused = replica.rejected - before
        if not refused:  # its signature checked, as every entry the replica takes
            held.setdefault(author_of(raw), set()).add(_seq_of(raw))
            continue
        entry = _checked(index, raw, record)  # a refusal says no more than this
        if isinstance(entry, str):
            problems.append(entry)
            continue
        held.setdefault(entry.author, set()).add(entry.seq)
        for reason in refused:
            if reason not in _HONEST_REFUSALS:
                problems.append(f"entry {index} ({MsgType(entry.type).name} by "
                                f"{fingerprint_of(entry.author)}) was refused: {reason}")
    for author, seqs in held.items():
        if len(seqs) < max(seqs):
            first = next(n for n, seq in enumerate(sorted(seqs), start=1) if n != seq)
            problems.append(f"{max(seqs) - len(seqs)} entries of {fingerprint_of(author)} "
                            f"are missing (number {first} the first)")
    # Each pass can only close a round and begin the next: there are fewer rounds
    # than entries, so a record that is not honest cannot keep it going either.
    for _ in range(len(record.entries) + 1):
        mark = (replica.rs.number if replica.rs else 0, replica.phase, len(events))
        take(_everything_heard(replica))
        if mark == (replica.rs.number if replica.rs else 0, replica.phase, len(events)):
            break
    writer.finish({})
    done.lines = [json.loads(line) for line in out.getvalue().splitlines()]
    return done


def verify(record: GameRecord, *, unfinished: bool = False) -> Replayed:
    """The replay of a record that holds a whole, honest game; RecordError otherwise.

    ``unfinished``: a game its players left before its end, after a round at
    least, is honest too as far as it went (``Replayed.game_over`` says which,
    ``verified_to`` how far). The standings count only whole games.
    """
    done = replay(record)
    if done.problems:
        raise RecordError(done.problems[0])
    if not done.game_over:
        if unfinished and done.rounds:
            return done
        rs = done.replica.rs
        where = f"in round {rs.number}" if rs is not None else "before the first round"
        raise RecordError(f"the record stops {where}, before the game is over")
    problem = _unsigned_result(done.replica)
    if problem is not None:
        raise RecordError(problem)
    return done


def _unsigned_result(replica: Replica) -> str | None:
    """Whether every seat that finished the game signed the result its entries give."""
    rs, match = replica.rs, replica.match
    assert rs is not None and match is not None
    result = Result(tuple(match.totals), rs.log.state_hash())
    for seat in sorted(rs.live):
        signed = rs.signed_results.get(seat)
        if signed is None:
            return f"{rs.names[seat]} did not sign the game's result"
        if signed != result:
            return f"{rs.names[seat]} signed another result than the entries give"
    return None


def _seq_of(raw: bytes) -> int:
    """The sequence number of an entry the replica took: opened there, so its body is
    signed and well-formed (a plain read, where opening it again would check its
    signature a second time: a replay's largest cost)."""
    seq: int = msgpack.unpackb(raw[HEADER_LEN:])[_SEQ]
    return seq


def _checked(index: int, raw: bytes, record: GameRecord) -> Entry | str:
    """The entry, opened and well-formed, or what is wrong with it (for an entry the
    replica refused: why, it does not say)."""
    try:
        entry = open_entry(raw)
        parse_payload(entry.type, entry.payload)
    except EnvelopeError as exc:
        if exc.reason == "bad_signature":
            return f"entry {index}: the signature does not match (forged or changed)"
        return f"entry {index} is malformed ({exc.reason})"
    if entry.table_id != record.table_id:
        return f"entry {index} belongs to another table"
    return entry


def _problem(event: ev.Event) -> str | None:
    match event:
        case ev.Flagged(name=name, reason=reason):
            return f"{name} is flagged: {reason}"
        case ev.Divergence(round=number, seats=seats):
            return (f"round {number}: the result signed by seat(s) "
                    f"{', '.join(map(str, seats))} is not what the entries give")
    return None


def _everything_heard(replica: Replica) -> list[ev.Event]:
    """Acknowledge, in each seat's name, exactly what the replica holds of everyone.

    Only the seats' own entries say what they hold, and the record has them
    all: nothing any seat sent can still arrive, so each acknowledgement is
    dated as late as the replica has read, but before its seat's next entry
    (held back for a later round), which must not look dated before its own
    acknowledgement. Dated at its seat's last entry read, it would leave a
    round's last SUMMARY waiting for its turn when another seat's last word
    came before it.
    """
    rs = replica.rs
    if rs is None:
        return []
    logs = {key: replica.authors.get(key) for key in rs.keys}
    marks = tuple(sorted(AckMark(key, log.delivered, log.head)
                         for key, log in logs.items() if log is not None and log.delivered))
    found: list[ev.Event] = []
    for key, log in logs.items():
        if log is None or not log.delivered:
            continue
        after = log.held.get(log.delivered + 1)
        lamport = (replica.clock.time if after is None
                   else max(log.lamport, min(replica.clock.time, after.lamport - 1)))
        ack = link_message(key, Ack(marks), table_id=replica.table_id, round=rs.number,
                           seq=log.delivered, lamport=lamport)
        found += replica.receive(ack, 0.0, via=key).events
    return found
