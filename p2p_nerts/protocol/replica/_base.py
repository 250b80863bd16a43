"""The replica's vocabulary: its clocks and limits, the sets of entry types it
treats alike, its phases, and what one call into it produces.

Every module of the package reads these; none of them holds state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ...game.tableau import (
    OP_FOUND,
    OP_NERTS,
    OP_ROTATE,
    OP_SLIDE,
    OP_TURN,
    OP_WORK,
    WASTE,
    Tableau,
)
from ...game.variants import Variants
from .. import events as ev
from ..journal import Record
from ..messages import (
    COUNTDOWN_MS,
    DROP_AFTER_MS,
    MAX_COUNTDOWN_MS,
    MAX_DROP_AFTER_MS,
    MIN_DROP_AFTER_MS,
    MsgType,
    Settings,
    View,
)

COUNTDOWN = COUNTDOWN_MS / 1000  # seconds between GO and the first move (default)
HEARTBEAT = 0.5  # an ACK at least this often (less often at play: ``_heartbeats.every``)
VIEW_INTERVAL = 0.1  # public tableau view at most this often
DROP_AFTER = DROP_AFTER_MS / 1000  # a seat silent this long is voted out (default)
#: The fewest seated a host dealing by itself deals with once its turn-up time is
#: over (default; an event's stand-in host waits for more).
DEAL_WITH = 2
RESEND_INTERVAL = 0.3  # do not ask again for the same gap sooner
#: While a seat back from its journal learns where its chain ends, a tick at
#: least this often (``Replica.next_due``): a few seconds at most, once a restart.
RESUME_POLL = 0.05
#: The reason of the GOODBYE with which a seat back from a journal behind the table
#: sits the rest of the round out (``recovery.resumed``): its box says so, for it
#: plays the next round.
SIT_OUT = "back from a restart behind the table: next round"
DUE_HAIR = 1e-6  # past a deadline, so that a tick at it finds it passed (``next_due``)
#: A gap is asked for once it has lasted this long: the entry is most likely on
#: its way (a peer's ACK naming it can overtake it, coming straight from a third).
RESEND_GRACE = 0.1
#: Bytes of RESEND answers one peer gets a second, and at once: a newcomer
#: catching up on a long game takes a few seconds; a peer asking in a loop
#: gets no more.
RESEND_BYTES = 1 << 20
RESEND_BURST = 4 << 20

SIT_DOWN_WAIT = 30.0
"""Seconds past its break a host with ``auto_next`` waits at most for a
newcomer seated as the round closed to catch up (it replays the table first)."""
MAX_AUTHORS = 64  # distinct keys a table tracks (bounds memory against floods)
#: An honest peer is never this far ahead of us (a whole night of play is a few
#: hundred thousand entries); a larger jump is an attack on everyone's clock.
MAX_LAMPORT_JUMP = 1 << 24

#: Types that take no sequence number: they may be lost, repeated or replayed harmlessly.
EPHEMERAL = frozenset({MsgType.ACK, MsgType.VIEW, MsgType.HELLO, MsgType.RESEND,
                       MsgType.SNAPSHOT})
#: Ephemeral types sent unsigned, as link entries: they are never forwarded, so the
#: authenticated link they come on says who sent them (a verify costs ~90 µs,
#: and every play draws an ACK from each peer). A link entry of another type,
#: or one that names an author other than the link's peer, is rejected.
LINK_TYPES = frozenset({MsgType.ACK, MsgType.VIEW})
#: Types that belong to one round and must name it.
ROUND_TYPES = frozenset({
    MsgType.COMMIT, MsgType.REVEAL, MsgType.GO, MsgType.PLAY, MsgType.STUCK, MsgType.NERTS,
    MsgType.AUDIT, MsgType.SUMMARY, MsgType.VERDICT, MsgType.DROP, MsgType.RESULT,
    MsgType.FORK,
})
#: Round entries acted on at their turn in the round's total order (``rs.ordered``,
#: DROPs through ``rs.drop_queue``).
ORDERED_TYPES = frozenset({
    MsgType.PLAY, MsgType.STUCK, MsgType.NERTS, MsgType.DROP, MsgType.FORK, MsgType.AUDIT,
    MsgType.SUMMARY,
})

#: The host's entries about the table between rounds: each is for the round it is
#: made in (a ROSTER for the next one begins it), and stale once another began.
BETWEEN_ROUND_TYPES = frozenset({MsgType.ROSTER, MsgType.SETTINGS})

#: Move-log operations that are the player's own decisions (journaled for recovery).
DECISIONS = frozenset({OP_TURN, OP_FOUND, OP_WORK, OP_SLIDE, OP_ROTATE, OP_NERTS})
#: Round entries that only make sense once every deck is dealt.
NEEDS_DEAL = frozenset({MsgType.PLAY, MsgType.STUCK, MsgType.NERTS})
LAMPORT_PROBLEMS = {
    "lamport_not_increasing": "Lamport time went backwards",
    "back_dated": "dated an entry before its own acknowledgement",
}


class Phase(Enum):
    LOBBY = "lobby"
    SHUFFLE = "shuffle"  # commitments and reveals
    PLAYING = "playing"
    SCORING = "scoring"  # audits and summaries
    BETWEEN = "between"  # round over, game not
    OVER = "over"


#: Phases in which a round is under way (shuffled, played or scored). Sets, read
#: for every frame and tick: on Python 3.11 a member read off its enum class
#: goes through the metaclass.
IN_ROUND = frozenset({Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING})
#: Phases in which the host may change the table (its settings, its seats).
BETWEEN_ROUNDS = frozenset({Phase.LOBBY, Phase.BETWEEN})


class CommandError(Exception):
    """A local command that the table's state does not allow now (nothing changed)."""


