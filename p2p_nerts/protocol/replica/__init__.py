"""The table replica: one peer's copy of a table, as a pure state machine.

A package so that each part of the replica's work can live in its own small
module; callers import from here and need not know the module map. A front
end drives it with command values (``Move``, ``Turn``, ``VoteStuck``...)
through :meth:`Replica.handle`, and reads it through the read-only
:class:`TableView` that :meth:`Replica.view` returns.

Where state changes, the rule every module here keeps:

- What one call produces (the ``Outbound``: frames to send, events, records
  to journal) and the table's phase change in one place only, the facade's
  ``Replica._settle`` (``_replica``), which carries out an effect
  (``_effects``): a value a sub-machine returned. Nothing else signs,
  journals, sends or emits.
- Every other piece of state has one owner, and changes only in the owner's
  own methods: ``Game`` the round (``rs``, ``prev_rs``), the match and the
  running totals (and the phase, as ``_settle`` says), ``Seating`` the seats,
  rules and waiting list, ``Places`` the
  author chains and their resends, ``Outbox`` my chain and clock, ``Forks``
  the proofs, ``Recovery`` a journal replayed, ``Pruning`` the notes,
  ``Heartbeats`` when my marks are due. ``Steps``, ``Delivery`` and the
  facade call the owners' methods directly, where a decision is carried
  out: the chains' (``Places.forget_before`` as a round begins,
  ``Places.take_heads`` and ``Outbox.caught_up`` as a snapshot is taken up),
  the seating's (the seats and rules a ROSTER, SETTINGS or snapshot sets;
  the waiting list, the line and who is ready as the lobby decides,
  ``Steps.lobbied``; the newcomers noted as a round closes; the next deal's
  time), and ``Seating.auto_deal`` changes its own. The lobby decides in
  values (``Seated``, ``Joined``, ``Left``...), and the owner's change comes
  before what is signed after it.
- One round's ``RoundState`` is not one owner's yet: it changes in the
  functions of the round's modules (``_rounds``, ``_shuffle``, ``_drops``,
  ``_order`` and ``Steps.turn``, ``_forks``, ``_closing``, ``_liveness``), in
  ``Moves`` for my own moves and in ``Recovery`` as my journal replays, each
  given the round it is about, and only while an entry is delivered
  (``Delivery``), a step is taken (``Steps``), a command is handled or time
  passes (``tick``).
- What a decision makes due next is a direct call on ``Steps``, made once
  what came before it has been carried out, so it reads the table as that
  left it. Nothing is deferred as a value to be routed back, and an entry
  found invalid on the way raises ``EnvelopeError`` up to where it is being
  delivered, which refuses it alone.
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
