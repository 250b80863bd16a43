"""Closing a round: its end, when it can be scored, each seat's audit, the scores
and verdicts, and whether the summaries agree.

Pure functions over one round's state: the facade flags, signs the AUDIT,
SUMMARY and VERDICTs, keeps the running totals and changes the phase on what
they say.
"""

from __future__ import annotations

from ...game.foundations import Fate, PlayKey
from ...game.scoring import Match, SeatRound
from ...game.tableau import NERTS, NERTS_SIZE
from ..audit import AuditResult, audit_seat, score_round
from ..messages import Audit, MsgType
from ._state import RoundState, past_cut


def end_round(rs: RoundState, how: str, cutoff: PlayKey | None, now: float) -> None:
    """The round ends (``how``: "nerts" or "deadlock") at ``cutoff`` in the total
    order, if given: nothing ordered after it counts. My plays still in the air
    settle as the agreed log says; one it does not hold yet (its entry lost
    with a journal that was behind, and still to come back from the table)
    settles at its turn, as it comes."""
    rs.end = how
    rs.ended_at = now
    if cutoff is not None:
        rs.log.set_cutoff(cutoff)
    tab = rs.tab
    if tab is not None:
        for key in sorted(tab.in_flight):
            if key in rs.log:
                tab.settle(key, stayed=rs.log.fate(key) is Fate.STAY)


def score_due(rs: RoundState) -> bool:
    """The round has ended, is not scored yet, and every live seat's AUDIT is in."""
    return rs.end is not None and not rs.results and rs.live <= counted_audits(rs).keys()


def counted_audits(rs: RoundState) -> dict[int, Audit]:
    """The AUDITs that count: not one past its seat's agreed drop cut. Its plays past
    the cut leave the log at their turns (``drops.void_play``), before the drop
    takes effect and the audit goes too; until then it could not be replayed."""
    return {seat: audit for seat, audit in rs.audits.items()
            if not past_cut(rs, seat, rs.audit_seq.get(seat, 0))}


def forked(rs: RoundState) -> set[int]:
    """Seats gone from the round for a proven fork: their audits are not replayed,
    and their verdict is the equivocation."""
    return {seat for seat in rs.forks if seat not in rs.live}


def audit_of(rs: RoundState, seat: int, audit: Audit) -> AuditResult:
    """Replay one seat's round from its AUDIT against everything the table holds."""
    assert rs.joint is not None
    return audit_seat(
        seat, deck_secret=audit.deck_secret, deck_commitment=rs.commits[seat].deck,
        joint=rs.joint, variants=rs.variants, moves=audit.moves,
        plays=rs.plays_by_seat.get(seat, []), log=rs.log,
        calls=rs.calls_by_seat.get(seat, []), rotations=rs.rotations,
    )


def audits(rs: RoundState, gone: set[int]) -> dict[int, AuditResult]:
    """Every audit in replayed, by seat, but those of the seats ``gone`` for a fork."""
    return {seat: audit_of(rs, seat, audit) for seat, audit in sorted(counted_audits(rs).items())
            if seat not in gone}


def void_call(rs: RoundState) -> str | None:
    """Why the round counts for nobody, if the audit shows its Nerts call invalid."""
    caller = rs.call[1] if rs.call else None
    if caller is None or not rs.verdicts[caller]:
        return None
    return (f"round {rs.number} counts for nobody: {rs.names[caller]}'s Nerts call "
            f"does not hold up ({rs.verdicts[caller]})")


def reckon(rs: RoundState, outcomes: dict[int, AuditResult],
           gone: set[int]) -> tuple[tuple[SeatRound, ...], tuple[str, ...]]:
    """Every seat's result and verdict ('' when clean), from the audits replayed
    (``outcomes``) and the agreed log; ``gone``: seats out for a proven fork."""
    seats = range(len(rs.keys))
    caller = rs.call[1] if rs.call else None
    results, verdicts = score_round(
        len(seats), outcomes=outcomes, cards_up=[rs.log.cards_of(s) for s in seats],
        nerts_bound=[nerts_bound(rs, s) for s in seats], caller=caller,
        variants=rs.variants)
    return results, tuple("equivocation" if s in gone else v for s, v in enumerate(verdicts))


def nerts_bound(rs: RoundState, seat: int) -> int:
    """The most Nerts cards ``seat`` can have left by the agreed log alone."""
    return NERTS_SIZE - sum(1 for p in rs.plays_by_seat.get(seat, [])
                            if p.src == NERTS and rs.log.fate(p.key) is Fate.STAY)


def scores(results: tuple[SeatRound, ...]) -> tuple[int, ...]:
    """The scores a SUMMARY states: a void result counts 0."""
    return tuple(0 if r.void else r.score for r in results)


def close_due(rs: RoundState) -> bool:
    """Scored, and every live seat's SUMMARY has had its turn (a seat-less replica,
    watching, waits only for those it holds: it compares them with its own)."""
    return bool(rs.results) and (rs.live <= rs.summaries.keys() or (
        rs.me is None and not any(o.kind == MsgType.SUMMARY for o in rs.ordered)))


def disagreeing(rs: RoundState, digest: bytes) -> tuple[int, ...]:
    """The live seats whose SUMMARY differs from ours (foundation hash or scores).

    Nothing to fetch then: a round entry counts only once every live seat
    holds it, so the seats scored the same entries, and a different summary
    is a faulty or lying peer.
    """
    mine = scores(rs.results)
    return tuple(s for s, m in sorted(rs.summaries.items())
                 if s in rs.live and (m.digest != digest or m.scores != mine))


def unscore(rs: RoundState, match: Match) -> None:
    """Take back a result reckoned before a drop was agreed (it scores again).

    A seat that was silent while the others scored can come back to their
    audits before their votes to drop it, and score itself with its own
    audit, which the others never had. Nothing is closed before every
    live seat's summary, so taking the result back here is still in time.
    """
    for r in rs.results:
        if not r.void:
            match.totals[r.seat] -= r.score
    match.rounds -= 1
    rs.results, rs.verdicts = (), ()
