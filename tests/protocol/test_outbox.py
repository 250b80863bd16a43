"""The outbox on its own: my entries numbered, dated and chained as I sign them
(no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.clock import LamportClock
from p2p_nerts.protocol.envelope import GENESIS, LINK_MAGIC, open_entry, open_link_entry
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Ack, Hello, Ready, parse_payload
from p2p_nerts.protocol.replica._outbox import Outbox

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
