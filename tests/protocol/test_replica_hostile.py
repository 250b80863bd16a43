"""Cheaters are caught by the audit; garbage from the wire changes nothing."""

from __future__ import annotations

import copy
import random
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2p_nerts.game.cards import full_deck, make_card
from p2p_nerts.game.moves import foundation_target
from p2p_nerts.game.tableau import NERTS, OP_NERTS, Tableau
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import (
    LINK_MAGIC,
    MAGIC,
    open_entry,
    open_link_entry,
    seal,
    seal_link,
)
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import Kind, Record
from p2p_nerts.protocol.messages import (
    MAX_COUNTDOWN_MS,
    MIN_DROP_AFTER_MS,
    Fork,
    MsgType,
    Nerts,
    Payload,
    Reveal,
    Roster,
    Seat,
    Settings,
    Summary,
    parse_payload,
)
from p2p_nerts.protocol.replica import (
    DROP_AFTER,
    Command,
    Move,
    Open,
    Outbound,
    Replica,
    StartRound,
)
from p2p_nerts.testing.memnet import TABLE_ID, bot_table, identities

from ..gamekit import ENGINE_COMPILED
from ..replica_harness import play_round, quiet_deal, round_overs


class CardThief(Replica):
    """Plays a stock card to a foundation as if it were its Nerts top."""

    stolen = 0

    def handle(self, command: Command, now: float) -> Outbound:
        if not isinstance(command, Move):
            return super().handle(command, now)
        target = command.target
        rs = self.rs
        if self.stolen < 2 and rs is not None and rs.tab is not None:
            tab = rs.tab
            for card in list(tab.stock):
                tab.stock.remove(card)
                tab.nerts.append(card)
                steal = foundation_target(tab, NERTS, rs.log)
                if steal is not None:
                    self.stolen += 1
                    return super().handle(Move(steal), now)
                tab.nerts.pop()
                tab.stock.append(card)
        return super().handle(Move(target), now)


class DeckStacker(Replica):
    """Deals itself every ace on top of its Nerts pile instead of its shuffled deck
    (stacked once dealt, before the call that dealt it returns)."""

    def _flush(self) -> Outbound:
        rs = self.rs
        if rs is not None and rs.tab is not None and rs.me is not None and not rs.tab.log:
            deck = full_deck(rs.me)
            aces = [c for c in deck if c & 15 == 1]
            rest = [c for c in deck if c & 15 != 1]
            rs.tab = Tableau(rs.me, rest[:9] + aces + rest[9:])
        return super()._flush()


class EarlyCaller(Replica):
    """Calls Nerts with ten cards still in its Nerts pile (soon enough to beat
    honest bots to the call, whatever the seats' order)."""

    def handle(self, command: Command, now: float) -> Outbound:
        if not isinstance(command, Move):
            return super().handle(command, now)
        target = command.target
        rs = self.rs
        if rs is not None and rs.tab is not None and len(rs.tab.nerts) <= 10 and not rs.i_called:
            self.now = now
            lamport = self.clock.time + 1
            rs.tab.log.append((OP_NERTS, lamport))
            rs.i_called = True
            self._send(Nerts(), expect_lamport=lamport)
            return self._flush()
        return super().handle(Move(target), now)


@pytest.mark.parametrize(
    ("cheat", "words"),
    [(CardThief, "not playable"), (DeckStacker, "impossible move"),
     (EarlyCaller, "Nerts")],
)
def test_cheater_is_flagged_by_every_honest_replica(cheat: type[Replica], words: str) -> None:
    net = bot_table(4, seed=21, classes={2: cheat})
    number = play_round(net)
    cheater = net.replicas[2].view().my_seat
    assert cheater is not None
    overs = round_overs(net, number)
    for i, over in enumerate(overs):
        if i == 2:
            continue
        assert words in over.verdicts[cheater], over.verdicts
        assert over.results[cheater].void
        flagged = [e for e in net.events[i] if isinstance(e, ev.Flagged)]
        assert [e.seat for e in flagged] == [cheater]
        honest_seats = {net.replicas[j].view().my_seat for j in (0, 1, 3)}
        assert all(over.verdicts[s] == "" for s in honest_seats if s is not None)
    assert len({o.foundation_hash for i, o in enumerate(overs) if i != 2}) == 1


class ShareLiar(Replica):
    """Reveals another joint share than the one it committed to (to steer the deal)."""

    def _send(self, payload: Payload, **kw: Any) -> None:
        super()._send(Reveal(b"x" * 32) if isinstance(payload, Reveal) else payload, **kw)


