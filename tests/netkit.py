"""Helpers for the tests that open sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
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


class AnsweringPorts:
    """TCP ports on 127.0.0.1 that take each connection and close it, as a table's
    port answers a lobby's dial (``discovery.dial``): a test's ad says one of these,
    or its row never shows. Each port is served by a thread of its own until
    :meth:`close`."""

    def __init__(self) -> None:
        self._sockets: list[socket.socket] = []
        self._threads: list[threading.Thread] = []

    def new(self) -> int:
        listening = socket.create_server(("127.0.0.1", 0))
        self._sockets.append(listening)
        thread = threading.Thread(target=self._serve, args=(listening,), daemon=True)
        thread.start()
        self._threads.append(thread)
        port: int = listening.getsockname()[1]
        return port

    @staticmethod
    def _serve(listening: socket.socket) -> None:
        with contextlib.suppress(OSError):  # closed: done
            while True:
                connection, _ = listening.accept()
                connection.close()

    def close(self) -> None:
        for listening in self._sockets:
            with contextlib.suppress(OSError):
                listening.shutdown(socket.SHUT_RDWR)
            listening.close()
        for thread in self._threads:
            thread.join(timeout=5)
