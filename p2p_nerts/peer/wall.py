"""The page for the projector: ``nerts event serve``'s read-only web server.

An evening's standings belong on the wall, where the whole room reads them and
no one has to install anything to see them on a phone. This module serves one
page (``wall_page/``: HTML, CSS and JavaScript, no external assets, for a LAN
with no internet) and the data it shows, with aiohttp, a well-kept HTTP
server with streaming responses, rather than hand-written HTTP.

What it serves, GET (and HEAD) only, anything else 405, any other path 404:

- ``/`` the page (and ``/wall.css``, ``/wall.js``), from memory;
- ``/standings.json`` the standings: ``{"event": NAME, "standings": [...]}``;
- ``/events`` server-sent events: the whole snapshot as one ``data:`` line
  (JSON) at once and again on every change, a comment line every
  :data:`HEARTBEAT` seconds between; at most ``max_clients`` streams at once
  (past that, 503), and a stream whose reader stops reading is dropped.

The source, all a feeder needs to know. The server shows a :class:`Feed`:
``Feed(snapshot)`` then ``feed.set(snapshot)`` whenever the event changes (on
the server's event loop); the page follows within a moment, without a reload.
A snapshot is the dict ``EventBook.wall()`` gives (the event contract)::

    {"event": {"name", "game", "games", "state"},
     "standings": [{"place", "name", "fp", "games", "wins", "points", "tiebreak"}],
     "tables": [{"game", "table", "state", "round",
                 "players": [{"name", "fp", "score"}]}],
     "next": {"game", "tables": [{"table", "players": [{"name", "fp"}]}]} | None,
     "missing": [str]}

and the server keeps only those fields, of those types, within bounds
(:func:`shaped`): whatever else a source holds never reaches the page. A
snapshot that is not of that shape is refused with :class:`WallError`, and
the page goes on showing the last good one. ``nerts event serve --event``
feeds it the snapshots of a book that follows the event; without, today's
standings (:func:`standings_wall`). A process that holds the organiser's own
book serves it the same way::

    feed = Feed(book.wall())
    async with serving_wall(feed, "0.0.0.0", 8080):
        ...  # and after each change: feed.set(book.wall())
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from collections.abc import AsyncIterator, Mapping, Sequence
from importlib import resources
from typing import Any

from aiohttp import web

from ..records.standings import Standings, standings_json
from ..waits import wait_event

__all__ = ["HEARTBEAT", "LATEST", "MAX_CLIENTS", "Feed", "WallError", "serving_wall", "shaped",
           "standings_wall", "wall_app"]

HEARTBEAT = 15.0
"""Seconds between the comment lines that keep an idle stream open (and find a
reader that has gone)."""
MAX_CLIENTS = 64
"""Event streams served at once: the projector and a room's phones."""
LATEST = 8
"""Finished games today's standings put on the wall beside them: the room's last round."""
_WRITE_TIMEOUT = 10.0  # seconds one write to a stream may wait on its reader
_RETRY_MS = 2000  # how soon a page's EventSource reconnects after a drop

#: Bounds on what a snapshot may hold: an evening far beyond the largest the
#: README calls comfortable, and names as long as the game lets them be.
_MAX_PLAYERS = 1000
_MAX_TABLES = 250
_MAX_SEATS = 16
_MAX_TEXT = 64
_MAX_MISSING = 1000
_STATES = ("registering", "seating", "playing", "finished")

_PAGE_FILES = {"/": ("index.html", "text/html"), "/wall.css": ("wall.css", "text/css"),
               "/wall.js": ("wall.js", "text/javascript")}
