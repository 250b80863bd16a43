"""Finality on its own: when a round entry may be acted on in the total order
(no network, no replica: a round, authors' logs and a clock)."""

from __future__ import annotations

import heapq

import pytest

from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.clock import LamportClock
from p2p_nerts.protocol.envelope import GENESIS
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import (
    Drop,
    MsgType,
    Payload,
    Ready,
    Roster,
    Seat,
    Stuck,
    seal_message,
)
from p2p_nerts.protocol.replica._order import Finality
from p2p_nerts.protocol.replica._state import Ordered, RoundState

pytestmark = pytest.mark.fast

AUTHOR, OTHER = 1, 2  # seat 0 is mine
LAMPORT, SEQ = 5, 3  # the entry in question, from AUTHOR


def _table() -> tuple[RoundState, Finality, dict[bytes, AuthorLog], LamportClock]:
    keys = tuple(bytes([k + 1]) * 32 for k in range(3))
    rs = RoundState(number=1, keys=keys, names=("me", "a", "b"), variants=Variants(), me=0,
                    live={0, 1, 2}, log=FoundationLog(strict_ties=False))
    authors = {key: AuthorLog(key) for key in keys}
    clock = LamportClock()
    clock.time = 10
    _heard(authors, keys[AUTHOR], SEQ, LAMPORT)
    return rs, Finality(authors, clock), authors, clock


def _heard(authors: dict[bytes, AuthorLog], key: bytes, seq: int, lamport: int) -> None:
    """We hold ``key``'s entries up to ``seq``, the last at ``lamport``."""
    authors[key].delivered, authors[key].lamport = seq, lamport


def test_final_once_every_other_live_seat_is_heard_past_it_and_holds_it() -> None:
    rs, order, authors, _clock = _table()
    assert not order.final(rs, LAMPORT, AUTHOR, SEQ)  # nothing from OTHER yet
    _heard(authors, rs.keys[OTHER], 2, LAMPORT)
    assert not order.final(rs, LAMPORT, AUTHOR, SEQ)  # heard past it, but holds it?
    rs.marks[OTHER] = {AUTHOR: SEQ}
    assert order.final(rs, LAMPORT, AUTHOR, SEQ)


def test_my_own_clock_stands_for_my_seat() -> None:
    rs, order, authors, clock = _table()
    _heard(authors, rs.keys[OTHER], 2, LAMPORT)
    rs.marks[OTHER] = {AUTHOR: SEQ}
    clock.time = LAMPORT - 1
    assert order.known(rs, 0) == LAMPORT - 1 and not order.final(rs, LAMPORT, AUTHOR, SEQ)


def test_an_ack_counts_only_once_what_it_follows_is_here() -> None:
    rs, order, authors, _clock = _table()
    _heard(authors, rs.keys[OTHER], 2, 4)
    rs.acks[OTHER] = (9, 3)
    assert order.known(rs, OTHER) == 4
    _heard(authors, rs.keys[OTHER], 3, 4)
    assert order.known(rs, OTHER) == 9


def test_a_drop_vote_waiting_or_short_of_the_entry_holds_it_back() -> None:
    rs, order, authors, _clock = _table()
    _heard(authors, rs.keys[OTHER], 2, LAMPORT)
    rs.marks[OTHER] = {AUTHOR: SEQ}
    rs.drop_queue.append((4, OTHER, 0, 1, 2))  # a vote ordered before it, not yet counted
    assert not order.final(rs, LAMPORT, AUTHOR, SEQ)
    rs.drop_queue.clear()
    rs.drop_votes[AUTHOR] = {OTHER: SEQ - 1}  # would cut it off
    assert not order.final(rs, LAMPORT, AUTHOR, SEQ)
    rs.drop_votes[AUTHOR] = {OTHER: SEQ}
    assert order.final(rs, LAMPORT, AUTHOR, SEQ)


def test_an_agreed_drop_keeps_what_is_within_its_cut_and_nothing_after() -> None:
    rs, order, authors, _clock = _table()
    _heard(authors, rs.keys[OTHER], 2, LAMPORT)  # no marks: a dropped seat's are not asked
    rs.dropping[AUTHOR] = SEQ
    assert order.final(rs, LAMPORT, AUTHOR, SEQ)
    assert not order.final(rs, LAMPORT + 1, AUTHOR, SEQ + 1)


def test_a_drop_takes_effect_once_everyone_still_asked_is_heard_past_it() -> None:
    rs, order, authors, _clock = _table()
    rs.dropping[AUTHOR] = SEQ
    drop = Ordered(LAMPORT, OTHER, MsgType.DROP, Drop(rs.keys[AUTHOR], SEQ), 1)
    assert not order.ready(rs, drop)  # OTHER itself not heard at its time
    _heard(authors, rs.keys[OTHER], 1, LAMPORT)
    assert order.ready(rs, drop)
    heapq.heappush(rs.drop_queue, (LAMPORT - 1, 0, OTHER, 1, 1))
    assert not order.ready(rs, drop)  # a vote before it waits to be counted


def test_an_entry_past_its_authors_cut_is_ready_to_be_passed_over() -> None:
    rs, order, _authors, _clock = _table()
    rs.dropping[AUTHOR] = SEQ - 1
    assert order.ready(rs, Ordered(LAMPORT, AUTHOR, MsgType.STUCK, Stuck(True, 0), SEQ))


def test_an_ack_past_entries_held_for_a_later_round_counts() -> None:
    """The host's ROSTER for the next round (and what follows it) waits for this
    round's close; its ack after them still says how far it is, or the close,
    waiting for the last SUMMARY's turn, would wait for itself."""
    rs, order, authors, _clock = _table()
    other = rs.keys[OTHER]
    _heard(authors, other, 2, 4)
    rs.acks[OTHER] = (9, 4)
    ident = Identity.from_seed(bytes([OTHER + 1]) * 32, "b")

    def held(seq: int, payload: Payload, number: int) -> None:
        authors[other].held[seq] = seal_message(ident, payload, table_id=b"t" * 16,
                                                round=number, seq=seq, lamport=5 + seq,
                                                prev=GENESIS)

    held(3, Roster((Seat(other, "b"),)), 1)
    assert order.known(rs, OTHER) == 4  # entry 4 is not here yet
    held(4, Ready(True), 1)
    assert order.known(rs, OTHER) == 9
    held(4, Stuck(True, 0), 1)  # one this round orders: not before it is delivered
    assert order.known(rs, OTHER) == 4
    held(4, Stuck(True, 0), 2)  # the next round's: it orders nothing in this one
    assert order.known(rs, OTHER) == 9


def test_while_i_learn_where_my_chain_ends_nothing_of_mine_past_my_last_entry_is_known() -> None:
    """A journal that was behind lacks entries I signed, which the table orders."""
    rs, _order, authors, clock = _table()
    resuming = True
    order = Finality(authors, clock, lambda: resuming)
    _heard(authors, rs.keys[0], 4, 3)  # my own chain, as far as I hold it
    assert order.known(rs, 0) == 3
    resuming = False
    assert order.known(rs, 0) == clock.time
