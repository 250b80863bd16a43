"""Liveness marks on their own: what a seat's ACK says it holds, and when that
counts (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.tableau import Tableau
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.clock import LamportClock
from p2p_nerts.protocol.envelope import GENESIS, Entry
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Ack, AckMark, Ready, View, seal_message
from p2p_nerts.protocol.proof import ForkProof
from p2p_nerts.protocol.replica._base import VIEW_INTERVAL, Lead, view_of
from p2p_nerts.protocol.replica._effects import Sign
from p2p_nerts.protocol.replica._liveness import (
    acked,
    answer_hello,
    claimed,
    drained,
    heard_ack,
    holds_from,
    mark_of,
    marks_for,
    my_ack,
    note_claims,
    note_marks,
    observe,
    received,
    recheck_marks,
    take_early_marks,
    take_marks,
    take_view,
    view_due,
)
from p2p_nerts.protocol.replica._state import RoundState

pytestmark = pytest.mark.fast

SENDER = Identity.from_seed(b"\x07" * 32, "s")
AUTHOR_ID = Identity.from_seed(b"\x08" * 32, "a")
SEAT, AUTHOR = 1, 2


def _round() -> RoundState:
    keys = (b"\x01" * 32, SENDER.public_key, b"\x03" * 32)
    return RoundState(number=1, keys=keys, names=("me", "s", "a"), variants=Variants(),
                      me=0, live={0, 1, 2}, log=FoundationLog(strict_ties=False))


def _log(delivered: int) -> AuthorLog:
    log = AuthorLog(SENDER.public_key)
    log.delivered = delivered
    return log


def _says(rs: RoundState, seq: int) -> tuple[AckMark, ...]:
    """An ACK saying it holds AUTHOR's chain up to ``seq``."""
    return (AckMark(rs.keys[AUTHOR], seq, b"h" * 32), AckMark(b"\x09" * 32, 4, b"h" * 32))


def test_marks_are_checked_at_once_when_all_the_sender_sent_before_is_here() -> None:
    rs = _round()
    marks = note_marks(rs, SEAT, 5, _log(5), _says(rs, 8))
    assert marks == (_says(rs, 8)[0],)  # a key with no seat is not counted


def test_marks_wait_for_the_senders_earlier_entries() -> None:
    """Its DROP vote may be among them: counted before it, finality could miss it."""
    rs = _round()
    assert note_marks(rs, SEAT, 7, _log(5), _says(rs, 8)) == ()
    assert note_marks(rs, SEAT, 6, _log(5), _says(rs, 9)) == ()
    assert note_marks(rs, SEAT, 6, _log(5), _says(rs, 3)) == ()  # the furthest one waits
    assert rs.early_marks == {SEAT: (7, {AUTHOR: _says(rs, 9)[0]})}
    assert take_early_marks(rs, SEAT, _log(6)) == ()  # still one short
    assert take_early_marks(rs, SEAT, _log(7)) == (_says(rs, 9)[0],)
    assert not rs.early_marks


def test_an_entry_held_for_a_later_round_means_all_before_it_is_here() -> None:
    rs = _round()
    log = _log(5)
    assert not received(rs, log, 9)
    log.held[6] = seal_message(SENDER, Ready(True), table_id=b"t" * 16, round=2, seq=6,
                               lamport=20, prev=GENESIS)
    assert received(rs, log, 9)


def test_my_mark_for_an_equivocator_stops_at_its_fork() -> None:
    log = _log(5)
    assert mark_of(SENDER.public_key, log, None) == AckMark(SENDER.public_key, 5, log.head)
    proof = ForkProof(SENDER.public_key, 4, b"", b"")
    assert mark_of(SENDER.public_key, log, proof).seq == 3
    log.delivered = 3
    assert mark_of(SENDER.public_key, log, proof).seq == 3


def _chain(n: int) -> AuthorLog:
    """AUTHOR's log with its first ``n`` entries delivered."""
    log = AuthorLog(AUTHOR_ID.public_key)
    prev = GENESIS
    for seq in range(1, n + 1):
        entry = seal_message(AUTHOR_ID, Ready(True), table_id=b"t" * 16, round=1, seq=seq,
                             lamport=seq, prev=prev)
        log.offer(entry)
        log.mark_delivered(entry)
        prev = entry.signature
    return log


