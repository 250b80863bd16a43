"""Recovery on its own: what a journal gives a replica back from a crash, a move
made again, how a seat back at a table goes on, and which deferred entries are
redundant (no network, no replica)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.tableau import OP_FOUND, OP_NERTS, OP_TURN, Tableau
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.envelope import GENESIS
from p2p_nerts.protocol.fairness import commitment
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import (
    Kind,
    Record,
    boot_record,
    move_record,
    secrets_record,
    snapshot_record,
    unpack,
)
from p2p_nerts.protocol.messages import (
    AckMark,
    Audit,
    Commit,
    Goodbye,
    Payload,
    Ready,
    Reveal,
    Roster,
    Seat,
    Snapshot,
    Summary,
    seal_message,
)
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.protocol.replica._base import SIT_OUT, settings_of
from p2p_nerts.protocol.replica._effects import Emit, Sign
from p2p_nerts.protocol.replica._recovery import (
    REBOOTED,
    Recovery,
    Resumed,
    due,
    heard,
    new_moves,
    redo,
    redundant,
    rejoin,
    resumed,
    unsent_cut,
)
from p2p_nerts.protocol.replica._state import RoundState
from p2p_nerts.protocol.resume import LEARN_TIMEOUT, REBOOT_WAIT, Deferred, Resume

pytestmark = pytest.mark.fast

ME = Identity.from_seed(b"\x04" * 32, "me")
OTHER = Identity.from_seed(b"\x06" * 32, "o")


def _entry(who: Identity, seq: int) -> Record:
    entry = seal_message(who, Ready(True), table_id=b"t" * 16, round=0, seq=seq, lamport=seq,
                         prev=GENESIS)
    return Record(Kind.ENTRY, entry.raw)


def _replayed(rec: Recovery, rs: RoundState | None, phase: Phase) -> None:
    """The journal replayed, alone at the table."""
    assert rec.replayed(rs, phase, table=(), me=ME.public_key, now=0.0, seq=0,
                        rebooted=None) == []


def _round() -> RoundState:
    return RoundState(number=2, keys=(ME.public_key, OTHER.public_key), names=("me", "o"),
                      variants=Variants(), me=0, live={0, 1},
                      log=FoundationLog(strict_ties=False))


def test_the_journal_gives_back_my_entries_and_secrets_while_it_is_replayed() -> None:
    rec = Recovery()
    rec.load([secrets_record(2, b"d" * 32, b"s" * 32), _entry(ME, 1), _entry(OTHER, 1),
              _entry(ME, 2)], ME.public_key)
    assert rec.restoring and rec.secrets == {2: (b"d" * 32, b"s" * 32)}
    first = rec.signed(1)
    assert first is not None and first.author == ME.public_key
    assert rec.signed(2) is not None and rec.signed(3) is None
    _replayed(rec, None, Phase.LOBBY)
    assert not rec.restoring and rec.catching_up and rec.signed(1) is None


def test_a_compacted_journal_is_taken_up_from_its_snapshot_first() -> None:
    seats = (Seat(ME.public_key, "me"), Seat(OTHER.public_key, "o"))
    rules = Variants(target=50)
    snapshot = Snapshot(3, False, seats, settings_of(rules, 1.5, 12.0), (), 2, ())
    later = snapshot_record(replace(snapshot, round=4))
    assert Recovery().load([snapshot_record(snapshot), _entry(ME, 1), later],
                           ME.public_key) == snapshot
    assert Recovery().load([_entry(ME, 1), later], ME.public_key) is None  # not at the start
    assert Recovery().load([], ME.public_key) is None


def test_replayed_a_seat_asks_everyone_at_the_table_and_in_its_round_where_its_chain_ends() -> None:
    rec, rs = Recovery(), _round()
    third = Identity.from_seed(b"\x08" * 32, "t").public_key
    said = rec.replayed(rs, Phase.PLAYING, table=(ME.public_key, third), me=ME.public_key,
                        now=5.0, seq=9, rebooted=None)
    res = rec.resume
    assert said == [] and res is not None and res.rebooted is None
    assert (res.waiting, res.since, res.journal_seq) == ({OTHER.public_key, third}, 5.0, 9)
    alone = Recovery()
    assert alone.replayed(None, Phase.LOBBY, table=(ME.public_key,), me=ME.public_key,
                          now=5.0, seq=0, rebooted=None) == []
    assert alone.resume is None  # nobody to ask


def test_a_journal_written_before_the_machine_restarted_makes_the_seat_hear_everyone() -> None:
    """Its last batch may be lost though the others hold it: the seat says so and waits
    for every peer's word (for REBOOT_WAIT after the first, at most); alone, it
    names the boot at once."""
    third = Identity.from_seed(b"\x08" * 32, "t").public_key
    rec = Recovery()
    said = rec.replayed(_round(), Phase.PLAYING, table=(ME.public_key, third),
                        me=ME.public_key, now=5.0, seq=9, rebooted=b"boot-2")
    assert said == [Emit(ev.Notice(REBOOTED))]
    res = rec.resume
    assert res is not None and res.rebooted == b"boot-2"
    assert res.waiting == {OTHER.public_key, third}
    assert not res.complete(5.0 + 100 * REBOOT_WAIT, 9)  # nobody heard: nobody's word
    res.heard(third, None, 1000.0)
    assert not res.complete(1000.0 + LEARN_TIMEOUT, 9)  # OTHER may hold more of ours
    assert res.complete(1000.0 + REBOOT_WAIT, 9)  # (or never answer: a silent seat)
    res.heard(OTHER.public_key, 10, 1001.0)
    assert not res.complete(1001.0, 9) and res.complete(1001.0, 10)  # holding what it holds
    plan = resumed(res, 10, _round(), Phase.PLAYING)
    assert plan.said()[0] == boot_record(b"boot-2")  # the journal names this boot from then on
    alone = Recovery()
    assert alone.replayed(None, Phase.LOBBY, table=(ME.public_key,), me=ME.public_key,
                          now=5.0, seq=0, rebooted=b"boot-2") == [boot_record(b"boot-2")]
    assert alone.resume is None
    lenient = Resume({OTHER.public_key}, 5.0, 9)  # a journal of this boot lost nothing sent
    assert not lenient.complete(5.0, 9) and lenient.complete(5.0 + LEARN_TIMEOUT, 9)


def test_caught_up_once_every_live_peer_is_heard_and_nothing_is_missing() -> None:
    rec, rs = Recovery(), _round()
    log = AuthorLog(OTHER.public_key)
    authors = {OTHER.public_key: log}
    rec.heard_out(rs, authors)
    assert not rec.catching_up  # not restored: never catching up
    _replayed(rec, None, Phase.LOBBY)
    rec.heard_out(rs, authors)
    assert rec.catching_up  # not heard yet
    rec.heard.add(OTHER.public_key)
    log.note_claim(3)
    rec.heard_out(rs, authors)
    assert rec.catching_up  # its entries 1..3 still missing
    log.claimed = 0
    rec.heard_out(rs, authors)
    assert not rec.catching_up
    log.note_claim(5)
    rec.heard_out(rs, authors)
    assert not rec.catching_up  # once caught up, for good


def _tab() -> Tableau:
    return Tableau(0, [make_card(0, s, r) for s in range(4) for r in range(1, 14)])


def test_each_journal_record_replays_as_it_happened() -> None:
    rec, rs = Recovery(), _round()
    rs.tab = _tab()
    mine, theirs = _entry(ME, 1), _entry(OTHER, 1)
    link = Record(Kind.LINK, OTHER.public_key + b"frame")
    rec.load([mine, theirs, link], ME.public_key)
    assert rec.replay(theirs, rs, ME.public_key, 0) == (theirs.data, None)  # as received
    assert rec.replay(link, rs, ME.public_key, 0) == (b"frame", OTHER.public_key)  # on its link
    first = rec.signed(1)
    assert first is not None and rec.replay(mine, rs, ME.public_key, 0) is first
    assert rec.replay(mine, rs, ME.public_key, 1) is None  # delivered where it was signed
    stock = len(rs.tab.stock)
    assert rec.replay(move_record(2, (OP_TURN,)), rs, ME.public_key, 1) is None
    assert len(rs.tab.stock) == stock - 3  # my move, made again
    assert rec.replay(secrets_record(2, b"d" * 32, b"s" * 32), rs, ME.public_key, 1) is None


def test_a_seat_back_at_a_table_goes_on_once_the_resume_is_complete() -> None:
    rec, rs = Recovery(), _round()
    assert rec.going_on(0.0, None, rs, Phase.PLAYING) is None  # not resuming
    rec.resume = _resume(0)
    log = AuthorLog(ME.public_key)
    assert rec.going_on(0.0, log, rs, Phase.PLAYING) is None  # nobody heard yet
    rec.restoring = True
    assert rec.going_on(10.0, log, rs, Phase.PLAYING) is None  # the journal replays first
    rec.restoring = False
    res = rec.resume
    rec.resume.heard(OTHER.public_key, None, 1.0)
    plan = rec.going_on(1.0, log, rs, Phase.PLAYING)
    assert plan == Resumed(None, False, tuple(res.deferred)) and rec.resume is None


def test_a_journaled_move_is_made_again_on_its_rounds_tableau() -> None:
    rs = _round()
    rs.tab = _tab()
    stock = len(rs.tab.stock)
    redo(rs, unpack(move_record(2, (OP_TURN,))))
    assert len(rs.tab.stock) == stock - 3 and rs.tab.log[-1] == (OP_TURN,)
    with pytest.raises(ValueError, match="not being played"):
        redo(rs, unpack(move_record(1, (OP_TURN,))))
    with pytest.raises(ValueError, match="not being played"):
        redo(None, unpack(move_record(2, (OP_TURN,))))


def test_a_journaled_nerts_call_is_mine_again() -> None:
    rs = _round()
    rs.tab = _tab()
    rs.tab.nerts.clear()
    redo(rs, unpack(move_record(2, (OP_NERTS, 9))))
    assert rs.i_called


def test_a_deferred_entry_is_redundant_once_its_like_is_in() -> None:
    rs = _round()
    commit = Commit(commitment(b"d" * 32), commitment(b"s" * 32))
    assert not redundant(rs, commit) and not redundant(rs, Reveal(b"s" * 32))
    rs.commits[0], rs.reveals[0] = commit, b"s" * 32
    rs.audit_seq[0], rs.summary_seq[0] = 5, 6  # in, whether or not their turns have come
    for payload in (commit, Reveal(b"s" * 32), Audit(b"d" * 32, ()), Summary(b"h" * 32, (0, 0))):
        assert redundant(rs, payload)
    assert not redundant(rs, Ready(True))  # not a round entry of mine: always sent
    assert not redundant(None, commit)


def _resume(journal_seq: int) -> Resume:
    res = Resume({OTHER.public_key}, 0.0, journal_seq)
    res.deferred += [Deferred(Ready(True), None, None), Deferred(Audit(b"d" * 32, ()), 2, None)]
    return res


def test_a_seat_whose_journal_held_everything_signs_what_it_held_back() -> None:
    res = _resume(4)
    assert resumed(res, 4, _round(), Phase.PLAYING) == Resumed(None, False, tuple(res.deferred))


def test_a_seat_behind_the_table_mid_round_says_so_and_sits_the_round_out() -> None:
    res = _resume(4)
    plan = resumed(res, 7, _round(), Phase.PLAYING)
    assert plan.notice == ("the table held 3 entries of ours that our journal did not; "
                           "going on after entry 7; sitting this round out")
    assert plan.sit_out and plan.deferred == (res.deferred[0],)  # no round entry of its


def test_a_seat_behind_the_table_between_rounds_only_says_so() -> None:
    res = _resume(4)
    plan = resumed(res, 5, _round(), Phase.BETWEEN)
    assert plan.notice is not None and plan.notice.endswith("going on after entry 5")
    assert not plan.sit_out and plan.deferred == tuple(res.deferred)
    rs = _round()
    rs.live.discard(0)  # dropped already: nothing to sit out
    assert not resumed(res, 5, rs, Phase.PLAYING).sit_out


def test_a_seat_back_at_a_table_learns_from_everyone_there_but_itself() -> None:
    res = rejoin({ME.public_key, OTHER.public_key}, ME.public_key, 5.0, 9)
    assert res is not None and (res.waiting, res.since, res.journal_seq) == (
        {OTHER.public_key}, 5.0, 9)
    assert rejoin({ME.public_key}, ME.public_key, 5.0, 9) is None  # nobody to ask


def test_what_the_table_holds_of_my_chain_is_fetched_on_the_word_of_a_seat_only() -> None:
    me, other = ME.public_key, OTHER.public_key
    res = Resume({other}, 0.0, 4)
    assert heard(res, other, (AckMark(other, 3), AckMark(me, 6)), me, False, 0.0) is None
    assert res.table_seq == 0 and not res.waiting  # a stranger's word: heard, no more
    res = Resume({other}, 0.0, 4)
    assert heard(res, other, (AckMark(me, 6),), me, True, 0.0) == 6
    assert res.table_seq == 6 and not res.waiting
    assert heard(Resume({other}, 0.0, 4), other, (), me, True, 0.0) is None


def test_what_a_resumed_seat_says_and_which_held_back_entries_it_still_signs() -> None:
    assert resumed(_resume(4), 4, _round(), Phase.PLAYING).said() == []
    plan = resumed(_resume(4), 7, _round(), Phase.PLAYING)
    assert plan.said() == [Emit(ev.Notice(plan.notice or "")), Sign(Goodbye(SIT_OUT))]
    rs, later = _round(), _round()
    later.number = 3
    done: set[tuple[int, Payload]] = set()
    ready, audit = Deferred(Ready(True), None, None), Deferred(Audit(b"d" * 32, ()), 2, None)
    assert due(ready, rs, rs, done) and not due(ready, rs, rs, done)  # once
    assert due(audit, rs, later, set())  # for the round under way as learning ended
    assert not due(audit, later, later, set())  # its round closed meanwhile
    rs.audit_seq[0] = 9
    assert not due(audit, rs, rs, set())  # signed meanwhile
    roster = Deferred(Roster(()), 2, None)
    assert due(roster, rs, rs, set()) and not due(roster, rs, later, set())  # a round began


def test_a_replayed_round_is_journaled_so_far_and_on_once_its_countdown_ran() -> None:
    rs = _round()
    rs.tab, rs.play_from = _tab(), 1.0
    rs.tab.turn()
    _replayed(Recovery(), rs, Phase.PLAYING)
    assert rs.journaled == len(rs.tab.log) > 0 and rs.started
    shuffling = _round()
    _replayed(Recovery(), shuffling, Phase.SHUFFLE)
    assert not shuffling.started


def test_my_new_decisions_are_journaled_once_each() -> None:
    rs = _round()
    rs.tab = _tab()
    assert new_moves(rs, rs.tab) == []
    rs.tab.turn()
    turned = [move_record(2, move) for move in rs.tab.log]
    assert turned and new_moves(rs, rs.tab) == turned
    assert new_moves(rs, rs.tab) == []  # journaled already


def test_a_play_or_call_journaled_without_its_entry_is_not_made_again() -> None:
    """A torn last write: the move kept, the entry it signed (journaled next) lost."""
    play = move_record(1, (OP_FOUND, 1, 7, 9, 7, 0))
    call = move_record(1, (OP_NERTS, 10))
    turn = move_record(1, (OP_TURN,))
    kept = [_entry(ME, 1), play, _entry(ME, 2), turn, call, _entry(ME, 3)]
    assert unsent_cut(kept, ME.public_key) == kept  # each with its entry next
    assert unsent_cut([*kept, turn, play], ME.public_key) == [*kept, turn]
    # What others sent is not the entry the move signed, nor is one of mine signed
    # later (the journal went on after the torn write: a later restore agrees).
    assert unsent_cut([play, _entry(OTHER, 1), call, turn, _entry(ME, 4)],
                      ME.public_key) == [_entry(OTHER, 1), turn, _entry(ME, 4)]
    # A record that is no play (a bug, a file edited by hand) is replayed, and fails.
    odd = move_record(1, (OP_FOUND, 3))
    assert unsent_cut([odd], ME.public_key) == [odd]
