"""What a player (a person's keys, a bot, a script) can ask of its replica, and
what the commands about my own seat do (:class:`Moves`).

Each command is a frozen value handed to :meth:`Replica.handle` with the time:
a front end, a log or a test can build, compare and print it, where a closure
over the replica could only be called. The replica refuses one that the
table's state does not allow with a :class:`CommandError`, changing nothing.
The commands about the table are the lobby's (``_lobby.command``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from ...game.moves import is_stuck, perform
from ...game.tableau import Tableau, Target
from ...game.variants import Variants
from ..clock import LamportClock
from ..messages import Hello, Join, Nerts, Play, Stuck
from ._base import CommandError, Phase
from ._effects import Effect, Sign
from ._liveness import view_due
from ._recovery import Recovery, new_moves
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
#: My moves in a round, made on my tableau (:meth:`Moves.decide`).
InRound = Move | Turn | RotateAlone | VoteStuck | CallNerts


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
    if rs.me is not None and rs.me in rs.left:  # (its drop follows from it)
        return "you left this round; you play again next round"
    if rs.me is None or rs.dropped(rs.me):
        return "you were dropped from this round; you play again next round"
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


class Moves:
    """What the commands about my own seat do: a guest opening the table, and my
    moves in a round, each made on my tableau in the round it is handed; what
    they journal and sign comes back as effects, for the facade to sign.

    It holds my name, the host's key, my Lamport clock (read: a play is keyed by
    the time its entry will carry) and ``Recovery``: a seat back at a table
    does not move until it has heard the table out, and a guest that opens a
    table it may have sat at begins a resume there. That resume is set here,
    on the owner handed in (as ``Steps`` takes a round's secrets from it),
    rather than returned as an effect: the decision reads the resume under way
    and sets it in one place, before the JOIN it must hold back is signed.
    """

    def __init__(self, name: str, host_key: bytes, clock: LamportClock,
                 recovery: Recovery) -> None:
        self.name = name
        self.host_key = host_key
        self.clock = clock
        self.recovery = recovery

    def blocked(self, rs: RoundState | None, phase: Phase, watching: bool) -> str | None:
        """Why my moves are refused right now (:func:`refused`), or None if I may move."""
        back = self.recovery
        return refused(rs, phase, watching, behind=back.catching_up or back.resume is not None)

    def open(self, seq: int, now: float) -> list[Effect]:
        """A guest asks the host for a seat (``seq``: the last number I signed here).

        With nothing signed here yet, as far as we know, the host may hold
        entries of this key from before (a lost journal): ask first (a HELLO),
        the JOIN held back until the table has said where my chain ends.
        """
        effects: list[Effect] = []
        if seq == 0 and self.recovery.resume is None:
            self.recovery.ask_first(self.host_key, now)
            effects.append(Sign(Hello(self.name, 1)))
        effects.append(Sign(Join(self.name, None)))
        return effects

    def decide(self, command: InRound, rs: RoundState | None, phase: Phase, *, watching: bool,
               drawn: bool, now: float) -> list[Effect]:
        """What ``command`` does, made at once on my tableau in ``rs`` (the table's
        round, in ``phase``): the moves to journal, then what to sign.

        Refused (:class:`CommandError`, or ``IllegalMove`` for a card that does
        not go there) when the table does not allow it; then nothing changed.
        ``drawn``: whether any peer draws the tableaux (the view riding with a
        play, ``view_due``), at ``now``.
        """
        reason = self.blocked(rs, phase, watching)
        if reason is not None:
            raise CommandError(reason)
        assert rs is not None and rs.tab is not None
        tab = rs.tab
        match command:
            case Move(target=target) if target.pile is not None:
                return self.play(rs, tab, target, target.pile, drawn=drawn, now=now)
            case Move(target=target):
                perform(tab, target)
            case Turn():
                tab.turn()
            case RotateAlone():
                rotate_alone(rs, tab)
            case VoteStuck(on=on):
                if on and not is_stuck(tab, rs.log):
                    raise CommandError("the stuck vote is for a player with no move left: "
                                       "you can still play or turn up a card that fits")
                return [Sign(Stuck(on, len(rs.log)))]
            case CallNerts():
                lamport = self.clock.time + 1
                tab.record_nerts_call(lamport)
                rs.called_nerts()
                return [*new_moves(rs, tab), Sign(Nerts(), expect_lamport=lamport)]
            case _:
                assert_never(command)
        return new_moves(rs, tab)

    def play(self, rs: RoundState, tab: Tableau, target: Target, pile: int, *, drawn: bool,
             now: float) -> list[Effect]:
        """A card of mine to foundation ``pile``, in the air on my tableau under the
        key (Lamport time, seat) its PLAY will carry; the PLAY sent at once and
        applied to myself on the shell's next call (``Sign.unapplied``).

        My view rides with the play (one write, one wake-up of each peer) rather
        than waking every peer again at the next tick.
        """
        lamport = self.clock.time + 1
        assert rs.me is not None
        card = perform(tab, target, (lamport, rs.me))
        assert card is not None
        effects = new_moves(rs, tab)
        effects.append(Sign(Play(card, pile, target.src, target.declared, len(tab.log) - 1),
                            expect_lamport=lamport, unapplied=True))
        view = view_due(rs, now, drawn=drawn)
        if view is not None:
            effects.append(Sign(view))
        return effects
