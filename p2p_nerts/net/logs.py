"""Log lines that name the player they are about.

A process usually holds one player, and its lines carry that player's name.
``nerts solo --loopback`` holds several: a session per computer player beside
the player's own, in one event loop. The code logs through module loggers,
which know nothing of sessions, so the name comes from a context variable:
each computer player's tasks run in a context of their own
(:func:`speaking_as`), and asyncio hands a task's context on to everything it
starts (its connections' callbacks and timers included). A line logged
outside any such context names the process's player.
"""

from __future__ import annotations

import contextvars
import logging
import sys
import traceback
from pathlib import Path
from types import TracebackType

from .discovery import QuietMdnsErrors

__all__ = ["setup_logging", "speaking_as"]

_SPEAKER: contextvars.ContextVar[str | None] = contextvars.ContextVar("speaker", default=None)


class _Speaker(logging.Filter):
    """Gives every record the name of the player it is about (``%(speaker)s``)."""

    def __init__(self, player: str) -> None:
        super().__init__()
        self._player = player

    def filter(self, record: logging.LogRecord) -> bool:
        record.speaker = _SPEAKER.get() or self._player
        return True


class _OneLine(logging.Formatter):
    """An error logged with its exception (a bug caught so that the table plays on)
    takes one line: what it was and where it was raised, never a traceback, which
    a player cannot act on and which tears a log read by people."""

    def formatException(self, ei: tuple[type[BaseException], BaseException, TracebackType | None]
                        | tuple[None, None, None]) -> str:
        kind, error, tb = ei
        if kind is None:
            return ""
        where = traceback.extract_tb(tb)[-1] if tb is not None else None
        at = f" (in {Path(where.filename).name}:{where.lineno}, {where.name})" if where else ""
        return f"{kind.__name__}: {error}{at}"

    def format(self, record: logging.LogRecord) -> str:
        line, more, rest = super().format(record).partition("\n")
        return f"{line}: {rest.replace(chr(10), ' ')}" if more else line

    def formatStack(self, stack_info: str) -> str:
        return ""


def setup_logging(name: str, verbose: bool, file: Path | None) -> None:
    """Log lines go to stderr headless, to a file under the screen (they would tear it)."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        **({"filename": str(file)} if file else {"stream": sys.stderr}))
    for handler in logging.getLogger().handlers:
        handler.addFilter(_Speaker(name))
        handler.setFormatter(_OneLine("%(asctime)s %(speaker)s: %(message)s", "%H:%M:%S"))
    mdns = logging.getLogger("zeroconf")
    if not verbose:
        mdns.setLevel(logging.WARNING)
    if not any(isinstance(f, QuietMdnsErrors) for f in mdns.filters):
        mdns.addFilter(QuietMdnsErrors())


def speaking_as(name: str) -> contextvars.Context:
    """A context whose log lines name ``name``: start that player's tasks in it."""
    context = contextvars.copy_context()
    context.run(_SPEAKER.set, name)
    return context
