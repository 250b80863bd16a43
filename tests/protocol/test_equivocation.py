"""A seat that signs two entries under one number is caught, and treated alike everywhere.

The rule under test (docs/PROTOCOL.md, "Chains and proofs"): every entry the
equivocator signed from the forked number on is void on every peer; what it
signed before counts; it leaves the round where the first FORK comes in the
total order, flagged "equivocation" with the two frames as proof; its round
scores the forfeit (the worst honest round); the honest seats score what the agreed log gives them.
"""

from __future__ import annotations

import random

import pytest

from p2p_nerts.game.foundations import Fate
from p2p_nerts.game.scoring import forfeit_score
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import MAGIC, open_entry, seal
from p2p_nerts.protocol.messages import Ack, AckMark, MsgType, Resend, link_message, parse_payload
from p2p_nerts.protocol.proof import check_fork
from p2p_nerts.protocol.replica import (
    Command,
    Move,
    Open,
    Outbound,
    Phase,
    Replica,
    Send,
    StartRound,
    VoteStuck,
)
from p2p_nerts.testing.memnet import TABLE_ID, Faults, MemNet, bot_table

from ..replica_harness import play_round, quiet_deal, round_overs, vote_anywhere


class Equivocator(Replica):
    """On its third foundation play, sends one PLAY to the first half of the other
    seats and a different one (same number, same predecessor, one tick later)
    to the rest. Otherwise it plays like anyone."""

    plays = 0
    forked_seq = 0

    def handle(self, command: Command, now: float) -> Outbound:
        if not isinstance(command, Move):
            return super().handle(command, now)
        target = command.target
        out = super().handle(Move(target), now)
        rs = self.rs
        if target.pile is None or rs is None or self.forked_seq:
            return out
        self.plays += 1
        frames = [s for s in out.sends if s.to is None and s.data[:2] == MAGIC
                  and open_entry(s.data).type == MsgType.PLAY]
        if self.plays < 3 or not frames:
            return out
        play = open_entry(frames[0].data)
        twin = seal(self.me, table_id=TABLE_ID, round=play.round, seq=play.seq,
                    lamport=play.lamport + 1, type=play.type, payload=play.payload,
                    prev=play.prev)
        others = [k for k in rs.keys if k != self.me.public_key]
        half = len(others) // 2
        out.sends.remove(frames[0])
        out.sends += [Send(play.raw, k) for k in others[:half]]
        out.sends += [Send(twin.raw, k) for k in others[half:]]
        self.forked_seq = play.seq
        return out


def _liar_table(n: int, seed: int, liar: int) -> MemNet:
    return bot_table(n, seed=seed, classes={liar: Equivocator})


def _check_equivocation_round(net: MemNet, number: int, liar: int) -> None:
    cheat = net.replicas[liar]
    assert isinstance(cheat, Equivocator) and cheat.forked_seq, "the liar never forked"
    seat = cheat.view().my_seat
    assert seat is not None
    honest = [i for i in range(len(net.replicas)) if i != liar]
    overs = round_overs(net, number)
    first = overs[honest[0]]
    for i in honest:
        o = overs[i]
        assert (o.foundation_hash, o.results, o.totals, o.verdicts) == (
            first.foundation_hash, first.results, first.totals, first.verdicts)
        assert not any(isinstance(e, ev.Divergence) for e in net.events[i])
        flags = [e for e in net.events[i] if isinstance(e, ev.Flagged)]
        assert [f.seat for f in flags] == [seat], flags
        a, b = flags[0].proof
        proof = check_fork(a, b, TABLE_ID)  # checkable by anyone, from the event alone
        assert proof.author == cheat.me.public_key and proof.seq == cheat.forked_seq
        assert flags[0].reason == f"equivocation: signed two entries numbered {proof.seq}"
    assert first.verdicts[seat] == "equivocation" and first.results[seat].void
    assert all(first.verdicts[net.replicas[i].view().my_seat or 0] == "" for i in honest)
    # Nothing it signed from the fork on stayed in the agreed log; and each
    # honest seat's tableau agrees with that log, card for card.
    for i in honest:
        rs = net.replicas[i].rs
        assert rs is not None and rs.number == number and rs.tab is not None
        assert all(s < cheat.forked_seq for k, s in rs.play_seq.items() if k[1] == seat)
        assert not rs.tab.in_flight
        assert rs.log.cards_of(rs.me or 0) == first.results[rs.me or 0].foundation_cards
    # The totals are the honest scores, and the forfeit for the liar.
    assert first.results[seat].score == forfeit_score(Variants())
    assert first.totals[seat] == first.results[seat].score
    for i in honest:
        me = net.replicas[i].view().my_seat or 0
        assert first.totals[me] == first.results[me].score
    # A play's fate is the same wherever it is told (a play cut by the round's
    # end may be told by its owner alone, before the others close the round).
    fates = [{e.play.key: e.fate for e in net.events[i]
              if isinstance(e, ev.PlayFinal) and e.round == number} for i in honest]
    for f in fates[1:]:
        assert all(f[k] == fates[0][k] for k in f.keys() & fates[0].keys())
    assert Fate.STAY in fates[0].values()


@pytest.mark.parametrize(("n", "seed", "liar"), [(3, 31, 1), (4, 32, 2), (5, 33, 0)])
def test_an_equivocating_seat_is_flagged_with_proof_and_every_honest_peer_agrees(
        n: int, seed: int, liar: int) -> None:
    net = _liar_table(n, seed, liar)
    if liar == 0:
        # The host lies: the round still ends alike for the others.
        host = net.replicas[0]
        net.output(0, host.handle(StartRound(), net.now))
        honest = range(1, n)
        assert net.run(lambda: all(net.replicas[i].phase in (Phase.BETWEEN, Phase.OVER)
                                   for i in honest), limit=net.now + 1800)
        number = 1
        overs = {i: next(e for e in net.events[i] if isinstance(e, ev.RoundOver))
                 for i in honest}
        assert len({(o.foundation_hash, o.results) for o in overs.values()}) == 1
        seat = net.replicas[0].view().my_seat or 0
        assert all(o.verdicts[seat] == "equivocation" for o in overs.values())
        return
    number = play_round(net)
    _check_equivocation_round(net, number, liar)