def test_a_share_revealed_against_its_commitment_is_flagged_and_refused_everywhere() -> None:
    net = bot_table(3, seed=5, classes={2: ShareLiar})
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    honest = net.replicas[:2]
    liar = net.replicas[2].me.public_key

    def flagged(r: Replica) -> bool:
        rs = r.rs
        seat = rs.seat_of(liar) if rs is not None else None
        return rs is not None and seat is not None and rs.flagged.get(seat) == (
            "revealed a share it had not committed to")

    assert net.run(lambda: all(flagged(r) for r in honest), limit=60)
    assert all(r.rejected["bad_reveal"] >= 1 for r in honest)
    for r in honest:
        rs = r.rs
        assert rs is not None and rs.seat_of(liar) not in rs.reveals  # the lie counts for nothing


class BoastfulSummary(Replica):
    """Reports five more points for itself than it scored."""

    def _send(self, payload: Payload, *, round_no: int | None = None, to: bytes | None = None,
              expect_lamport: int | None = None) -> None:
        if isinstance(payload, Summary) and self.rs is not None and self.rs.me is not None:
            scores = list(payload.scores)
            scores[self.rs.me] += 5
            payload = Summary(payload.digest, tuple(scores))
        super()._send(payload, round_no=round_no, to=to, expect_lamport=expect_lamport)


def test_a_lying_summary_is_named_by_every_honest_peer_and_changes_no_score() -> None:
    net = bot_table(4, seed=22, classes={1: BoastfulSummary})
    number = play_round(net)
    liar = net.replicas[1].view().my_seat
    overs = round_overs(net, number)
    for i, events in enumerate(net.events):
        diverged = [e for e in events if isinstance(e, ev.Divergence)]
        if i != 1:
            assert [e.seats for e in diverged] == [(liar,)]
            assert not any(isinstance(e, ev.RoundAgreed) for e in events)
    # Everyone, the liar too, counts the same scores: its boast counts nowhere.
    assert len({(o.results, o.totals) for o in overs}) == 1
    assert all(r.totals == net.replicas[0].totals for r in net.replicas)


def test_honest_replicas_are_never_flagged_over_many_rounds() -> None:
    net = bot_table(5, seed=99)
    for _ in range(3):
        number = play_round(net)
        assert all(v == "" for o in round_overs(net, number) for v in o.verdicts)
    assert not any(isinstance(e, ev.Flagged) for events in net.events for e in events)


# ------------------------------------------------------------------ fuzzing
def _snapshot(r: Replica) -> tuple[object, ...]:
    """Everything a message could wrongly change."""
    rs = r.rs
    game: tuple[object, ...] = ()
    if rs is not None:
        tab = rs.tab
        game = (rs.number, rs.log.state_hash(), len(rs.log), rs.end, tuple(rs.live),
                tuple(rs.stuck), len(rs.audits), len(rs.summaries), len(rs.commits),
                None if tab is None else (tuple(tab.nerts), tuple(map(tuple, tab.work)),
                                          tuple(tab.stock), tuple(tab.waste), len(tab.log)))
    return (r.phase, r.view().seats, r.seating.variants, game)


def _sequence_state(r: Replica) -> tuple[object, ...]:
    return (r.view().seq,
            tuple(sorted((k, a.delivered, len(a.held)) for k, a in r.authors.items())),
            r.clock.time)


@pytest.fixture(scope="module")
def mid_round() -> tuple[Replica, list[bytes]]:
    """A replica in the middle of a round, and real frames from that table."""
    net = bot_table(3, seed=8)
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 10, limit=600)
    frames = [raw for a in host.authors.values() for raw in a.entries.values()]
    frames += [out.data for out in host.tick(net.now + 1).sends]  # ephemeral ones too
    return net.replicas[1], frames


@settings(max_examples=300, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_frames_and_random_bytes_change_nothing(
        mid_round: tuple[Replica, list[bytes]], data: st.DataObject) -> None:
    replica, frames = mid_round
    frame = bytearray(data.draw(st.sampled_from(frames)))
    kind = data.draw(st.sampled_from(["flip", "insert", "delete", "truncate", "random"]))
    if kind == "random":
        raw = data.draw(st.binary(max_size=400))
    else:
        pos = data.draw(st.integers(0, len(frame) - 1))
        if kind == "flip":
            frame[pos] ^= 1 << data.draw(st.integers(0, 7))
        elif kind == "insert":
            frame[pos:pos] = data.draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del frame[pos:pos + data.draw(st.integers(1, 8))]
        else:
            del frame[pos:]
        raw = bytes(frame)
    before, seqs = _snapshot(replica), _sequence_state(replica)
    out = replica.receive(raw, 10_000.0)
    assert _snapshot(replica) == before
    assert _sequence_state(replica) == seqs
    assert not out.sends
    assert [type(e) for e in out.events] == [ev.Rejected]
    assert not any(k.startswith("internal_error") for k in replica.rejected)


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.binary(max_size=40)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=4),
    max_leaves=12,
)


