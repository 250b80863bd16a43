"""The outbox on its own: my entries numbered, dated and chained as I sign them,
and what becomes of each as it is signed (no network, no replica)."""

from __future__ import annotations

from typing import cast

import pytest

from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.clock import LamportClock
from p2p_nerts.protocol.envelope import GENESIS, LINK_MAGIC, open_entry, open_link_entry
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import Kind, Record
from p2p_nerts.protocol.messages import (
    Ack,
    Head,
    Hello,
    Join,
    MsgType,
    Ready,
    Seat,
    Stuck,
    parse_payload,
)
from p2p_nerts.protocol.proof import ForkProof
from p2p_nerts.protocol.replica._base import Outbound, Send
from p2p_nerts.protocol.replica._outbox import Outbox, Signing, deferred_round, signing
from p2p_nerts.protocol.replica._recovery import Recovery
from p2p_nerts.protocol.replica._rounds import new_round
from p2p_nerts.protocol.replica._state import RoundState
from p2p_nerts.protocol.resume import Deferred, Resume

pytestmark = pytest.mark.fast

ME = Identity.from_seed(b"\x04" * 32, "me")
TABLE = b"t" * 16


def test_each_entry_takes_the_next_number_and_a_later_time() -> None:
    box = Outbox(ME, TABLE, LamportClock())
    first = box.sequenced(Ready(True), 0, GENESIS)
    second = box.sequenced(Ready(False), 0, first.signature)
    assert (first.seq, second.seq, box.seq) == (1, 2, 2)
    assert first.lamport < second.lamport == box.clock.time
    assert second.prev == first.signature  # the chain: each names the one before
    assert open_entry(second.raw).author == ME.public_key


def test_a_local_play_keyed_at_another_time_is_never_signed() -> None:
    box = Outbox(ME, TABLE, LamportClock())
    with pytest.raises(AssertionError):
        box.sequenced(Ready(True), 1, GENESIS, expect_lamport=5)


def test_an_ephemeral_entry_carries_my_latest_number_and_head() -> None:
    clock = LamportClock()
    box = Outbox(ME, TABLE, clock)
    mine = AuthorLog(ME.public_key)
    entry = box.sequenced(Ready(True), 0, GENESIS)
    mine.offer(entry)
    mine.mark_delivered(entry)
    clock.observe(40)
    raw = box.ephemeral(Hello("me", 1), 2, mine)
    hello = open_entry(raw)
    assert (hello.seq, hello.prev, hello.round) == (1, entry.signature, 2)
    assert hello.lamport == clock.time and box.seq == 1  # it takes no number
    link = box.ephemeral(Ack(()), 2, mine)
    assert link[:len(LINK_MAGIC)] == LINK_MAGIC  # unsigned: the link says who sent it
    ack = open_link_entry(link, ME.public_key)
    assert parse_payload(ack.type, ack.payload) == Ack(())
    before = box.ephemeral(Hello("me", 1), 0, None)  # nothing signed yet
    assert (open_entry(before).seq, open_entry(before).prev) == (1, GENESIS)


def test_an_entry_of_mine_delivered_from_elsewhere_moves_my_number_and_clock_on() -> None:
    box = Outbox(ME, TABLE, LamportClock())
    old = Outbox(ME, TABLE, LamportClock())
    for _ in range(3):
        entry = old.sequenced(Ready(True), 0, GENESIS)
    box.took(entry)
    assert (box.seq, box.clock.time) == (3, entry.lamport)
    assert box.sequenced(Ready(False), 0, entry.signature).seq == 4


def test_chains_taken_up_from_a_snapshot_move_my_number_and_clock_past_their_heads() -> None:
    box, other = Outbox(ME, TABLE, LamportClock()), b"\x06" * 32
    mine = AuthorLog(ME.public_key)
    mine.take_up(5, 20, b"i" * 64)
    heads = (Head(ME.public_key, 5, 20, b"i" * 64), Head(other, 9, 70, b"j" * 64))
    box.caught_up(mine, heads, {ME.public_key})  # the other's time is not to go by
    assert (box.seq, box.clock.time) == (5, 20)
    box.caught_up(None, heads, {ME.public_key, other})
    assert (box.seq, box.clock.time) == (5, 70)  # never back


def _seated_round(me: Identity) -> RoundState:
    other = Identity.from_seed(b"\x06" * 32, "other")
    return new_round(2, (Seat(me.public_key, "me"), Seat(other.public_key, "other")),
                     me.public_key, Variants(), 0.0)


def test_an_entry_is_signed_at_once_when_nothing_stands_in_its_way() -> None:
    rs = _seated_round(ME)
    assert signing(MsgType.PLAY, rs, resuming=False, restoring=False) is Signing.SIGN
    assert signing(MsgType.READY, None, resuming=False, restoring=False) is Signing.SIGN


