"""What the replica tells its user (a screen, a bot, a test): frozen events.

Events describe what happened, already decided; a UI only draws them. They
carry seats and names rather than keys so that no UI needs protocol knowledge.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..game.foundations import Fate, Play
from ..game.scoring import SeatRound


@dataclass(frozen=True, slots=True)
class Event:
    """Base class of everything the replica reports."""


@dataclass(frozen=True, slots=True)
class RosterChanged(Event):
    names: tuple[str, ...]
    fingerprints: tuple[str, ...]
    me: int | None  # my seat, if seated


@dataclass(frozen=True, slots=True)
class SettingsChanged(Event):
    summary: str


@dataclass(frozen=True, slots=True)
class ReadyChanged(Event):
    ready: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class RoundStarting(Event):
    """Every deck is fixed; play starts after ``countdown`` seconds."""

    round: int
    countdown: float


@dataclass(frozen=True, slots=True)
class RoundStarted(Event):
    round: int


@dataclass(frozen=True, slots=True, init=False)
class PlayAdded(Event):
    """A play reached the foundations (not final yet: it may still bounce).

    Its ``__init__`` is written out, as PlayFinal's: one of each is built for
    every play received, and compiled (``scripts/compile_engine.py``), a
    dataclass's generated one stays interpreted.
    """

    play: Play
    mine: bool

    def __init__(self, play: Play, mine: bool) -> None:
        # Frozen: set as the generated one does (compiled, straight into the object).
        object.__setattr__(self, "play", play)
        object.__setattr__(self, "mine", mine)


@dataclass(frozen=True, slots=True, init=False)
class PlayFinal(Event):
    """A play's fate is final. ``first`` names who took its place if it bounced;
    ``tie`` says it lost by the draw (``foundations.order``) to a play of the same
    rank, or to the round's end, made at the same Lamport time; ``ended`` says how
    the round ended for a play it cut ("nerts", or "deadlock": everyone stuck)."""

    round: int
    play: Play
    fate: Fate
    mine: bool
    first: str | None = None
    tie: bool = False
    ended: str | None = None

    def __init__(self, round: int, play: Play, fate: Fate, mine: bool,
                 first: str | None = None, tie: bool = False, ended: str | None = None) -> None:
        object.__setattr__(self, "round", round)
        object.__setattr__(self, "play", play)
        object.__setattr__(self, "fate", fate)
        object.__setattr__(self, "mine", mine)
        object.__setattr__(self, "first", first)
        object.__setattr__(self, "tie", tie)
        object.__setattr__(self, "ended", ended)


@dataclass(frozen=True, slots=True)
class StuckChanged(Event):
    stuck: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class Rotated(Event):
    """Everyone was stuck: every stock was rotated (the ``count``-th time this round)."""

    count: int


@dataclass(frozen=True, slots=True)
class NertsCalled(Event):
    seat: int
    name: str


@dataclass(frozen=True, slots=True)
class RoundOver(Event):
    round: int
    end: str  # "nerts" or "deadlock"
    results: tuple[SeatRound, ...]
    totals: tuple[int, ...]
    foundation_hash: bytes
    verdicts: tuple[str, ...]  # "" for a clean audit, else the reason
    #: The round's players by seat: by the time a listener hears this, the
    #: replica may already hold the next round's roster.
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RoundAgreed(Event):
    """Every live peer reported the same foundation hash and scores."""

    round: int


@dataclass(frozen=True, slots=True)
class Divergence(Event):
    """Some live seats reported another round result: a faulty or lying peer (no repair)."""

    round: int
    seats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameOver(Event):
    winner: str
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PeerDropped(Event):
    seat: int
    name: str


@dataclass(frozen=True, slots=True)
class Flagged(Event):
    """A peer misbehaved: failed its audit, or signed two different entries.

    For the latter, ``proof`` holds the two frames (see protocol/proof.py), so
    whoever shows the flag can let anyone check it.
    """

    seat: int
    name: str
    reason: str
    proof: tuple[bytes, ...] = ()


@dataclass(frozen=True, slots=True)
class Rejected(Event):
    """A message from the wire was refused; nothing changed."""

    reason: str


@dataclass(frozen=True, slots=True)
class Refused(Event):
    """The table would not seat us (full, round under way, wrong code)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Notice(Event):
    """Anything else worth a line on screen."""

    text: str
