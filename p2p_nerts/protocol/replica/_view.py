"""What a front end reads of its replica: a narrow, read-only view.

A screen, a bot, a headless runner or a network session reads the table
through a :class:`TableView` (``Replica.view()``) and acts on it only with commands
(``Move``, ``Turn``...), so that the replica's own state (``RoundState`` and
the facade's attributes) can change shape without any front end noticing.

The view holds no copy: each property reads the replica when asked. A screen
redrawn after every call into the replica thus never shows a stale value and
costs no more than reading the replica itself did; nothing needs rebuilding
on the replica's side, where every received frame counts. Collections come
out read-only (tuples, frozensets, mapping proxies); the values in them are
frozen.

Two objects are handed out as they are, for reading only: the player's own
:class:`~p2p_nerts.game.tableau.Tableau` (``RoundView.tableau``) and the
round's :class:`~p2p_nerts.game.foundations.FoundationLog`
(``RoundView.foundations``). Copying them on every frame would cost more than
the frame; the game's helpers (``best_target``, ``is_stuck``...) take them as
they are. A front end never changes either: it sends the command, and the
replica moves the card, signs the play and journals it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol

from ...game.foundations import FoundationLog, PlayKey
from ...game.scoring import Match, SeatRound
from ...game.tableau import Tableau
from ...game.variants import Variants
from ..identity import Identity
from ..messages import Seat, View
from ..proof import ForkProof
from ._base import Phase
from ._drops import quiet
from ._forks import Forks
from ._intake import Places
from ._lobby import Table, taken
from ._outbox import Outbox
from ._seating import Seating
from ._state import RoundState, index_of, round_numbered


class Facade(Protocol):
    """What a view reads of the replica's facade as it stands: the parts of the
    table that the facade itself holds (the round, the phase, the match, the
    time of its last call); the owners a view reads are handed to it apart."""

    @property
    def rs(self) -> RoundState | None: ...
    @property
    def prev_rs(self) -> RoundState | None: ...
    @property
    def phase(self) -> Phase: ...
    @property
    def now(self) -> float: ...
    @property
    def match(self) -> Match | None: ...
    @property
    def watching(self) -> bool: ...
    @property
    def is_host(self) -> bool: ...
    @property
    def host_key(self) -> bytes: ...
    @property
    def me(self) -> Identity: ...
    @property
    def last_heard(self) -> Mapping[bytes, float]: ...
    @property
    def table(self) -> Table: ...
    def blocked(self) -> str | None: ...


class RoundView:
    """One round as a front end sees it (the current round, or the one before)."""

    __slots__ = ("_rs",)

    def __init__(self, rs: RoundState) -> None:
        self._rs = rs

    @property
    def number(self) -> int:
        return self._rs.number

    @property
    def names(self) -> tuple[str, ...]:
        """Each seat's name, by seat."""
        return self._rs.names

    @property
    def keys(self) -> tuple[bytes, ...]:
        """Each seat's key, by seat."""
        return self._rs.keys

    @property
    def me(self) -> int | None:
        """My seat in this round, or None (watching, or seated after it was dealt)."""
        return self._rs.me

    @property
    def variants(self) -> Variants:
        """The rules this round is played by (the table's may have changed since)."""
        return self._rs.variants

    @property
    def tableau(self) -> Tableau | None:
        """My tableau, the replica's own: to read, never to change (see the module)."""
        return self._rs.tab

    @property
    def foundations(self) -> FoundationLog:
        """The shared foundations, the replica's own: to read, never to change."""
        return self._rs.log

    @property
    def views(self) -> Mapping[int, View]:
        """What each other seat last showed of its tableau: seat → its VIEW."""
        return MappingProxyType(self._rs.views)

    @property
    def stuck(self) -> tuple[bool, ...]:
        """Each seat's stuck vote, by seat, as the total order has it."""
        return tuple(self._rs.stuck)

    @property
    def live(self) -> frozenset[int]:
        """The seats still in the round."""
        return frozenset(self._rs.live)

    @property
    def left(self) -> frozenset[int]:
        """The seats that said GOODBYE in this round (signed in it): leaving it, or
        gone from it once their drop takes effect."""
        return frozenset(self._rs.left)

    @property
    def sitting_out(self) -> frozenset[int]:
        """Of :attr:`left`, the seats that sit this round out only (back from a restart
        behind the table): they play the next."""
        return frozenset(self._rs.sitting_out)

    @property
    def flagged(self) -> Mapping[int, str]:
        """Seats caught cheating or in error this round: seat → why."""
        return MappingProxyType(self._rs.flagged)

    @property
    def rotations(self) -> int:
        """All-stuck rotations so far this round."""
        return self._rs.rotations

    @property
    def play_from(self) -> float | None:
        """When the countdown ends and play begins (the replica's clock), once dealt."""
        return self._rs.play_from

    @property
    def started(self) -> bool:
        """Whether the countdown is over on this peer."""
        return self._rs.started

    @property
    def call(self) -> PlayKey | None:
        """The Nerts call that ended the round: its (Lamport, seat)."""
        return self._rs.call

    @property
    def end(self) -> str | None:
        """How the round ended, "nerts" or "deadlock"; None while it runs."""
        return self._rs.end

    @property
    def results(self) -> tuple[SeatRound, ...]:
        """Each seat's scored round, once every audit is in; () before."""
        return self._rs.results

    @property
    def verdicts(self) -> tuple[str, ...]:
        """The audit's word on each seat, by seat ("" for a clean one)."""
        return self._rs.verdicts


