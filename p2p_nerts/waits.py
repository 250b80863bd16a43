"""Waiting for an asyncio event, for a while at most, in a way a cancel always ends.

``asyncio.wait_for(event.wait(), seconds)`` on Python 3.11 drops a cancel that
comes as the event is set: it returns as if the wait had simply ended (3.12
mends it). A loop that waits so and is cancelled at that moment goes round
again, and whoever awaits it waits for ever: a headless host ended by a signal
while its guests said goodbye, its bot's loop cancelled as their goodbyes set
the event it waited on, never exited. ``asyncio.timeout`` tells its own cancel
from another's, so every such wait in the package goes through
:func:`wait_event`.
"""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["wait_event"]


async def wait_event(event: asyncio.Event, seconds: float) -> bool:
    """Wait until ``event`` is set, or ``seconds`` have passed; whether it is set."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()
    return event.is_set()
