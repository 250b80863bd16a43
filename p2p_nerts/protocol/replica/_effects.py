"""Effects: what a sub-machine asks the facade to do at the I/O edge, as plain
frozen values.

A sub-machine reads what it is given and returns a list of these; the facade
carries them out in order, in one place (``Replica._settle``), the only code
that signs, journals, sends, emits events and sets the phase. So what one step
puts out is a value a test compares, in the order written once, in the list it
returns. A record to journal is the journal's own ``Record`` (written ahead of
the sends). Nothing else is an effect: state changes in its owner's methods,
called directly (``Game``, ``Places``...), and what a decision makes due next
is a direct call (``_steps``). :data:`Effect` names every effect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import events as ev
from ..identity import fingerprint_of
from ..journal import Record
from ..messages import Ack, Payload, Seat
from ._base import Phase
from ._state import index_of


@dataclass(frozen=True, slots=True)
class Sign:
    """Sign one of my entries and queue it (to one key, or to everyone); a
    sequenced one is delivered to myself as well. ``round_no``: the round it
    is for, when not the current one.

    A move of mine that signs (a play, a Nerts call) was made on my tableau
    keyed by the Lamport time its entry will carry: ``expect_lamport``, which
    signing checks. ``unapplied``: a play, delivered to myself not now but on
    the shell's next call (``Outbox.unapplied``), once it has been sent.
    """

    payload: Payload
    to: bytes | None = None
    round_no: int | None = None
    expect_lamport: int | None = None
    unapplied: bool = False


@dataclass(frozen=True, slots=True)
class Emit:
    """Tell the user (or the front end) something."""

    event: ev.Event


@dataclass(frozen=True, slots=True)
class SetPhase:
    """The table's phase changes (play starts, say)."""

    phase: Phase


def roster_told(seats: tuple[Seat, ...], me: bytes) -> Emit:
    """The seats changed: who sits where, and whether I do."""
    return Emit(ev.RosterChanged(tuple(s.name for s in seats),
                                 tuple(fingerprint_of(s.key) for s in seats),
                                 index_of(seats, me)))


# --- intake and the chains
@dataclass(frozen=True, slots=True)
class Reject:
    """Refuse what came in (``reason``): count it and tell the user."""

    reason: str


@dataclass(frozen=True, slots=True)
class Counted:
    """Count what was refused (``reason``), telling no one: an entry held already,
    which peers resend and relay as a matter of course, or the part of a RESEND
    its asker's budget held back, which it asks for again."""

    reason: str


# --- the ephemeral side: ACK, VIEW, RESEND, SNAPSHOT, HELLO, and my marks
@dataclass(frozen=True, slots=True)
class Resent:
    """Queue these frames of the table's chains for ``asker`` (its RESEND answered)."""

    asker: bytes
    frames: Sequence[bytes]


@dataclass(frozen=True, slots=True)
class SignAck:
    """Sign my ACK (``ack``: how far I hold every chain) to ``to``, or to every peer
    but ``besides`` (the heartbeat); ephemeral, it is not delivered to myself."""

    ack: Ack
    to: bytes | None = None
    besides: frozenset[bytes] = frozenset()


#: Everything a sub-machine may ask of the facade (after every section: it names them
#: all).
Effect = Sign | Emit | Record | SetPhase | Reject | Counted | Resent | SignAck
