"""Closing a round: its end, when it can be scored, each seat's audit, the scores
and verdicts, and whether the summaries agree.

Functions over one round's state (changed through its own methods: its end,
a seat flagged, its results) that return effects (``_effects``): the
facade signs the AUDIT, SUMMARY, VERDICTs and RESULT, tells the user and
changes the phase on what they say; a round scored (or a score taken back) is
added to the game by its owner (``Game``). What I sign I
deliver to myself at once, which can change the round, so each next step
(scoring, reckoning, the close) is taken by ``Steps`` once what the one
before decided is carried out.
"""

from __future__ import annotations

from ...game.foundations import Fate, PlayKey
from ...game.scoring import Match, SeatRound, team_names
from ...game.tableau import NERTS, NERTS_SIZE
from .. import events as ev
from ..audit import AuditResult, audit_seat, score_round
from ..messages import Audit, MsgType, Result, Summary, Verdict
from ._base import Phase
from ._effects import Effect, Emit, SetPhase, Sign
from ._game import Game
from ._state import RoundState, past_cut


def end_round(rs: RoundState, how: str, cutoff: PlayKey | None, now: float) -> list[Effect]:
    """The round ends (``how``: "nerts" or "deadlock") at ``cutoff`` in the total
    order, if given: nothing ordered after it counts. My plays still in the air
    settle as the agreed log says; one it does not hold yet (its entry lost
    with a journal that was behind, and still to come back from the table)
    settles at its turn, as it comes. Then my AUDIT goes out (and the round is
    scored if every audit is in: ``Steps.score``)."""
    rs.ended(how, cutoff, now)
    tab = rs.tab
    effects: list[Effect] = [SetPhase(Phase.SCORING)]
    if rs.me is not None and tab is not None:
        effects.append(Sign(Audit(rs.deck_secret, tuple(tab.log))))
    return effects


def flag(rs: RoundState, seat: int, reason: str) -> list[Effect]:
    """Flag ``seat`` to the user, once a round: the first reason found stands."""
    if not rs.flag(seat, reason):
        return []
    return [Emit(ev.Flagged(seat, rs.names[seat], reason))]


def flag_key(rs: RoundState | None, key: bytes, reason: str) -> list[Effect]:
    """Flag the seat of ``key`` in round ``rs``, if it has one there."""
    seat = rs.seat_of(key) if rs is not None else None
    return [] if rs is None or seat is None else flag(rs, seat, reason)


def verdicts(rs: RoundState, outcomes: dict[int, AuditResult]) -> list[Effect]:
    """Once scoring is due (:func:`score_due`), every audit replayed (``outcomes``):
    a seat whose audit fails flagged, with my VERDICT on it to everyone. The
    round is reckoned (:func:`scored`) with the round as those verdicts leave it."""
    assert rs.end is not None and rs.joint is not None
    effects: list[Effect] = []
    for seat, res in outcomes.items():
        if not res.ok:
            effects += flag(rs, seat, res.reason)
            if rs.me is not None:
                effects.append(Sign(Verdict(seat, False, res.reason[:200])))
    return effects


def scored(rs: RoundState, game: Game, outcomes: dict[int, AuditResult],
           gone: frozenset[int]) -> list[Effect]:
    """The round's results and verdicts (:func:`reckon`), added to the ``game``
    (``Game.scored``): the round over told, my SUMMARY of it (then the round may
    close)."""
    rs.reckoned(*reckon(rs, outcomes, set(gone)))
    effects: list[Effect] = []
    nobody = void_call(rs)
    if nobody is not None:
        effects.append(Emit(ev.Notice(nobody)))
    assert rs.end is not None
    game.scored(rs)
    match = game.match
    assert match is not None
    digest = rs.log.state_hash()
    effects += [Emit(ev.RoundOver(rs.number, rs.end, rs.results, tuple(match.totals), digest,
                                  rs.verdicts, rs.names))]
    if rs.me is not None:
        effects.append(Sign(Summary(digest, scores(rs.results))))
    return effects


def close(rs: RoundState, match: Match | None, phase: Phase) -> list[Effect]:
    """Once the round may close (:func:`close_due`, while scoring): whether the
    summaries agree, the game over or the break before the next round (then
    what waited for the close is delivered, and the host seats the next round
    and says when it deals it by itself: ``Steps.close``). Nothing while it
    may not close."""
    if phase is not Phase.SCORING or not close_due(rs):
        return []
    digest = rs.log.state_hash()
    differ = disagreeing(rs, digest)
    # A faulty or lying peer (disagreeing): say so; there is no repair.
    effects: list[Effect] = [Emit(ev.Divergence(rs.number, differ) if differ
                                  else ev.RoundAgreed(rs.number))]
    assert match is not None
    winner = match.winner()
    if winner is not None:
        effects += [SetPhase(Phase.OVER),
                    Emit(ev.GameOver(team_names(rs.names, rs.variants)[winner],
                                     tuple(match.totals)))]
        if rs.me is not None and rs.me in rs.live:
            effects.append(Sign(Result(tuple(match.totals), digest)))
    else:
        effects.append(SetPhase(Phase.BETWEEN))
    return effects


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
    """Replay one seat's round from its AUDIT against everything the table holds.

    Its Nerts calls and stuck votes checked are those it signed before its AUDIT:
    every peer holds exactly those once it counts the audit (an author's entries
    are delivered in sequence), whatever came after (a call signed after it, sent
    to some peers only, must not judge the round apart)."""
    assert rs.joint is not None
    before = rs.audit_seq.get(seat, 0)
    return audit_seat(
        seat, deck_secret=audit.deck_secret, deck_commitment=rs.commits[seat].deck,
        joint=rs.joint, variants=rs.variants, moves=audit.moves,
        plays=rs.plays_by_seat.get(seat, []), log=rs.log,
        calls=[t for seq, t in rs.calls_by_seat.get(seat, []) if seq < before],
        rotations=rs.rotations,
        votes=[t for seq, t in rs.votes_by_seat.get(seat, []) if seq < before],
    )


def audits(rs: RoundState, gone: set[int]) -> dict[int, AuditResult]:
    """Every audit in replayed, by seat, but those of the seats ``gone`` for a fork."""
    return {seat: audit_of(rs, seat, audit) for seat, audit in sorted(counted_audits(rs).items())
            if seat not in gone}


def void_call(rs: RoundState) -> str | None:
    """What the round's end was, if the audit shows its Nerts call invalid: the
    round ended there all the same, the others' scores stand, and the caller
    scores the forfeit."""
    caller = rs.call[1] if rs.call else None
    if caller is None or not rs.verdicts[caller]:
        return None
    return (f"round {rs.number}: {rs.names[caller]}'s Nerts call does not hold up "
            f"({rs.verdicts[caller]}); the others' scores stand, "
            f"{rs.names[caller]} scores {rs.results[caller].score}")


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
    """The scores a SUMMARY states (a round found false: its forfeit)."""
    return tuple(r.score for r in results)


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


def unscore(rs: RoundState, game: Game) -> None:
    """Take back a result reckoned before a drop was agreed (it scores again).

    A seat that was silent while the others scored can come back to their
    audits before their votes to drop it, and score itself with its own
    audit, which the others never had. Nothing is closed before every
    live seat's summary, so taking the result back here is still in time.
    """
    game.unscored(rs)
    rs.unreckoned()
