"""The ephemeral side on its own: what an ACK, a VIEW, a RESEND, a SNAPSHOT or a
HELLO does here, in which order, and what my ACKs say and to whom (no network,
no replica)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.clock import LamportClock
from p2p_nerts.protocol.envelope import GENESIS, Entry, EnvelopeError
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import (
    Ack,
    AckMark,
    Hello,
    Payload,
    Ready,
    Resend,
    Seat,
    Snapshot,
    View,
    seal_message,
)
from p2p_nerts.protocol.replica._base import HEARTBEAT, RESEND_BURST, settings_of
from p2p_nerts.protocol.replica._catchup import Pruning
from p2p_nerts.protocol.replica._effects import (
    Counted,
    Effect,
    Resent,
    Sign,
    SignAck,
)
from p2p_nerts.protocol.replica._ephemera import Ephemera
from p2p_nerts.protocol.replica._forks import Forks
from p2p_nerts.protocol.replica._heartbeats import SINGLE_SLACK, Heartbeats
from p2p_nerts.protocol.replica._intake import Places
from p2p_nerts.protocol.replica._recovery import Recovery
from p2p_nerts.protocol.replica._seating import Seating
from p2p_nerts.protocol.replica._state import RoundState
from p2p_nerts.protocol.resume import Resume

from ..stepkit import Table, steps_at

pytestmark = pytest.mark.fast

ME = Identity.from_seed(b"\x01" * 32, "me")
PEER = Identity.from_seed(b"\x02" * 32, "peer")
STRANGER = Identity.from_seed(b"\x03" * 32, "stranger")
THIRD = b"\x04" * 32  # seated, but we keep no chain of it
TABLE = b"t" * 16


def _done(eph: Ephemera) -> list[Effect | str]:
    """What ``eph``'s steps carried out, so far."""
    table = eph.steps.live
    assert isinstance(table, Table)
    return table.done


def _ephemera(*, host: bool = False) -> Ephemera:
    me = ME.public_key
    host_key = me if host else PEER.public_key
    seating = Seating(me, host_key, variants=Variants(), countdown=3.0, drop_after=10.0,
                      auto_start=None, auto_next=None, max_seats=8)
    seating.seats = (Seat(me, "me"), Seat(PEER.public_key, "peer"), Seat(THIRD, "third"))
    places, forks, recovery, pruning = Places(), Forks(), Recovery(), Pruning()
    steps, _ = steps_at(me, seating=seating, forks=forks, recovery=recovery, pruning=pruning,
                        places=places)
    return Ephemera(me, host_key, is_host=host, clock=LamportClock(), places=places,
                    seating=seating, forks=forks, recovery=recovery, pruning=pruning,
                    beats=Heartbeats(), steps=steps, signed=_signed)


def _signed(payload: Payload | None, to: bytes) -> bytes | None:
    """The facade's signing for one asker, standing in: a snapshot's bytes, named."""
    return None if payload is None else SIGNED_SNAPSHOT


def _round() -> RoundState:
    return RoundState(number=1, keys=(ME.public_key, PEER.public_key, THIRD),
                      names=("me", "peer", "third"), variants=Variants(), me=0, live={0, 1, 2},
                      log=FoundationLog(strict_ties=False))


def _chain(eph: Ephemera, who: Identity, n: int) -> AuthorLog:
    """``who``'s chain as we keep it, its first ``n`` entries delivered."""
    log = eph.places.authors[who.public_key] = AuthorLog(who.public_key)
    prev = GENESIS
    for seq in range(1, n + 1):
        entry = seal_message(who, Ready(True), table_id=TABLE, round=0, seq=seq, lamport=seq,
                             prev=prev)
        log.offer(entry)
        log.mark_delivered(entry)
        prev = entry.signature
    return log


def _said(who: Identity, payload: Payload, log: AuthorLog, *, lamport: int = 40,
          head: bytes | None = None) -> Entry:
    """An ephemeral entry of ``who``, naming the head of ``log`` (or ``head``)."""
    return seal_message(who, payload, table_id=TABLE, round=1, seq=max(log.delivered, 1),
                        lamport=lamport, prev=log.head if head is None else head)


