"""The steps on their own: each asks its sub-machine with the table as it
stands when the step comes up, and keeps what it reads from the owners (no
network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.scoring import SeatRound
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import GENESIS
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import Record, snapshot_of
from p2p_nerts.protocol.messages import Audit, Commit, Drop, Goodbye, Resend, Seat, seal_message
from p2p_nerts.protocol.proof import ForkProof
from p2p_nerts.protocol.replica._base import Lead, Phase
from p2p_nerts.protocol.replica._catchup import Pruning
from p2p_nerts.protocol.replica._effects import (
    DrainAll,
    Effect,
    Emit,
    RoundBegun,
    SetSeats,
    Sign,
)
from p2p_nerts.protocol.replica._forks import Forks
from p2p_nerts.protocol.replica._intake import Places
from p2p_nerts.protocol.replica._recovery import Recovery
from p2p_nerts.protocol.replica._seating import Seating
from p2p_nerts.protocol.replica._state import RoundState
from p2p_nerts.protocol.replica._step_effects import (
    BeginRound,
    CutAfter,
    DrawSecrets,
    Follow,
    HoldProof,
    LobbyEntry,
    SaidGoodbye,
    StepEffect,
    Unscore,
)
from p2p_nerts.protocol.replica._steps import Steps

pytestmark = pytest.mark.fast

ME, LIAR, C = (bytes([k]) * 32 for k in range(1, 4))


def _steps() -> Steps:
    seating = Seating(ME, ME, variants=Variants(), countdown=3.0, drop_after=10.0,
                      auto_start=None, auto_next=None, max_seats=8)
    return Steps(b"t" * 16, ME, is_host=True, rng=lambda n: b"r" * n, seating=seating,
                 forks=Forks(), recovery=Recovery(), pruning=Pruning(), places=Places())


def _ask(steps: Steps, step: StepEffect, rs: RoundState | None, phase: Phase) -> list[Effect]:
    """What ``step`` decides in ``phase`` of ``rs``, before any game is scored."""
    return steps.decide(step, rs, phase, None, 0.0, totals={})


def _round() -> RoundState:
    return RoundState(number=2, keys=(ME, LIAR, C), names=("me", "liar", "c"),
                      variants=Variants(), me=0, live={0, 1, 2},
                      log=FoundationLog(strict_ties=False))


def test_my_secrets_come_from_the_journal_once_then_fresh_and_journaled() -> None:
    steps, rs = _steps(), _round()
    steps.recovery.secrets[2] = (b"d" * 32, b"s" * 32)
    replayed = _ask(steps, DrawSecrets(rs), rs, Phase.SHUFFLE)
    assert rs.deck_secret == b"d" * 32 and [type(e) for e in replayed] == [Sign]
    assert 2 not in steps.recovery.secrets  # taken: the round deals from them once
    fresh = _ask(steps, DrawSecrets(rs), rs, Phase.SHUFFLE)
    assert rs.deck_secret == b"r" * 32
    assert [type(e) for e in fresh] == [Record, Sign]
    assert isinstance(fresh[1], Sign) and isinstance(fresh[1].payload, Commit)


def test_a_held_proof_and_a_lead_read_the_round_the_table_is_in_when_they_come_up() -> None:
    steps, rs = _steps(), _round()
    proof = ForkProof(LIAR, 4, b"first", b"second")
    assert _ask(steps, HoldProof(proof), None, Phase.BETWEEN) == []  # no round
    assert steps.forks.proven[LIAR] == proof  # kept for the game all the same
    assert _ask(steps, HoldProof(proof), rs, Phase.PLAYING) == [
        CutAfter(rs, 1, proof.cut)]
    lead = Lead(LIAR, 7, C)
    assert _ask(steps, Follow((lead,)), rs, Phase.PLAYING) == []  # proven in it
    assert _ask(steps, Follow((lead,)), None, Phase.BETWEEN) == [
        Sign(Resend(LIAR, 7, 7), to=C)]


def _scored_with_a_late_audit() -> RoundState:
    rs = _round()
    rs.audits[1], rs.audit_seq[1] = Audit(b"s" * 32, ()), 9
    rs.results = (SeatRound(1, 0, 13, -26, False),)
    return rs


def test_a_cut_takes_a_result_back_only_from_the_round_being_scored() -> None:
    steps = _steps()
    rs = _scored_with_a_late_audit()
    assert _ask(steps, CutAfter(rs, 1, 4), rs, Phase.SCORING) == [Unscore(rs)]
    rs = _scored_with_a_late_audit()
    assert _ask(steps, CutAfter(rs, 1, 4), rs, Phase.PLAYING) == []
    rs = _scored_with_a_late_audit()
    assert _ask(steps, CutAfter(rs, 1, 4), _round(), Phase.SCORING) == []
    assert 1 not in rs.audits  # taken out all the same


def test_a_goodbye_leaves_the_round_as_the_phase_stands_when_its_step_comes_up() -> None:
    steps, rs = _steps(), _round()
    bye = SaidGoodbye(rs, LIAR, "bye", 9)
    told = Emit(ev.Notice("liar left: bye"))
    assert _ask(steps, bye, rs, Phase.BETWEEN) == [told]  # the break: told only
    assert not rs.left
    effects = _ask(steps, bye, rs, Phase.PLAYING)
    assert effects[0] == told and rs.left == {1: 9}  # in play: leaving, and voted out
    assert len(effects) == 2 and isinstance(effects[1], Sign)
    assert isinstance(effects[1].payload, Drop) and effects[1].payload.who == LIAR
    assert _ask(steps, SaidGoodbye(None, LIAR, "bye", 9), None, Phase.LOBBY) == []


def test_a_round_begins_after_a_note_of_the_table_as_it_stands_when_asked() -> None:
    steps = _steps()
    seats = (Seat(ME, "me"), Seat(LIAR, "liar"))
    steps.seating.apply(SetSeats(seats), 0)
    totals = {ME: 12, LIAR: -3}
    quiet = steps.decide(BeginRound(3, note=False), None, Phase.BETWEEN, None, 5.0,
                         totals=totals)
    assert [type(e) for e in quiet] == [RoundBegun, DrawSecrets, DrainAll]
    begun = quiet[0]
    assert isinstance(begun, RoundBegun) and begun.rs.number == 3 and begun.rs.keys == (ME, LIAR)
    noted = steps.decide(BeginRound(3), None, Phase.BETWEEN, None, 5.0, totals=totals)
    assert [type(e) for e in noted] == [Record, RoundBegun, DrawSecrets, DrainAll]
    assert isinstance(noted[0], Record)
    snapshot = snapshot_of(noted[0])  # where a compacted journal will start
    assert (snapshot.round, snapshot.seats, snapshot.over) == (3, seats, False)
    assert {(t.key, t.points) for t in snapshot.totals} == {(ME, 12), (LIAR, -3)}


def test_a_lobby_entry_is_the_lobbys_with_the_round_as_it_stands_when_it_comes_up() -> None:
    steps, rs = _steps(), _round()
    guest = Identity.from_seed(b"\x07" * 32, "guest")
    entry = seal_message(guest, Goodbye("bye"), table_id=b"t" * 16, round=2, seq=4, lamport=9,
                         prev=GENESIS)
    between = _ask(steps, LobbyEntry(entry, Goodbye("bye")), None, Phase.BETWEEN)
    during = _ask(steps, LobbyEntry(entry, Goodbye("bye")), rs, Phase.PLAYING)
    assert between[-1] == SaidGoodbye(None, guest.public_key, "bye", 4)
    assert during[-1] == SaidGoodbye(rs, guest.public_key, "bye", 4)
