"""Whole games between bots in one process, with simulated concurrency.

Each seat acts on its own clock (think times), keeps its own view of the
foundations, and hears the others' plays only after a random network delay,
so collisions, bounces and stuck rotations happen as they would on a LAN. The
foundation log is the same one the network replica uses.

Finality follows the protocol's rule with a known bound: delays are at most
``max_delay``, so by ``t + 2·max_delay`` after a play every play ordered before
it has reached everyone (anything sent later carries a larger Lamport time),
and its owner may settle it — keep it up, or take it back if it bounced.

Pure and deterministic: same config and seed ⇒ same rounds, byte for byte.
"""

from __future__ import annotations

import hashlib
import heapq
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

from .bot import SKILLS, Act, Action, Bot
from .cards import full_deck, shuffle_deck
from .deadlock import AllStuck, StuckRule
from .foundations import Fate, FoundationLog, Play, PlayKey, before, order
from .moves import perform
from .scoring import Match, SeatRound, round_score
from .tableau import Tableau
from .variants import Variants

# Event kinds, in the order they are handled when their times are equal.
_DELIVER: Final = 0
_FINAL: Final = 1
_CALL_HEARD: Final = 2
_END: Final = 3
_ACT: Final = 4
MAX_EVENTS_PER_ROUND: Final = 2_000_000
# What a bot's next pause is drawn for: a stock turn at the start, a card move when woken.
_FIRST_THINK: Final = Action(Act.TURN)
_WAKE_THINK: Final = Action(Act.MOVE)
# Enum members compared on every action and play, as Final constants: on Python
# 3.11 a member read off its enum class goes through the metaclass's __getattr__.
_MOVE: Final = Act.MOVE
_TURN: Final = Act.TURN
_CALL: Final = Act.CALL
_ROTATE: Final = Act.ROTATE
_STUCK: Final = Act.STUCK
_STAY: Final = Fate.STAY
_BOUNCE: Final = Fate.BOUNCE


@dataclass(frozen=True, slots=True)
class SimConfig:
    """What ``nerts simulate`` plays: players, skills, variants, delays, seed."""

    players: int = 4
    variants: Variants = field(default_factory=Variants)
    skills: tuple[str, ...] = ("medium",)
    seed: int = 0
    min_delay: float = 0.005
    max_delay: float = 0.120

    def __post_init__(self) -> None:
        for s in self.skills:
            if s not in SKILLS:
                raise ValueError(f"unknown skill {s!r}: choose from {', '.join(SKILLS)}")
        if self.variants.teams == "share" and self.players % 2:
            raise ValueError("share-a-deck needs an even number of players: two at each tableau")
        if not 0 <= self.min_delay <= self.max_delay:
            raise ValueError("delays must satisfy 0 <= min <= max")
        self.variants.check_players(self.seats)

    @property
    def seats(self) -> int:
        """Tableaux at the table: two players share one under "share"."""
        return self.players // 2 if self.variants.teams == "share" else self.players

    def skill_of(self, player: int) -> str:
        return self.skills[player % len(self.skills)]


@dataclass(frozen=True, slots=True)
class RoundReport:
    """What one simulated round produced (the ``--json`` line, before totals)."""

    round: int
    results: tuple[SeatRound, ...]
    end: str  # "nerts" or "deadlock"
    caller: int | None
    collisions: int
    bounces: int
    rotations: int
    moves: int
    foundation_hash: str
    sim_seconds: float
    plays: int


def deck_seed(seed: int, round_no: int, seat: int) -> bytes:
    """The shuffle seed of one seat's deck in a simulated game."""
    return hashlib.sha256(f"sim/{seed}/{round_no}/{seat}".encode()).digest()


class _Seat:
    __slots__ = ("bots", "clock", "heard_call", "idle", "stuck", "tab", "view")

    def __init__(self, tab: Tableau, view: FoundationLog, bots: list[Bot]) -> None:
        self.tab = tab
        self.view = view
        self.bots = bots
        self.clock = 0
        self.heard_call = False
        #: Per bot: no action queued (waiting for a settle, or stuck).
        self.idle = [False] * len(bots)
        #: Per bot: voted stuck. The seat is stuck when all its bots are.
        self.stuck = [False] * len(bots)


