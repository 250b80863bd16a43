"""The lobby: who may sit, who waits for the next round, the roster as a round
closes; what a host may ask between rounds, and when it deals by itself; and
what a ROSTER or SETTINGS from the host sets.

Pure functions: they say what the answer is, or refuse (``CommandError`` for
a local command, ``EnvelopeError`` for an entry); the facade signs the
ROSTER, SETTINGS or REFUSE, keeps the waiting list and begins the round.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ...game.variants import VariantError, Variants
from ..envelope import EnvelopeError
from ..messages import Seat, Settings
from ._base import SIT_DOWN_WAIT, CommandError, Phase, rules_of
from ._state import RoundState

#: Phases in which the host may change the table (its settings, its seats).
BETWEEN_ROUNDS = frozenset({Phase.LOBBY, Phase.BETWEEN})

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


def host_between_rounds(is_host: bool, phase: Phase, only: str, when: str) -> None:
    """Refuse a host's command (``only``: what only the host does) from a guest, or
    while a round is under way (``when``: why not now)."""
    if not is_host:
        raise CommandError(f"only the host {only}")
    if phase not in BETWEEN_ROUNDS:
        raise CommandError(when)


def check_deal(seats: tuple[Seat, ...], variants: Variants) -> None:
    """Refuse to deal to nobody, or to more or fewer seats than the rules play."""
    if not seats:
        raise CommandError("nobody is seated")
    try:
        variants.check_players(len(seats))
    except VariantError as exc:
        raise CommandError(str(exc)) from None


def arranged(seats: tuple[Seat, ...], order: tuple[bytes, ...]) -> tuple[Seat, ...] | None:
    """The seats in ``order`` (every seated key once), or None if that is the order
    already."""
    by_key = {s.key: s for s in seats}
    if len(order) != len(by_key) or set(order) != by_key.keys():
        raise CommandError("every seated player needs exactly one seat")
    return None if order == tuple(by_key) else tuple(by_key[key] for key in order)


def auto_deal_due(phase: Phase, seats: int, auto_start: int | None,
                  next_round_at: float | None, now: float, sitting_down: Collection[bytes],
                  seated: frozenset[bytes]) -> bool:
    """Whether a host dealing by itself deals now: in the lobby once enough are
    seated; between rounds once the break is over and the newcomers seated as
    the round closed have caught up (or were waited for long enough)."""
    if phase is Phase.LOBBY:
        return bool(auto_start) and seats >= (auto_start or 0)
    return (phase is Phase.BETWEEN and next_round_at is not None and now >= next_round_at
            and (not seated.intersection(sitting_down) or now >= next_round_at + SIT_DOWN_WAIT))


def roster_begins(entry_round: int, number: int, phase: Phase, variants: Variants,
                  seats: tuple[Seat, ...]) -> bool:
    """Whether a host's ROSTER (for ``entry_round``; ``number``: the round we are in)
    begins the next round (True) or only rearranges the seats between rounds."""
    if entry_round == number + 1:
        try:
            variants.check_players(len(seats))  # what the host checks to deal
        except VariantError:
            raise EnvelopeError("bad_field:roster") from None
        return True
    if entry_round == number and phase in (Phase.LOBBY, Phase.BETWEEN, Phase.OVER):
        return False
    raise EnvelopeError("wrong_round")


def variants_of(settings: Settings, phase: Phase) -> Variants:
    """The rules a host's SETTINGS set, between rounds only."""
    if phase not in BETWEEN_ROUNDS:
        raise EnvelopeError("settings_mid_round")
    try:
        return rules_of(settings)
    except VariantError:
        raise EnvelopeError("bad_field:settings") from None
