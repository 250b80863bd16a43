"""Helpers for the tests that open sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

#: Seconds a test waits for a condition: long, for a busy machine is slow, and
#: only a failing test ever waits it out.
WAIT = 30.0


async def until(holds: Callable[[], bool], what: str = "the condition", *,
                timeout: float = WAIT) -> None:
    """Poll ``holds`` until it is true; after ``timeout`` s fail, naming ``what``."""
    try:
        async with asyncio.timeout(timeout):
            while not holds():
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"never: {what}") from None


#: Seconds ``find_table`` listens for a namesake after a first match in a test that
#: expects two: its default is short so as not to keep a player waiting, and a
#: busy machine may answer later than that.
SETTLE = 3.0