def test_a_seated_peers_ack_moves_my_clock_and_a_strangers_does_not() -> None:
    eph = _ephemera()
    peer, stranger = _chain(eph, PEER, 2), _chain(eph, STRANGER, 2)
    assert eph.take(_said(STRANGER, Ack(()), stranger, lamport=90), Ack(()), stranger, None,
                    1.0) == ()
    assert eph.clock.time == 0 and eph.places.last_heard[STRANGER.public_key] == 1.0
    assert eph.take(_said(PEER, Ack(()), peer, lamport=40), Ack(()), peer, None, 2.0) == ()
    assert eph.clock.time == 41
    view = View(0, None, ((), (), (), ()), None, 0)
    eph.take(_said(PEER, view, peer, lamport=70), view, peer, None, 3.0)
    assert eph.clock.time == 41  # only what the journal holds (an ACK) moves it


def test_an_ack_counts_its_marks_at_once_when_it_claims_nothing_new() -> None:
    eph, rs = _ephemera(), _round()
    peer, mine = _chain(eph, PEER, 2), _chain(eph, ME, 3)
    eph.seating.sitting_down = {PEER.public_key: 3}  # the ROSTER that seated it: my 3rd
    upto = (AckMark(ME.public_key, 3, mine.head),)
    ack = _said(PEER, Ack(upto), peer)
    assert eph.take(ack, Ack(upto), peer, rs, 1.0) == ()
    assert rs.marks[1] == {0: 3}  # counted: it names the entry we hold
    assert peer.vouched == (2, 40) and rs.acks[1] == (40, 2)
    assert eph.pruning.held_by[PEER.public_key] == {ME.public_key: 3}
    assert not eph.seating.sitting_down  # it holds the ROSTER: sat down


def test_an_ack_claiming_a_chain_we_keep_not_counts_once_that_chain_is_begun() -> None:
    """A mark naming an author we keep no chain of waits for its entry only once
    the chain is begun (the claim is carried out first)."""
    eph, rs = _ephemera(), _round()
    peer = _chain(eph, PEER, 2)
    upto = (AckMark(THIRD, 4, b"h" * 64),)
    ack = _said(PEER, Ack(upto), peer)
    assert eph.take(ack, Ack(upto), peer, rs, 1.0) == ()
    assert _done(eph) == []  # a claim signs, journals and tells nothing
    assert eph.clock.time == 41 and eph.pruning.held_by[PEER.public_key] == {THIRD: 4}
    assert eph.places.authors[THIRD].claimed == 4  # begun by the claim, before the marks count
    assert rs.pending_marks == {2: {1: upto[0]}}


def test_back_at_a_table_an_ack_says_first_how_far_the_table_holds_my_chain() -> None:
    eph, rs = _ephemera(), _round()
    peer = _chain(eph, PEER, 2)
    eph.recovery.resume = Resume({PEER.public_key}, 0.0, 0)
    upto = (AckMark(ME.public_key, 6, b"h" * 64),)
    ack = _said(PEER, Ack(upto), peer)
    assert eph.take(ack, Ack(upto), peer, rs, 1.0) == ()
    # my chain (none kept yet) claimed as the resume hears it, then as the marks say
    assert _done(eph) == [] and eph.places.authors[ME.public_key].claimed == 6
    assert eph.recovery.resume.table_seq == 6 and not eph.recovery.resume.waiting


def test_a_head_that_is_not_ours_is_asked_about_before_the_entry_is_acted_on() -> None:
    eph, rs = _ephemera(), _round()
    peer = _chain(eph, PEER, 2)
    ack = _said(PEER, Ack(()), peer, head=b"x" * 64)
    clock_at_ask: list[int] = []

    def asked(effects: Iterable[Effect]) -> None:
        clock_at_ask.append(eph.clock.time)
        _done(eph).extend(effects)

    eph.steps.apply = asked
    assert eph.take(ack, Ack(()), peer, rs, 1.0) == ()
    assert _done(eph) == [Sign(Resend(PEER.public_key, 2, 2), to=PEER.public_key)]
    assert clock_at_ask == [0]  # the ACK itself comes after the ask
    assert eph.clock.time == 41
    again = eph.take(ack, Ack(()), peer, rs, 1.1)  # asked just now: on with the entry
    assert again == ()


def test_an_entry_from_a_key_we_have_no_room_for_is_refused() -> None:
    eph = _ephemera()
    log = AuthorLog(PEER.public_key)
    with pytest.raises(EnvelopeError, match="too_many_authors"):
        eph.take(_said(PEER, Ack(()), log), Ack(()), None, None, 1.0)


