"""The steps on their own: each is a direct call that reads the table as it stands
when it is taken, and keeps what it reads from the owners (no network, no
replica): what it decided is recorded in order, not carried out."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.scoring import Match, SeatRound
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import GENESIS
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import Record, snapshot_of
from p2p_nerts.protocol.messages import Audit, Commit, Drop, Goodbye, Resend, Seat, seal_message
from p2p_nerts.protocol.proof import ForkProof
from p2p_nerts.protocol.replica._base import Lead, Phase
from p2p_nerts.protocol.replica._effects import Emit, Sign
from p2p_nerts.protocol.replica._state import RoundState
from p2p_nerts.protocol.replica._steps import Steps

from ..stepkit import Table, steps_at

pytestmark = pytest.mark.fast

ME, LIAR, C = (bytes([k]) * 32 for k in range(1, 4))


def _steps(rs: RoundState | None = None, phase: Phase = Phase.LOBBY) -> tuple[Steps, Table]:
    return steps_at(ME, rs, phase)


def _round() -> RoundState:
    return RoundState(number=2, keys=(ME, LIAR, C), names=("me", "liar", "c"),
                      variants=Variants(), me=0, live={0, 1, 2},
                      log=FoundationLog(strict_ties=False))


def test_my_secrets_come_from_the_journal_once_then_fresh_and_journaled() -> None:
    steps, table = _steps()
    seats = (Seat(ME, "me"), Seat(LIAR, "liar"))
    steps.seating.seats = seats
    steps.recovery.secrets[2] = (b"d" * 32, b"s" * 32)
    steps.begin(2, note=False)
    assert [type(e) for e in table.done] == [Sign, str]
    first = table.rs
    assert first is not None and first.deck_secret == b"d" * 32
    assert table.phase is Phase.SHUFFLE
    assert 2 not in steps.recovery.secrets  # taken: the round deals from them once
    table.done.clear()
    steps.begin(2, note=False)
    begun = table.rs
    assert begun is not None and begun.deck_secret == b"r" * 32
    assert table.game.prev_rs is first  # the round before, kept
    assert [type(e) for e in table.done] == [Record, Sign, str]
    sign = table.done[1]
    assert isinstance(sign, Sign) and isinstance(sign.payload, Commit)


def test_a_held_proof_and_a_lead_read_the_round_the_table_is_in_when_they_come_up() -> None:
    rs = _round()
    steps, table = _steps(None, Phase.BETWEEN)
    proof = ForkProof(LIAR, 4, b"first", b"second")
    steps.prove(table.rs, proof, publish=False)
    assert table.done == []  # no round
    assert steps.forks.proven[LIAR] == proof  # kept for the game all the same
    rs.plays_by_seat[1] = []
    rs.audits[1], rs.audit_seq[1] = Audit(b"s" * 32, ()), proof.cut + 1
    table.rs, table.phase = rs, Phase.PLAYING
    steps.prove(table.rs, proof, publish=False)
    assert table.done == [] and 1 not in rs.audits  # what it sent past the fork: out
    lead = Lead(LIAR, 7, C)
    steps.follow((lead,))
    assert table.done == []  # proven in it
    table.rs, table.phase = None, Phase.BETWEEN
    steps.follow((lead,))
    assert table.done == [Sign(Resend(LIAR, 7, 7), to=C)]


def _scored_with_a_late_audit() -> RoundState:
    rs = _round()
    rs.audits[1], rs.audit_seq[1] = Audit(b"s" * 32, ()), 9
    rs.results = (SeatRound(1, 0, 13, -26, False),)
    return rs


def test_a_cut_takes_a_result_back_only_from_the_round_being_scored() -> None:
    for scored_here, phase, same in ((True, Phase.SCORING, True), (False, Phase.PLAYING, True),
                                     (False, Phase.SCORING, False)):
        rs = _scored_with_a_late_audit()
        steps, table = _steps(rs if same else _round(), phase)
        table.match = match = Match.new(rs.variants, 3)
        match.totals, match.rounds = [0, -26, 0], 1
        steps.cut_after(rs, 1, 4)
        assert 1 not in rs.audits  # taken out all the same
        assert (rs.results == () and match.rounds == 0) is scored_here


def test_a_goodbye_leaves_the_round_it_was_signed_in_whatever_the_phase() -> None:
    """Marked leaving alike everywhere, as a peer still closing the round and one
    that has closed it both find it; voted out only while the round is played."""
    guest = Identity.from_seed(b"\x07" * 32, "liar")
    rs = _round()
    rs.keys = (ME, guest.public_key, C)
    entry = seal_message(guest, Goodbye("bye"), table_id=b"t" * 16, round=2, seq=9, lamport=9,
                         prev=GENESIS)
    told = Emit(ev.Notice("liar left: bye"))
    steps, table = _steps(rs, Phase.BETWEEN)
    steps.seating.joined(guest.public_key, "liar", in_line=True, waits=True)
    steps.lobby_entry(entry, Goodbye("bye"))
    assert table.done == [told]  # the break: told, and no vote
    assert not steps.seating.waiting and not steps.seating.queue  # it sits down no more
    assert rs.left == {1: 9} and rs.left_at == {1: 9}
    rs.left.clear()
    steps, table = _steps(rs, Phase.PLAYING)
    steps.lobby_entry(entry, Goodbye("bye"))
    assert table.done[:1] == [told]
    assert rs.left == {1: 9}  # in play: leaving, and voted out
    vote = table.done[1:]
    assert len(vote) == 1 and isinstance(vote[0], Sign)
    assert isinstance(vote[0].payload, Drop) and vote[0].payload.who == guest.public_key
    steps, table = _steps(None, Phase.LOBBY)
    steps.lobby_entry(entry, Goodbye("bye"))
    assert table.done == []


def test_a_round_begins_after_a_note_of_the_table_as_it_stands_when_asked() -> None:
    steps, table = _steps(None, Phase.BETWEEN)
    seats = (Seat(ME, "me"), Seat(LIAR, "liar"))
    steps.seating.seats = seats
    table.totals, table.now = {ME: 12, LIAR: -3}, 5.0
    steps.begin(3, note=False)
    assert [type(e) for e in table.done] == [Record, Sign, str]
    begun = table.rs
    assert begun is not None and begun.number == 3 and begun.keys == (ME, LIAR)
    assert table.totals == {ME: 12, LIAR: -3} and steps.places.last_heard[LIAR] == 5.0
    table.done.clear()
    steps.begin(3)
    assert [type(e) for e in table.done] == [Record, Record, Sign, str]
    note = table.done[0]
    assert isinstance(note, Record)
    snapshot = snapshot_of(note)  # where a compacted journal will start
    assert (snapshot.round, snapshot.seats, snapshot.over) == (3, seats, False)
    assert {(t.key, t.points) for t in snapshot.totals} == {(ME, 12), (LIAR, -3)}
