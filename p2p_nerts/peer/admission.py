"""Who may keep a link to this seat and hear the table: players, and a few spectators.

It lives apart from :class:`~p2p_nerts.peer.shell.NetShell` because it is a
policy, not routing: the mesh asks it of every link it sends to (``admitted``,
``plays_here``), and the shell tells it of every link that comes up or goes
(:meth:`Admission.link_changed`). At a host it decides what a link means for
the seats: one gone loses its place (``SeatLost``), and one holding no seat
is judged once it had the time to ask for one (:meth:`Admission.turns_away`),
turned away through the shell's ``command`` and closed a moment later. It
reads the table through the replica and its view, which the shell hands it
as it has them (:meth:`Admission.use`), and notes when each link came up
(the spectators who came first keep their places). It also says who each
key is at the table, for the mesh's log lines (:meth:`Admission.name_of`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

from ..net.link import Link
from ..net.wire import NET_VERSION, Info
from ..protocol import events as ev
from ..protocol.replica import Command, Phase, Replica, SeatLost, TableView, TurnAway
from .config import TableConfig

__all__ = ["ADMIT_AFTER", "MAX_SPECTATORS", "TURNED_AWAY", "Admission"]

_log = logging.getLogger(__name__)

MAX_SPECTATORS = 16
"""Links holding no seat a host keeps (see :meth:`Admission.admits_spectator`)."""
ADMIT_AFTER = 2.0
"""Seconds a link holding no seat has to ask for one before it counts."""
TURNED_AWAY = 1.0
"""Seconds a link turned away keeps, to hear why."""
_MAX_NAMES = 256  # seats' names remembered for log lines: more than any evening's table
_ROUND_UNDER_WAY = frozenset({Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING})
_NEWCOMER = "a newcomer"


class Admission:
    """This seat's door: which keys may keep their links, play, or watch.

    ``links`` gives the mesh's links now, by key; ``command`` runs a command
    through the shell (``NetShell._command``); ``closed`` says whether the
    shell is closed (nothing is judged then); ``clock`` is the shell's.
    """

    def __init__(self, links: Callable[[], Mapping[bytes, Link]],
                 command: Callable[[Command], None], closed: Callable[[], bool],
                 clock: Callable[[], float]) -> None:
        self._links = links
        self._command = command
        self._closed = closed
        self._clock = clock
        self._replica: Replica | None = None
        self._view: TableView | None = None  # the replica's, kept (a view is live)
        self._up_since: dict[bytes, float] = {}  # when each link now up came up
        self._names: dict[bytes, str] = {}  # every seat's name so far, for log lines

    def use(self, replica: Replica, view: TableView) -> None:
        """Judge by ``replica``'s table, and ``view``, the view the session keeps of it
        (a seat resumed from its journal knows its seats' names from the start)."""
        self._replica, self._view = replica, view
        self._note_names()

    def link_changed(self, key: bytes, up: bool) -> None:
        """``key``'s link came up or went. At a host, a seat (or a place waiting for
        one) whose link went is lost (the replica gives it up as the round allows);
        a link up that holds no seat is judged once it had the time to ask for one
        (``ADMIT_AFTER``: a newcomer asks right after its link is up)."""
        if up:
            self._up_since.setdefault(key, self._clock())
        else:
            self._up_since.pop(key, None)
        r, view = self._replica, self._view
        if r is None or view is None or not r.is_host:
            return
        if not up and (key in view.seated or key in r.seating.waiting or key in r.seating.queue):
            self._command(SeatLost(key))
        elif up and key not in view.seated:
            asyncio.get_running_loop().call_later(ADMIT_AFTER, self._judge, key)

    def _judge(self, key: bytes) -> None:
        """Host: keep ``key``'s link, holding no seat, or turn it away (:meth:`turns_away`)."""
        link = self._links().get(key)
        if link is None or self._closed():
            return
        why = self.turns_away(key)
        if why is not None:
            self._command(TurnAway(key, why))
            asyncio.get_running_loop().call_later(TURNED_AWAY, link.close, why)

    def info(self, name: str, table_name: str, port: int, config: TableConfig) -> Info:
        """What this seat says of itself and its table in the info frame that opens each
        connection (``port``: the one to dial; ``name``: the player's): what a
        newcomer at the door sees, the table full, or a round under way."""
        r, view = self._replica, self._view
        if r is None or view is None:
            # The info frame goes out in the clear: at a table with a code the
            # player's name waits for the encrypted part.
            return Info(NET_VERSION, None, name if config.code is None else _NEWCOMER, port,
                        views=config.views)
        seats = view.seats_taken
        return Info(NET_VERSION, r.table_id, table_name or name, port, seats,
                    full=seats >= r.seating.max_seats, playing=r.phase in _ROUND_UNDER_WAY,
                    views=config.views)

    def admitted(self, key: bytes) -> bool:
        """Whether ``key``'s link may stay and hear the table (``bounds``): it has or had
        a place at the table (``TableView.player``) or is a spectator (:meth:`spectator`).

        Before its replica exists a guest has one link, to the host it dials.
        """
        view = self._view
        return view is None or view.player(key) or self.spectator(key)

    def plays_here(self, key: bytes) -> bool:
        """Whether ``key`` has or had a place at the table (a spectator has none); at
        a guest that knows no seats yet (just sat down, or back without its
        journal), every key, as its replica hears them all until the ROSTER."""
        view = self._view
        return view is None or view.player(key) or (not view.is_host and not view.seated)

    def spectator(self, key: bytes) -> bool:
        """Whether ``key`` watches the table without a seat: admitted like a seat, by
        the one rule for spectators (:meth:`admits_spectator`), once it asked for the
        table's entries (``TableView.watcher``)."""
        view = self._view
        return view is not None and view.watcher(key) and self.admits_spectator(key)

    def admits_spectator(self, key: bytes) -> bool:
        """Host: whether a link that holds no seat may stay (the one rule for spectators).

        Seated players and those waiting for a seat always may. Anyone else is
        watching (or about to ask for a seat, which it may do from here): the
        first ``MAX_SPECTATORS`` of them to link, so that watchers cost the
        players little (they sign nothing the table waits for, but they are
        sent every entry) and one who came first keeps its place.
        """
        r, view = self._replica, self._view
        assert r is not None and view is not None  # use() came with the replica
        seated = view.seated
        if key in seated or key in r.seating.waiting:
            return True
        since = self._up_since.get(key, float("inf"))
        earlier = [k for k in self._links() if k != key and k not in seated
                   and k not in r.seating.waiting and self._up_since.get(k, since) <= since]
        return len(earlier) < MAX_SPECTATORS

    def turns_away(self, key: bytes) -> str | None:
        """Host, ``ADMIT_AFTER`` seconds after ``key``'s link came up holding no seat:
        why the host turns it away (too many spectators already), or None: it stays."""
        if self.admits_spectator(key):
            return None
        _log.info("turned a spectator away: %d watch already", MAX_SPECTATORS)
        return f"this table has {MAX_SPECTATORS} spectators already"

    def must_be_heard(self) -> list[bytes]:
        """Host: the places whose peer must be heard from (its heartbeats come every
        ``HEARTBEAT`` s, at play every quarter of ``drop_after`` at most) or lose
        its link, freeing the place (``Mesh.close_silent``): the latecomers waiting,
        those in line for a seat at a full table, and outside a round every seat.
        A machine gone
        silent (asleep, its traffic dropped) would otherwise hold its TCP link,
        and its seat, for many minutes; in a round the drop vote frees the seat."""
        r = self._replica
        assert r is not None  # use() came with the replica
        keys = [*r.seating.waiting, *r.seating.queue]
        if r.phase in (Phase.LOBBY, Phase.BETWEEN):
            keys.extend(r.seating.seated - {r.host_key})
        return keys

    def heard(self, event: ev.Event) -> None:
        """The roster changed: remember the names its seats sit under (see :meth:`name_of`)."""
        if isinstance(event, ev.RosterChanged):
            self._note_names()

    def _note_names(self) -> None:
        if self._view is not None and len(self._names) < _MAX_NAMES:
            self._names.update((s.key, s.name) for s in self._view.seats)

    def name_of(self, key: bytes, table_name: str) -> str | None:
        """Who a peer is at this table, for the log: the name it sits (or sat) under, a
        latecomer waiting for the next deal, or a spectator; None: none of these."""
        r, view = self._replica, self._view
        if r is None or view is None:
            return f"the host of {table_name}" if table_name else None
        name = self._names.get(key)
        if name is not None:
            return name
        if key == r.host_key:  # before its ROSTER came
            return f"the host of {table_name}"
        waiting = r.seating.waiting.get(key)
        if waiting is not None:
            return f"{waiting}, a latecomer"
        return "a spectator" if view.watcher(key) else None
