"""A guest asking to sit down again: for its seat back, or for a seat to come free.

It lives apart from :class:`~p2p_nerts.peer.shell.NetShell` because it is a
player's patience, not routing: it listens to the events the shell hands it
(:meth:`SeatBack.heard`: the roster, a refusal, the game's end) and to its
links coming up (:meth:`SeatBack.link_changed`), is asked at each of the
shell's ticks (:meth:`SeatBack.check`), and when it is time to ask the host
for a seat (an ``Open``), or a peer for the table while we wait for one, it
runs that command through the shell's ``command``. It reads the table
through the replica and its view, which the shell hands it as it has them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ..protocol import events as ev
from ..protocol.replica import OVER, AskToWatch, Command, Open, Phase, Replica, TableView

__all__ = ["NO_SEAT", "WAITING", "SeatBack"]

_log = logging.getLogger(__name__)

WAITING = "the table is full: waiting for a free seat, to sit down as one comes free"
NO_SEAT = "the game is over, and no seat came free: you did not play"
_ASK_AGAIN = 0.25  # seconds between a refused request for our seat back and the next


class SeatBack:
    """When a guest asks the host for a seat, beyond its first request.

    ``command`` runs a command through the shell (``NetShell._command``);
    ``closed`` says whether the shell is closed (nothing is asked then). With
    ``wait_for_seat`` a guest at a full table waits in line for a free seat
    (``TableConfig.wait_for_seat``).
    """

    def __init__(self, command: Callable[[Command], None], closed: Callable[[], bool], *,
                 wait_for_seat: bool, clock: Callable[[], float]) -> None:
        self._command = command
        self._closed = closed
        self._wait_for_seat = wait_for_seat
        self._clock = clock
        self._replica: Replica | None = None
        self._view: TableView | None = None  # the replica's, kept (a view is live)
        self.had_seat = False  # we sat at this table (a dropped seat asks to come back)
        self.waiting = False  # refused at a full table, asking again as seats change
        self._last_refusal = ""  # the host's last word to us, waiting in line
        self._asked_back: int | None = None  # the round after which we last asked
        self._ask_again_at = 0.0

    def use(self, replica: Replica, view: TableView) -> None:
        """Ask at ``replica``'s table, seen through ``view``, the view the session keeps."""
        self._replica, self._view = replica, view

    @property
    def waiting_for_seat(self) -> bool:
        """Whether we wait at a full table for a seat to come free (``wait_for_seat``)."""
        return self._wait_for_seat and not self.had_seat

    def check(self) -> None:
        """Ask for our seat again, once between each two rounds, if the host gives it up.

        A seat dropped from a round (silent too long: a crash, a cut cable)
        leaves the table as the host closes the round, but the player never
        chose to leave: like a player walking back to the table, we ask to sit
        down again. We ask as soon as we know, even mid-round: the host keeps
        a waiting list and seats us as it closes the round, so however far
        behind we are we cannot miss the short break before its next deal.
        After a refusal we ask every ``_ASK_AGAIN`` seconds while that lasts,
        then at the next break.
        """
        r, view = self._replica, self._view
        assert r is not None and view is not None  # use() came with the replica
        if (r.is_host or not self.had_seat or self._closed()
                or self._clock() < self._ask_again_at):
            return
        if view.my_key in view.seated and not view.dropped:
            return
        rs = r.rs
        after = rs.number if rs is not None else 0
        if self._asked_back != after:
            self._asked_back = after
            _log.info("asking for our seat back")
            self._ask()

    def link_changed(self, key: bytes, up: bool) -> None:
        """A link came up. Back to the host between deals: it gave our seat up when the
        link went (the SeatLost command), or our JOIN was lost with it; or back
        as a latecomer, whom it took off its waiting list. Ask again (a seated
        player is only told the roster again).

        Linked to another peer while we hold no seat (a latecomer waiting for
        the next deal): ask it for the table, as a spectator does. The host
        lists us to the seats, but only it knows we wait: the request makes us
        a watcher there (``TableView.watcher``), and the peer keeps our link
        until the deal seats us instead of closing it for holding no seat, our
        dialer linking again, every grace (``Limits.grace``) for the whole round.
        """
        r, view = self._replica, self._view
        if not up or r is None or view is None or r.is_host:
            return
        seated = view.my_key in view.seated
        if key == r.host_key:
            if r.phase in (Phase.LOBBY, Phase.BETWEEN) or not seated:
                self._ask()
        elif not seated:
            self._command(AskToWatch(key))

    def _ask(self) -> None:
        self._command(Open())

    def _ask_for_a_free_seat(self) -> None:
        if self.waiting and not self.had_seat and not self._closed():
            self._ask()

    def heard(self, event: ev.Event) -> tuple[bool, ev.Event | None]:
        """Whether ``event`` was about our seat, and what the listeners hear of it
        (None: nothing).

        Waiting at a full table, the host refuses each request for a seat; the
        player is told once that we wait, not of every refusal.
        """
        if isinstance(event, ev.RosterChanged) and event.me is not None:
            self.had_seat = True
            self.waiting = False
        elif isinstance(event, ev.RosterChanged) and self.had_seat:
            # The host gave our seat up as it closed the round (our request may
            # have been lost with a link) and deals the next one soon: ask at once.
            self._asked_back = None
            asyncio.get_running_loop().call_soon(self.check)
        elif isinstance(event, ev.RosterChanged) and self.waiting:
            # A seat may have come free: ask again (only as the roster changes,
            # so a long wait adds no entries to the table's log).
            asyncio.get_running_loop().call_soon(self._ask_for_a_free_seat)
        elif isinstance(event, ev.Refused) and self._wait_for_seat \
                and not self.had_seat and event.reason != OVER:
            # Told once that we wait, then our place in line as the host says it.
            told = None if event.reason == self._last_refusal else ev.Notice(
                f"waiting for a free seat: {event.reason}")
            self.waiting, self._last_refusal = True, event.reason
            return True, told
        elif isinstance(event, ev.Refused) and event.reason == OVER:
            self.waiting = False  # nothing left to wait for: told as it is
        elif isinstance(event, ev.GameOver) and self.waiting and not self.had_seat:
            self.waiting = False
            _log.info(NO_SEAT)
        elif isinstance(event, ev.Refused) and self.had_seat:
            # The table is full for now (a seat may free up as the break
            # lasts): try again shortly.
            self._asked_back = None
            self._ask_again_at = self._clock() + _ASK_AGAIN
        else:
            return False, event
        return True, event
