"""Audit verdicts: a seat whose round is found false (a missing audit, however its
seat leaves; a false Nerts call) scores the forfeit, the worst honest round, and
the honest seats' round scores stand as they played them; the same on every
honest peer."""

from __future__ import annotations

import pytest

from p2p_nerts.game.moves import foundation_target
from p2p_nerts.game.scoring import forfeit_score, round_score
from p2p_nerts.game.tableau import NERTS, OP_NERTS, Tableau
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.audit import UNAUDITED
from p2p_nerts.protocol.messages import Audit, Goodbye, Nerts, Payload
from p2p_nerts.protocol.replica import (
    CallNerts,
    Command,
    CommandError,
    LeaveTable,
    Move,
    Outbound,
    Phase,
    Replica,
    RoundState,
    StartRound,
)
from p2p_nerts.testing.memnet import Faults, MemNet, bot_table

from ..replica_harness import check_round, play_round, replica_with

OFFENDER = 2
HONEST = (0, 1, 3)
FORFEIT = forfeit_score(Variants())  # the tables here play the default rules


def _call_anyway(replica: Replica, rs: RoundState, tab: Tableau) -> None:
    """Sign a Nerts call whatever the Nerts pile holds, as its move log would have
    to show it."""
    lamport = replica.clock.time + 1
    tab.log.append((OP_NERTS, lamport))
    rs.i_called = True
    replica._send(Nerts(), expect_lamport=lamport)


class FalseCaller(Replica):
    """Calls Nerts in round 1 with ten cards still in its Nerts pile (early enough
    to beat honest bots to the call), then plays honestly."""

    def handle(self, command: Command, now: float) -> Outbound:
        if not isinstance(command, Move):
            return super().handle(command, now)
        target = command.target
        rs = self.rs
        if (rs is not None and rs.number == 1 and rs.tab is not None
                and len(rs.tab.nerts) <= 10 and not rs.i_called):
            self.now = now
            _call_anyway(self, rs, rs.tab)
            return self._flush()
        return super().handle(Move(target), now)


class Withholder(Replica):
    """Stays on the line but never publishes its AUDIT (nor calls Nerts: a call its
    audit would have to back ends the round for everyone, another case)."""

    def handle(self, command: Command, now: float) -> Outbound:
        if isinstance(command, CallNerts):
            return Outbound()
        return super().handle(command, now)

    def _send(self, payload: Payload, *, round_no: int | None = None, to: bytes | None = None,
              expect_lamport: int | None = None) -> None:
        if not isinstance(payload, Audit):
            super()._send(payload, round_no=round_no, to=to, expect_lamport=expect_lamport)


class SilentFalseCaller(FalseCaller, Withholder):
    """Calls Nerts falsely and keeps its audit back: its call cannot be checked."""


def _honest_overs(net: MemNet, number: int) -> list[ev.RoundOver]:
    """Each honest peer's last word on the round, all the same."""
    overs = []
    for i in HONEST:
        mine = [e for e in net.events[i] if isinstance(e, ev.RoundOver) and e.round == number]
        assert mine, f"peer {i} did not score round {number}"
        overs.append(mine[-1])
        assert not any(isinstance(e, ev.Divergence) for e in net.events[i])
    assert len({(o.foundation_hash, o.results, o.verdicts, o.totals) for o in overs}) == 1
    return overs


def _run_round_1(net: MemNet) -> None:
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: all(net.replicas[i].phase in (Phase.BETWEEN, Phase.OVER)
                               for i in HONEST), limit=net.now + 1800)


def _seat(net: MemNet, i: int) -> int:
    seat = net.replicas[i].view().my_seat
    assert seat is not None
    return seat


