"""``nerts event serve [HOST:]PORT``: the page for the projector, as a thin shell.

Serves ``peer.wall``'s page on the LAN and feeds it, with ``--event``, an
event as this machine's own copy of its book has it (``peer.event_seat``'s
link, following the organiser without registering and watching the tables of
the game under way for their live scores: every entry and record
checked here, every draw re-run), snapshot after snapshot as it changes;
without, the evening's standings as ``nerts event --watch`` counts them (every
record on the network verified, then tallied), counted again every
``--every`` seconds. The page follows each change by itself. Anything wrong
is one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import logging
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zeroconf import InterfaceChoice

from ..event.entries import EventError
from ..lines import fail
from ..net.discovery import DiscoveryError, find_event
from ..net.interfaces import Interfaces, advertised_addresses
from ..peer import results
from ..peer.tables import parse_target
from ..protocol.identity import IDENTITY_FILE, IdentityError, load_or_create
from ..records.standings import Standings
from ..store import own_records

if TYPE_CHECKING:
    from ..peer.wall import Feed

_log = logging.getLogger(__name__)

EVERY = 10.0
"""Seconds between two countings of the standings the page shows, by default."""
_MAX_NAME = 64


def add_serve_command(events: Any) -> None:
    """``serve`` on ``nerts event``'s subparsers (``events``). Its ``--hours``,
    ``--listen``, ``--interfaces`` and ``--data-dir`` are ``nerts event``'s own,
    taken before or after ``serve`` alike."""
    serve = events.add_parser(
        "serve", help="serve the standings as a web page for a projector (and phones), "
                      "following them as games end",
        description="Serve the evening's standings as a web page on the network: "
                    "large type for a projector, one column on a phone, updating by "
                    "itself. Read-only: it shows what the verified records say.")
    serve.add_argument("address", type=wall_address, metavar="[HOST:]PORT",
                       help="where to listen: a port (every IPv4 address of this "
                            "computer), or an IP address and a port (127.0.0.1:8080); "
                            "port 0 takes a free one")
    serve.add_argument("--event", metavar="NAME | HOST:PORT",
                       help="show this event (found by mDNS, or at its organiser's "
                            "address): its standings, tables and seatings, as its signed "
                            "entries and records say; without it, the standings of every "
                            "game on the network")
    serve.add_argument("--name", type=_event_name, default="Nerts",
                       help="the name at the top of the page, without --event "
                            "(default Nerts); an event shows its own")
    serve.add_argument("--every", type=float, default=EVERY, metavar="SECONDS",
                       help="without --event: count the standings again every SECONDS "
                            f"(default {EVERY:g})")
    suppress = argparse.SUPPRESS  # unless given here, nerts event's value (or default) holds
    serve.add_argument("--hours", type=float, default=suppress, help=suppress)
    serve.add_argument("--listen", type=float, default=suppress, help=suppress)
    serve.add_argument("--interfaces", default=suppress, help=suppress)
    serve.add_argument("--data-dir", type=Path, default=suppress, help=suppress)


def wall_address(text: str) -> tuple[str, int]:
    """``PORT``, ``IPv4:PORT`` or ``[IPv6]:PORT`` → (address to bind, port); a port
    alone binds every IPv4 address (what the LAN reaches, as tables are advertised)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host = "0.0.0.0"
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a port, or an IP address and a port (127.0.0.1:8080)") from None
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: a port must be 0..65535")
    return host, int(port)


def _event_name(text: str) -> str:
    if not text.strip() or len(text) > _MAX_NAME or not text.isprintable():
        raise argparse.ArgumentTypeError(
            f"the event's name must be 1..{_MAX_NAME} printable characters")
    return text.strip()


def run_serve(args: argparse.Namespace, interfaces: Interfaces, data_dir: Path) -> int:
    """``nerts event serve``, its ``nerts event`` options checked already."""
    if not 1 <= args.every <= 3600:
        raise ValueError("--every must be 1..3600 seconds")
    try:
        return asyncio.run(_serve(args, interfaces, data_dir))
    except (EventError, DiscoveryError, IdentityError) as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        return 130


async def _serve(args: argparse.Namespace, interfaces: Interfaces, data_dir: Path) -> int:
    # Imported here: the other commands never load the web server.
    from ..peer.wall import Feed, serving_wall, standings_wall

    host, port = args.address
    feed = Feed(standings_wall(Standings(), args.name))
    async with contextlib.AsyncExitStack() as stack:
        try:
            bound = await stack.enter_async_context(serving_wall(feed, host, port))
        except OSError as exc:
            return fail(f"cannot serve the page on {host}:{port}: {exc.strerror or exc}")
        port = bound[0][1]
        shown = advertised_addresses(InterfaceChoice.All) if host == "0.0.0.0" else [host]
        urls = " ".join(f"http://{_url_host(a)}:{port}/" for a in shown)
        print(f"the standings page: {urls} (Ctrl-C stops it)", flush=True)
        if args.event is not None:
            return await _follow(args.event, interfaces, args.listen, data_dir, feed)
        return await _count(args, interfaces, data_dir, feed)


async def _count(args: argparse.Namespace, interfaces: Interfaces, data_dir: Path,
                 feed: Feed) -> int:
    """Feed the page today's standings, counted again every ``--every`` seconds."""
    from ..peer.wall import standings_wall

    while True:
        since = time.time() - args.hours * 3600
        try:
            seen = await results.look(interfaces, args.listen)
        except OSError as exc:  # mDNS could not start on these interfaces
            return fail(f"cannot look for results on the network: {exc.strerror or exc}")
        standings = await results.tallied(seen.servers, since, partial(own_records, data_dir))
        feed.set(standings_wall(standings, args.name))
        await asyncio.sleep(args.every)


async def _follow(event: str, interfaces: Interfaces, listen: float, data_dir: Path,
                  feed: Feed) -> int:
    """Feed the page the event ``event`` as it goes, following its organiser (and
    coming back to it whenever it goes) until interrupted."""
    from ..peer.event_seat import EventLink
    from ..peer.wall import WallError

    address = parse_target(event)
    if address is None:
        ad = await find_event(event, interfaces, listen)
        if not ad.addresses:
            return fail(f"the event {ad.label} gave no address")
        address = (ad.addresses[0], ad.port)
    identity = load_or_create(data_dir / IDENTITY_FILE)

    def show() -> None:
        if link.book.opened is None:
            return
        try:
            feed.set(link.book.wall())
        except WallError as exc:  # the last good snapshot stays on the wall
            _log.error("the event's snapshot was not shown: %s", exc)

    link = EventLink(identity, address, register=False, changed=show, watch=interfaces)
    try:
        await link.run()
    finally:
        link.close()
    return 0


def _url_host(address: str) -> str:
    return f"[{address}]" if ":" in address else address
