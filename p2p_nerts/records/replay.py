"""A finished round, move by move, from its record: the pure model of a replay.

Each seat's AUDIT opened its deck secret and its whole move log, so every
tableau can be dealt again and played forward; the PLAY entries give every
foundation play its Lamport time. Moves are merged across seats in Lamport
order: a foundation play at its own time, the moves after it (turns, work
pile moves) at that same time, in the order the seat made them. The
foundations grow as the plays arrive in that order, which is how the table
ordered them; collisions and bounces are shown where they happened, and a
play ordered after the Nerts call is shown cut. The last frame is the round
as it was scored: its foundations and every seat's score come out of this
model alone, and the tests hold them to the round's agreed result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..game.cards import JOKER_RANK, card_name, face_name
from ..game.foundations import Fate, FoundationLog
from ..game.scoring import SeatRound, round_score
from ..game.tableau import (
    OP_FOUND,
    OP_NERTS,
    OP_ROTATE,
    OP_SETTLE,
    OP_SLIDE,
    OP_TURN,
    OP_WORK,
    STAYED,
    Tableau,
    apply_move,
    source_name,
)
from ..protocol.fairness import deal_for
from ..protocol.messages import View
from ..protocol.replica import RoundState, view_of


@dataclass(frozen=True, slots=True)
class Frame:
    """The table after one move: every tableau as the others see it, and the foundations."""

    step: int
    text: str  # what this move did, "" for the deal
    seat: int | None  # whose move
    tableaux: tuple[View | None, ...]  # None: a seat with no audit to replay (dropped)
    foundations: tuple[tuple[int, ...], ...]  # each pile's staying cards, bottom first
    bounce: bool = False  # the move was a play that bounced (or was cut)


@dataclass(frozen=True, slots=True)
class RoundReplay:
    round: int
    names: tuple[str, ...]
    end: str
    frames: tuple[Frame, ...]
    #: Each replayed seat's result as this replay reckons it at the last frame (a
    #: dropped seat, or one whose audit failed, has none).
    scores: tuple[SeatRound, ...]
    foundation_hash: bytes
    collisions: int
    bounces: int


def round_replay(rs: RoundState) -> RoundReplay:
    """Replay a scored round (``rs`` from a record's replay) from the deal to the end."""
    assert rs.joint is not None and rs.end is not None
    v = rs.variants
    tabs: dict[int, Tableau] = {}
    steps: list[tuple[int, int, int, tuple[int, ...]]] = []  # (time, seat, index, move)
    for seat, audit in sorted(rs.audits.items()):
        tabs[seat] = Tableau(seat, deal_for(seat, audit.deck_secret, rs.joint, jokers=v.jokers),
                             stock_turn=v.stock_turn, jokers=v.jokers)
        time = 0
        for index, move in enumerate(audit.moves):
            if move[0] == OP_FOUND:
                time = move[3]
            steps.append((time, seat, index, tuple(move)))
    # A dropped seat's plays (no move log to replay) still reached the foundations.
    for seat, plays in rs.plays_by_seat.items():
        if seat not in tabs:
            steps += [(p.lamport, seat, -1, (OP_FOUND, p.src, p.card, p.lamport, p.pile,
                                             p.declared)) for p in plays if p.key in rs.log]
    steps.sort()
    log = FoundationLog(strict_ties=v.strict_ties)
    broken: set[int] = set()
    frames = [_frame(0, "", None, rs, tabs, log)]
    collisions = bounces = 0
    for _time, seat, _index, move in steps:
        tab = tabs.get(seat)
        if tab is not None and seat not in broken:
            try:
                apply_move(tab, move)
            except Exception:  # noqa: BLE001 - a failed audit: its tableau stops here
                broken.add(seat)
                frames.append(_frame(len(frames), f"{rs.names[seat]}: an impossible move "
                                     "(the audit found this seat's round false)",
                                     seat, rs, tabs, log))
                continue
        text, bounced = _describe(rs, seat, move)
        if move[0] == OP_FOUND:
            key = (move[3], seat)
            if key in rs.log and rs.log.fate(key) is not Fate.CUT:  # a cut play never lands
                log.add(rs.log.play(key))
                if rs.log.fate(key) is Fate.BOUNCE:
                    bounces += 1
                    collisions += rs.log.first_over(key) is not None
        frames.append(_frame(len(frames), text, seat, rs, tabs, log, bounce=bounced))
    if rs.log.cutoff is not None:
        log.set_cutoff(rs.log.cutoff)
    caller = rs.call[1] if rs.call else None
    scores = tuple(
        SeatRound(seat, log.cards_of(seat), len(tab.nerts),
                  round_score(log.cards_of(seat), len(tab.nerts), v), caller == seat)
        for seat, tab in sorted(tabs.items()) if seat not in broken)
    frames.append(_frame(len(frames), f"round over ({rs.end})", None, rs, tabs, log))
    return RoundReplay(rs.number, rs.names, rs.end, tuple(frames), scores, log.state_hash(),
                       collisions, bounces)


def _frame(step: int, text: str, seat: int | None, rs: RoundState, tabs: dict[int, Tableau],
           log: FoundationLog, *, bounce: bool = False) -> Frame:
    views = tuple(view_of(tabs[s]) if s in tabs else None for s in range(len(rs.keys)))
    piles = tuple(tuple(p.card for p in log.piles[pid].stays) for pid in sorted(log.piles)
                  if log.piles[pid].stays)
    return Frame(step, text, seat, views, piles, bounce)


def _describe(rs: RoundState, seat: int, move: Sequence[int]) -> tuple[str, bool]:
    """A line for a move, and whether it was a play that did not stay."""
    who = rs.names[seat]
    op = move[0]
    if op == OP_FOUND:
        key = (move[3], seat)
        card = card_name(move[2])
        if move[2] & 15 == JOKER_RANK:  # a joker, named with the card it was declared
            card += f" as {face_name(move[5])}"
        if key not in rs.log:
            return f"{who}: {card} to a foundation (not counted)", True
        fate = rs.log.fate(key)
        if fate is Fate.STAY:
            return f"{who}: {card} from the {source_name(move[1])} to a foundation", False
        if fate is Fate.CUT:
            return f"{who}: {card} too late, after the round's end", True
        first = rs.log.first_over(key)
        by = f": {rs.names[first.author]} was first" if first is not None else ""
        return f"{who}: {card} bounces{by}", True
    if op == OP_SETTLE:
        card = card_name(move[1])
        return (f"{who}: {card} stays" if move[3] == STAYED
                else f"{who}: {card} comes back"), False
    if op == OP_TURN:
        return f"{who} turns the stock", False
    if op in (OP_WORK, OP_SLIDE):
        return f"{who} moves from the {source_name(move[1])}", False
    if op == OP_ROTATE:
        return f"{who} rotates the stock", False
    if op == OP_NERTS:
        return f"{who} calls Nerts!", False
    return f"{who}: move {tuple(move)}", False
