"""The end-of-round audit: replay a seat's round from its revealed deck.

Given what a seat published during the round (its foundation plays, its Nerts
call) and what it reveals at the end (deck secret, local move log), every peer
checks that the deck is the committed one, that every move was legal from that
deck, that every play on the wire is a move in the log (and the other way
round), that each play settled as the foundation log decided, and that a Nerts
call came with an empty Nerts pile. Pure: same inputs, same verdict, on every
peer.

:func:`score_round` turns every seat's verdict into the round's results, by
the rules of docs/PROTOCOL.md ("Audit verdicts"): a seat whose round is found
false (its audit failed or missing, its call false) scores the forfeit, and
every other seat its round as played.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..game.cards import card_name
from ..game.foundations import Fate, FoundationLog, Play
from ..game.moves import move_in_hand
from ..game.scoring import SeatRound, forfeit_score, round_score
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


class StuckVotes:
    """Whether a seat's stuck votes held: each was cast where its move log showed
    no move in hand (:func:`~p2p_nerts.game.moves.move_in_hand`).

    A vote (a STUCK entry, ``on``) names no place in the move log, only its
    Lamport time; the launches and the Nerts call there carry theirs. So the
    vote was cast at some point between the last of them before it and the
    first after it, and is false only if the tableau shows a move in hand at
    every point of that span: an honest vote is never found false, whatever
    happened between (a card come back from a bounce, a turn of the stock).
    """

    def __init__(self, moves: Sequence[Sequence[int]], votes: Sequence[int]) -> None:
        times = [(n, m[3] if m[0] == OP_FOUND else m[1]) for n, m in enumerate(moves)
                 if (m[0], len(m)) in ((OP_FOUND, 6), (OP_NERTS, 2))]
        #: Each vote's Lamport time and the span of move-log points it was cast in.
        self.open: dict[int, tuple[int, int]] = {}
        for vote in votes:
            lo = max((n + 1 for n, t in times if t < vote), default=0)
            hi = min((n for n, t in times if t > vote), default=len(moves))
            self.open[vote] = (lo, max(lo, hi))

    def look(self, point: int, tab: Tableau) -> None:
        """The tableau at ``point`` (moves done so far): every vote that may have been
        cast here with no move in hand holds."""
        spans = [v for v, (lo, hi) in self.open.items() if lo <= point <= hi]
        if spans and not move_in_hand(tab):
            for vote in spans:
                del self.open[vote]

    def false(self) -> int | None:
        """Once the whole log is looked at: the first vote that never held, or None."""
        return min(self.open, default=None)


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
    votes: Sequence[int] = (),
) -> AuditResult:
    """Check one seat's round.

    ``plays`` are its PLAY entries in sequence order and ``calls`` the Lamport
    times of its NERTS entries (a late call, ordered after the one that ended
    the round, is honest too: it just did not count); ``votes`` those of its
    stuck votes (each must have been cast with no move in hand, as must each
    rotation alone be made: :class:`StuckVotes`).
    """

    if commitment(deck_secret) != deck_commitment:
        return AuditResult(seat, False, "deck secret does not match its commitment (stacked deck?)")
    deck = deal_for(seat, deck_secret, joint, jokers=variants.jokers)
    tab = Tableau(seat, deck, stock_turn=variants.stock_turn, jokers=variants.jokers)

    def fail(reason: str) -> AuditResult:
        return AuditResult(seat, False, reason, len(tab.nerts))

    stuck = StuckVotes(moves, votes)

    def look(n: int, now: Tableau) -> None:
        stuck.look(n, now)
        move = moves[n]
        if move[0] == OP_ROTATE and tuple(move[1:]) == (ROTATE_ALONE,) and move_in_hand(now):
            raise IllegalMove("rotated the stock alone with a move in hand")

    try:
        redo(tab, moves, look)
    except IllegalMove as exc:
        return fail(f"impossible move: {exc.reason}")
    stuck.look(len(moves), tab)
    false_vote = stuck.false()
    if false_vote is not None:
        return fail(f"voted stuck at Lamport time {false_vote} with a move in hand")
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
    seat whose own moves cannot say). A failed or missing audit makes that
    seat's round false: it scores the forfeit (``forfeit_score``), whatever it
    got up. The others score their rounds as played, also when the call that
    ended the round is the false one: the round ended there for everyone, as
    the agreed log says, and what each honest seat got up by then stands.
    """
    results: list[SeatRound] = []
    verdicts: list[str] = []
    for seat in range(seats):
        outcome = outcomes.get(seat)
        up = cards_up[seat]
        if outcome is None or outcome.nerts_left is None:
            left = nerts_bound[seat]
        else:
            left = outcome.nerts_left
        ok = outcome is not None and outcome.ok
        verdicts.append(UNAUDITED if outcome is None else outcome.reason)
        results.append(SeatRound(seat, up, left, round_score(up, left, variants) if ok
                                 else forfeit_score(variants), caller == seat, void=not ok))
    return tuple(results), tuple(verdicts)
