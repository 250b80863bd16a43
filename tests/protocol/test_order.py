"""Finality on its own: when a round entry may be acted on in the total order, and
what each does at its turn (no network, no replica: a round, authors' logs and
a clock)."""

from __future__ import annotations

import heapq

import pytest

from p2p_nerts.game.foundations import Fate, FoundationLog, Play
from p2p_nerts.game.tableau import NERTS
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.clock import LamportClock
from p2p_nerts.protocol.envelope import GENESIS
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import (
    Audit,
    Drop,
    MsgType,
    Nerts,
    Payload,
    Ready,
    Roster,
    Seat,
    Stuck,
    Summary,
    seal_message,
)
from p2p_nerts.protocol.messages import Play as PlayMsg
from p2p_nerts.protocol.replica._base import Phase
from p2p_nerts.protocol.replica._effects import Emit, SetPhase
from p2p_nerts.protocol.replica._order import Finality, play_turn
from p2p_nerts.protocol.replica._state import Ordered, RoundState
from p2p_nerts.protocol.replica._steps import Steps

from ..gamekit import c, cs, tableau
from ..stepkit import Table, steps_at

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


def _play(rs: RoundState, seat: int, lamport: int, seq: int, face: str = "AH") -> Ordered:
    """``seat``'s play of its ``face`` starting a pile, in the log and the order."""
    card = c(face, seat)
    rs.log.add(Play(lamport, seat, card, card, NERTS))
    rs.play_seq[(lamport, seat)] = seq
    item = Ordered(lamport, seat, MsgType.PLAY, PlayMsg(card, card, NERTS, 0, 0), seq)
    heapq.heappush(rs.ordered, item)
    return item


def test_nothing_is_taken_before_its_turn_and_then_one_at_a_time() -> None:
    rs, order, authors, _clock = _table()
    assert order.next_turn(rs) is None  # nothing in the order
    _play(rs, AUTHOR, LAMPORT, SEQ)
    assert order.next_turn(rs) is None and len(rs.ordered) == 1  # OTHER not heard past it
    _heard(authors, rs.keys[OTHER], 2, LAMPORT)
    rs.marks[OTHER] = {AUTHOR: SEQ}
    item = order.next_turn(rs)
    assert item is not None and not rs.ordered
    done = play_turn(rs, item)
    assert isinstance(done, ev.PlayFinal) and not done.mine and done.fate is Fate.STAY
    assert not rs.ordered and rs.stuck_rule.played_since_rotation == 1


def _steps(rs: RoundState) -> tuple[Steps, Table]:
    """The steps my replica takes, in ``rs`` under way."""
    return steps_at(rs.keys[0], rs, Phase.PLAYING)


def turn(rs: RoundState, item: Ordered) -> ev.PlayFinal | list[object]:
    """What ``item`` does at its turn, as ``Delivery.advance`` takes it: a play's
    event, or what the steps decided."""
    if item.kind == MsgType.PLAY:
        told = play_turn(rs, item)
        return told if told is not None else []
    steps, table = _steps(rs)
    steps.turn(rs, item)
    return list(table.done)


def test_a_play_that_bounced_is_told_so_and_counts_for_no_rotation() -> None:
    rs, _order, _authors, _clock = _table()
    ace, two = c("AH", OTHER), c("2H", AUTHOR)
    rs.log.add(Play(LAMPORT + 1, OTHER, ace, ace, NERTS))
    rs.log.add(Play(LAMPORT, AUTHOR, two, ace, NERTS))  # ordered before the ace it goes on
    item = Ordered(LAMPORT, AUTHOR, MsgType.PLAY, PlayMsg(two, ace, NERTS, 0, 0), SEQ)
    done = turn(rs, item)
    assert isinstance(done, ev.PlayFinal) and done.fate is not Fate.STAY and not done.mine
    assert rs.stuck_rule.played_since_rotation == 0


def test_my_play_in_the_air_settles_at_its_turn_and_one_settled_early_is_not_told_again(
) -> None:
    rs, _order, _authors, _clock = _table()
    rs.tab = tab = tableau(nerts=cs("KS AH"))
    card = tab.launch(NERTS, (LAMPORT, 0), pile=c("AH"))
    item = _play(rs, 0, LAMPORT, 1)
    assert item.payload == PlayMsg(card, card, NERTS, 0, 0)
    done = turn(rs, heapq.heappop(rs.ordered))
    assert isinstance(done, ev.PlayFinal) and done.mine and done.fate is Fate.STAY
    assert not tab.in_flight
    assert turn(rs, item) == [] and not tab.forfeited  # settled early: nothing more to do


def test_a_play_of_mine_the_table_gave_back_takes_its_card_if_it_stayed() -> None:
    """Back from a journal that lost the move: the card is still in my tableau."""
    rs, _order, _authors, _clock = _table()
    rs.tab = tab = tableau(nerts=cs("KS AH"))
    _play(rs, 0, LAMPORT, 1)
    assert turn(rs, heapq.heappop(rs.ordered)) == []
    assert tab.nerts == cs("KS") and tab.forfeited == {(LAMPORT, 0): c("AH")}


def test_a_play_past_its_authors_cut_leaves_the_round_at_its_turn() -> None:
    rs, _order, _authors, _clock = _table()
    item = _play(rs, AUTHOR, LAMPORT, SEQ)
    rs.dropping[AUTHOR] = SEQ - 1
    assert turn(rs, item) == [] and (LAMPORT, AUTHOR) not in rs.log
    assert (LAMPORT, AUTHOR) not in rs.play_seq
    stuck = Ordered(LAMPORT, AUTHOR, MsgType.STUCK, Stuck(True, 0), SEQ)
    assert turn(rs, stuck) == [] and not any(rs.stuck)  # its other entries past the cut


def test_each_kind_of_entry_does_its_part_at_its_turn() -> None:
    rs, _order, _authors, _clock = _table()
    rs.stuck = [False] * 3
    at = (LAMPORT, AUTHOR)
    drop = Ordered(*at, MsgType.DROP, Drop(rs.keys[OTHER], 2), SEQ)
    assert turn(rs, drop) == [Emit(ev.PeerDropped(OTHER, "b"))] and rs.live == {0, AUTHOR}
    audit = Audit(b"s" * 32, ())
    assert turn(rs, Ordered(*at, MsgType.AUDIT, audit, SEQ)) == []  # not ended: no score
    assert rs.audits == {AUTHOR: audit}
    summary = Summary(b"d" * 32, (0, 0, 0))
    assert turn(rs, Ordered(*at, MsgType.SUMMARY, summary, SEQ)) == []  # nor a close
    assert rs.summaries == {AUTHOR: summary}
    stuck = Ordered(*at, MsgType.STUCK, Stuck(True, 0), SEQ)
    assert turn(rs, stuck) == [Emit(ev.StuckChanged((False, True, False)))]
    call = Ordered(*at, MsgType.NERTS, Nerts(), SEQ)
    assert turn(rs, call) == [Emit(ev.NertsCalled(AUTHOR, "a")), SetPhase(Phase.SCORING)]
    assert rs.call == at and rs.end == "nerts"
    assert turn(rs, stuck) == [] and turn(rs, call) == []  # the round is over
