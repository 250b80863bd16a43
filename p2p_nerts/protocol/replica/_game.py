"""The game at one table as it stands: its phase, the round under way and the one
before it, the match and the running totals.

``Game`` is their one owner: they change only in its methods, each named for
what happened to the game, called where that is decided (``Steps`` as a round
begins, is scored or a score is taken back, and as a snapshot is taken up; the
facade as the phase changes, ``SetPhase``). Everyone else reads them.
"""

from __future__ import annotations

from ...game.scoring import Match
from ._base import Phase
from ._state import RoundState


class Game:
    """The table's phase, round (``rs``, and ``prev_rs`` before it), match and running
    totals by player key (kept by key, so they survive seats changing between
    rounds)."""

    def __init__(self) -> None:
        self.phase = Phase.LOBBY
        self.rs: RoundState | None = None
        #: The round before ``rs``: one call can close a round and begin the next,
        #: and whoever reads its end (a summary, a score screen) reads it after.
        self.prev_rs: RoundState | None = None
        self.match: Match | None = None
        self.totals: dict[bytes, int] = {}

    def begin_round(self, rs: RoundState, totals: dict[bytes, int], match: Match) -> None:
        """``rs`` is the table's round now, in its shuffle (the one before it kept as
        ``prev_rs``), with the game's ``totals`` and ``match`` as it begins
        (``rounds.begin``)."""
        self.prev_rs, self.rs = self.rs, rs
        self.totals, self.match = totals, match
        self.phase = Phase.SHUFFLE

    def take_standing(self, totals: dict[bytes, int], match: Match, phase: Phase) -> None:
        """The game as a snapshot gives it, between rounds (or over): no round held
        (``Pruning.take_up``)."""
        self.totals, self.match, self.phase = totals, match, phase
        self.rs = self.prev_rs = None

    def enter(self, phase: Phase) -> None:
        """The table's phase changes (play starts, say)."""
        self.phase = phase

    def scored(self, rs: RoundState) -> None:
        """``rs``'s results (``closing.reckoned``) added to the match, and the running
        totals as that leaves them."""
        match = self.match
        assert match is not None
        match.add_round(rs.results)
        self.totals.update(zip(rs.keys, match.totals, strict=True))

    def unscored(self, rs: RoundState) -> None:
        """Take ``rs``'s results back out of the match: a drop agreed after it was
        reckoned (it scores again, and the running totals follow then)."""
        match = self.match
        assert match is not None
        for r in rs.results:
            match.totals[r.seat] -= r.score
        match.rounds -= 1
