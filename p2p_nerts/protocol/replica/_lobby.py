"""The host's lobby: who may sit, who waits for the next round, and the roster
as a round closes.

Pure functions: they say what the host's answer is; the facade signs the
ROSTER or REFUSE and keeps the waiting list.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..messages import Seat
from ._state import RoundState

EQUIVOCATOR = "this seat signed two different entries under one number"
FULL = "the table is full"
OVER = "the game is over"


@dataclass(frozen=True, slots=True)
class Refuse:
    """Tell the newcomer no, and why."""

    reason: str


@dataclass(frozen=True, slots=True)
class Wait:
    """Mid-round: the player sits down as this round closes (the waiting list)."""


@dataclass(frozen=True, slots=True)
class SeatIt:
    """Between rounds: a newcomer sits after everyone else."""


@dataclass(frozen=True, slots=True)
class Retell:
    """A seated player asked again: tell it the roster again."""


Answer = Refuse | Wait | SeatIt | Retell


def answer_join(key: bytes, *, rs: RoundState | None, in_round: bool, over: bool,
                seated: frozenset[bytes], taken: int, waiting: dict[bytes, str],
                proven: bool, room: int) -> Answer | None:
    """The host's answer to ``key``'s JOIN; None when there is nothing to say.

    ``in_round``: a round is being shuffled, played or scored; ``seated``: the
    keys of the ``taken`` seats; ``proven``: the key is a proven equivocator;
    ``room``: the seats the host offers.
    A seat live in the round catches up through resends, and one already on
    the waiting list waits; one dropped from this round, or given up after an
    earlier one, never chose to leave: it sits down as this round closes, so
    it cannot miss the short break before the next deal.
    """
    if proven:
        return Refuse(EQUIVOCATOR)
    is_seated = key in seated
    if in_round:
        seat = rs.seat_of(key) if rs is not None else None
        if (seat is not None and rs is not None and seat in rs.live) or key in waiting:
            return None
        if not is_seated and taken + len(waiting) >= room:
            return Refuse(FULL)
        return Wait()
    if is_seated:
        return Retell()
    if over:
        return Refuse(OVER)
    if taken >= room:
        return Refuse(FULL)
    return SeatIt()


def reseat(rs: RoundState, seats: tuple[Seat, ...], waiting: dict[bytes, str],
           proven: set[bytes], host_key: bytes, max_seats: int) -> tuple[Seat, ...]:
    """The roster as a round closes: the dropped leave, those waiting sit down.

    A seat dropped this round leaves the table, or every later round would
    wait for it again, unless it has asked back meanwhile (it keeps its total
    either way); a proven equivocator leaves for good. The host stays.
    """
    gone = {rs.keys[s] for s in range(len(rs.keys)) if s not in rs.live} - {host_key}
    gone -= waiting.keys()
    gone |= proven - {host_key}
    kept = {s.key: s for s in seats if s.key not in gone}
    for key, name in waiting.items():
        if key not in kept and key not in gone and len(kept) < max_seats:
            kept[key] = Seat(key, name)
    return tuple(kept.values())