@pytest.mark.sweep
@settings(max_examples=300, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(msg_type=st.sampled_from([int(t) for t in MsgType] + [0, 99, 255]),
       payload=st.dictionaries(st.text(max_size=3), _values, max_size=6),
       outsider=st.booleans(), seq=st.integers(1, 5), round_no=st.integers(0, 3))
def test_signed_garbage_is_rejected_without_crash(
        mid_round: tuple[Replica, list[bytes]], msg_type: int, payload: dict[str, object],
        outsider: bool, seq: int, round_no: int) -> None:
    """Correctly signed entries with nonsense inside: refused, and the game is untouched."""
    replica, _frames = mid_round
    author = (Identity.from_seed(b"\x77" * 32, "mallory") if outsider
              else identities(3)[2])
    try:
        entry = seal(author, table_id=TABLE_ID, round=round_no, seq=10_000 + seq,
                     lamport=50_000, type=msg_type, payload=payload)
    except Exception:  # noqa: BLE001 - not even sealable: nothing to send
        return
    before = _snapshot(replica)
    replica.receive(entry.raw, 10_000.0)
    assert _snapshot(replica) == before
    assert not any(k.startswith("internal_error") for k in replica.rejected)


def test_oversized_and_foreign_table_frames_are_rejected() -> None:
    ids = identities(2)
    r = Replica(ids[1], TABLE_ID, ids[0].public_key)
    r.handle(Open(), 0.0)
    assert r.receive(b"\x00" * 70_000, 1.0).events == [ev.Rejected("too_large")]
    other = seal(ids[0], table_id=b"X" * 16, round=0, seq=1, lamport=1,
                 type=int(MsgType.HELLO), payload={"n": "p0", "v": 1})
    assert r.receive(other.raw, 1.0).events == [ev.Rejected("wrong_table")]
    assert r.rejected == {"too_large": 1, "wrong_table": 1}


@pytest.mark.parametrize(("key", "value", "attr"), [
    ("cd", MAX_COUNTDOWN_MS + 1, "countdown_ms"),
    ("cd", 2.5, "countdown_ms"),
    ("da", MIN_DROP_AFTER_MS - 1, "drop_after_ms"),
    ("da", None, "drop_after_ms"),
])
def test_the_hosts_settings_with_clocks_out_of_range_change_nothing(
        key: str, value: object, attr: str) -> None:
    """Signed by the host itself, and still refused by the schema; in range, it is taken."""
    ids = identities(2)
    guest = Replica(ids[1], TABLE_ID, ids[0].public_key, countdown=0.0)
    guest.handle(Open(), 0.0)

    def settings(**changes: object) -> bytes:
        return seal(ids[0], table_id=TABLE_ID, round=0, seq=1, lamport=1,
                    type=int(MsgType.SETTINGS), payload=Settings().to_wire() | changes).raw

    out = guest.receive(settings(**{key: value}), 1.0)
    assert out.events == [ev.Rejected(f"bad_field:{attr}")]
    table = guest.seating
    assert (table.countdown, table.drop_after, table.variants) == (0.0, DROP_AFTER, Variants())
    guest.receive(settings(cd=2500, da=700), 2.0)
    assert (table.countdown, table.drop_after) == (2.5, 0.7)


def test_a_round_dealt_to_a_table_the_rules_do_not_allow_is_refused() -> None:
    """The host checks the player count before it deals; a guest checks it again."""
    ids = identities(2)
    guest = Replica(ids[1], TABLE_ID, ids[0].public_key, countdown=0.0)
    guest.handle(Open(), 0.0)
    alone = Roster((Seat(ids[1].public_key, ids[1].name),))
    deal = seal(ids[0], table_id=TABLE_ID, round=1, seq=1, lamport=1,
                type=int(MsgType.ROSTER), payload=alone.to_wire()).raw
    out = guest.receive(deal, 1.0)
    assert out.events == [ev.Rejected("bad_field:roster")]
    assert guest.rs is None and guest.view().seats == ()


def test_equivocation_is_proof_of_misbehaviour() -> None:
    net = bot_table(3, seed=4)
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: all(r.view().can_move() for r in net.replicas), limit=60)
    liar = identities(3)[2]
    mine = net.replicas[2]
    seq = mine.view().seq
    log = mine.authors[liar.public_key]
    prev = log.id_at(seq - 1)
    assert prev is not None
    twin = seal(liar, table_id=TABLE_ID, round=1, seq=seq, lamport=mine.clock.time + 5,
                type=int(MsgType.STUCK), payload={"o": True, "m": 0}, prev=prev)
    out = host.receive(twin.raw, net.now)
    assert ev.Rejected("equivocation") in out.events
    # The proof goes to every peer as the host's own entry, both frames in it;
    # the seat is flagged where that entry comes in the total order.
    forks = [parse_payload(e.type, e.payload) for e in
             (open_entry(s.data) for s in out.sends if s.data[:2] == MAGIC)
             if e.type == MsgType.FORK]
    assert forks == [Fork(log.entries[seq], twin.raw)]