def _keyed_round() -> RoundState:
    rs = _round()
    rs.keys = (rs.keys[0], rs.keys[1], AUTHOR_ID.public_key)
    return rs


def test_a_mark_counts_only_where_it_names_the_entry_we_hold() -> None:
    rs, log = _keyed_round(), _chain(3)
    authors = {log.key: log}
    good = AckMark(log.key, 2, log.id_at(2) or b"")
    assert take_marks(rs, SEAT, (good,), authors) == []
    assert rs.marks[SEAT] == {AUTHOR: 2}
    other = AckMark(log.key, 3, b"x" * 64)  # another entry under our number 3: a fork
    assert take_marks(rs, SEAT, (other,), authors) == [Lead(log.key, 3, SENDER.public_key)]
    assert rs.marks[SEAT] == {AUTHOR: 2} and not rs.pending_marks


def test_a_mark_for_an_entry_not_here_yet_waits_for_it() -> None:
    rs, log = _keyed_round(), _chain(3)
    ahead = _chain(5)
    mark = AckMark(log.key, 5, ahead.head)
    assert take_marks(rs, SEAT, (mark,), {log.key: log}) == []
    assert rs.pending_marks == {AUTHOR: {SEAT: mark}} and not rs.marks.get(SEAT)
    assert recheck_marks(rs, log) == [] and rs.pending_marks  # still not here
    assert recheck_marks(rs, ahead) == []
    assert rs.marks[SEAT] == {AUTHOR: 5} and not rs.pending_marks


def test_my_ack_names_every_chain_i_hold_in_order_and_an_equivocators_up_to_its_fork() -> None:
    log, other = _chain(3), _log(2)
    authors = {log.key: log, other.key: other, b"\x09" * 32: AuthorLog(b"\x09" * 32)}
    marks = marks_for([log.key, other.key, b"\x09" * 32, b"\x0a" * 32], authors, {})
    assert marks == tuple(sorted((mark_of(log.key, log, None), mark_of(other.key, other, None))))
    proof = ForkProof(log.key, 2, b"", b"")
    forked = marks_for([log.key], authors, {log.key: proof})
    assert forked == (AckMark(log.key, 1, log.id_at(1) or b""),)


def test_my_ack_names_the_seated_this_rounds_and_the_last_rounds_authors() -> None:
    def held(key: bytes) -> AuthorLog:
        log = AuthorLog(key)
        log.delivered = 1
        return log

    rs, gone, seated = _round(), b"\x0b" * 32, b"\x0c" * 32
    before = RoundState(number=0, keys=(gone,), names=("g",), variants=Variants(), me=None,
                        live={0}, log=FoundationLog(strict_ties=False))
    authors = {k: held(k) for k in (*rs.keys, gone, seated, b"\x0d" * 32)}
    every = marks_for([*rs.keys, gone, seated], authors, {})
    assert len(every) == 5
    assert my_ack({seated}, rs, before, authors, {}) == Ack(every)  # not the stranger
    assert my_ack({seated}, None, None, authors, {}) == Ack(marks_for([seated], authors, {}))
    assert gone not in {m.author for m in my_ack((), rs, None, authors, {}).upto}


def _view_entry(lamport: int, number: int = 1) -> Entry:
    return seal_message(SENDER, Ready(True), table_id=b"t" * 16, round=number, seq=1,
                        lamport=lamport, prev=GENESIS)


def test_only_a_seats_latest_view_of_this_round_is_kept() -> None:
    rs = _round()
    new = View(nerts=5, top=None, work=(), waste=None, stock=20)
    old = View(nerts=9, top=None, work=(), waste=None, stock=30)
    take_view(rs, SEAT, _view_entry(8), new)
    take_view(rs, SEAT, _view_entry(6), old)  # overtaken on the way
    take_view(rs, SEAT, _view_entry(9, number=2), old)  # another round's
    assert rs.views == {SEAT: new} and rs.view_lamport == {SEAT: 8}


