"""Recovery on its own: what a journal gives a replica back from a crash, a move
made again, how a seat back at a table goes on, and which deferred entries are
redundant (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.tableau import OP_NERTS, OP_TURN, Tableau
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.envelope import GENESIS
from p2p_nerts.protocol.fairness import commitment
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import Kind, Record, move_record, secrets_record, unpack
from p2p_nerts.protocol.messages import Audit, Commit, Ready, Reveal, Summary, seal_message
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.protocol.replica._recovery import Recovery, Resumed, redo, redundant, resumed
from p2p_nerts.protocol.replica._state import RoundState
from p2p_nerts.protocol.resume import Deferred, Resume

pytestmark = pytest.mark.fast

ME = Identity.from_seed(b"\x04" * 32, "me")
OTHER = Identity.from_seed(b"\x06" * 32, "o")


def _entry(who: Identity, seq: int) -> Record:
    entry = seal_message(who, Ready(True), table_id=b"t" * 16, round=0, seq=seq, lamport=seq,
                         prev=GENESIS)
    return Record(Kind.ENTRY, entry.raw)


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
    rec.replayed()
    assert not rec.restoring and rec.catching_up and rec.signed(1) is None


def test_caught_up_once_every_live_peer_is_heard_and_nothing_is_missing() -> None:
    rec, rs = Recovery(), _round()
    log = AuthorLog(OTHER.public_key)
    authors = {OTHER.public_key: log}
    assert not rec.behind(rs, authors)  # not restored: never behind
    rec.replayed()
    assert rec.behind(rs, authors)  # not heard yet
    rec.heard.add(OTHER.public_key)
    log.note_claim(3)
    assert rec.behind(rs, authors)  # its entries 1..3 still missing
    log.claimed = 0
    assert not rec.behind(rs, authors) and not rec.catching_up
    log.note_claim(5)
    assert not rec.behind(rs, authors)  # once caught up, for good


def _tab() -> Tableau:
    return Tableau(0, [make_card(0, s, r) for s in range(4) for r in range(1, 14)])


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
