"""What a player (a person's keys, a bot, a script) can ask of its replica.

Each command is a frozen value handed to :meth:`Replica.handle` with the time:
a front end, a log or a test can build, compare and print it, where a closure
over the replica could only be called. The replica refuses one that the
table's state does not allow with a :class:`CommandError`, changing nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...game.moves import is_stuck
from ...game.tableau import Tableau, Target
from ...game.variants import Variants
from ._base import CommandError, Phase
from ._state import RoundState


@dataclass(frozen=True, slots=True)
class Open:
    """Join the table: the host seats itself, a guest asks for a seat."""


@dataclass(frozen=True, slots=True)
class StartRound:
    """Host: fix the roster and start the next round."""


@dataclass(frozen=True, slots=True)
class ChangeSettings:
    """Host: new rules (and clocks, where given) for the next round, for every seat."""

    variants: Variants
    countdown: float | None = None
    drop_after: float | None = None


@dataclass(frozen=True, slots=True)
class ArrangeSeats:
    """Host: the seated players, by key, in a new order for the next round.

    The order is who partners whom under "pairs" (seats 2k and 2k+1). It
    gives no seat an edge in ties of Lamport time: those are drawn
    (``foundations.order``).
    """

    order: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class SetReady:
    """Say whether I am ready for the next deal."""

    on: bool


@dataclass(frozen=True, slots=True)
class Move:
    """Play a card on my tableau: to a work pile, or to a foundation (sent as PLAY)."""

    target: Target


@dataclass(frozen=True, slots=True)
class Turn:
    """Turn stock cards over onto the waste."""


@dataclass(frozen=True, slots=True)
class RotateAlone:
    """The lone-stuck variant: a player with no move left puts the top stock card
    at the bottom of the stock."""


@dataclass(frozen=True, slots=True)
class VoteStuck:
    """Cast or take back my seat's stuck vote."""

    on: bool


@dataclass(frozen=True, slots=True)
class CallNerts:
    """Call Nerts: my Nerts pile is empty."""


@dataclass(frozen=True, slots=True)
class LeaveTable:
    """Leave the table, saying why (a round under way goes on without me)."""

    reason: str = "left the table"


@dataclass(frozen=True, slots=True)
class SeatLost:
    """Host: ``key``'s connection went while no round is under way. Its seat is
    given up, so that the table counts only those still there; a player who
    comes back (a crash, a cut cable) asks again and sits down at once."""

    key: bytes


@dataclass(frozen=True, slots=True)
class TurnAway:
    """Host: tell ``key``, which holds no seat, that the table will not keep it."""

    key: bytes
    reason: str


@dataclass(frozen=True, slots=True)
class AskToWatch:
    """A spectator asks ``key``'s peer for its entries: the request that admits
    it as a watcher there (``TableView.watcher``)."""

    key: bytes


Command = (Open | StartRound | ChangeSettings | ArrangeSeats | SetReady | Move | Turn
           | RotateAlone | VoteStuck | CallNerts | LeaveTable | SeatLost | TurnAway
           | AskToWatch)


def refused(rs: RoundState | None, phase: Phase, watching: bool,
            behind: bool = False) -> str | None:
    """Why my moves are refused right now, or None if I may move (``behind``: this
    peer, back after a restart, has yet to hear the table out)."""
    if watching:
        return "you are watching this table: a spectator does not play"
    if rs is None or rs.tab is None or phase is not Phase.PLAYING:
        return "no round is being played"
    if not rs.started:
        return "wait for the countdown"
    if rs.end is not None:
        return "the round is over"
    if rs.i_called:
        return "you called Nerts: the round is ending"
    if rs.me is None or rs.dropped(rs.me):
        return "you were dropped from this round; you play again next round"
    if rs.me in rs.left:
        return "you left this round; you play again next round"
    if rs.me in rs.forks:
        return "this seat signed two different entries under one number: it sits out"
    if behind:
        return "catching up with the table"
    return None


def rotate_alone(rs: RoundState, tab: Tableau) -> None:
    """My lone rotation, where the table plays it and I have no move left."""
    if not rs.variants.lone_rotate:
        raise CommandError("this table plays without the lone rotation")
    if not is_stuck(tab, rs.log):
        raise CommandError("the lone rotation is for a player with no move left: "
                           "you can still play or turn up a card that fits")
    tab.rotate(alone=True)