@dataclass(frozen=True, slots=True, init=False)
class Send:
    """Bytes for the transport: to one peer key, or to every peer when ``to`` is None.

    Its ``__init__`` is written out, as ``events.PlayAdded``'s: one is built for
    every frame sent (an ACK after every batch received), and compiled
    (``scripts/compile_engine.py``), a dataclass's generated one stays interpreted.
    """

    data: bytes
    to: bytes | None = None
    #: A VIEW: only peers that draw the other seats' tableaux need it (a bot or a
    #: headless seat does not), and a transport that knows which ones do may
    #: leave the others out. Nothing else the table decides reads a view.
    shown: bool = False
    #: To every peer but these (``to`` None): a heartbeat leaves out the peers
    #: that had the very same marks from me lately.
    besides: frozenset[bytes] = frozenset()

    def __init__(self, data: bytes, to: bytes | None = None, shown: bool = False,
                 besides: frozenset[bytes] = frozenset()) -> None:
        # Frozen: set as the generated one does (compiled, straight into the object).
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "shown", shown)
        object.__setattr__(self, "besides", besides)

    def reaches(self, key: bytes) -> bool:
        """Whether this goes to ``key`` (a VIEW aside: the transport knows who draws)."""
        return key == self.to if self.to is not None else key not in self.besides


@dataclass(frozen=True, slots=True)
class Lead:
    """A peer may hold another entry of ``author`` under ``seq`` than we do: ask for
    it (of ``via``, or of everyone when None). Its answer, a second signed entry
    under that number, proves the fork."""

    author: bytes
    seq: int
    via: bytes | None


@dataclass(slots=True)
class Outbound:
    """What one call into the replica produced."""

    sends: list[Send] = field(default_factory=list)
    events: list[ev.Event] = field(default_factory=list)
    #: Write these to stable storage *before* sending ``sends`` (write-ahead).
    journal: list[Record] = field(default_factory=list)

    def extend(self, later: Outbound) -> None:
        """Append what a later call produced: all three parts, in order.

        (A caller that kept only the frames and events of a second command
        once lost its journal records, and with them crash recovery.)
        """
        self.sends += later.sends
        self.events += later.events
        self.journal += later.journal



def view_of(tab: Tableau) -> View:
    """The public part of a tableau, as another player would see it across the table."""
    return View(
        nerts=len(tab.nerts), top=tab.nerts[-1] if tab.nerts else None,
        work=tuple(tuple(p) for p in tab.work), waste=tab.top(WASTE),
        stock=len(tab.stock),
    )


def clocks_problem(countdown: float, drop_after: float) -> str | None:
    """Why every peer would refuse these clocks in a SETTINGS, or None if it would not."""
    if not 0 <= countdown <= MAX_COUNTDOWN_MS / 1000:  # NaN too
        return f"the countdown must be 0..{MAX_COUNTDOWN_MS / 1000:g} seconds"
    if not MIN_DROP_AFTER_MS / 1000 <= drop_after <= MAX_DROP_AFTER_MS / 1000:
        return (f"a silent seat must be dropped after {MIN_DROP_AFTER_MS / 1000:g}.."
                f"{MAX_DROP_AFTER_MS / 1000:g} seconds")
    return None


def settings_of(v: Variants, countdown: float, drop_after: float) -> Settings:
    """SETTINGS for these rules and clocks; seconds go as whole milliseconds, so that
    every peer, the host too, plays by the very number on the wire."""
    return Settings(stock_turn=v.stock_turn, strict_ties=v.strict_ties, penalty=v.penalty,
                    target=v.target, jokers=v.jokers, teams=v.teams, lone_rotate=v.lone_rotate,
                    countdown_ms=round(countdown * 1000), drop_after_ms=round(drop_after * 1000))


def rules_of(settings: Settings) -> Variants:
    """The rules a SETTINGS (or a snapshot's) gives, the inverse of
    :func:`settings_of`; raises VariantError."""
    return Variants(
        stock_turn=settings.stock_turn, strict_ties=settings.strict_ties,
        lone_rotate=settings.lone_rotate, penalty=settings.penalty,
        target=settings.target, teams=settings.teams,  # type: ignore[arg-type]
        jokers=settings.jokers,
    )
