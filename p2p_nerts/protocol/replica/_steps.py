"""Steps: the effects that only decide more effects.

A sub-machine often cannot finish a decision in one go: a round's close is
scored only once what came before it in the same list is done (``MaybeScore``,
``Reckon``, ``MaybeClose``), a seat leaving makes the GO, a reveal or the stuck
rule due again, a turn in the total order convicts a fork. Such an effect
names the next step and the round it is about; :meth:`Steps.decide` asks the
sub-machine whose step it is, with the table as it stands at that point of the
list (its phase, its match, the time), and returns what that decides. The
facade applies the answer in place, so the order of a list is kept exactly.
Nothing here signs, emits or changes the phase: every step is a question to a
sub-machine, which may change the round it is about as it answers (a play or
a result taken back out), and the answers are effects again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import assert_never

from ...game.scoring import Match
from . import _catchup as catchup
from . import _closing as closing
from . import _drops as drops
from . import _forks as forks
from . import _lobby as lobby
from . import _rounds as rounds
from . import _shuffle as shuffle
from ._base import Phase
from ._catchup import Pruning
from ._effects import Effect
from ._forks import Forks
from ._intake import Places
from ._recovery import Recovery
from ._seating import Seating
from ._state import RoundState
from ._step_effects import (
    BeginRound,
    CheckGo,
    CheckReveal,
    Convict,
    CutAfter,
    DrawSecrets,
    EndRound,
    FlagKey,
    FlagSeat,
    Follow,
    GoAgain,
    HoldProof,
    LeaveRound,
    LobbyEntry,
    MaybeClose,
    MaybeScore,
    Reckon,
    Reseat,
    SaidGoodbye,
    StepEffect,
    StuckFinal,
    TakeUp,
    Unscore,
    VoidPlay,
)


class Steps:
    """Where each step of one table's replica is decided: the sub-machines and the
    parts of the table that never change (its id, my key, whether I host), and
    the owners whose state a step reads or keeps (``Seating``, ``Forks``,
    ``Recovery``, ``Pruning``, ``Places``)."""

    def __init__(self, table_id: bytes, me: bytes, *, is_host: bool, rng: Callable[[int], bytes],
                 seating: Seating, forks: Forks, recovery: Recovery, pruning: Pruning,
                 places: Places) -> None:
        self.table_id = table_id
        self.me = me
        self.is_host = is_host
        self.rng = rng
        self.seating = seating
        self.forks = forks
        self.recovery = recovery
        self.pruning = pruning
        self.places = places

    def decide(self, step: StepEffect, current: RoundState | None, phase: Phase,
               match: Match | None, now: float, *, totals: dict[bytes, int]) -> list[Effect]:
        """What ``step`` decides, the table's round being ``current`` in ``phase``,
        its game ``match`` and running ``totals``, at ``now``; an empty list when it
        decides nothing more.

        A name captured in two cases has one type in both: ``rs`` is always a
        round the step is about, ``seat`` a seat index.
        """
        match step:
            case CheckGo(rs=rs):
                return self.go(rs, now)
            case GoAgain(rs=rs):  # the GO may name the deal of the seats left now
                return self.go(rs, now) if shuffle.joint_of_live(self.table_id, rs) else []
            case CheckReveal(rs=rs):
                return shuffle.reveal(rs)
            case HoldProof(proof=proof):
                return self.forks.prove(current, proof, phase, publish=False)
            case Follow(leads=leads):
                return self.forks.follow(current, leads, now)
            case Convict(rs=rs, item=item):
                return forks.final(rs, item)
            case BeginRound(number=number, note=note):
                return self.begin(number, note, current, phase, match, totals, now)
            case TakeUp(snapshot=snapshot, variants=variants):
                return self.pruning.take_up(snapshot, variants, self.me)
            case FlagSeat(rs=rs, seat=seat, reason=reason):
                return closing.flag(rs, seat, reason)
            case FlagKey(key=key, reason=reason):
                return closing.flag_key(current, key, reason)
            case EndRound(rs=rs, how=how, cutoff=cutoff):
                return closing.end_round(rs, how, cutoff, now)
            case CutAfter(rs=rs, seat=seat, cut=cut):
                return drops.cut_after(rs, seat, cut,
                                       scoring=rs is current and phase is Phase.SCORING)
            case LobbyEntry(entry=entry, payload=payload):
                return lobby.delivered(self.table(current, phase), entry, payload, current)
            case SaidGoodbye(rs=gone_from, key=key, reason=reason, seq=seq):
                return drops.goodbye(gone_from, key, reason, seq, phase=phase,
                                     authors=self.places.authors)
            case LeaveRound(rs=rs, seat=seat, cut=cut, at=at):
                return drops.leave(rs, seat, cut, at, now)
            case VoidPlay(rs=rs, key=play_key):
                drops.void_play(rs, play_key)
                return []
            case StuckFinal(rs=rs, seat=seat, on=on, key=vote_key):
                return rounds.stuck_final(rs, seat, on, vote_key)
            case MaybeScore(rs=rs):
                return closing.score(rs)
            case Reckon(rs=rs, outcomes=outcomes, gone=gone):
                assert match is not None
                return closing.scored(rs, match, outcomes, gone)
            case Unscore(rs=rs):
                assert match is not None
                closing.unscore(rs, match)
                return []
            case MaybeClose(rs=rs):
                return closing.close(rs, match, phase, is_host=self.is_host,
                                     auto_next=self.seating.auto_next, now=now)
            case Reseat(rs=rs):
                return lobby.closing_roster(self.table(current, phase), rs)
            case DrawSecrets(rs=rs):
                return rounds.commit(rs, self.recovery.secrets.pop(rs.number, None), self.rng)
            case _:
                assert_never(step)

    def table(self, current: RoundState | None, phase: Phase) -> lobby.Table:
        """The table as the lobby reads it, its round being ``current`` in ``phase``
        (``Seating.table``; the keys proven to fork are never seated again)."""
        return self.seating.table(phase, current.number if current is not None else 0,
                                  self.forks.proven.keys())

    def begin(self, number: int, note: bool, current: RoundState | None, phase: Phase,
              match: Match | None, totals: dict[bytes, int], now: float) -> list[Effect]:
        """Round ``number`` begins with the seats as they are (``rounds.begin``);
        ``note``: first journal the table as it stands, where a compacted journal
        will start, and forget what every seat holds of older rounds
        (``Pruning.begin``)."""
        seating, me, over = self.seating, self.me, phase is Phase.OVER
        noted: list[Effect] = []
        if note:
            snapshot = catchup.capture(
                number, over=over, seats=seating.seats, settings=seating.settings,
                totals=totals, rounds=match.rounds if match is not None else 0,
                authors=self.places.authors,
                player=lambda key: self.places.player(key, seating.holds_place(key, current)))
            noted = self.pruning.begin(snapshot, me)
        return [*noted, *rounds.begin(number, seating.seats, me, seating.variants, now,
                                      totals=totals, match=match, over=over)]

    def go(self, rs: RoundState, now: float) -> list[Effect]:
        """The host's GO looked at again (``shuffle.go``)."""
        return shuffle.go(self.table_id, rs, catching_up=self.recovery.catching_up, now=now,
                          countdown=self.seating.countdown)
