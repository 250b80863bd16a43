"""The table replica: one peer's copy of a table, as a pure state machine.

A package so that each part of the replica's work can live in its own small
module; callers import from here and need not know the module map. A front
end drives it with command values (``Move``, ``Turn``, ``VoteStuck``...)
through :meth:`Replica.handle`, and reads it through the read-only
:class:`TableView` that :meth:`Replica.view` returns.
"""

from ._base import (
    COUNTDOWN,
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
from ._lobby import OVER
from ._replica import Replica
from ._state import Ordered, RoundState, round_numbered
from ._view import RoundView, TableView

__all__ = [
    "COUNTDOWN",
    "DROP_AFTER",
    "EPHEMERAL",
    "HEARTBEAT",
    "LINK_TYPES",
    "MAX_AUTHORS",
    "OVER",
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
