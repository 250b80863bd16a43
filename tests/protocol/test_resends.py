"""Resends on their own: what we answer a peer within its budget, and which gaps we
ask to have filled, how often (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.envelope import GENESIS
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Ready, Resend, seal_message
from p2p_nerts.protocol.proof import ForkProof
from p2p_nerts.protocol.replica._base import (
    RESEND_BURST,
    RESEND_BYTES,
    RESEND_GRACE,
    RESEND_INTERVAL,
)
from p2p_nerts.protocol.replica._intake import Resends

pytestmark = pytest.mark.fast

AUTHOR = Identity.from_seed(b"\x06" * 32, "a")
ASKER = b"\x02" * 32


def _log(n: int, claimed: int = 0) -> AuthorLog:
    """AUTHOR's log, its first ``n`` entries delivered; ``claimed``: said sent."""
    log = AuthorLog(AUTHOR.public_key)
    prev = GENESIS
    for seq in range(1, n + 1):
        entry = seal_message(AUTHOR, Ready(True), table_id=b"t" * 16, round=0, seq=seq,
                             lamport=seq, prev=prev)
        log.offer(entry)
        log.mark_delivered(entry)
        prev = entry.signature
    log.note_claim(claimed)
    return log


def test_an_asker_gets_the_frames_we_hold_in_order() -> None:
    log = _log(5)
    frames, held_back = Resends().answer(ASKER, log, 2, 9, 0.0)
    assert frames == [log.entries[s] for s in (2, 3, 4, 5)] and not held_back
    assert Resends().answer(ASKER, None, 1, 3, 0.0) == ([], False)  # an author we keep nothing of


def test_an_asker_gets_no_more_than_its_budget_and_more_as_time_passes() -> None:
    log = _log(3)
    size = len(log.entries[1])
    resends = Resends()
    asks = RESEND_BURST // size + 1
    answered = sum(len(resends.answer(ASKER, log, 1, 1, 0.0)[0]) for _ in range(asks))
    assert answered == asks - 1
    assert resends.answer(ASKER, log, 1, 1, 0.0) == ([], True)
    assert resends.answer(b"\x03" * 32, log, 1, 1, 0.0)[0]  # another asker: its own budget
    assert resends.answer(ASKER, log, 1, 1, size / RESEND_BYTES)[0]  # the budget refills


def test_a_snapshot_goes_first_within_the_budget_or_nothing_does() -> None:
    log = _log(5)
    log.prune(3)  # entries 1 and 2 forgotten: the host's snapshot stands for them
    assert Resends.below_floor(log, 2) and not Resends.below_floor(log, 3)
    snapshot = b"s" * 100
    frames, held_back = Resends().answer(ASKER, log, 1, 4, 0.0, snapshot)
    assert frames == [snapshot, log.entries[3], log.entries[4]] and not held_back
    spent = Resends()
    assert spent.answer(ASKER, log, 1, 5, 0.0, b"s" * (RESEND_BURST + 1)) == ([], True)
    assert spent.answer(ASKER, log, 3, 5, 0.0)[0] == [log.entries[s] for s in (3, 4, 5)]


def _gaps(authors: dict[bytes, AuthorLog], mine: bytes | None = None,
          proven: dict[bytes, ForkProof] | None = None) -> list[Resend]:
    """What a fresh Resends asks for once the gaps it sees have lasted the grace."""
    resends = Resends()
    assert resends.gaps(authors, 0.0, mine, proven or {}) == []
    return resends.gaps(authors, RESEND_GRACE, mine, proven or {})


def test_a_gap_is_asked_for_once_it_lasted_the_grace_then_at_most_every_resend_interval(
) -> None:
    log = _log(2, claimed=6)
    resends = Resends()
    authors = {log.key: log}
    assert resends.gaps(authors, 0.0, None, {}) == []  # most likely on its way
    assert resends.gaps(authors, RESEND_GRACE / 2, None, {}) == []
    first = RESEND_GRACE
    assert resends.gaps(authors, first, None, {}) == [Resend(log.key, 3, 6)]
    assert resends.gaps(authors, first + RESEND_INTERVAL / 2, None, {}) == []
    assert resends.gaps(authors, first + RESEND_INTERVAL, None, {}) == [Resend(log.key, 3, 6)]
    resends.forget(log.key)
    again = first + RESEND_INTERVAL
    assert resends.gaps(authors, again, None, {}) == []  # seen afresh
    assert resends.gaps(authors, again + 1.5 * RESEND_GRACE, None, {}) == [Resend(log.key, 3, 6)]


def test_a_gap_that_moves_on_waits_the_grace_again() -> None:
    """Entries came in, and a later one is missing: it may be on its way too."""
    resends = Resends()
    assert resends.gaps({AUTHOR.public_key: _log(2, claimed=6)}, 0.0, None, {}) == []
    later = {AUTHOR.public_key: _log(3, claimed=6)}
    assert resends.gaps(later, RESEND_GRACE, None, {}) == []
    assert resends.gaps(later, 2 * RESEND_GRACE, None, {}) == [Resend(AUTHOR.public_key, 4, 6)]


def test_no_gap_of_mine_nor_of_an_equivocator_past_its_fork_is_asked_for() -> None:
    log = _log(2, claimed=6)
    authors = {log.key: log}
    assert _gaps(authors, log.key) == []  # mine: I know what I sent
    proof = ForkProof(log.key, 3, b"", b"")
    assert _gaps(authors, None, {log.key: proof}) == []
    assert _gaps({log.key: _log(1, claimed=6)}, None, {log.key: proof}) == [
        Resend(log.key, 2, 6)]  # what it signed before the fork still counts
    assert Resends().gaps({log.key: _log(3)}, 0.0, None, {}) == []  # no gap


@pytest.mark.parametrize("held", [set(), {3}, {2, 3, 4}, {2, 3, 4, 5, 6}, {2, 4, 6},
                                  {5, 6}, {6}])
def test_the_first_gap_is_the_first_number_claimed_and_not_held(held: set[int]) -> None:
    """A log that delivered 1 and was told of 6 asks for the first run it lacks; none
    when it holds every number claimed (as a replayed record does, round after
    round: answered without walking what it holds)."""
    log = _log(1, claimed=6)
    entries = {seq: seal_message(AUTHOR, Ready(True), table_id=b"t" * 16, round=0, seq=seq,
                                 lamport=seq, prev=GENESIS) for seq in held}
    for seq in sorted(held):
        # As intake holds them: the next too, while its round cannot take it yet.
        log.held[seq] = entries[seq]
    lacking = [seq for seq in range(2, 7) if seq not in held]
    if not lacking:
        assert log.missing() is None
        return
    start = lacking[0]
    end = min([seq for seq in held if seq > start], default=7) - 1
    assert log.missing() == (start, end)
