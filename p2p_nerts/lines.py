"""A line for the player on the command line: whole where a program reads it, wrapped
where a person does.

Every problem is one line (a pipe, a log or a test reads it so), but on a
terminal a line longer than the window is broken wherever the window ends,
in the middle of a word or a number (``…a table seats 2 to 8 players, no``).
There it is wrapped at the spaces to the window's width instead, each
continuation indented, so that it reads as the one line it is.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from typing import TextIO


def fitted(line: str, stream: TextIO) -> str:
    """``line`` as it goes to ``stream``: wrapped to its width if it is a terminal."""
    if not stream.isatty():
        return line
    width = max(shutil.get_terminal_size().columns, 20)
    return "\n".join(textwrap.wrap(line, width, subsequent_indent="  ",
                                   break_long_words=False, break_on_hyphens=False))


def counted(count: int, noun: str) -> str:
    """"1 game", "3 games": a count as it reads (every noun it counts takes an s)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def fail(message: str) -> int:
    """Say what went wrong on stderr, as ``nerts: ...``; the exit status 1."""
    print(fitted(f"nerts: {message}", sys.stderr), file=sys.stderr)
    return 1
