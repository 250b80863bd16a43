"""A computer player seated at a replica: the same commands a human's keys send.

The driver asks its :class:`~p2p_nerts.game.bot.Bot` what to do, carries it
out through the replica's public commands and says when it wants to act next.
Like a screen, it reads the table through the replica's read-only view.
Time is passed in, so the same driver runs in simulated time (tests, the
in-memory network) and in real time (``nerts bot``, solo tables).
"""

from __future__ import annotations

from ..game.bot import Act, Action, Bot
from ..game.cards import card_name
from ..game.tableau import WORK0, IllegalMove, Tableau, source_name
from .events import Notice
from .replica import (
    CallNerts,
    CommandError,
    Move,
    Outbound,
    Phase,
    Replica,
    RotateAlone,
    SetReady,
    Turn,
    VoteStuck,
)

IDLE_PARTNER = 0.5
"""Seconds between a partner's looks at the rules while the table does not share
tableaux: they change only between rounds, which last longer than that."""
IDLE_LOOK = 0.05
"""Seconds between a bot's looks at a table that gives it nothing to do (no deal
yet, scoring, a round it sits out), for a caller that cannot hear the table
change (``BotDriver.idle``)."""


class BotDriver:
    """Drives one replica's seat with a bot (two drivers may share a seat).

    A ``partner`` plays only in rounds of share-a-deck, where two players share
    each tableau: it is the second player at a bot's seat, or a bot beside a
    person. The rules are the host's, and may change between rounds.
    """

    def __init__(self, replica: Replica, bot: Bot, *, partner: bool = False,
                 name: str | None = None) -> None:
        """``name``: a partner's beside a player, whose moves it then tells their
        screen (a Notice each): their cards move under their eyes by another hand."""
        self.replica = replica
        self.bot = bot
        self.partner = partner
        self.name = name if partner else None
        self._rotations = 0
        self._round = 0
        self.next_at: float | None = None
        #: The last step found nothing to do until the table changes (``next_at`` is a
        #: look again, not a move due): a caller that hears the table's events may
        #: wait for the next one instead, as ``nerts bot`` does; at a table between
        #: rounds, a look every IDLE_LOOK woke the process twenty times a second.
        self.idle = False

    def step(self, now: float) -> Outbound:
        """Act if it is time; always leaves ``next_at`` set to when to call again."""
        view = self.replica.view()
        rnd = view.round
        self.idle = True
        # Before the first deal, the table's settings say whether it will share:
        # a partner at a share table is awake from the start (a countdown of 0
        # gives it no time to notice the deal).
        if self.partner and (rnd.variants if rnd is not None else view.variants).teams != "share":
            self.next_at = now + IDLE_PARTNER
            return Outbound()
        if (not self.partner and view.phase in (Phase.LOBBY, Phase.BETWEEN)
                and view.my_seat is not None and not view.ready(view.my_key)):
            self.next_at = now + IDLE_LOOK
            # A bot is always ready: the host's list says so.
            return self.replica.handle(SetReady(True), now)
        tab = rnd.tableau if rnd is not None else None
        if rnd is None or not view.can_move() or tab is None:
            self.next_at = now + IDLE_LOOK
            return Outbound()
        self.idle = False
        if rnd.number != self._round or rnd.rotations != self._rotations:
            self._round, self._rotations = rnd.number, rnd.rotations
            self.bot.idle_turns = 0
            self.bot.lone_rotations = 0
            self.next_at = now + self.bot.think_time(Action(Act.TURN))
            return Outbound()
        if self.next_at is not None and now < self.next_at:
            return Outbound()
        action = self.bot.decide(tab, rnd.foundations)
        said = self._news(action, tab)
        out = Outbound()
        try:
            out = self._carry_out(action, now)
        except (IllegalMove, CommandError):
            action = Action(Act.WAIT)
            said = None
        if said is not None:
            out.events.append(Notice(said))
        self.bot.applied(action)
        delay = self.bot.think_time(action)
        if action.act in (Act.STUCK, Act.WAIT):
            delay = max(delay, 0.1)
        self.next_at = now + delay
        return out

    def _news(self, action: Action, tab: Tableau) -> str | None:
        """What a named partner's ``action`` does, in words, before it is done (the
        card it moves is still where it was); None for a turn of the stock, which
        happens too often to be news, and for what the table says anyway."""
        if self.name is None:
            return None
        target = action.target
        if action.act is Act.ROTATE:
            return f"{self.name} rotated the stock"
        if action.act is not Act.MOVE or target is None:
            return None
        src = target.src
        card = tab.work[src - WORK0][target.index] if src >= WORK0 else tab.top(src)
        if card is None:
            return None
        origin = source_name(src) if src >= WORK0 else f"the {source_name(src)}"
        if target.work is None:
            return f"{self.name} put {card_name(card)} up from {origin}"
        where = "under" if target.slide else "onto"
        return (f"{self.name} moved {card_name(card)} from {origin} {where} "
                f"{source_name(WORK0 + target.work)}")

    def _carry_out(self, action: Action, now: float) -> Outbound:
        """Do ``action``; doing anything but wait takes the seat's stuck vote back
        first (the seat's: a partner at a shared tableau may have cast it)."""
        r = self.replica
        act = action.act
        if act is not Act.STUCK and act is not Act.WAIT and r.view().voted:
            # Signed before the play, the withdrawal goes out (and is journaled)
            # before it.
            withdrawn = r.handle(VoteStuck(False), now)
            withdrawn.extend(self._do(action, now))
            return withdrawn
        return self._do(action, now)

    def _do(self, action: Action, now: float) -> Outbound:
        r = self.replica
        act = action.act
        if act is Act.MOVE and action.target is not None:
            return r.handle(Move(action.target), now)
        if act is Act.TURN:
            return r.handle(Turn(), now)
        if act is Act.CALL:
            return r.handle(CallNerts(), now)
        if act is Act.ROTATE:
            return r.handle(RotateAlone(), now)
        if act is Act.STUCK and not r.view().voted:
            return r.handle(VoteStuck(True), now)
        return Outbound()
