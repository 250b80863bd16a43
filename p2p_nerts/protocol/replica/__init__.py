"""The table replica: one peer's copy of a table, as a pure state machine.

A package so that each part of the replica's work can live in its own small
module; callers import from here and need not know the module map.
"""

from ._replica import (
    COUNTDOWN,
    DROP_AFTER,
    LINK_TYPES,
    MAX_AUTHORS,
    SIT_DOWN_WAIT,
    CommandError,
    Outbound,
    Phase,
    Replica,
    RoundState,
    Send,
    _Ordered,
    clocks_problem,
    view_of,
)

__all__ = [
    "COUNTDOWN",
    "DROP_AFTER",
    "LINK_TYPES",
    "MAX_AUTHORS",
    "SIT_DOWN_WAIT",
    "CommandError",
    "Outbound",
    "Phase",
    "Replica",
    "RoundState",
    "Send",
    "_Ordered",
    "clocks_problem",
    "view_of",
]
