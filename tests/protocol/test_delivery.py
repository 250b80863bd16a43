"""Delivery on its own: an entry journaled and delivered in its author's
sequence, each decision reading the table as the effects before it left it,
and an effect found invalid refusing only the entry it came from (no network,
no replica: the tests carry the effects out as the facade does)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from p2p_nerts.protocol.envelope import GENESIS, Entry, EnvelopeError
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import Kind, Record
from p2p_nerts.protocol.messages import (
    Payload,
    Ready,
    Resend,
    Roster,
    Seat,
    parse_payload,
    seal_message,
)
from p2p_nerts.protocol.replica import Replica
from p2p_nerts.protocol.replica._base import RESEND_GRACE, Phase
from p2p_nerts.protocol.replica._delivery import Delivery, Outcome
from p2p_nerts.protocol.replica._effects import Counted, Invalid, Reject, Sign
from p2p_nerts.protocol.replica._order import Finality
from p2p_nerts.protocol.replica._outbox import Outbox
from p2p_nerts.protocol.replica._state import RoundState
from p2p_nerts.protocol.replica._step_effects import FlagKey, LobbyEntry

from .test_ephemera import ME, PEER, TABLE, _ephemera

pytestmark = pytest.mark.fast


@dataclass
class _Live:
    """The table as it stands, which the facade's settle loop would change."""

    rs: RoundState | None = None
    phase: Phase = Phase.LOBBY
    now: float = 1.0


def _delivery(live: _Live) -> Delivery:
    """A guest's delivery (``PEER`` hosts and is seated), over the owners its ephemeral
    side keeps (``test_ephemera``'s)."""
    eph = _ephemera()
    return Delivery(TABLE, ME.public_key, PEER.public_key, live=live, clock=eph.clock,
                    outbox=Outbox(ME, TABLE, eph.clock), places=eph.places, seating=eph.seating,
                    forks=eph.forks, recovery=eph.recovery,
                    order=Finality(eph.places.authors, eph.clock), beats=eph.beats,
                    ephemera=eph)


def _chain(who: Identity, *payloads: Payload) -> list[Entry]:
    """``who``'s entries saying ``payloads``, numbered from 1, each naming the one before."""
    entries, prev = [], GENESIS
    for seq, payload in enumerate(payloads, 1):
        entry = seal_message(who, payload, table_id=TABLE, round=0, seq=seq, lamport=10 * seq,
                             prev=prev)
        entries.append(entry)
        prev = entry.signature
    return entries


def _carry_out(machine: Iterator[Outcome],
               settle: Callable[[Outcome], None] = lambda _: None) -> list[Outcome]:
    """What ``machine`` decides, each effect settled before the next is asked for;
    one that ``settle`` finds invalid is raised back in it (``Replica._apply``)."""
    out: list[Outcome] = []
    effect = next(machine, None)
    while effect is not None:
        out.append(effect)
        try:
            settle(effect)
        except EnvelopeError as exc:
            try:
                effect = machine.throw(exc)  # type: ignore[attr-defined]
            except StopIteration:
                break
            continue
        effect = next(machine, None)
    return out


def _accepted(d: Delivery, entry: Entry, settle: Callable[[Outcome], None] = lambda _: None,
              ) -> list[Outcome]:
    return _carry_out(d.accept(entry, parse_payload(entry.type, entry.payload)), settle)


def test_an_entry_next_in_its_authors_sequence_is_journaled_then_delivered() -> None:
    d = _delivery(_Live(now=7.0))
    (first,) = _chain(PEER, Ready(True))
    assert _accepted(d, first) == [Record(Kind.ENTRY, first.raw),
                                   LobbyEntry(first, Ready(True))]
    assert d.places.authors[PEER.public_key].delivered == 1
    assert d.places.last_heard[PEER.public_key] == 7.0
    assert d.clock.time > first.lamport  # a seated author's time moves my clock
    assert _accepted(d, first) == [Counted("duplicate")]  # held already: counted, not told


