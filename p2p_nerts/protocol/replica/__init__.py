"""The table replica: one peer's copy of a table, as a pure state machine.

A package so that each part of the replica's work can live in its own small
module; callers import from here and need not know the module map. A front
end drives it with command values (``Move``, ``Turn``, ``VoteStuck``...)
through :meth:`Replica.handle`, and reads it through the read-only
:class:`TableView` that :meth:`Replica.view` returns.

Where state changes, the rule every module here keeps:

- Every piece of state has one owner, and changes only in the owner's own
  methods, named for what happened and called directly where it is decided:
  ``Game`` the phase, the round and the one before it, the match and the
  running totals; ``RoundState`` everything of one round (its tableau,
  foundation log and stuck rule are the rules engine's, changed by their own
  code); ``Seating`` the seats, rules and waiting list; ``Places`` the author
  chains and their resends; ``Outbox`` my chain and clock; ``Forks`` the
  proofs; ``Recovery`` a journal replayed; ``Pruning`` the notes;
  ``Heartbeats`` when my marks are due.
- What goes out at the I/O edge (what to sign, journal, send and tell, and
  the phase) comes back from a decision as an effect (``_effects``), carried
  out in one place only, the facade's ``Replica._settle``, into the
  ``Outbound`` the call returns. Nothing else signs, journals, sends or emits.
- What a decision makes due next is a direct call on ``Steps``, made once
  what came before it has been carried out, so it reads the table as that
  left it. An entry found invalid on the way raises ``EnvelopeError`` up to
  where it is being delivered, which refuses it alone.
"""

from ._base import (
    COUNTDOWN,
    DEAL_WITH,
    DROP_AFTER,
    EPHEMERAL,
    HEARTBEAT,
    LINK_TYPES,
    MAX_AUTHORS,
    SIT_DOWN_WAIT,
    CommandError,
    Outbound,
    Phase,
    Send,
    clocks_problem,
    view_of,
)
from ._catchup import Compaction, compact, compacts
from ._commands import (
    ArrangeSeats,
    AskToWatch,
    CallNerts,
    ChangeSettings,
    Command,
    LeaveTable,
    Move,
    Open,
    RotateAlone,
    SeatLost,
    SetReady,
    StartRound,
    Turn,
    TurnAway,
    VoteStuck,
)
from ._heartbeats import PLAY_HEARTBEAT
from ._lobby import OVER
from ._replica import Replica
from ._state import Ordered, RoundState, round_numbered
from ._view import RoundView, TableView

__all__ = [
    "COUNTDOWN",
    "DEAL_WITH",
    "DROP_AFTER",
    "EPHEMERAL",
    "HEARTBEAT",
    "LINK_TYPES",
    "MAX_AUTHORS",
    "OVER",
    "PLAY_HEARTBEAT",
    "SIT_DOWN_WAIT",
    "ArrangeSeats",
    "AskToWatch",
    "CallNerts",
    "ChangeSettings",
    "Command",
    "CommandError",
    "Compaction",
    "LeaveTable",
    "Move",
    "Open",
    "Ordered",
    "Outbound",
    "Phase",
    "Replica",
    "RotateAlone",
    "RoundState",
    "RoundView",
    "SeatLost",
    "Send",
    "SetReady",
    "StartRound",
    "TableView",
    "Turn",
    "TurnAway",
    "VoteStuck",
    "clocks_problem",
    "compact",
    "compacts",
    "round_numbered",
    "view_of",
]
