"""The end-of-round audit: replay a seat's round from its revealed deck.

Given what a seat published during the round (its foundation plays, its Nerts
call) and what it reveals at the end (deck secret, local move log), every peer
checks that the deck is the committed one, that every move was legal from that
deck, that every play on the wire is a move in the log (and the other way
round), that each play settled as the foundation log decided, and that a Nerts
call came with an empty Nerts pile. Pure: same inputs, same verdict, on every
peer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..game.cards import card_name
from ..game.foundations import Fate, FoundationLog, Play
from ..game.tableau import (
    OP_FOUND,
    OP_NERTS,
    OP_ROTATE,
    OP_SETTLE,
    ROTATE_ALONE,
    STAYED,
    IllegalMove,
    Tableau,
    replay,
)
from ..game.variants import Variants
from .fairness import commitment, deal_for


@dataclass(frozen=True, slots=True)
class AuditResult:
    """The verdict on one seat; ``nerts_left`` is what scoring uses when ``ok``."""

    seat: int
    ok: bool
    reason: str = ""
    nerts_left: int = 0


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

    def fail(reason: str) -> AuditResult:
        return AuditResult(seat, False, reason)

    if commitment(deck_secret) != deck_commitment:
        return fail("deck secret does not match its commitment (stacked deck?)")
    deck = deal_for(seat, deck_secret, joint, jokers=variants.jokers)
    try:
        tab: Tableau = replay(seat, deck, moves, stock_turn=variants.stock_turn,
                              jokers=variants.jokers)
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
        return fail("called Nerts without an empty Nerts pile")
    rotated = sum(1 for m in moves if m[0] == OP_ROTATE and m[1] != ROTATE_ALONE)
    alone = sum(1 for m in moves if m[0] == OP_ROTATE and m[1] == ROTATE_ALONE)
    if rotated > rotations or (alone and not variants.lone_rotate):
        return fail("rotated the stock without an agreed stuck vote")
    return AuditResult(seat, True, "", len(tab.nerts))
