"""Waiting for an event, for a while at most: a cancel always ends the wait, even one
that comes as the event is set (``asyncio.wait_for`` on Python 3.11 drops it, and
a loop that waits so never ends), and every such wait in the package is one."""

from __future__ import annotations

import ast
import asyncio

from p2p_nerts.waits import wait_event

from .test_layers import MODULES


def test_a_wait_says_whether_the_event_came() -> None:
    async def main() -> tuple[bool, bool]:
        event = asyncio.Event()
        asyncio.get_running_loop().call_later(0.01, event.set)
        came = await wait_event(event, 5.0)
        return came, await wait_event(asyncio.Event(), 0.01)

    assert asyncio.run(main()) == (True, False)


def test_a_loop_cancelled_as_its_event_is_set_ends() -> None:
    """A headless host's bot loop, cancelled as a guest's goodbye sets the event it
    waits on: with ``asyncio.wait_for`` it went round again, and the host, ended
    by a signal, never exited."""
    async def loop(event: asyncio.Event) -> None:
        while True:
            event.clear()
            await wait_event(event, 0.5)

    async def main() -> bool:
        event = asyncio.Event()
        looping = asyncio.create_task(loop(event))
        await asyncio.sleep(0.05)
        event.set()
        await asyncio.sleep(0)  # the wait is over in this turn of the loop...
        looping.cancel()  # ...as the loop is cancelled
        done, _ = await asyncio.wait([looping], timeout=5.0)
        if not done:
            looping.cancel()
            await asyncio.wait([looping])
        return bool(done) and looping.cancelled()

    assert asyncio.run(main())


def test_no_module_waits_with_asyncio_wait_for() -> None:
    callers = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "wait_for" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "asyncio"):
                callers.append(f"{name}:{node.lineno}")
    assert not callers, f"use waits.wait_event: {callers}"
