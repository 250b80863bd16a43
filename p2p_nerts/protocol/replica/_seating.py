"""The table's seating and options: who sits, who waits to sit down, who said it
is ready, and the rules, clocks and limits the next round is dealt under.

One object owns this state so that the facade does not: the lobby decides from
it (:meth:`Seating.table`, its read view); ``Steps`` sets the seats and rules
it decides on, and what it decides about the waiting list, the line and who
is ready (:meth:`Seating.joined`, :meth:`Seating.left`,
:meth:`Seating.readied`), each before what is signed after it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from ...game.variants import Variants
from .. import events as ev
from ..messages import AckMark, Seat, Settings
from ._base import DEAL_WITH, Phase, clocks_problem, settings_of
from ._effects import Effect, Emit
from ._intake import has_place
from ._liveness import holds_from
from ._lobby import Table, auto_deal, next_auto_deal
from ._state import RoundState


class Seating:
    """Who sits at one table and under which options, as this replica knows it."""

    def __init__(self, me: bytes, host_key: bytes, *, variants: Variants, countdown: float,
                 drop_after: float, auto_start: int | None, auto_next: float | None,
                 max_seats: int, seat_only: Collection[bytes] | None = None,
                 deal_by: float | None = None, deal_with: int = DEAL_WITH) -> None:
        # A host announces its clocks in its SETTINGS, which every replica (the
        # host's too) then plays by: clocks that every peer would refuse there
        # are refused here, before anything is signed.
        problem = clocks_problem(countdown, drop_after)
        if problem is not None:
            raise ValueError(problem)
        self.me = me
        self.host_key = host_key
        self.seats = ()
        self.ready: dict[bytes, bool] = {}
        #: Host: players who asked for a seat while a round ran (key → name).
        self.waiting: dict[bytes, str] = {}
        #: Host: players refused a seat at a full table who wait in line for one
        #: (key → name), in the order they first asked: seats go to them in it.
        self.queue: dict[bytes, str] = {}
        #: Host: seats given to newcomers between rounds, each with the seq of
        #: the ROSTER that seated them, until their ACKs show they have it (they
        #: replay the table's entries first): the break waits for them.
        self.sitting_down: dict[bytes, int] = {}
        self.variants = variants
        #: The table's clocks, in seconds.
        self.countdown = countdown
        self.drop_after = drop_after
        #: Host: deal by itself once this many are seated; and again this long
        #: after each round (None: a person deals).
        self.auto_start = auto_start
        self.auto_next = auto_next
        self.max_seats = max_seats  # the host's own limit
        #: Host: when it deals the next round by itself, if it does; in the lobby,
        #: when it deals the first with those seated (two at least), if it has
        #: a turn-up time (``deal_by``).
        self.next_round_at: float | None = deal_by
        #: Host: the fewest seated it deals the first round with at that time.
        self.deal_with = deal_with
        #: Host: the only keys it seats (an event's seating), None: anyone. Once
        #: it has dealt, only those dealt in the first round (a no-show plays
        #: from the event's next game, at the table it is seated at then).
        self.seat_only = None if seat_only is None else frozenset(seat_only)
        self._dealt = False  # a round has begun here

    @property
    def seats(self) -> tuple[Seat, ...]:
        """Who sits at the table (the host's last ROSTER): seat index = position."""
        return self._seats

    @seats.setter
    def seats(self, seats: tuple[Seat, ...]) -> None:
        self._seats = seats
        #: Their keys, looked up for every entry that arrives.
        self.seated = frozenset(s.key for s in seats)

    @property
    def settings(self) -> Settings:
        """The SETTINGS that say these rules and clocks."""
        return settings_of(self.variants, self.countdown, self.drop_after)

    def holds_place(self, key: bytes, rs: RoundState | None) -> bool:
        """Whether ``key`` has a place at this table, ``rs`` the round under way
        (``intake.has_place``: a seat, a place in the round or on the waiting
        list, or the host's or my own key)."""
        return has_place(key, seated=self.seated, host_key=self.host_key, me=self.me,
                         waiting=self.waiting, rs=rs)

    def table(self, phase: Phase, number: int, proven: Collection[bytes]) -> Table:
        """The table as the lobby reads it, in ``phase`` of round ``number`` (0 before
        the first), ``proven`` the keys never seated again."""
        return Table(self.me, self.host_key, phase, self.seats, number, self.variants,
                     self.countdown, self.drop_after, self.max_seats, self.waiting, proven,
                     self.ready, self.queue, self.seat_only)

    def joined(self, key: bytes, name: str, *, in_line: bool | None, waits: bool) -> None:
        """Host, a JOIN answered (``lobby.Joined``): ``key`` waits in line for a seat
        under ``name`` (``in_line``; the place first taken kept), or no longer
        (False; None: as it was); it sits down as this round closes (``waits``)."""
        if in_line:
            self.queue.setdefault(key, name)
        elif in_line is not None:
            self.queue.pop(key, None)
        if waits:
            self.waiting[key] = name

    def left(self, key: bytes, *, unqueue: bool) -> None:
        """``key`` left, or its link was lost (``lobby.Left``): it sits down no more
        as a round closes, and waits in line no more (``unqueue``)."""
        self.waiting.pop(key, None)
        if unqueue:
            self.queue.pop(key, None)

    def readied(self, key: bytes, on: bool) -> None:
        """``key`` says it is ready for the next deal (``on``), or no longer."""
        self.ready[key] = on

    def set_rules(self, variants: Variants, settings: Settings) -> None:
        """The rules, and the clocks ``settings`` say, that the table plays by now
        (the host's SETTINGS, or a snapshot's)."""
        self.variants = variants
        self.countdown = settings.countdown_ms / 1000
        self.drop_after = settings.drop_after_ms / 1000

    def waiting_seated(self) -> None:
        """Host, as a round closes: those waiting are seated now (or found no room),
        before the ROSTER that seats them is signed."""
        self.waiting.clear()

    def sitting_down_since(self, newcomers: Collection[bytes], seq: int) -> None:
        """Host: ``newcomers`` were seated by the ROSTER I signed as ``seq``; the break
        waits for them to hold it (they replay the table's entries first)."""
        self.sitting_down = dict.fromkeys(newcomers, seq)

    def round_closed(self, now: float) -> None:
        """Host, a round closed and the game goes on: when it deals the next by
        itself, if it does."""
        if self.auto_next is not None:
            self.next_round_at = now + self.auto_next

    def new_round(self) -> None:
        """A round began: its newcomers are dealt in, and who is ready for the next
        deal is said afresh; a table seated by an event seats no one else from now on."""
        if self.seat_only is not None and not self._dealt:
            self.seat_only = self.seat_only & self.seated
        self._dealt = True
        self.next_round_at = None  # a turn-up time is over once a round is dealt
        self.sitting_down.clear()
        self.ready = {}

    def acked(self, key: bytes, upto: Iterable[AckMark]) -> None:
        """``key``'s ACK: once it holds the ROSTER that seated it, it has caught up
        and the break waits for it no more."""
        if key in self.sitting_down and holds_from(upto, self.me, self.sitting_down[key]):
            del self.sitting_down[key]

    def next_auto_deal(self, t: Table, now: float) -> float:
        """When :meth:`auto_deal` next deals by time alone (``lobby.next_auto_deal``)."""
        return next_auto_deal(t.phase, len(t.seats), self.auto_start, self.next_round_at, now,
                              self.sitting_down.keys(), t.seated, self.deal_with)

    def auto_deal(self, t: Table, now: float) -> list[Effect]:
        """Host: what dealing by itself does now (``lobby.auto_deal``), ``t`` this
        seating's :meth:`table`: a deal it cannot make is said once, and then it
        deals by itself no more, but waits for a person."""
        deal = auto_deal(t, auto_start=self.auto_start, next_round_at=self.next_round_at,
                         now=now, sitting_down=self.sitting_down.keys(),
                         deal_with=self.deal_with)
        if deal is None:
            return []
        self.next_round_at = None  # due: it is over, dealt or not
        if isinstance(deal, str):
            self.auto_start = self.auto_next = None
            return [Emit(ev.Notice(f"cannot deal automatically: {deal}"))]
        return deal