def _check_as_played(net: MemNet, over: ev.RoundOver, honest: tuple[int, ...]) -> None:
    """Each honest seat's round (the first) scores as it played it: its cards up in
    the agreed log and the Nerts cards its own tableau still holds, with a clean
    verdict; and its total is that score."""
    for i in honest:
        rs = net.replicas[i].rs
        assert rs is not None and rs.number == over.round and rs.tab is not None
        seat = _seat(net, i)
        result = over.results[seat]
        assert over.verdicts[seat] == "" and not result.void
        up, left = rs.log.cards_of(seat), len(rs.tab.nerts)
        assert (result.foundation_cards, result.nerts_left) == (up, left)
        assert result.score == round_score(up, left, rs.variants)
        assert over.totals[seat] == result.score


def _check_unaudited_offender(net: MemNet) -> ev.RoundOver:
    over = _honest_overs(net, 1)[0]
    bad = _seat(net, OFFENDER)
    assert over.verdicts[bad] == UNAUDITED
    assert over.results[bad].void and over.results[bad].score == FORFEIT
    assert over.totals[bad] == FORFEIT
    _check_as_played(net, over, HONEST)
    return over


def _leave_mid_round(net: MemNet, how: str) -> None:
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 8, limit=net.now + 600)
    del net.drivers[OFFENDER]
    if how == "left":
        net.output(OFFENDER, net.replicas[OFFENDER].handle(LeaveTable(), net.now))
    net.cut.add(OFFENDER)
    assert net.run(lambda: all(net.replicas[i].phase in (Phase.BETWEEN, Phase.OVER)
                               for i in HONEST), limit=net.now + 1800)


@pytest.mark.parametrize("how", ["silent", "left"])
def test_a_seat_gone_before_its_audit_scores_the_forfeit_on_every_peer(how: str) -> None:
    net = bot_table(4, seed=5)
    _leave_mid_round(net, how)
    over = _check_unaudited_offender(net)
    assert over.results[_seat(net, OFFENDER)].foundation_cards > 0, "its cards still show"


def test_a_seat_that_keeps_its_audit_back_is_voted_out_and_scores_the_forfeit() -> None:
    net = bot_table(4, seed=21, classes={OFFENDER: Withholder})
    _run_round_1(net)
    _check_unaudited_offender(net)
    for i in HONEST:
        assert any(isinstance(e, ev.PeerDropped) and e.seat == _seat(net, OFFENDER)
                   for e in net.events[i])


def test_a_false_nerts_call_ends_the_round_with_the_honest_scores_standing() -> None:
    net = bot_table(4, seed=21, classes={OFFENDER: FalseCaller})
    number = play_round(net)
    over = _honest_overs(net, number)[0]
    bad = _seat(net, OFFENDER)
    assert over.end == "nerts" and over.results[bad].called
    reason = over.verdicts[bad]
    assert reason.startswith("impossible move: move ") and "(7, " in reason, reason
    assert "call Nerts only with an empty Nerts pile" in reason
    # The count it really had, not a default 0.
    cheater = net.replicas[OFFENDER].rs
    assert cheater is not None and cheater.tab is not None
    assert over.results[bad].nerts_left == len(cheater.tab.nerts) >= 3
    assert over.results[bad].void and over.results[bad].score == over.totals[bad] == FORFEIT
    _check_as_played(net, over, HONEST)
    assert any(over.results[_seat(net, i)].score != 0 for i in HONEST)  # they count
    for i in HONEST:
        flagged = [e for e in net.events[i] if isinstance(e, ev.Flagged)]
        assert [(e.seat, e.reason) for e in flagged] == [(bad, reason)]
        assert any(isinstance(e, ev.Notice) and "the others' scores stand" in e.text
                   for e in net.events[i])
    # The next round counts as usual: the totals add its scores.
    second = play_round(net)
    again = check_round(net, second, honest=set(range(4)))
    assert again.totals == tuple(t + r.score for t, r in zip(over.totals, again.results,
                                                            strict=True))


