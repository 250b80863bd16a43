"""When a seat's shell wakes by itself: as its replica next needs time, and for its checks.

It lives apart from :class:`~p2p_nerts.peer.shell.NetShell` because it is a
timer, not routing: the replica says when it next needs a tick
(``Replica.next_due``), the shell's own checks (its ad, asking for a seat
back) run at least every ``SHELL_CHECKS``, and in between the shell sleeps
(or handles the bytes that arrive). The tick is a timer callback, not a loop
around ``wait_for``: that made a task, a timeout and a cancellation every
turn, several turns of the event loop each, in every peer (a CPU woken for
nothing on a small machine is taken from a peer handling a play). Every call
into the replica may bring its next need forward: the shell arms the alarm
again after each (:meth:`Alarm.arm`), a read's batch included, in the same
turn of the event loop. (Arming it in a turn of its own once the turn's
other reads were in saved a ``next_due`` for reads that share a turn, about
7 µs at 8 seats; but more than half the reads at 8 peers come alone, and
each of those then took a second turn of the loop, a call into the kernel
and the loop's own work more.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["SHELL_CHECKS", "Alarm"]

#: The longest the shell sleeps: its own checks (the ad, asking for a seat back)
#: run at least this often, which is soon enough for a lobby's row or a seat asked
#: for again; each of them wakes the whole process, at a busy table too. When the
#: replica needs a tick it says (``next_due``).
SHELL_CHECKS = 1.0


class Alarm:
    """Calls ``ring`` when ``due()`` (a time on ``clock``) comes, or after SHELL_CHECKS.

    Nothing rings before :meth:`start` or after :meth:`stop`; each ring is
    one call, after which the shell arms it again (:meth:`arm`).
    """

    def __init__(self, ring: Callable[[], None], due: Callable[[], float],
                 clock: Callable[[], float]) -> None:
        self._ring = ring
        self._due = due
        self._clock = clock
        self._timer: asyncio.TimerHandle | None = None  # the ring we sleep until
        self._at = 0.0  # its time on the loop's clock (uvloop's handles do not say)
        #: The loop it rings on, from :meth:`start` to :meth:`stop` (None: off). Kept,
        #: as :meth:`arm` runs after every read: asking asyncio for the running
        #: loop costs a call into the kernel (``getpid``) each time.
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        """Ring at once, and from then on as :meth:`arm` says."""
        self._loop = loop = asyncio.get_running_loop()
        self._at = loop.time()
        self._timer = loop.call_at(self._at, self._rang)

    def stop(self) -> None:
        self._loop = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def arm(self) -> None:
        """Sleep until ``due()`` or SHELL_CHECKS from now, whichever is sooner; a ring
        already set sooner stays."""
        loop = self._loop
        if loop is None:
            return
        at = loop.time() + max(0.0, min(self._due() - self._clock(), SHELL_CHECKS))
        timer = self._timer
        if timer is not None:
            if self._at <= at:
                return
            timer.cancel()
        self._at = at
        self._timer = loop.call_at(at, self._rang)

    def _rang(self) -> None:
        self._timer = None
        self._ring()