def test_an_early_entry_waits_for_the_one_before_and_then_both_go_in_order() -> None:
    d = _delivery(_Live())
    first, second = _chain(PEER, Ready(True), Ready(False))
    assert _accepted(d, second) == [Record(Kind.ENTRY, second.raw)]
    assert d.places.authors[PEER.public_key].delivered == 0
    delivered = [e.entry for e in _accepted(d, first) if isinstance(e, LobbyEntry)]
    assert delivered == [first, second]


@pytest.mark.parametrize("ends_the_round", [False, True])
def test_the_next_entry_is_judged_on_the_table_as_the_one_before_left_it(
        ends_the_round: bool) -> None:
    """A ROSTER waits while a round is under way; delivered after an entry that
    (as the facade carries it out) ends the round, it goes on at once."""
    first, roster = _chain(PEER, Ready(True), Roster((Seat(PEER.public_key, "peer"),)))
    live = _Live(phase=Phase.PLAYING)
    d = _delivery(live)
    _accepted(d, roster)

    def settle(effect: Outcome) -> None:
        if ends_the_round and effect == LobbyEntry(first, Ready(True)):
            live.phase = Phase.BETWEEN

    delivered = [e.entry for e in _accepted(d, first, settle) if isinstance(e, LobbyEntry)]
    assert delivered == ([first, roster] if ends_the_round else [first])


def test_an_effect_found_invalid_refuses_its_entry_and_delivery_goes_on() -> None:
    d = _delivery(_Live())
    first, second = _chain(PEER, Ready(True), Ready(False))
    _accepted(d, second)

    def settle(effect: Outcome) -> None:
        if effect == LobbyEntry(first, Ready(True)):
            raise EnvelopeError("not_now")

    out = _accepted(d, first, settle)
    assert out[1:] == [LobbyEntry(first, Ready(True)), Reject("not_now"),
                       FlagKey(PEER.public_key, "sent an invalid entry (not_now)"),
                       LobbyEntry(second, Ready(False))]
    assert d.places.authors[PEER.public_key].delivered == 2  # its slot is taken all the same


def test_a_gap_in_a_chain_is_asked_for_once_it_lasted_the_grace() -> None:
    live = _Live(now=1.0)
    d = _delivery(live)
    _, second = _chain(PEER, Ready(True), Ready(False))
    assert not [e for e in _accepted(d, second) if isinstance(e, Sign)]
    live.now += RESEND_GRACE + 0.1
    (ask,) = list(d.missing())
    assert ask == Sign(Resend(PEER.public_key, 1, 1))


def test_nothing_is_final_with_no_round() -> None:
    assert list(_delivery(_Live()).advance()) == []


def test_the_facade_raises_an_effect_found_invalid_back_where_it_was_decided() -> None:
    replica, told = Replica(ME, TABLE, PEER.public_key), []

    def machine() -> Iterator[Outcome]:
        try:
            yield Invalid("not_now")
        except EnvelopeError as exc:
            told.append(exc.reason)
            yield Counted("after")

    replica._apply(machine())
    assert told == ["not_now"] and replica.rejected["after"] == 1
    with pytest.raises(EnvelopeError):  # decided in a list, nothing catches it there
        replica._apply([Invalid("not_now"), Counted("never")])
    assert replica.rejected["never"] == 0


def test_what_fails_in_a_step_a_generator_yielded_is_raised_back_in_it() -> None:
    """Carried out a level down (``Steps.decide``, then the lobby), the failure still
    reaches the point that yielded the step."""
    replica, told = Replica(ME, TABLE, PEER.public_key), []
    (entry,) = _chain(PEER, Ready(True))

    def machine() -> Iterator[Outcome]:
        try:
            yield LobbyEntry(entry, Resend(PEER.public_key, 1, 1))  # no lobby entry's payload
        except EnvelopeError as exc:
            told.append(exc.reason)

    replica._apply(machine())
    assert told == ["unexpected_type"]
