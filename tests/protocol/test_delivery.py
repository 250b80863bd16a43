"""Delivery on its own: an entry journaled and delivered in its author's
sequence, each decision reading the table as the effects before it left it,
and an effect found invalid refusing only the entry it came from (no network,
no replica: the tests carry the effects out, in the order they come, as the
facade does)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import InitVar, dataclass, field

import pytest

from p2p_nerts.protocol import events as ev
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
from p2p_nerts.protocol.replica._base import RESEND_GRACE, Phase
from p2p_nerts.protocol.replica._delivery import Delivery, Outcome
from p2p_nerts.protocol.replica._effects import (
    Counted,
    Effect,
    Emit,
    Reject,
    Sign,
)
from p2p_nerts.protocol.replica._game import Game
from p2p_nerts.protocol.replica._order import Finality
from p2p_nerts.protocol.replica._outbox import Outbox

from ..stepkit import steps_at
from .test_ephemera import ME, PEER, TABLE, _ephemera

pytestmark = pytest.mark.fast


@dataclass
class _Live:
    """The game as it stands (in ``phase``) and the time; what the steps taken from
    delivery decide lands in ``done`` (through ``settle``, as it would be carried
    out, which may change the game or find it invalid)."""

    phase: InitVar[Phase] = Phase.LOBBY
    now: float = 1.0
    done: list[Outcome] = field(default_factory=list)
    settle: Callable[[Outcome], None] = lambda _: None
    game: Game = field(default_factory=Game)

    def __post_init__(self, phase: Phase) -> None:
        self.game.enter(phase)

    def apply(self, effects: Iterable[Effect]) -> None:
        for effect in effects:
            self.done.append(effect)
            self.settle(effect)

    def carry(self, effect: Outcome) -> None:
        self.apply((effect,))  # type: ignore[arg-type]

    def drain(self) -> None:
        """(Nothing is held back in these tests when a step would deliver it.)"""


def _delivery(live: _Live) -> Delivery:
    """A guest's delivery (``PEER`` hosts and is seated), over the owners its ephemeral
    side keeps (``test_ephemera``'s)."""
    eph = _ephemera()
    steps, _ = steps_at(ME.public_key, seating=eph.seating, forks=eph.forks,
                        recovery=eph.recovery, pruning=eph.pruning, places=eph.places,
                        table=live)  # type: ignore[arg-type]
    return Delivery(TABLE, ME.public_key, PEER.public_key, game=live.game, live=live,
                    clock=eph.clock,
                    outbox=Outbox(ME, TABLE, eph.clock), places=eph.places, seating=eph.seating,
                    forks=eph.forks, recovery=eph.recovery,
                    order=Finality(eph.places.authors, eph.clock), beats=eph.beats,
                    ephemera=eph, steps=steps, carry=live.carry)


def _chain(who: Identity, *payloads: Payload) -> list[Entry]:
    """``who``'s entries saying ``payloads``, numbered from 1, each naming the one before."""
    entries, prev = [], GENESIS
    for seq, payload in enumerate(payloads, 1):
        entry = seal_message(who, payload, table_id=TABLE, round=0, seq=seq, lamport=10 * seq,
                             prev=prev)
        entries.append(entry)
        prev = entry.signature
    return entries


def _accepted(d: Delivery, entry: Entry) -> list[Outcome]:
    """What accepting ``entry`` carried out, in order (each effect settled before the
    next is decided)."""
    live = d.live
    assert isinstance(live, _Live)
    live.done = []
    d.accept(entry, parse_payload(entry.type, entry.payload))
    return live.done


def _readied(on: bool) -> list[Outcome]:
    """A READY from ``PEER`` delivered: what the lobby tells (it keeps who is ready
    in ``Seating``)."""
    return [Emit(ev.ReadyChanged((False, on, False)))]


def test_an_entry_next_in_its_authors_sequence_is_journaled_then_delivered() -> None:
    d = _delivery(_Live(now=7.0))
    (first,) = _chain(PEER, Ready(True))
    assert _accepted(d, first) == [Record(Kind.ENTRY, first.raw), *_readied(True)]
    assert d.seating.ready == {PEER.public_key: True}
    assert d.places.authors[PEER.public_key].delivered == 1
    assert d.places.last_heard[PEER.public_key] == 7.0
    assert d.clock.time > first.lamport  # a seated author's time moves my clock
    assert _accepted(d, first) == [Counted("duplicate")]  # held already: counted, not told


def test_an_early_entry_waits_for_the_one_before_and_then_both_go_in_order() -> None:
    d = _delivery(_Live())
    first, second = _chain(PEER, Ready(True), Ready(False))
    assert _accepted(d, second) == [Record(Kind.ENTRY, second.raw)]
    assert d.places.authors[PEER.public_key].delivered == 0
    assert _accepted(d, first) == [Record(Kind.ENTRY, first.raw), *_readied(True),
                                   *_readied(False)]


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
        if ends_the_round and effect in _readied(True):
            live.game.enter(Phase.BETWEEN)

    live.settle = settle
    before = d.seating.seats
    _accepted(d, first)
    assert d.seating.seats == ((Seat(PEER.public_key, "peer"),) if ends_the_round else before)
    assert d.places.authors[PEER.public_key].delivered == (2 if ends_the_round else 1)


def test_an_effect_found_invalid_refuses_its_entry_and_delivery_goes_on() -> None:
    d = _delivery(_Live())
    first, second = _chain(PEER, Ready(True), Ready(False))
    _accepted(d, second)
    live = d.live
    assert isinstance(live, _Live)

    def settle(effect: Outcome) -> None:
        if effect in _readied(True):
            raise EnvelopeError("not_now")

    live.settle = settle
    out = _accepted(d, first)
    # (no round to flag its author in)
    assert out[1:] == [*_readied(True), Reject("not_now"), *_readied(False)]
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
    live = _Live()
    _delivery(live).advance()
    assert live.done == []
