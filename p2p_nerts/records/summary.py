"""The game's summary as JSON lines: one per round, then the game's result.

``nerts host/join --headless --summary FILE`` writes it, and ``nerts verify``
writes the same lines from a record, so a record can be checked against what
every peer wrote. Every field is decided by the replicated log, so every peer
writes the same lines (the integration tests compare them byte for byte);
only the ``local`` parts are about this peer: in a round's line, whether every
card of its own deck is accounted for (``cards_ok``: in its tableau or on the
agreed foundations) and how many it holds; in the final object, its name and
rejection counters.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import TextIO

from ..game.foundations import Fate
from ..game.simulate import cards_accounted
from ..protocol import events as ev
from ..protocol.replica import Phase, Replica

__all__ = ["SummaryWriter"]

_log = logging.getLogger("nerts")


class SummaryWriter:
    """Writes one JSON line per round, then the game's result, to ``out``.

    A round's line is written once the round is closed (every peer's
    summary in: :meth:`closed`, called after the replica call that closed it,
    so that the last PlayFinal events of the round, counted for collisions
    and bounces, which can come after its RoundOver, are in), else when the
    next round starts or at the end.
    """

    def __init__(self, replica: Replica, out: TextIO | None) -> None:
        self._replica = replica
        self._out = out
        self._pending: dict[str, object] | None = None
        self._bounces: Counter[int] = Counter()
        self._collisions: Counter[int] = Counter()
        self._winner: str | None = None
        self.rounds = 0

    def on_event(self, event: ev.Event) -> None:
        # Events are heard after the replica call that made them, which may
        # already have begun the next round: take round facts from the event.
        if isinstance(event, ev.PlayFinal) and event.fate is Fate.BOUNCE:
            self._bounces[event.round] += 1
            if event.first is not None:
                self._collisions[event.round] += 1
        elif isinstance(event, ev.RoundStarting):
            self._flush()
        elif isinstance(event, ev.RoundOver):
            if self._pending is not None and self._pending["round"] == event.round:
                self._pending = None  # scored again (a drop agreed late): this one counts
            else:
                self.rounds += 1
            self._flush()
            self._pending = self._line(event)
        elif isinstance(event, ev.RoundAgreed | ev.Divergence) and self._pending is not None:
            self._pending["agreed"] = isinstance(event, ev.RoundAgreed)
        elif isinstance(event, ev.GameOver):
            self._winner = event.winner

    def resumed(self) -> None:
        """Back from a journal, the round may be scored already but not closed: its
        RoundOver came before the crash (a restore tells nothing again) and its
        line, written as it closes, was not. Take the line up from the round.
        The rounds closed before the crash count in the final line, as they do
        in every other seat's: the game's rounds, not this process's."""
        view = self._replica.view()
        rnd, totals = view.round, view.totals
        if rnd is not None:
            self.rounds = rnd.number - (view.phase not in (Phase.BETWEEN, Phase.OVER))
        if (view.phase is Phase.SCORING and rnd is not None and rnd.results
                and rnd.end is not None and totals is not None):
            self.rounds += 1
            self._pending = self._line(ev.RoundOver(
                rnd.number, rnd.end, rnd.results, totals, rnd.foundations.state_hash(),
                rnd.verdicts, rnd.names))

    def _line(self, event: ev.RoundOver) -> dict[str, object]:
        return {
            "round": event.round,
            "end": event.end,
            "players": [
                {"name": event.names[r.seat], "seat": r.seat,
                 "foundation_cards": r.foundation_cards, "nerts_left": r.nerts_left,
                 "score": r.score, "total": event.totals[r.seat],
                 "called_nerts": r.called, "void": r.void}
                for r in event.results
            ],
            "foundation_hash": event.foundation_hash.hex(),
            "verdicts": list(event.verdicts),
            "agreed": None,
            "local": self._accounting(event.round),
        }

    def closed(self) -> None:
        """The replica call that closed a round is over: write the round's line."""
        if self._replica.phase in (Phase.BETWEEN, Phase.OVER):
            self._flush()

    def _accounting(self, round_no: int) -> dict[str, object]:
        """Our own deck at the end of the round: every card in exactly one place?"""
        rnd = self._replica.view().round_of(round_no)
        tab = rnd.tableau if rnd is not None else None
        if rnd is None or tab is None or rnd.me is None:
            return {}
        ok = cards_accounted(rnd.me, tab, rnd.foundations, rnd.variants.jokers)
        if not ok:
            _log.error("round %d: cards of my deck are lost or doubled", round_no)
        return {"cards_ok": ok, "held": sum(1 for _ in tab.cards()),
                "nerts_left": len(tab.nerts)}

    def finish(self, local: dict[str, object]) -> None:
        """Write the pending round and the final object."""
        self._flush()
        view = self._replica.view()
        rnd, by_seat = view.round, view.totals
        totals = ({rnd.names[s]: t for s, t in enumerate(by_seat)}
                  if rnd is not None and by_seat is not None else {})
        self._write({"final": True, "game_over": self._winner is not None,
                     "rounds": self.rounds, "winner": self._winner, "totals": totals,
                     "local": local})

    def _flush(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            number = pending["round"]
            assert isinstance(number, int)
            pending["collisions"] = self._collisions[number]
            pending["bounces"] = self._bounces[number]
            self._write(pending)

    def _write(self, obj: dict[str, object]) -> None:
        if self._out is not None:
            self._out.write(json.dumps(obj) + "\n")
            self._out.flush()
