"""A spectator's side of its links: it asks each peer for the table, and goes when turned away.

It lives apart from :class:`~p2p_nerts.peer.shell.NetShell` because it is a
spectator's policy, not routing. A spectator never takes a seat: each peer
keeps its link because it asked that peer for the table's entries (the
RESEND that makes it a watcher there, ``TableView.watcher``), so it asks on
every link that comes up (:meth:`Spectator.link_changed`), the host's and
each seat's, first or again. A host that turns it away (it keeps a few
spectators: ``admission.MAX_SPECTATORS``) leaves it nothing to wait for, and
it closes (:meth:`Spectator.heard`).
"""

from __future__ import annotations

from collections.abc import Callable

from ..protocol import events as ev
from ..protocol.replica import OVER, AskToWatch, Command

__all__ = ["Spectator"]


class Spectator:
    """What a spectator's seat does as its links come and go, and as it is refused.

    ``command`` runs a command through the shell (``NetShell._command``);
    ``close`` closes the shell.
    """

    def __init__(self, command: Callable[[Command], None], close: Callable[[], None]) -> None:
        self._command = command
        self._close = close

    def link_changed(self, key: bytes, up: bool) -> None:
        """A link came up: ask its peer for the table's entries (see the module's docstring)."""
        if up:
            self._command(AskToWatch(key))

    def heard(self, event: ev.Event) -> None:
        """Turned away (the game being over is no refusal to leave on: it is watched to
        its end)."""
        if isinstance(event, ev.Refused) and event.reason != OVER:
            self._close()
