"""The fork sub-machine on its own: when a lead is asked about, which proof holds,
and what a FORK does at its turn (no network, no replica), and the effects it
returns for each."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import GENESIS, Entry
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Audit, Fork, MsgType, Ready, Resend, seal_message
from p2p_nerts.protocol.proof import ForkProof
from p2p_nerts.protocol.replica._base import RESEND_INTERVAL, Lead, Phase
from p2p_nerts.protocol.replica._effects import Emit, Sign
from p2p_nerts.protocol.replica._forks import Forks, Held, conflict, convict
from p2p_nerts.protocol.replica._state import Ordered, RoundState

from ..stepkit import steps_at

pytestmark = pytest.mark.fast

LIAR = Identity.from_seed(b"\x05" * 32, "liar")
TABLE = b"t" * 16
SEAT = 1


def _round() -> RoundState:
    keys = (b"\x01" * 32, LIAR.public_key, b"\x03" * 32)
    return RoundState(number=1, keys=keys, names=("me", "liar", "c"), variants=Variants(),
                      me=0, live={0, 1, 2}, log=FoundationLog(strict_ties=False))


def _entry(seq: int, on: bool, prev: bytes = GENESIS) -> Entry:
    return seal_message(LIAR, Ready(on), table_id=TABLE, round=1, seq=seq, lamport=seq,
                        prev=prev)


def _proof(seq: int) -> ForkProof:
    return ForkProof(LIAR.public_key, seq, b"first%d" % seq, b"second%d" % seq)


def test_a_lead_is_asked_about_at_most_every_resend_interval() -> None:
    forks, rs = Forks(), _round()
    lead = Lead(LIAR.public_key, 4, None)
    assert forks.ask(rs, lead, 10.0)
    assert not forks.ask(rs, lead, 10.0 + RESEND_INTERVAL / 2)
    assert forks.ask(rs, Lead(LIAR.public_key, 3, None), 10.1)  # another number: its own clock
    assert forks.ask(rs, lead, 10.0 + RESEND_INTERVAL)
    forks.new_round()
    assert forks.ask(rs, lead, 10.0 + RESEND_INTERVAL)  # a new round forgets what was asked


def test_no_lead_is_followed_once_its_author_is_proven_in_the_round() -> None:
    forks, rs = Forks(), _round()
    rs.forks[SEAT] = _proof(2)
    assert not forks.ask(rs, Lead(LIAR.public_key, 7, None), 0.0)
    assert forks.ask(None, Lead(LIAR.public_key, 7, None), 0.0)  # no round: asked


def test_the_lowest_proof_holds_and_the_first_one_is_told() -> None:
    forks, rs = Forks(), _round()
    assert forks.hold(rs, _proof(5)) == Held(SEAT, True)
    assert forks.hold(rs, _proof(6)) is None  # a later fork changes nothing
    assert forks.proven[LIAR.public_key] == _proof(5)
    assert forks.hold(rs, _proof(3)) == Held(SEAT, False)  # earlier: cut there, told already
    assert rs.forks[SEAT] == _proof(3) and forks.proven[LIAR.public_key] == _proof(3)


def test_a_proof_against_a_key_without_a_seat_is_kept_for_the_game() -> None:
    forks = Forks()
    assert forks.hold(None, _proof(2)) is None
    rs = _round()
    rs.keys = (rs.keys[0], b"\x02" * 32, rs.keys[2])
    assert forks.hold(rs, _proof(1)) is None
    assert forks.proven[LIAR.public_key] == _proof(1) and not rs.forks


def test_two_entries_naming_one_predecessor_are_a_proof() -> None:
    a, b = _entry(1, True), _entry(1, False)
    assert conflict(a.raw, b, None) == ForkProof(LIAR.public_key, 1, a.raw, b.raw)


def test_two_entries_naming_different_predecessors_lead_to_the_one_before() -> None:
    a, b = _entry(4, True, prev=b"\x01" * 64), _entry(4, False, prev=b"\x02" * 64)
    assert conflict(a.raw, b, b"via" * 8) == Lead(LIAR.public_key, 3, b"via" * 8)
    first, second = _entry(1, True, prev=b"\x01" * 64), _entry(1, False)
    assert conflict(first.raw, second, None) is None  # nothing before the first entry


def test_a_fork_at_its_turn_flags_its_accused_and_cuts_it_at_the_fork() -> None:
    rs = _round()
    a, b = _entry(3, True), _entry(3, False)
    rs.forks[SEAT] = ForkProof(LIAR.public_key, 3, a.raw, b.raw)
    convicted = convict(rs, Fork(a.raw, b.raw))
    assert convicted is not None and (convicted.seat, convicted.cut) == (SEAT, 2)
    assert rs.flagged[SEAT] == "equivocation" and rs.dropping[SEAT] == 2


def test_a_fork_keeps_an_earlier_agreed_cut_and_skips_a_seat_gone() -> None:
    rs = _round()
    a, b = _entry(6, True), _entry(6, False)
    rs.forks[SEAT] = ForkProof(LIAR.public_key, 6, a.raw, b.raw)
    rs.dropping[SEAT] = 3  # dropped for silence before its fork
    convicted = convict(rs, Fork(a.raw, b.raw))
    assert convicted is not None and convicted.cut == 3
    rs.live.discard(SEAT)
    assert convict(rs, Fork(a.raw, b.raw)) is None


def test_leads_are_followed_with_resends_to_whoever_gave_them() -> None:
    forks, rs = Forks(), _round()
    via = b"via" * 8
    leads = (Lead(LIAR.public_key, 4, via), Lead(LIAR.public_key, 4, None),
             Lead(LIAR.public_key, 2, None))
    assert forks.follow(rs, leads, 1.0) == [  # the second asks too soon again
        Sign(Resend(LIAR.public_key, 4, 4), to=via), Sign(Resend(LIAR.public_key, 2, 2))]


def test_a_proof_takes_out_what_its_seat_sent_past_it_and_is_published_once() -> None:
    rs = _round()
    steps, table = steps_at(rs.keys[0], rs, Phase.PLAYING)
    a, b = _entry(3, True), _entry(3, False)
    proof = ForkProof(LIAR.public_key, 3, a.raw, b.raw)
    rs.audits[SEAT], rs.audit_seq[SEAT] = Audit(b"s" * 32, ()), 3  # past the fork
    steps.prove(rs, proof)
    assert table.done == [Sign(Fork(a.raw, b.raw))] and SEAT not in rs.audits
    steps.prove(rs, proof)
    assert table.done == [Sign(Fork(a.raw, b.raw))]  # held already
    for phase, publish in ((Phase.BETWEEN, True), (Phase.PLAYING, False)):
        again = _round()
        steps, table = steps_at(again.keys[0], again, phase)
        steps.prove(again, proof, publish=publish)
        assert table.done == [] and again.forks[SEAT] == proof
    steps, table = steps_at(rs.keys[0], None, Phase.PLAYING)
    steps.prove(None, proof)
    assert table.done == []


def test_a_conflict_is_held_as_a_proof_or_followed_as_a_lead() -> None:
    rs = _round()
    steps, table = steps_at(rs.keys[0], rs, Phase.SHUFFLE)
    a, b = _entry(1, True), _entry(1, False)
    steps.conflicted(a.raw, b, None)
    assert table.done == [Sign(Fork(a.raw, b.raw))] and SEAT in rs.forks
    c, d = _entry(4, True, prev=b"\x01" * 64), _entry(4, False, prev=b"\x02" * 64)
    other, table2 = steps_at(rs.keys[0], _round(), Phase.PLAYING)
    other.conflicted(c.raw, d, b"v" * 32)
    assert table2.done == [Sign(Resend(LIAR.public_key, 3, 3), to=b"v" * 32)]
    table.done.clear()
    steps.conflicted(c.raw, d, None)
    assert table.done == []  # proven: no lead


def test_a_fork_at_its_turn_is_flagged_with_its_proof_and_its_seat_leaves_there() -> None:
    rs = _round()
    steps, table = steps_at(rs.keys[0], rs, Phase.PLAYING)
    a, b = _entry(3, True), _entry(3, False)
    rs.forks[SEAT] = ForkProof(LIAR.public_key, 3, a.raw, b.raw)
    rs.stuck = [False] * 3
    item = Ordered(9, 2, MsgType.FORK, Fork(a.raw, b.raw), 5)
    steps.convict(rs, item)
    assert table.done[0] == Emit(ev.Flagged(
        SEAT, "liar", "equivocation: signed two entries numbered 3", (a.raw, b.raw)))
    assert table.done[1] == Emit(ev.PeerDropped(SEAT, "liar"))  # it leaves the round there
    assert SEAT not in rs.live and rs.dropping[SEAT] == 2
    table.done.clear()
    steps.convict(rs, item)
    assert table.done == []
