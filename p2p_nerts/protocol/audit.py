"""The end-of-round audit: replay a seat's round from its revealed deck.

Given what a seat published during the round (its foundation plays, its Nerts
call) and what it reveals at the end (deck secret, local move log), every peer
checks that the deck is the committed one, that every move was legal from that
deck, that every play on the wire is a move in the log (and the other way
round), that each play settled as the foundation log decided, and that a Nerts
call came with an empty Nerts pile. Pure: same inputs, same verdict, on every
peer.

:func:`score_round` turns every seat's verdict into the round's results, by
the rules of docs/PROTOCOL.md ("Audit verdicts"): a seat with no audit scores
nothing, and a round ended by a call the audit does not bear out counts for
nobody.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..game.cards import card_name
from ..game.foundations import Fate, FoundationLog, Play
from ..game.scoring import SeatRound, round_score
from ..game.tableau import (
    OP_FOUND,
    OP_NERTS,
    OP_ROTATE,
    OP_SETTLE,
    ROTATE_ALONE,
    STAYED,
    IllegalMove,
    Tableau,
    redo,
)
from ..game.variants import Variants
from .fairness import commitment, deal_for


@dataclass(frozen=True, slots=True)
class AuditResult:
    """The verdict on one seat.

    ``nerts_left`` is its Nerts count as its own moves show it (at the bad move,
    for a seat that fails), None when its deck could not be dealt again.
    """

    seat: int
    ok: bool
    reason: str = ""
    nerts_left: int | None = None


#: The verdict on a seat that published no AUDIT for the round (it crashed, went
#: silent, left or was dropped before its audit counted): nothing it did can be
#: checked, so nothing it did scores.
UNAUDITED = "unaudited"


def audit_seat(
    seat: int,
    *,
    deck_secret: bytes,
    deck_commitment: bytes,
    joint: bytes,
    variants: Variants,
    moves: Sequence[Sequence[int]],
    plays: Sequence[Play],
    log: FoundationLog,
    calls: Sequence[int],
    rotations: int,
) -> AuditResult:
    """Check one seat's round.

    ``plays`` are its PLAY entries in sequence order and ``calls`` the Lamport
    times of its NERTS entries (a late call, ordered after the one that ended
    the round, is honest too: it just did not count).
    """

    if commitment(deck_secret) != deck_commitment:
        return AuditResult(seat, False, "deck secret does not match its commitment (stacked deck?)")
    deck = deal_for(seat, deck_secret, joint, jokers=variants.jokers)
    tab = Tableau(seat, deck, stock_turn=variants.stock_turn, jokers=variants.jokers)

    def fail(reason: str) -> AuditResult:
        return AuditResult(seat, False, reason, len(tab.nerts))

    try:
        redo(tab, moves)
    except IllegalMove as exc:
        return fail(f"impossible move: {exc.reason}")
    launched = [m for m in moves if m[0] == OP_FOUND]
    if len(launched) != len(plays):
        return fail(f"{len(plays)} plays on the wire but {len(launched)} in the move log")
    for move, play in zip(launched, plays, strict=True):
        _, src, card, lamport, pile, declared = move
        if (src, card, lamport, pile, declared) != (play.src, play.card, play.lamport,
                                                    play.pile, play.declared):
            return fail(f"played {card_name(play.card)} that its move log does not show")
    for move in moves:
        if move[0] == OP_SETTLE:
            _, card, lamport, landed = move
            key = (lamport, seat)
            if key not in log:
                return fail(f"took back {card_name(card)} from a play nobody saw")
            stayed = log.fate(key) is Fate.STAY
            if stayed != (landed == STAYED):
                return fail(f"{card_name(card)}: settled against the foundation log")
    if tab.in_flight:
        return fail("plays left unsettled at the end of the round")
    logged = [m[1] for m in moves if m[0] == OP_NERTS]
    if list(calls) != logged:
        wrong = next((t for t in calls if t not in logged), None)
        at = f" at Lamport time {wrong}" if wrong is not None else ""
        return fail(f"called Nerts{at} without an empty Nerts pile "
                    f"({len(tab.nerts)} cards left in it)")
    rotated = sum(1 for m in moves if m[0] == OP_ROTATE and m[1] != ROTATE_ALONE)
    alone = sum(1 for m in moves if m[0] == OP_ROTATE and m[1] == ROTATE_ALONE)
    if rotated > rotations or (alone and not variants.lone_rotate):
        return fail("rotated the stock without an agreed stuck vote")
    return AuditResult(seat, True, "", len(tab.nerts))


def score_round(
    seats: int,
    *,
    outcomes: Mapping[int, AuditResult],
    cards_up: Sequence[int],
    nerts_bound: Sequence[int],
    caller: int | None,
    variants: Variants,
) -> tuple[tuple[SeatRound, ...], tuple[str, ...]]:
    """Every seat's result and verdict ("" when clean) for the round.

    ``outcomes`` holds the audits of the seats that published one;
    ``cards_up`` is each seat's cards staying on the agreed foundations, and
    ``nerts_bound`` the Nerts count the agreed log proves at most (shown for a
    seat whose own moves cannot say). A failed or missing audit voids that
    seat's round: it scores 0, whatever it got up. When the seat whose call
    ended the round is not cleared by its audit, the call may have been a lie
    that stopped everyone else: the whole round is void, for every seat.
    """
    results: list[SeatRound] = []
    verdicts: list[str] = []
    void_round = caller is not None and not (caller in outcomes and outcomes[caller].ok)
    for seat in range(seats):
        outcome = outcomes.get(seat)
        up = cards_up[seat]
        if outcome is None or outcome.nerts_left is None:
            left = nerts_bound[seat]
        else:
            left = outcome.nerts_left
        ok = outcome is not None and outcome.ok
        void = void_round or not ok
        verdicts.append(UNAUDITED if outcome is None else outcome.reason)
        results.append(SeatRound(seat, up, left, 0 if void else round_score(up, left, variants),
                                 caller == seat, void=void))
    return tuple(results), tuple(verdicts)