class RoundSim:
    """One round: deal, let the bots race, end on Nerts or deadlock, score."""

    def __init__(self, cfg: SimConfig, round_no: int, rng: random.Random) -> None:
        self.cfg = cfg
        self.round_no = round_no
        self.rng = rng
        v = cfg.variants
        self.seats: list[_Seat] = []
        for seat in range(cfg.seats):
            deck = shuffle_deck(deck_seed(cfg.seed, round_no, seat), seat, jokers=v.jokers)
            tab = Tableau(seat, deck, stock_turn=v.stock_turn, jokers=v.jokers)
            per_seat = 2 if v.teams == "share" else 1
            bots = [
                Bot(SKILLS[cfg.skill_of(seat * per_seat + k)], random.Random(rng.random()),
                    lone_rotate=v.lone_rotate)
                for k in range(per_seat)
            ]
            self.seats.append(_Seat(tab, FoundationLog(strict_ties=v.strict_ties), bots))
        #: The foundations everyone agrees on at the end: any seat's view then.
        self.truth = self.seats[0].view
        #: (time, kind, sequence, seat, bot or call index, play): the sequence
        #: keeps equal times in the order they were scheduled.
        self._events: list[tuple[float, int, int, int, int, Play | None]] = []
        self._random = rng.random
        self._min_delay = cfg.min_delay
        self._delay_span = cfg.max_delay - cfg.min_delay
        #: When a play is final: every play ordered before it has reached everyone.
        self._final_after = 2 * cfg.max_delay
        self._seq = 0
        self.now = 0.0
        self.ended: str | None = None
        self.calls: list[PlayKey] = []
        self.unsettled = 0
        self.moves = 0
        self.actions = 0  # bot decisions carried out (benchmarks)
        self.bounces = 0
        self.collisions = 0
        #: The replica's deadlock rule: stuck again with no card up since the rotation.
        self.stuck_rule = StuckRule()

    # ------------------------------------------------------------------ loop
    def run(self) -> RoundReport:
        for s, first in enumerate(self.seats):
            for b, bot in enumerate(first.bots):
                self._push(bot.think_time(_FIRST_THINK), _ACT, s, b)
        events = self._events
        pop = heapq.heappop
        count = 0
        while events and self.ended is None:
            self.now, kind, _, seat, n, play = pop(events)
            # Most frequent first: bot actions, then deliveries.
            if kind == _ACT:
                self._act(seat, n)
            elif kind == _DELIVER and play is not None:
                self._deliver(seat, play)
            elif kind == _FINAL and play is not None:
                self._final(seat, play)
            elif kind == _CALL_HEARD:
                self._call_heard(seat, self.calls[n])
            else:
                self._end()
            count += 1
            if count > MAX_EVENTS_PER_ROUND:
                raise RuntimeError("simulated round did not end (engine bug)")
        if self.ended is None:
            raise RuntimeError("simulated round ran out of events without ending")
        return self._report()

    def _push(self, delay: float, kind: int, seat: int, n: int = 0,
              play: Play | None = None) -> None:
        self._seq += 1
        heapq.heappush(self._events, (self.now + delay, kind, self._seq, seat, n, play))

    def _delay(self) -> float:
        return self._min_delay + self._delay_span * self._random()

    # ---------------------------------------------------------------- events
    def _act(self, s: int, b: int) -> None:
        seat = self.seats[s]
        if seat.heard_call:
            return
        bot = seat.bots[b]
        action = bot.decide(seat.tab, seat.view)
        self.actions += 1
        act = action.act
        if act is _MOVE and action.target is not None:
            target = action.target
            key: PlayKey | None = None
            if target.pile is not None:
                seat.clock += 1
                key = (seat.clock, s)
            card = perform(seat.tab, target, key)
            if key is not None and card is not None:
                self._send(s, Play(key[0], s, card, target.pile or 0, target.src,
                                   target.declared))
        elif act is _TURN:
            seat.tab.turn()
        elif act is _CALL:
            seat.clock += 1
            seat.tab.record_nerts_call(seat.clock)
            self._call(s, (seat.clock, s))
            return
        elif act is _ROTATE:
            seat.tab.rotate(alone=True)
        else:  # STUCK votes and waits; WAIT waits for its plays to settle
            seat.idle[b] = True
            if act is _STUCK:
                seat.stuck[b] = True
                self._check_all_stuck()
            return
        bot.applied(action)
        self.moves += 1
        self._seq += 1  # (_push written out: one per action)
        heapq.heappush(self._events, (self.now + bot.think_time(action), _ACT, self._seq, s, b,
                                      None))

    def _send(self, s: int, play: Play) -> None:
        self.seats[s].view.add(play)
        self.unsettled += 1
        # _push and _delay written out: a play is sent to every other seat, a
        # quarter of all the events a round schedules (same sums, same order).
        now, events, draw = self.now, self._events, self._random
        low, span, seq = self._min_delay, self._delay_span, self._seq
        for other in range(len(self.seats)):
            if other != s:
                seq += 1
                heapq.heappush(events, (now + (low + span * draw()), _DELIVER, seq, other, 0,
                                        play))
        self._seq = seq + 1
        heapq.heappush(events, (now + self._final_after, _FINAL, seq + 1, s, 0, play))

    def _deliver(self, s: int, play: Play) -> None:
        seat = self.seats[s]
        lamport, clock = play.lamport, seat.clock  # (max() without its call)
        seat.clock = (lamport if lamport > clock else clock) + 1
        seat.view.add(play)
        if True in seat.idle:  # (most of the time no bot waits: no call to tell)
            self._wake(s)

    def _final(self, s: int, play: Play) -> None:
        seat = self.seats[s]
        key = play.key
        fate = seat.view.fate(key)
        seat.tab.settle(key, stayed=fate is _STAY)
        self.unsettled -= 1
        if fate is _STAY:
            self.stuck_rule.card_played()
        elif fate is _BOUNCE:
            self.bounces += 1
            if seat.view.first_over(key) is not None:
                self.collisions += 1
        if True in seat.idle:
            self._wake(s)

    def _call(self, s: int, key: PlayKey) -> None:
        n = len(self.calls)
        self.calls.append(key)
        self._call_heard(s, key)
        for other in range(len(self.seats)):
            if other != s:
                self._push(self._delay(), _CALL_HEARD, other, n)
        self._push(self._final_after, _END, s)

    def _call_heard(self, s: int, key: PlayKey) -> None:
        """A seat learns of a Nerts call: it stops playing and cuts its view there."""
        seat = self.seats[s]
        seat.heard_call = True
        if seat.view.cutoff is None or before(key, seat.view.cutoff):
            seat.view.set_cutoff(key)

    def _end(self) -> None:
        if self.ended is None:
            self._finish("nerts", min(self.calls, key=order))

    # ----------------------------------------------------------------- stuck
    def _wake(self, s: int) -> None:
        """Something changed for seat ``s``: idle bots look again (a stuck vote is withdrawn)."""
        seat = self.seats[s]
        for b, bot in enumerate(seat.bots):
            if seat.idle[b]:
                seat.idle[b] = False
                seat.stuck[b] = False
                self._push(bot.think_time(_WAKE_THINK), _ACT, s, b)

    def _check_all_stuck(self) -> None:
        if self.unsettled or not all(all(seat.stuck) for seat in self.seats):
            return
        if self.stuck_rule.all_stuck() is AllStuck.DEADLOCK:
            self._finish("deadlock", None)
            return
        for s, seat in enumerate(self.seats):
            if len(seat.tab.stock) + len(seat.tab.waste) >= 2:
                seat.tab.rotate(alone=False)
            for bot in seat.bots:
                bot.idle_turns = 0
                bot.lone_rotations = 0
            self._wake(s)

    # ------------------------------------------------------------------- end
    def _finish(self, how: str, cutoff: PlayKey | None) -> None:
        """End the round: every view holds every play by now, and all must agree."""
        self.ended = how
        for seat in self.seats:
            if cutoff is not None:
                seat.view.set_cutoff(cutoff)
            for key in sorted(seat.tab.in_flight):
                fate = seat.view.fate(key)
                seat.tab.settle(key, stayed=fate is _STAY)
                if fate is _BOUNCE:
                    self.bounces += 1
        state = self.truth.state()
        for s, seat in enumerate(self.seats):
            if seat.view is not self.truth and (seat.view.state() != state
                                                or len(seat.view) != len(self.truth)):
                raise AssertionError(f"seat {s} ended the round with other foundations")
            check_accounting(s, seat.tab, self.truth, self.cfg.variants.jokers)

    def _report(self) -> RoundReport:
        v = self.cfg.variants
        caller = min(self.calls, key=order)[1] if self.ended == "nerts" else None
        results = tuple(
            SeatRound(
                seat=s,
                foundation_cards=(fc := self.truth.cards_of(s)),
                nerts_left=(left := len(seat.tab.nerts)),
                score=round_score(fc, left, v),
                called=caller == s,
            )
            for s, seat in enumerate(self.seats)
        )
        return RoundReport(
            round=self.round_no, results=results, end=self.ended or "deadlock", caller=caller,
            collisions=self.collisions, bounces=self.bounces,
            rotations=self.stuck_rule.rotations,
            moves=self.moves, foundation_hash=self.truth.state_hash().hex(),
            sim_seconds=round(self.now, 3), plays=len(self.truth),
        )


def cards_accounted(seat: int, tab: Tableau, log: FoundationLog, jokers: bool) -> bool:
    """True when every card of ``seat``'s deck is in exactly one place: its
    tableau (in flight included) or staying on the foundations."""
    held = sorted([*tab.cards(), *(c for c in log.staying_cards() if c >> 6 == seat)])
    return held == sorted(full_deck(seat, jokers=jokers))


def check_accounting(seat: int, tab: Tableau, log: FoundationLog, jokers: bool) -> None:
    """Every card of ``seat``'s deck is in exactly one place: raise if not."""
    if not cards_accounted(seat, tab, log, jokers):
        raise AssertionError(f"seat {seat}: cards lost or duplicated")


def simulate(cfg: SimConfig, rounds: int | None = None) -> Iterator[RoundReport | Match]:
    """Play rounds (a fixed number, or until the target); yield each report, then the match."""
    rng = random.Random(cfg.seed)
    match = Match.new(cfg.variants, cfg.seats)
    round_no = 0
    while (rounds is None and match.winner() is None) or (rounds is not None and round_no < rounds):
        round_no += 1
        report = RoundSim(cfg, round_no, rng).run()
        match.add_round(report.results)
        yield report
    yield match
