"""Finding one table by (part of) its name, and what to say when none answers."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

from ..interfaces import Interfaces
from ._ad import AmbiguousTableError, DiscoveryError, TableAd, TableNotFoundError
from ._browser import TableBrowser

_FIND_SETTLE = 0.6
"""Seconds ``find_table`` keeps listening after a first match, so that two
tables with the same name are reported as ambiguous instead of picked at random:
long enough for a namesake's answer on a LAN, short enough not to keep a
player waiting."""


class Named(Protocol):
    """What a player names a table by: a ``TableAd``, or the lobby's listing of one."""

    @property
    def name(self) -> str: ...
    @property
    def instance(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def fingerprint(self) -> str: ...


_T = TypeVar("_T", bound=Named)


def matching(tables: Sequence[_T], name: str | None) -> list[_T]:
    """The tables ``name`` means, as a player types it: all of them for None.

    ``NAME@FINGERPRINT`` (``"Main table@22d7"``, as :func:`describe_table`
    writes it: the start of the host's key fingerprint, dashes or not) means
    the tables of hosts whose fingerprint starts so, and among them those
    ``NAME`` means (any, for ``@22d7`` alone). Else: the table's exact instance
    name, else the tables of exactly that name, else those whose host has
    exactly that name, else those whose name starts with it, else those whose
    name has it anywhere (case does not matter). The first of these that finds
    any decides.
    """
    if name is None:
        return list(tables)
    head, at, tail = name.rpartition("@")
    fingerprint = tail.replace("-", "").casefold()
    if at and _FINGERPRINT_PREFIX.fullmatch(fingerprint):
        theirs = [t for t in tables if t.fingerprint.startswith(fingerprint)]
        found = matching(theirs, head.strip() or None)
        if found:
            return found
    wanted = name.casefold()
    names = [(t, t.name.casefold()) for t in tables]
    for tier in (
        [t for t in tables if t.instance.casefold() == wanted],
        [t for t, n in names if n == wanted],
        [t for t in tables if t.host and t.host.casefold() == wanted],
        [t for t, n in names if n.startswith(wanted)],
        [t for t, n in names if wanted in n],
    ):
        if tier:
            return tier
    return []


_FINGERPRINT_PREFIX = re.compile(r"[0-9a-f]{1,64}")
_LABEL_DIGITS = 4
"""Hex digits of the host's fingerprint in a table's label: enough to tell apart
the hosts of one evening (two share them one time in 65,536)."""


def table_label(table: Named, among: Sequence[Named] = ()) -> str:
    """``Main table@22d7``: the table's name and the start of its host's key
    fingerprint, which ``nerts join`` takes (:func:`matching`); longer where a
    table ``among`` others of its name starts the same."""
    digits = _LABEL_DIGITS
    while digits < len(table.fingerprint) and any(
            other.name == table.name and other.fingerprint != table.fingerprint
            and other.fingerprint[:digits] == table.fingerprint[:digits] for other in among):
        digits += 4
    return f"{table.name}@{table.fingerprint[:digits]}"


def describe_table(table: TableAd, among: Sequence[TableAd] = ()) -> str:
    """``"Main table@22d7" (Ana)``: a table as a line of text tells it from a
    namesake, in the form a player can type back (:func:`table_label`)."""
    label = f'"{table_label(table, among)}"'
    return f"{label} ({table.host})" if table.host else label


async def find_table(name: str | None, interfaces: Interfaces, timeout: float = 3.0, *,
                     settle: float = _FIND_SETTLE) -> TableAd:
    """Find the table for ``nerts join [TABLE]``: see :func:`matching` for what matches.

    Raises ``TableNotFoundError`` when nothing matches within ``timeout``
    seconds (saying which tables were seen, or, when no mDNS answer came at
    all, to join by address) and ``AmbiguousTableError`` when several tables
    match. Unless the exact instance name was given, it listens a further
    ``settle`` seconds after the first match to notice a second one. A socket that mDNS
    cannot use (multicast blocked) is a ``DiscoveryError``.
    """
    what = "table" if name is None else f"table named {name!r}"
    try:
        async with TableBrowser(interfaces) as browser:
            try:
                found = await browser.wait_for(lambda ts: bool(matching(ts, name)), timeout)
            except TimeoutError:
                raise _not_found(f"found no {what} on the network in {timeout:g} s",
                                 browser.tables) from None
            exact = [t for t in matching(found, name) if name is not None
                     and t.instance.casefold() == name.casefold()]
            if exact:
                return exact[0]
            await asyncio.sleep(settle)
            await browser.settle(timeout)  # a second table seen but not resolved yet counts
            seen = browser.tables
    except OSError as exc:
        raise DiscoveryError(f"cannot use mDNS here ({exc.strerror or exc}): {_BY_ADDRESS}"
                             ) from None
    candidates = matching(seen, name)
    if not candidates:
        raise _not_found(f"the {what} went away while looking", seen)
    if len(candidates) > 1:
        listing = ", ".join(describe_table(t, candidates) for t in candidates)
        raise AmbiguousTableError(
            f"several tables match {name!r}: {listing}; name one of them as NAME@FINGERPRINT "
            "(or give its host's HOST:PORT)" if name is not None else
            f"several tables are open: {listing}; name one of them as NAME@FINGERPRINT",
            candidates)
    return candidates[0]


_BY_ADDRESS = "join by the host's address instead: nerts join HOST:PORT"


def _not_found(line: str, seen: Sequence[TableAd]) -> TableNotFoundError:
    """No match: the tables there are, or (nothing answered at all) the way round mDNS."""
    if not seen:
        return TableNotFoundError(
            f"{line}; no table answered at all (is multicast blocked on this network?): "
            f"{_BY_ADDRESS}")
    return TableNotFoundError(
        f"{line}; tables seen: {', '.join(describe_table(t, seen) for t in seen)}")


class QuietMdnsErrors(logging.Filter):
    """python-zeroconf logs a socket error (multicast blocked: ``PermissionError``) as a
    warning with its traceback. This filter, on the ``zeroconf`` logger, turns the
    first into one line saying what to do, and keeps the rest out of the log.

    The line is information, not a warning: a firewall that drops some packets
    (a lossy link) fails a send now and then on a network that works, and where
    multicast is blocked for good, what needs it says so itself (``find_table``:
    no table answered; ``nerts event``: nobody answered)."""

    def __init__(self) -> None:
        super().__init__()
        self._said = False

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if not isinstance(error, OSError):
            return True
        if self._said or record.levelno < logging.WARNING:
            return False
        self._said = True
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        record.msg = (f"mDNS could not use the network once ({error.strerror or error}): "
                      f"if no table shows, {_BY_ADDRESS}")
        record.args = ()
        record.exc_info = record.exc_text = None
        return True