def test_my_view_goes_out_when_it_changed_and_not_too_often() -> None:
    rs = _round()
    assert view_due(rs, 1.0) is None  # no tableau yet
    rs.tab = Tableau(0, [make_card(0, s, r) for s in range(4) for r in range(1, 14)])
    assert view_due(rs, 1.0) == view_of(rs.tab)
    rs.tab.turn()
    assert view_due(rs, 1.0 + VIEW_INTERVAL / 2) is None  # too soon
    assert view_due(rs, 1.0 + VIEW_INTERVAL) == view_of(rs.tab)
    assert view_due(rs, 2.0 + VIEW_INTERVAL) is None  # unchanged
    rs.tab.turn()
    rs.end = "nerts"
    assert view_due(rs, 5.0) is None  # the round is over


def test_no_view_is_made_while_nobody_draws_and_one_goes_out_once_somebody_does() -> None:
    rs = _round()
    rs.tab = Tableau(0, [make_card(0, s, r) for s in range(4) for r in range(1, 14)])
    assert view_due(rs, 1.0) == view_of(rs.tab)
    assert view_due(rs, 2.0, drawn=False) is None
    # A peer starts drawing (the one that drew it before may have gone): it is sent
    # the tableau as it stands though it has not changed, then only as it changes.
    assert view_due(rs, 3.0) == view_of(rs.tab)
    assert view_due(rs, 4.0) is None
    rs.tab.turn()
    assert view_due(rs, 5.0, drawn=False) is None  # changed, but nobody to show it to
    assert view_due(rs, 6.0) == view_of(rs.tab)


def _sent(ident: Identity, payload: Ready | Ack, *, seq: int, prev: bytes, lamport: int = 9,
          round_no: int = 1) -> Entry:
    return seal_message(ident, payload, table_id=b"t" * 16, round=round_no, seq=seq,
                        lamport=lamport, prev=prev)


def test_an_ephemeral_entry_names_how_far_its_author_signed_and_its_head() -> None:
    first = _sent(SENDER, Ready(True), seq=1, prev=GENESIS)
    log = AuthorLog(SENDER.public_key)
    log.mark_delivered(first)
    seated = {SENDER.public_key}
    assert not claimed(log, _sent(SENDER, Ack(()), seq=3, prev=b"x" * 64), seated)
    assert log.claimed == 3  # past what we hold: nothing to compare yet
    assert not claimed(log, _sent(SENDER, Ack(()), seq=1, prev=first.signature), seated)
    assert claimed(log, _sent(SENDER, Ack(()), seq=1, prev=b"x" * 64), seated)  # not our head
    assert not claimed(log, _sent(SENDER, Ack(()), seq=1, prev=b"x" * 64), set())
    fresh = AuthorLog(SENDER.public_key)
    assert not claimed(fresh, _sent(SENDER, Ack(()), seq=1, prev=GENESIS), seated)
    assert fresh.claimed == 0  # it has signed nothing yet


def test_a_seated_peer_s_marks_are_noted_and_unknown_seated_authors_claimed() -> None:
    known = AuthorLog(SENDER.public_key)
    seated = {SENDER.public_key, AUTHOR_ID.public_key}
    stranger = b"\x09" * 32
    marks = (AckMark(SENDER.public_key, 4, b"h" * 64), AckMark(AUTHOR_ID.public_key, 2, b"h" * 64),
             AckMark(stranger, 7, b"h" * 64))
    unknown = note_claims(marks, seated, {SENDER.public_key: known})
    assert known.claimed == 4 and unknown == [(AUTHOR_ID.public_key, 2)]
    assert note_claims(marks[:1], seated, {SENDER.public_key: known}) == ()


def test_an_ack_vouches_for_its_author_counts_its_marks_and_follows_a_fork() -> None:
    rs, log = _keyed_round(), _chain(3)
    sender = _log(1)  # it holds what SENDER signed before its ACK: its marks count now
    authors = {log.key: log, sender.key: sender}
    good, other = AckMark(log.key, 2, log.id_at(2) or b""), AckMark(log.key, 3, b"x" * 64)
    ack = _sent(SENDER, Ack((good,)), seq=1, prev=GENESIS, lamport=12)
    assert acked(ack, (good,), sender, rs, SEAT, authors=authors) == []
    assert sender.vouched == (1, 12) and rs.marks[SEAT] == {AUTHOR: 2}
    ack = _sent(SENDER, Ack((other,)), seq=1, prev=GENESIS, lamport=14)
    assert acked(ack, (other,), sender, rs, SEAT, authors=authors) == [
        Lead(log.key, 3, SENDER.public_key)]
    # No round: only vouched for (its marks count for nothing yet).
    assert acked(ack, (other,), sender, None, None, authors=authors) is None
    assert sender.vouched == (1, 14)


