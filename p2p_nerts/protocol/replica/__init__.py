"""The table replica: one peer's copy of a table, as a pure state machine.

A package so that each part of the replica's work can live in its own small
module; callers import from here and need not know the module map.
"""

from ._base import (
    COUNTDOWN,
    DROP_AFTER,
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
from ._replica import Replica
from ._state import Ordered, RoundState

__all__ = [
    "COUNTDOWN",
    "DROP_AFTER",
    "LINK_TYPES",
    "MAX_AUTHORS",
    "SIT_DOWN_WAIT",
    "CommandError",
    "Ordered",
    "Outbound",
    "Phase",
    "Replica",
    "RoundState",
    "Send",
    "clocks_problem",
    "view_of",
]