_HEADERS = {
    # The page's own files and its own server, nothing else, and no inline code.
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "connect-src 'self'; img-src 'self'; base-uri 'none'; "
                               "form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


class WallError(ValueError):
    """A snapshot not of the wall's shape: one line saying where."""


def shaped(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """The part of ``snapshot`` the wall shows: the contract's fields only, checked
    and bounded. Raises :class:`WallError` naming the first field that is wrong."""
    event = _map(snapshot, "event")
    nxt = snapshot.get("next")
    return {
        "event": {"name": _text(event, "name", "event"), "game": _int(event, "game", "event"),
                  "games": _int(event, "games", "event"),
                  "state": _choice(event, "state", _STATES, "event")},
        "standings": [
            {"place": _int(row, "place", where), "name": _text(row, "name", where),
             "fp": _text(row, "fp", where), "games": _int(row, "games", where),
             "wins": _int(row, "wins", where), "points": _int(row, "points", where),
             "tiebreak": _number(row, "tiebreak", where)}
            for where, row in _rows(snapshot, "standings", _MAX_PLAYERS)],
        "tables": [
            {"game": _int(t, "game", where), "table": _text(t, "table", where),
             "state": _text(t, "state", where), "round": _int(t, "round", where),
             "players": [{"name": _text(p, "name", seat), "fp": _text(p, "fp", seat),
                          "score": _int(p, "score", seat)}
                         for seat, p in _rows(t, "players", _MAX_SEATS, where)]}
            for where, t in _rows(snapshot, "tables", _MAX_TABLES)],
        "next": None if nxt is None else {
            "game": _int(_map(snapshot, "next"), "game", "next"),
            "tables": [
                {"table": _text(t, "table", where),
                 "players": [{"name": _text(p, "name", seat), "fp": _text(p, "fp", seat)}
                             for seat, p in _rows(t, "players", _MAX_SEATS, where)]}
                for where, t in _rows(_map(snapshot, "next"), "tables", _MAX_TABLES, "next")]},
        "missing": [_check_text(name, f"missing[{i}]")
                    for i, name in enumerate(_list(snapshot, "missing", _MAX_MISSING, ""))],
    }


def _map(parent: Mapping[str, Any], key: str, where: str = "") -> Mapping[str, Any]:
    value = parent.get(key)
    if not isinstance(value, Mapping):
        raise WallError(f"the wall's snapshot: {_at(where, key)} must be an object")
    return value


def _list(parent: Mapping[str, Any], key: str, limit: int, where: str) -> Sequence[Any]:
    value = parent.get(key)
    if not isinstance(value, list | tuple):
        raise WallError(f"the wall's snapshot: {_at(where, key)} must be a list")
    if len(value) > limit:
        raise WallError(f"the wall's snapshot: {_at(where, key)} holds more than {limit}")
    return value


def _rows(parent: Mapping[str, Any], key: str, limit: int,
          where: str = "") -> list[tuple[str, Mapping[str, Any]]]:
    """The objects of list ``key``, each with where it is, for the errors."""
    rows = []
    for i, row in enumerate(_list(parent, key, limit, where)):
        here = f"{_at(where, key)}[{i}]"
        if not isinstance(row, Mapping):
            raise WallError(f"the wall's snapshot: {here} must be an object")
        rows.append((here, row))
    return rows


def _text(parent: Mapping[str, Any], key: str, where: str) -> str:
    return _check_text(parent.get(key), _at(where, key))


def _check_text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise WallError(f"the wall's snapshot: {where} must be text")
    return value[:_MAX_TEXT]


def _int(parent: Mapping[str, Any], key: str, where: str) -> int:
    value = parent.get(key)
    if type(value) is not int or abs(value) >= 10**12:
        raise WallError(f"the wall's snapshot: {_at(where, key)} must be a whole number")
    return value


def _number(parent: Mapping[str, Any], key: str, where: str) -> int | float:
    value = parent.get(key)
    if type(value) is float and math.isfinite(value) and abs(value) < 1e12:
        return value
    return _int(parent, key, where)


def _choice(parent: Mapping[str, Any], key: str, choices: Sequence[str], where: str) -> str:
    value = parent.get(key)
    if value not in choices:
        raise WallError(f"the wall's snapshot: {_at(where, key)} must be one of "
                        f"{', '.join(choices)}")
    return str(value)


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def standings_wall(standings: Standings, name: str) -> dict[str, Any]:
    """Today's standings (``nerts event``'s tally of the LAN's verified records) as a
    wall snapshot: the standings, and the latest :data:`LATEST` games counted as the
    tables (state "over"), newest first, each with its players' totals. There is no
    game count of an evening here (``games`` 0), and these standings break ties by
    no more than points and name, so ``tiebreak`` is 0 (the page then shows neither)."""
    shown = standings_json(standings)
    rows = [{"place": place, "name": r["name"], "fp": r["fingerprint"], "games": r["games"],
             "wins": r["wins"], "points": r["points"], "tiebreak": 0}
            for place, r in enumerate(shown["standings"], start=1)]
    games = list(reversed(shown["games"]))[:LATEST]
    tables = [{"game": len(shown["games"]) - i, "table": _hosted_by(game["host"]),
               "state": "over", "round": 0,
               "players": [{"name": p["name"], "fp": p["fingerprint"], "score": p["total"]}
                           for p in game["players"]][:_MAX_SEATS]}
              for i, game in enumerate(games)]
    return {"event": {"name": name, "game": 0, "games": 0, "state": "playing"},
            "standings": rows, "tables": tables, "next": None, "missing": []}


def _hosted_by(host: Mapping[str, Any]) -> str:
    """A table as standings name it: its host's signed name, with the start of its key's
    fingerprint (``Tess@22d7``)."""
    at = str(host["fingerprint"]).replace("-", "")[:4]
    return f"{host['name'] or 'a host'}@{at}"


class Feed:
    """The wall's source: the latest good snapshot, and a wake-up for the streams when
    it changes. :meth:`set` is the one way in; call it on the server's event loop."""

    def __init__(self, snapshot: Mapping[str, Any]) -> None:
        self.version = 0
        self.closed = False
        self._changed = asyncio.Event()
        self._install(shaped(snapshot))

    def set(self, snapshot: Mapping[str, Any]) -> bool:
        """Show ``snapshot`` from now on; False when it shows nothing new. Raises
        :class:`WallError` (and keeps showing the last one) when it is not of the
        wall's shape."""
        good = shaped(snapshot)
        if good == self.snapshot:
            return False
        self._install(good)
        self.version += 1
        self._wake()
        return True

    @property
    def body(self) -> str:
        """The snapshot as the streams send it: JSON on one line."""
        return self._body

    @property
    def standings_body(self) -> str:
        """``/standings.json``: the standings, under the event's name."""
        return self._standings

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        self.closed = True
        self._wake()

    async def changed(self, since: int, timeout: float) -> None:
        """Return when the version is no longer ``since``, or the feed closed, or after
        ``timeout`` seconds, whichever comes first."""
        if self.version != since or self.closed:
            return
        await wait_event(self._changed, timeout)

    def _install(self, good: dict[str, Any]) -> None:
        self.snapshot = good
        self._body = json.dumps(good, separators=(",", ":"))
        self._standings = json.dumps({"event": good["event"]["name"],
                                      "standings": good["standings"]})

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


_FEED = web.AppKey("feed", Feed)
_STREAMS = web.AppKey("streams", set[web.StreamResponse])
_LIMIT = web.AppKey("max_clients", int)
_PAGES = web.AppKey("pages", dict[str, tuple[bytes, str]])


def wall_app(feed: Feed, max_clients: int = MAX_CLIENTS) -> web.Application:
    """The web application that serves ``feed``'s snapshots (the module docstring
    says what, where)."""
    app = web.Application()
    app[_FEED] = feed
    app[_STREAMS] = set()
    app[_LIMIT] = max_clients
    page = resources.files(__package__ or "p2p_nerts.peer").joinpath("wall_page")
    app[_PAGES] = {path: (page.joinpath(name).read_bytes(), kind)
                   for path, (name, kind) in _PAGE_FILES.items()}
    for path in _PAGE_FILES:
        app.router.add_get(path, _page)
    app.router.add_get("/standings.json", _standings)
    app.router.add_get("/events", _events)
    app.on_shutdown.append(_closing)
    return app


async def _page(request: web.Request) -> web.Response:
    body, kind = request.app[_PAGES][request.path]
    return web.Response(body=body, content_type=kind, charset="utf-8", headers=_HEADERS)


async def _standings(request: web.Request) -> web.Response:
    return web.Response(text=request.app[_FEED].standings_body,
                        content_type="application/json", headers=_HEADERS)


_STREAM_HEADERS = {**_HEADERS, "Content-Type": "text/event-stream; charset=utf-8",
                   "Cache-Control": "no-store", "X-Accel-Buffering": "no"}


async def _events(request: web.Request) -> web.StreamResponse:
    if request.method == "HEAD":
        return web.Response(headers=_STREAM_HEADERS)
    streams = request.app[_STREAMS]
    if len(streams) >= request.app[_LIMIT]:
        raise web.HTTPServiceUnavailable(
            text="too many pages are following this wall: try again soon",
            headers={"Retry-After": "10"})
    feed = request.app[_FEED]
    response = web.StreamResponse(headers=_STREAM_HEADERS)
    streams.add(response)
    try:
        await response.prepare(request)
        await _send(response, f"retry: {_RETRY_MS}\n\n")
        sent: int | None = None
        while not feed.closed:
            if feed.version != sent:
                sent = feed.version
                await _send(response, f"data: {feed.body}\n\n")
            else:
                await _send(response, ": still here\n\n")
            await feed.changed(sent, HEARTBEAT)
    except ConnectionError:
        pass  # the reader has gone: its page reconnects if it can
    except TimeoutError:
        # It stopped reading: cut the connection, and what is queued for it with it
        # (ended politely, the stream's last bytes would wait on that reader too).
        if request.transport is not None:
            request.transport.abort()
    finally:
        streams.discard(response)
    return response


async def _send(response: web.StreamResponse, text: str) -> None:
    async with asyncio.timeout(_WRITE_TIMEOUT):
        await response.write(text.encode())


async def _closing(app: web.Application) -> None:
    app[_FEED].close()


@contextlib.asynccontextmanager
async def serving_wall(feed: Feed, host: str, port: int, *,
                       max_clients: int = MAX_CLIENTS) -> AsyncIterator[list[tuple[str, int]]]:
    """Serve ``feed`` on ``host:port`` (port 0: any free one) while in the block; yields
    the addresses bound (address, port). Raises OSError when it cannot listen there."""
    runner = web.AppRunner(wall_app(feed, max_clients), access_log=None,
                           shutdown_timeout=2.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        yield [(str(a[0]), int(a[1])) for a in runner.addresses]
    finally:
        await runner.cleanup()
