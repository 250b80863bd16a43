"""Steps: the effects that only decide more effects, as plain frozen values.

A sub-machine often cannot finish a decision in one go: a round's close is
scored only once what came before it in the same list is done, a seat leaving
makes the GO, a reveal or the stuck rule due again, a turn in the total order
convicts a fork. It returns a step naming what to decide next and the round it
is about; ``Steps.decide`` (``_steps``) asks the sub-machine whose step it is,
with the table as it stands at that point of the list. They share one base,
:class:`Step`, so the facade hands every one of them on in one case, and a
new one cannot be left out of :data:`StepEffect`, the union ``decide``
answers in full (the type checker holds the two together).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...game.foundations import PlayKey
from ...game.variants import Variants
from ..audit import AuditResult
from ..envelope import Entry
from ..messages import Payload, Snapshot
from ..proof import ForkProof
from ._base import Lead
from ._state import Ordered, RoundState


@dataclass(frozen=True, slots=True)
class Step:
    """An effect that only decides more effects (``Steps.decide``)."""


# --- what a round entry makes due
@dataclass(frozen=True, slots=True)
class CheckGo(Step):
    """Look at the host's GO for ``rs`` again (``_shuffle.go``): the deal just changed."""

    rs: RoundState


@dataclass(frozen=True, slots=True)
class CheckReveal(Step):
    """Sign my REVEAL for ``rs`` if it is due now (``_shuffle.reveal``)."""

    rs: RoundState


@dataclass(frozen=True, slots=True)
class HoldProof(Step):
    """Hold a checked proof of a fork, told already (by a FORK entry)."""

    proof: ForkProof


@dataclass(frozen=True, slots=True)
class FlagSeat(Step):
    """Flag ``seat`` of ``rs`` for ``reason`` (``closing.flag``: once a round)."""

    rs: RoundState
    seat: int
    reason: str


@dataclass(frozen=True, slots=True)
class FlagKey(Step):
    """Flag ``key``'s seat in the round, if it has one (``closing.flag_key``): it
    signed what no honest peer signs."""

    key: bytes
    reason: str


@dataclass(frozen=True, slots=True)
class Follow(Step):
    """Ask for the entries these leads name, as often as ``Forks`` allows: the
    answer, a second entry under one number, proves a fork."""

    leads: Sequence[Lead]


@dataclass(frozen=True, slots=True)
class EndRound(Step):
    """``rs`` ends (``how``: a Nerts call, a deadlock), its foundations cut off at
    ``cutoff`` in the total order."""

    rs: RoundState
    how: str
    cutoff: PlayKey | None


# --- a seat leaving the round
@dataclass(frozen=True, slots=True)
class LeaveRound(Step):
    """``seat`` leaves ``rs``'s live seats at ``at`` in the total order, counting up
    to ``cut``."""

    rs: RoundState
    seat: int
    cut: int
    at: PlayKey


@dataclass(frozen=True, slots=True)
class LobbyEntry(Step):
    """A lobby entry (or a GOODBYE), delivered in its author's sequence: what it
    does to the table as it stands (``lobby.delivered``)."""

    entry: Entry
    payload: Payload


@dataclass(frozen=True, slots=True)
class SaidGoodbye(Step):
    """``key`` said GOODBYE (its entry ``seq``, for ``reason``) while ``rs`` was the
    table's round: what that does to the round (``drops.goodbye``), asked once
    the lobby has given its place up."""

    rs: RoundState | None
    key: bytes
    reason: str
    seq: int


@dataclass(frozen=True, slots=True)
class CutAfter(Step):
    """Take back out what ``seat`` sent past ``cut`` in ``rs`` (a proven fork)."""

    rs: RoundState
    seat: int
    cut: int


@dataclass(frozen=True, slots=True)
class GoAgain(Step):
    """A seat left ``rs`` before play started: the host's GO, waiting, may name the
    deal of the seats left (``shuffle.joint_of_live``), and start play."""

    rs: RoundState


@dataclass(frozen=True, slots=True)
class StuckFinal(Step):
    """``seat``'s stuck vote (``on``) takes effect at ``key`` in the total order
    (``rounds.stuck_final``): every live seat stuck rotates, or ends the round."""

    rs: RoundState
    seat: int
    on: bool
    key: PlayKey | None


@dataclass(frozen=True, slots=True)
class VoidPlay(Step):
    """A play past its author's agreed drop cut has its turn: out of ``rs`` now
    (``drops.void_play``)."""

    rs: RoundState
    key: PlayKey


@dataclass(frozen=True, slots=True)
class Unscore(Step):
    """Take back ``rs``'s result, reckoned with entries a drop has taken out: it
    scores again (``closing.unscore``)."""

    rs: RoundState


# --- a round's close, a step at a time
@dataclass(frozen=True, slots=True)
class MaybeScore(Step):
    """Score ``rs`` if it is due now (``closing.score``): asked after what may have
    brought the last AUDIT in or taken a seat out, once that is done."""

    rs: RoundState


@dataclass(frozen=True, slots=True)
class Reckon(Step):
    """Score ``rs`` from its audits replayed (``outcomes``; ``gone``: seats out for a
    proven fork), once the VERDICTs on the failed ones are signed."""

    rs: RoundState
    outcomes: dict[int, AuditResult]
    gone: frozenset[int]


@dataclass(frozen=True, slots=True)
class MaybeClose(Step):
    """Close ``rs`` if it is due now (``closing.close``)."""

    rs: RoundState


@dataclass(frozen=True, slots=True)
class Reseat(Step):
    """Host, as ``rs`` closes: seat the table for the next round."""

    rs: RoundState


# --- a fork's turn in the total order
@dataclass(frozen=True, slots=True)
class Convict(Step):
    """A FORK has its turn in ``rs``'s total order (``forks.final``)."""

    rs: RoundState
    item: Ordered


# --- a round's beginning
@dataclass(frozen=True, slots=True)
class BeginRound(Step):
    """Round ``number`` begins with the seats as they are. ``note``: first note
    where the table stands and forget older rounds (not when the round begins
    from a snapshot, which is that note)."""

    number: int
    note: bool = True


@dataclass(frozen=True, slots=True)
class TakeUp(Step):
    """Go on from the host's snapshot (checked: rules that deal its seats)."""

    snapshot: Snapshot
    variants: Variants


@dataclass(frozen=True, slots=True)
class DrawSecrets(Step):
    """Draw my deck secret and joint share for ``rs`` (or take the journal's, when
    it is replayed) and sign my COMMIT to them (``rounds.commit``)."""

    rs: RoundState


#: Every step, as ``Steps.decide`` answers them.
StepEffect = (CheckGo | CheckReveal | HoldProof | FlagSeat | FlagKey | Follow | EndRound
              | LeaveRound | SaidGoodbye | CutAfter | GoAgain | StuckFinal | VoidPlay | Unscore
              | MaybeScore | Reckon | MaybeClose | Reseat | Convict | BeginRound | TakeUp
              | DrawSecrets | LobbyEntry)