def test_a_false_call_whose_caller_goes_silent_leaves_the_honest_scores_standing() -> None:
    net = bot_table(4, seed=21, classes={OFFENDER: SilentFalseCaller})
    _run_round_1(net)
    over = _honest_overs(net, 1)[0]
    bad = _seat(net, OFFENDER)
    assert over.results[bad].called and over.verdicts[bad] == UNAUDITED
    assert over.results[bad].void and over.totals[bad] == FORFEIT
    _check_as_played(net, over, HONEST)


class GoesDark(Replica):
    """Says nothing more in round 1 once it has called Nerts and the round ended:
    no audit, no ack."""

    def _flush(self) -> Outbound:
        out = super()._flush()
        rs = self.rs
        if rs is not None and rs.number == 1 and rs.i_called and rs.end is not None:
            out.sends.clear()
        return out


class DarkFalseCaller(FalseCaller, GoesDark):
    """Calls Nerts falsely, then says nothing more in that round."""


@pytest.mark.parametrize("seed", [5, 27])
def test_a_false_caller_gone_dark_is_dropped_alone_and_forfeits_alone(seed: int) -> None:
    """Honest seats still waiting for the dark seat's word to see the call final are
    not voted out for their missing audits meanwhile (two seats voted out at once
    could never be dropped): the dark one goes, the others audit, all agree."""
    net = bot_table(5, seed=seed, classes={1: DarkFalseCaller},
                    faults=Faults(max_delay=0.03, duplicate=0.03, drop=0.01))
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    honest = (0, 2, 3, 4)
    assert net.run(lambda: all(net.replicas[i].phase in (Phase.BETWEEN, Phase.OVER)
                               for i in honest), limit=net.now + 600)
    overs = [[e for e in net.events[i] if isinstance(e, ev.RoundOver)][-1] for i in honest]
    assert len({(o.foundation_hash, o.results, o.verdicts) for o in overs}) == 1
    bad = _seat(net, 1)
    assert overs[0].verdicts[bad] == UNAUDITED
    assert overs[0].results[bad].void and overs[0].results[bad].score == FORFEIT
    _check_as_played(net, overs[0], honest)
    for i in honest:
        assert [e.seat for e in net.events[i] if isinstance(e, ev.PeerDropped)] == [bad]


class CallsAfterGoodbye(Replica):
    """Says GOODBYE mid-round (a seat sitting the round out) and then, honest
    no more, calls Nerts anyway: its drop, the call and the round's close race."""

    def handle(self, command: Command, now: float) -> Outbound:
        rs = self.rs
        if (not isinstance(command, Move) or rs is None or rs.number != 1 or rs.tab is None
                or rs.i_called or len(rs.log) < 8):
            return super().handle(command, now)
        self.now = now
        if rs.me not in rs.left:
            self._send(Goodbye("sitting this round out"))
        else:
            _call_anyway(self, rs, rs.tab)
        return self._flush()


@pytest.mark.parametrize("seed", range(4))
def test_a_call_after_its_callers_goodbye_ends_the_round_alike_everywhere(seed: int) -> None:
    """Whether the caller's drop takes effect before its call, between the call and
    the close, or after the close is decided by the total order: every honest
    peer scores and closes the round alike (the AUDITs and SUMMARYs count at their
    turns, like the drop)."""
    net = bot_table(4, seed=seed, classes={OFFENDER: CallsAfterGoodbye},
                    faults=Faults(max_delay=0.25, duplicate=0.02))
    _run_round_1(net)
    over = _honest_overs(net, 1)[0]
    assert over.verdicts[_seat(net, OFFENDER)] != ""  # never a clean result for it
    totals = {tuple(net.replicas[i].totals.items()) for i in HONEST}
    assert len(totals) == 1


def _playing(replica: Replica) -> tuple[RoundState, Tableau]:
    """My round and tableau, where the replica lets me move now (else its refusal)."""
    reason = replica.blocked()
    if reason is not None:
        raise CommandError(reason)
    rs = replica.rs
    assert rs is not None and rs.tab is not None
    return rs, rs.tab