def test_a_view_is_kept_for_its_seat_in_the_round() -> None:
    eph, rs = _ephemera(), _round()
    peer = _chain(eph, PEER, 2)
    view = View(3, 7, ((1,), (), (), ()), None, 2)
    assert eph.take(_said(PEER, view, peer), view, peer, rs, 1.0) == ()
    assert rs.views[1] == view


def test_a_hello_is_answered_with_how_far_we_hold_its_own_chain() -> None:
    eph = _ephemera()
    peer = _chain(eph, PEER, 2)
    hello = Hello("peer", 1)
    assert eph.take(_said(PEER, hello, peer), hello, peer, None, 1.0) == (
        Sign(Ack((AckMark(PEER.public_key, 2, peer.head),)), to=PEER.public_key),)


def _floor() -> Snapshot:
    v = Variants()
    return Snapshot(1, False, (Seat(ME.public_key, "me"),), settings_of(v, 3.0, 10.0), (), 0,
                    ())


SIGNED_SNAPSHOT = b"s" * 100


def test_a_resend_is_answered_from_the_chain_and_below_it_with_the_hosts_snapshot() -> None:
    host, guest = _ephemera(host=True), _ephemera()
    for eph in (host, guest):
        eph.pruning.floor = _floor()
        log = _chain(eph, PEER, 4)
        log.prune(3)  # entries 1 and 2 forgotten
        held = [log.entries[s] for s in (3, 4)]
        ask = Resend(PEER.public_key, 1, 4)
        entry = _said(STRANGER, ask, _chain(eph, STRANGER, 1))
        # only the host hands its snapshot out, signed for the asker, first
        first = [SIGNED_SNAPSHOT] if eph is host else []
        assert eph.take(entry, ask, eph.places.authors[STRANGER.public_key], None, 1.0) == (
            Resent(STRANGER.public_key, [*first, *held]),)
        above = Resend(PEER.public_key, 3, 4)
        assert eph.take(entry, above, eph.places.authors[STRANGER.public_key], None, 1.0) == (
            Resent(STRANGER.public_key, held),)
    unknown = Resend(THIRD, 1, 4)
    stranger = host.places.authors[STRANGER.public_key]
    assert host.take(_said(STRANGER, unknown, stranger), unknown, stranger, None, 1.0) == ()


def test_an_answer_is_charged_to_the_askers_budget_the_snapshot_first() -> None:
    eph = _ephemera(host=True)
    log = _chain(eph, PEER, 4)
    frames = [log.entries[s] for s in (1, 2, 3, 4)]
    assert eph.answer(STRANGER.public_key, log, 1, 4, b"s" * 100, seatless=False, now=0.0) == (
        Resent(STRANGER.public_key, [b"s" * 100, *frames]),)
    # a snapshot the budget cannot take: nothing goes, and the asker asks again
    assert eph.answer(STRANGER.public_key, log, 1, 4, b"s" * RESEND_BURST, seatless=False,
                      now=0.0) == (Resent(STRANGER.public_key, []), Counted("resend_budget"))


def test_my_ack_straight_to_a_peer_stands_for_its_heartbeat() -> None:
    eph, rs = _ephemera(), _round()
    peer, mine = _chain(eph, PEER, 2), _chain(eph, ME, 3)
    marks = Ack(tuple(sorted((AckMark(ME.public_key, 3, mine.head),
                              AckMark(PEER.public_key, 2, peer.head)))))
    assert eph.beat(rs, None, 0.0, HEARTBEAT) == (SignAck(marks, besides=frozenset()),)
    assert eph.beat(rs, None, 0.1, HEARTBEAT) == ()  # not due yet
    assert eph.ack(rs, None, PEER.public_key, 0.25) == marks
    assert eph.beat(rs, None, HEARTBEAT, HEARTBEAT) == (
        SignAck(marks, besides=frozenset({PEER.public_key})),)  # it had them lately
    assert eph.beat(rs, None, 0.25 + HEARTBEAT, HEARTBEAT) == ()  # its own waits a while longer
    assert eph.beat(rs, None, 0.25 + HEARTBEAT + SINGLE_SLACK, HEARTBEAT) == [
        SignAck(marks, to=PEER.public_key)]
    eph.recovery.restoring = True
    eph.ack(rs, None, PEER.public_key, 2 * HEARTBEAT)
    assert eph.beat(rs, None, 2 * HEARTBEAT, HEARTBEAT) == (SignAck(marks, besides=frozenset()),)