@pytest.mark.parametrize("out", ["dropped", "dropping", "forked", "no seat"])
def test_a_round_entry_of_a_seat_out_of_its_round_is_signed_nowhere(out: str) -> None:
    rs = _seated_round(ME)
    if out == "dropped":
        rs.live.discard(0)
    elif out == "dropping":
        rs.dropping[0] = 1
    elif out == "forked":
        rs.forks[0] = cast(ForkProof, object())
    else:
        stranger = Identity.from_seed(b"\x07" * 32, "x")
        rs = new_round(2, (Seat(stranger.public_key, "x"),), ME.public_key, Variants(), 0.0)
    assert signing(MsgType.STUCK, rs, resuming=False, restoring=False) is Signing.NOTHING
    # What is not a round's entry still goes out: the seat says goodbye, acks.
    assert signing(MsgType.GOODBYE, rs, resuming=False, restoring=False) is Signing.SIGN
    assert signing(MsgType.ACK, rs, resuming=True, restoring=False) is Signing.SIGN


def test_back_at_a_table_only_ephemeral_entries_go_out_until_the_chain_end_is_known() -> None:
    rs = _seated_round(ME)
    assert signing(MsgType.PLAY, rs, resuming=True, restoring=False) is Signing.DEFER
    assert signing(MsgType.JOIN, None, resuming=True, restoring=False) is Signing.DEFER
    assert signing(MsgType.HELLO, None, resuming=True, restoring=False) is Signing.SIGN
    # Replaying the journal, what was signed before is delivered again instead.
    assert signing(MsgType.PLAY, rs, resuming=True, restoring=True) is Signing.REPLAY
    assert signing(MsgType.ACK, rs, resuming=False, restoring=True) is Signing.REPLAY


def test_an_entry_put_off_keeps_the_round_it_was_made_in() -> None:
    rs = _seated_round(ME)
    assert deferred_round(MsgType.STUCK, None, rs) == 2
    assert deferred_round(MsgType.ROSTER, None, rs) == 2
    assert deferred_round(MsgType.STUCK, 5, rs) == 5
    assert deferred_round(MsgType.JOIN, None, rs) is None
    assert deferred_round(MsgType.STUCK, None, None) is None


def test_signed_a_sequenced_entry_is_journaled_queued_and_mine_to_deliver() -> None:
    box, out, back = Outbox(ME, TABLE, LamportClock()), Outbound(), Recovery()
    signed = box.sign(out, Ready(True), None, None, back, to=b"k" * 32)
    assert signed is not None
    entry, payload = signed
    assert payload == Ready(True) and (entry.seq, entry.prev, entry.round) == (1, GENESIS, 0)
    assert out.journal == [Record(Kind.ENTRY, entry.raw)]  # written before it goes out
    assert out.sends == [Send(entry.raw, b"k" * 32)]
    mine = AuthorLog(ME.public_key)
    mine.offer(entry)
    mine.mark_delivered(entry)
    again = box.sign(out, Ready(False), _seated_round(ME), mine, back)
    assert again is not None and (again[0].seq, again[0].prev, again[0].round) == (
        2, entry.signature, 2)  # the chain, in the round under way


def test_signed_an_ephemeral_entry_is_only_queued() -> None:
    box, out = Outbox(ME, TABLE, LamportClock()), Outbound()
    besides = frozenset({b"b" * 32})
    assert box.sign(out, Ack(()), None, None, Recovery(), besides=besides) is None
    assert out.journal == [] and box.seq == 0
    (send,) = out.sends
    assert send.besides == besides and not send.shown
    assert parse_payload(MsgType.ACK, open_link_entry(send.data, ME.public_key).payload) == Ack(())


def test_back_at_a_table_a_sequenced_entry_waits_for_the_resume() -> None:
    box, out, back = Outbox(ME, TABLE, LamportClock()), Outbound(), Recovery()
    back.resume = Resume({b"h" * 32}, 0.0, 0)
    rs = _seated_round(ME)
    assert box.sign(out, Stuck(True, 0), rs, None, back, to=b"k" * 32) is None
    assert back.resume.deferred == [Deferred(Stuck(True, 0), 2, b"k" * 32)]
    assert box.sign(out, Hello("me", 1), rs, None, back) is None  # ephemeral: it goes
    assert (len(out.sends), out.journal, box.seq) == (1, [], 0)


def test_restoring_my_journaled_entry_is_delivered_where_live_play_signed_it() -> None:
    old = Outbox(ME, TABLE, LamportClock())
    first = old.sequenced(Ready(True), 0, GENESIS)
    box, out, back = Outbox(ME, TABLE, LamportClock()), Outbound(), Recovery()
    back.load([Record(Kind.ENTRY, first.raw)], ME.public_key)
    assert box.sign(out, Join("me", None), None, None, back) is None  # not what was signed
    replayed = box.sign(out, Ready(False), None, None, back)  # its payload: the journal's
    assert replayed is not None and replayed == (first, Ready(True))
    assert box.sign(out, Ack(()), None, None, back) is None  # nothing ephemeral is replayed
    assert (out.sends, out.journal, box.seq) == ([], [], 0)  # nothing signed anew


def test_an_entry_for_a_round_i_am_out_of_is_nowhere() -> None:
    box, out = Outbox(ME, TABLE, LamportClock()), Outbound()
    rs = _seated_round(ME)
    rs.live.discard(0)
    assert box.sign(out, Stuck(True, 0), rs, None, Recovery()) is None
    assert (out.sends, out.journal, box.seq) == ([], [], 0)