class StealsThenGoesDark(GoesDark):
    """Plays up to three stock cards as if they were its Nerts top, then calls Nerts
    and says nothing more in that round (the soak's silent cheater)."""

    stolen = 0

    def handle(self, command: Command, now: float) -> Outbound:
        if not isinstance(command, Move):
            return super().handle(command, now)
        self.now = now
        self._apply_own()  # where a move is made: my last play applied to myself first
        if self.stolen < 3 and (stolen := self._steal()) is not None:
            self.stolen += 1
            return super().handle(stolen, now)
        if self.stolen and not (self.rs is not None and self.rs.i_called):
            self.stolen = 3
            _call_anyway(self, *_playing(self))
            return self._flush()
        return super().handle(command, now)

    def _steal(self) -> Move | None:
        """A stock card put on the Nerts pile where a foundation takes it: its move."""
        rs, tab = _playing(self)
        for card in list(tab.stock):
            tab.stock.remove(card)
            tab.nerts.append(card)
            target = foundation_target(tab, NERTS, rs.log)
            if target is not None:
                return Move(target)
            tab.nerts.pop()
            tab.stock.append(card)
        return None


@pytest.mark.parametrize("seed", range(4))
def test_no_honest_seat_is_voted_out_for_an_audit_whose_turn_waits_on_a_dark_seat(
        seed: int) -> None:
    """At a quick table (2 s to a drop) the honest audits wait for their turns on
    the dark cheater's word: sent, they are not held back, and only the cheater
    is voted out (voting an honest seat out too, each vote would wait on the
    other's and the round never end)."""
    quick = {"drop_after": 2.0}
    net = bot_table(4, seed=seed, classes={
        i: replica_with(**quick) if i != OFFENDER else
        (lambda *args, **given: StealsThenGoesDark(*args, **(given | quick)))
        for i in range(4)}, faults=Faults(max_delay=0.005))
    _run_round_1(net)
    over = _honest_overs(net, 1)[0]
    assert over.verdicts[_seat(net, OFFENDER)] != ""
    assert all(over.verdicts[_seat(net, i)] == "" for i in HONEST)
    bad = _seat(net, OFFENDER)  # the silent cheater forfeits; the honest rounds stand
    assert over.results[bad].void and over.totals[bad] == FORFEIT
    _check_as_played(net, over, HONEST)


class CallsAfterItsAudit(Replica):
    """Once its round-1 AUDIT is out, signs a Nerts call and sends it to one peer
    only (others get it later, through resends): peers that hold it when they
    score the round and peers that do not must judge the round alike."""

    late_call_sent = False

    def _send(self, payload: Payload, *, round_no: int | None = None, to: bytes | None = None,
              expect_lamport: int | None = None) -> None:
        super()._send(payload, round_no=round_no, to=to, expect_lamport=expect_lamport)
        rs = self.rs
        if isinstance(payload, Audit) and rs is not None and not self.late_call_sent:
            self.late_call_sent = True
            first = next(k for k in rs.keys if k != self.me.public_key)
            super()._send(Nerts(), to=first)


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_a_call_signed_after_its_audit_judges_the_round_alike_everywhere(seed: int) -> None:
    """The audit checks the calls a seat signed before its AUDIT, as its stuck votes:
    every peer holds exactly those when it counts the audit, whatever came after."""
    net = bot_table(4, seed=seed, classes={OFFENDER: CallsAfterItsAudit})
    _run_round_1(net)
    over = _honest_overs(net, 1)[0]  # no divergence, one result on every honest peer
    late = net.replicas[OFFENDER]
    assert isinstance(late, CallsAfterItsAudit) and late.late_call_sent
    bad = _seat(net, OFFENDER)
    assert over.verdicts[bad] == ""  # its round, as audited, stands