class TableView:
    """The table as a front end sees it: the replica's state, read-only.

    Build one with ``Replica.view()``; it stays valid as long as the replica,
    and each read is the replica's state at that moment.
    """

    __slots__ = ("_forks", "_outbox", "_places", "_r", "_seating")

    def __init__(self, replica: Facade, *, seating: Seating, outbox: Outbox, places: Places,
                 forks: Forks) -> None:
        self._r = replica
        self._seating = seating
        self._outbox = outbox
        self._places = places
        self._forks = forks

    @property
    def phase(self) -> Phase:
        return self._r.phase

    @property
    def now(self) -> float:
        """The time of the replica's last call, on the clock its shell passes in."""
        return self._r.now

    @property
    def round(self) -> RoundView | None:
        """The latest round, from the ROSTER that opens it (shuffle, play, scoring)
        until the next one opens; None before the first."""
        rs = self._r.rs
        return RoundView(rs) if rs is not None else None

    def round_of(self, number: int) -> RoundView | None:
        """Round ``number``, if it is the current or the previous round: one call
        can close a round and deal the next, and its end is read after."""
        rs = round_numbered(number, self._r.rs, self._r.prev_rs)
        return RoundView(rs) if rs is not None else None

    @property
    def watching(self) -> bool:
        """Whether this replica only watches the table (a spectator has no seat)."""
        return self._r.watching

    @property
    def is_host(self) -> bool:
        return self._r.is_host

    @property
    def host_key(self) -> bytes:
        return self._r.host_key

    @property
    def my_key(self) -> bytes:
        return self._r.me.public_key

    @property
    def my_seat(self) -> int | None:
        """My seat in the current round, else in the host's last ROSTER, else None."""
        rs = self._r.rs
        return rs.me if rs is not None else index_of(self._seating.seats, self._r.me.public_key)

    @property
    def dropped(self) -> bool:
        """Whether my seat is out of the current round (gone from its live seats, or
        agreed dropped: ``RoundState.dropped``)."""
        rs = self._r.rs
        return rs is not None and rs.me is not None and rs.dropped(rs.me)

    @property
    def seq(self) -> int:
        """The last sequence number I signed (or, back at a table, learned I had)."""
        return self._outbox.seq

    @property
    def seats(self) -> tuple[Seat, ...]:
        """Who sits at the table, in seat order (the host's last ROSTER)."""
        return self._seating.seats

    @property
    def seated(self) -> frozenset[bytes]:
        """The seats' keys."""
        return self._seating.seated

    @property
    def seats_taken(self) -> int:
        """Seats taken, as a lobby counts them (``lobby.taken``): in a round, the seats
        the next deal goes to as things stand; the host's count includes the
        latecomers waiting, which only it knows of."""
        r = self._r
        return taken(r.table, r.rs)

    def player(self, key: bytes) -> bool:
        """Whether ``key`` holds a place at this table (a seat, a place in the round
        or on the waiting list, the host's) or held one: a player the table keeps
        talking to (a seat given up catches up, and asks back in, through it)."""
        return self._places.player(key, self._seating.holds_place(key, self._r.rs))

    def watcher(self, key: bytes) -> bool:
        """Whether ``key``, without a place, asked for the table's entries (a RESEND):
        a spectator a front end may admit (``Admission.admits_spectator``)."""
        return key in self._places.watchers

    @property
    def equivocators(self) -> Mapping[bytes, ForkProof]:
        """Keys proven to have signed two entries under one number, for the whole
        game, each with its proof: the host seats them no more."""
        return MappingProxyType(self._forks.proven)

    def ready(self, key: bytes) -> bool:
        """Whether ``key``'s player last said it is ready for the next deal."""
        return self._seating.ready.get(key, False)

    def heard_at(self, key: bytes) -> float | None:
        """When ``key``'s peer was last heard from, on the replica's clock; None if never."""
        return self._r.last_heard.get(key)

    @property
    def variants(self) -> Variants:
        """The table's rules for the next round (the host's last SETTINGS)."""
        return self._seating.variants

    @property
    def countdown(self) -> float:
        """Seconds between the deal and the first move."""
        return self._seating.countdown

    @property
    def drop_after(self) -> float:
        """Seconds of silence after which a seat is voted out of a round."""
        return self._seating.drop_after

    @property
    def silent(self) -> frozenset[int]:
        """The seats of the latest round, mine aside, silent past ``drop_after`` as my
        votes count them (``drops.quiet``): each has my vote out, or soon will."""
        rs = self._r.rs
        if rs is None:
            return frozenset()
        return frozenset(quiet(rs, self._r.last_heard, self._r.now, self._seating.drop_after))

    @property
    def totals(self) -> tuple[int, ...] | None:
        """Each seat's running total (the current round's seats), None before a deal."""
        match = self._r.match
        return tuple(match.totals) if match is not None else None

    @property
    def team_totals(self) -> tuple[tuple[str, int], ...]:
        """Each team's name and total, in team order (each player's, without teams):
        what wins. Empty before the first deal."""
        match, rs = self._r.match, self._r.rs
        if match is None or rs is None:
            return ()
        return tuple(match.named_totals(rs.names))

    @property
    def voted(self) -> bool:
        """Whether my seat's stuck vote is on (cast by me, or by my partner at a
        shared tableau)."""
        rs = self._r.rs
        return rs is not None and rs.my_vote

    def blocked(self) -> str | None:
        """Why my moves would be refused right now (for a screen to say), or None."""
        return self._r.blocked()

    def can_move(self) -> bool:
        return self._r.blocked() is None