def test_an_ack_says_how_far_its_seat_is_in_this_round_or_a_later_one() -> None:
    rs = _round()
    log = _log(0)
    ack = _sent(SENDER, Ack(()), seq=1, prev=GENESIS, lamport=12)
    assert heard_ack(rs, SEAT, ack, log, ()) == ()
    assert rs.acks[SEAT] == (12, 1)
    early = _sent(SENDER, Ack(()), seq=2, prev=GENESIS, lamport=15, round_no=0)
    heard_ack(rs, SEAT, early, log, ())
    assert rs.acks[SEAT] == (12, 1)  # sent before this round: says nothing of it


def test_an_ack_overtaken_by_a_later_one_of_its_seat_is_not_kept_in_its_place() -> None:
    rs = _round()
    log = _log(3)
    later = _sent(SENDER, Ack(()), seq=3, prev=GENESIS, lamport=20)
    heard_ack(rs, SEAT, later, log, ())
    for late in (_sent(SENDER, Ack(()), seq=3, prev=GENESIS, lamport=18),
                 _sent(SENDER, Ack(()), seq=2, prev=GENESIS, lamport=16)):
        heard_ack(rs, SEAT, late, log, ())
        assert rs.acks[SEAT] == (20, 3)
    heard_ack(rs, SEAT, _sent(SENDER, Ack(()), seq=4, prev=GENESIS, lamport=20), log, ())
    assert rs.acks[SEAT] == (20, 4)  # the same time, having signed one more


def test_a_newcomer_holds_its_seat_once_its_marks_reach_the_roster() -> None:
    me = b"\x01" * 32
    assert holds_from((AckMark(me, 5, b"h" * 64),), me, 5)
    assert not holds_from((AckMark(me, 4, b"h" * 64),), me, 5)
    assert not holds_from((AckMark(SENDER.public_key, 9, b"h" * 64),), me, 5)


def test_a_hello_is_answered_with_its_author_s_own_mark_straight_to_it() -> None:
    first = _sent(SENDER, Ready(True), seq=1, prev=GENESIS)
    log = AuthorLog(SENDER.public_key)
    log.mark_delivered(first)
    assert answer_hello(SENDER.public_key, {SENDER.public_key: log}, {}) == Sign(
        Ack((AckMark(SENDER.public_key, 1, first.signature),)), to=SENDER.public_key)
    assert answer_hello(AUTHOR_ID.public_key, {}, {}) == Sign(Ack(()), to=AUTHOR_ID.public_key)


def test_what_waited_for_an_author_s_entries_is_counted_once_they_are_delivered() -> None:
    rs, log = _keyed_round(), _chain(3)
    sender = _log(5)
    assert drained(rs, sender, {log.key: log}) is None  # nothing waited
    ahead = _chain(5)
    fork = AckMark(log.key, 3, b"x" * 64)  # its ACK names another entry 3: held for later
    assert note_marks(rs, SEAT, 7, sender, (fork,)) == ()
    waiting = AckMark(log.key, 5, ahead.head)  # a mark for an entry not here yet
    assert take_marks(rs, 0, (waiting,), {log.key: log}) == []
    sender.delivered = 7
    assert drained(rs, sender, {log.key: log}) == [Lead(log.key, 3, SENDER.public_key)]
    assert not rs.early_marks and rs.pending_marks  # AUTHOR's 5 is still not here
    assert drained(rs, ahead, {log.key: ahead}) == []
    assert rs.marks[0] == {AUTHOR: 5} and not rs.pending_marks


def test_only_a_seated_authors_time_moves_my_clock() -> None:
    clock, entry = LamportClock(), _view_entry(40)
    observe(clock, entry, frozenset({AUTHOR_ID.public_key}))  # a stranger's
    assert clock.time == 0
    observe(clock, entry, frozenset({entry.author}))
    assert clock.time == 41  # past it