def test_random_payload_packing_roundtrip_guard() -> None:
    """The fuzz strategy really produces packable maps (so the test above is not vacuous)."""
    rng = random.Random(0)
    blob = msgpack.packb({"a": [1, b"x", None], "b": rng.random()}, use_bin_type=True)
    assert msgpack.unpackb(blob, raw=False)["a"][1] == b"x"


@pytest.mark.skipif(ENGINE_COMPILED, reason="deep-copies a replica, whose tableau a compiled "
                    "engine cannot copy (the pure tier runs it)")
def test_an_entry_dated_before_its_authors_own_ack_is_refused_and_named() -> None:
    """A cheater dating a play back (to win a collision) is caught by its own ACK.

    The ACK said how far its clock was; a later entry dated at or before that
    is refused (it changes nothing) and its author is flagged. Without that
    ACK the same entry is taken: the date alone proves nothing.
    """
    net = quiet_deal(3, seed=6)
    host, a = net.replicas[:2]
    a_id, a_key = identities(3)[1], identities(3)[1].public_key
    now = net.now + 1
    ack = next(s.data for s in a.tick(now).sends if s.data[:2] == LINK_MAGIC)
    rs, a_log = host.rs, host.authors[a_key]
    assert rs is not None and a_log.delivered == a.view().seq
    seat = rs.seat_of(a_key)
    assert seat is not None
    assert a_log.lamport < a.clock.time, "the ack must say more than a's last entry did"
    back_dated = seal(a_id, table_id=TABLE_ID, round=rs.number, seq=a.view().seq + 1,
                      lamport=a.clock.time, type=int(MsgType.PLAY),
                      payload={"c": make_card(seat, 0, 13), "p": make_card(seat, 0, 1),
                               "s": NERTS, "d": 0, "m": 0}, prev=a_log.head)
    unaware = copy.deepcopy(host)
    out = host.receive(ack, now, via=a_key)
    assert not any(isinstance(e, ev.Rejected) for e in out.events)
    before = _snapshot(host)
    events = host.receive(back_dated.raw, now).events
    assert ev.Rejected("back_dated") in events
    assert ev.Flagged(seat, "p1", "dated an entry before its own acknowledgement") in events
    assert _snapshot(host) == before and a_log.delivered == a.view().seq
    taken = unaware.receive(back_dated.raw, now).events
    assert not any(isinstance(e, ev.Rejected | ev.Flagged) for e in taken)
    assert any(isinstance(e, ev.PlayAdded) for e in taken)


def test_unsigned_entries_count_only_from_their_author_on_its_own_link() -> None:
    """An ACK or VIEW travels unsigned, vouched for by the link it comes on: the
    replica takes one only from its author's own link, never relayed, never
    without a link, and never for a type that is forwarded or sequenced."""
    net = bot_table(3, seed=6)
    host, a = net.replicas[0], net.replicas[1]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: all(r.view().can_move() for r in net.replicas), limit=60)
    a_key, b_key = identities(3)[1].public_key, identities(3)[2].public_key
    now = net.now + 2  # a's heartbeat is due (at play, a quarter of drop_after at most)
    ack = next(s.data for s in a.tick(now).sends if s.data[:2] == LINK_MAGIC
               and open_link_entry(s.data, a_key).type == MsgType.ACK)
    assert host.receive(ack, now).events == [ev.Rejected("unlinked")]
    assert host.receive(ack, now, via=b_key).events == [ev.Rejected("author_mismatch")]
    out = host.receive(ack, now, via=a_key)
    assert not any(isinstance(e, ev.Rejected) for e in out.events)
    # Finality depends on acks: the journal keeps this one, with its link.
    assert Record(Kind.LINK, a_key + ack) in out.journal
    rs = host.rs
    assert rs is not None
    play = seal_link(a_key, table_id=TABLE_ID, round=rs.number, seq=a.view().seq + 1,
                     lamport=a.clock.time + 1, type=int(MsgType.PLAY),
                     payload={"c": 64 + 1, "p": 64 + 1, "s": 0, "d": 0, "m": 0})
    before = _snapshot(host)
    assert host.receive(play, now, via=a_key).events == [ev.Rejected("unsigned_type")]
    assert _snapshot(host) == before