def test_the_equivocator_is_not_seated_again_and_the_table_plays_on() -> None:
    net = _liar_table(4, 34, 3)
    number = play_round(net)
    _check_equivocation_round(net, number, 3)
    liar_key = net.replicas[3].me.public_key
    host = net.replicas[0]
    assert liar_key not in {s.key for s in host.view().seats}
    assert host.view().equivocators[liar_key].author == liar_key  # with its proof
    # It asks back; the host refuses it, and the next round is the honest three's.
    net.output(3, net.replicas[3].handle(Open(), net.now))
    assert net.run(lambda: any(isinstance(e, ev.Refused) for e in net.events[3]),
                   limit=net.now + 60)
    net.down.add(3)  # it goes home
    net.drivers.pop(3)
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: all(r.rs is not None and r.rs.number == number + 1
                               and r.phase in (Phase.BETWEEN, Phase.OVER)
                               for r in net.replicas[:3]), limit=net.now + 1800)
    overs = [next(e for e in net.events[i] if isinstance(e, ev.RoundOver)
                  and e.round == number + 1) for i in range(3)]
    assert len({(o.foundation_hash, o.results, o.totals) for o in overs}) == 1
    assert len(overs[0].results) == 3 and all(v == "" for v in overs[0].verdicts)


@pytest.mark.parametrize("seed", range(40, 46))
def test_any_arrival_order_gives_the_same_verdict(seed: int) -> None:
    """Lossy, reordering, duplicating networks: whichever half sees which PLAY
    first, and whoever finds the proof, the honest peers end alike."""
    rng = random.Random(seed)
    n = rng.choice([3, 4, 5])
    faults = Faults(max_delay=rng.choice([0.01, 0.05, 0.2]), duplicate=rng.choice([0, 0.05]),
                    drop=rng.choice([0, 0.02]))
    liar = rng.randrange(1, n)
    net = bot_table(n, seed=seed, faults=faults, classes={liar: Equivocator})
    number = play_round(net)
    _check_equivocation_round(net, number, liar)


def test_an_equivocator_that_keeps_signing_cannot_stall_the_round() -> None:
    """Once caught it asks for its seat again and again (a real client's node does):
    entries on a branch of its chain that half the table cannot follow. Finality
    waits on it no more, and the round ends alike for the honest peers."""
    net = bot_table(4, seed=34, faults=Faults(max_delay=0.2), classes={3: Equivocator})
    liar = net.replicas[3]
    host = net.replicas[0]
    asked = [0.0]

    def nagging() -> bool:
        rs = liar.rs
        if (isinstance(liar, Equivocator) and liar.forked_seq and rs is not None
                and net.now - asked[0] >= 0.2):
            asked[0] = net.now
            net.output(3, liar.handle(Open(), net.now))
        return all(r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas[:3])

    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(nagging, limit=net.now + 1800)
    overs = [next(e for e in net.events[i] if isinstance(e, ev.RoundOver)) for i in range(3)]
    assert len({(o.foundation_hash, o.results, o.totals) for o in overs}) == 1
    assert overs[0].verdicts[liar.view().my_seat or 0] == "equivocation"
    assert sum(r.rejected["broken_chain"] for r in net.replicas[:3]) > 0  # it did nag


def test_a_mark_counts_only_if_it_names_the_entry_we_hold(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A seat's ACK says it holds an author's entry under a number, and names it by
    its signature. Naming another entry than ours (it holds the other side of a
    fork), it counts for nothing towards finality, and we ask that seat for its
    entry (the second signed entry under one number is the proof); naming ours,
    it counts."""
    vote_anywhere(monkeypatch)  # an entry of the author's: a stuck vote at a fresh deal
    net = quiet_deal(3, seed=5)
    me, peer, author = net.replicas
    rs = me.rs
    assert rs is not None
    seat, of = rs.seat_of(peer.me.public_key), rs.seat_of(author.me.public_key)
    assert seat is not None and of is not None
    signed = author.handle(VoteStuck(True), net.now)  # reaches me only
    for send in signed.sends:
        me.receive(send.data, net.now, via=author.me.public_key)
    log, theirs = me.authors[author.me.public_key], me.authors[peer.me.public_key]
    held = rs.marks.get(seat, {}).get(of, 0)
    assert log.delivered > held

    def ack(head: bytes) -> bytes:
        return link_message(peer.me.public_key,
                            Ack((AckMark(author.me.public_key, log.delivered, head),)),
                            table_id=TABLE_ID, round=rs.number, seq=theirs.delivered,
                            lamport=theirs.lamport, prev=theirs.head)

    out = me.receive(ack(b"\x55" * 64), net.now + 0.5, via=peer.me.public_key)
    assert rs.marks.get(seat, {}).get(of, 0) == held  # another entry than ours
    asked = [parse_payload(e.type, e.payload) for e in
             (open_entry(s.data) for s in out.sends if s.data[:len(MAGIC)] == MAGIC)
             if e.type == MsgType.RESEND]
    assert Resend(author.me.public_key, log.delivered, log.delivered) in asked
    me.receive(ack(log.head), net.now + 0.6, via=peer.me.public_key)
    assert rs.marks[seat][of] == log.delivered  # ours: it counts
