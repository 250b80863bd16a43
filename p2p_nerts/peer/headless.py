"""Playing without a screen: event log lines, a JSON summary, an optional bot.

Used by ``nerts host/join --headless`` and ``nerts bot``: the same Session
interface a UI uses, with events turned into log lines on stderr and into one
JSON object per round in ``--summary FILE``. Every field of the summary is
decided by the replicated log, so every peer writes the same lines (the
integration tests compare them byte for byte); only the ``local`` parts are
about this peer: in a round's line, whether every card of its own deck is
accounted for (``cards_ok``: in its tableau or on the agreed foundations) and
how many it holds; in the final object, its name and rejection counters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import signal
import time
from collections.abc import Callable
from typing import Any, TextIO

from ..game.bot import SKILLS, Bot, paced
from ..protocol import events as ev
from ..protocol.botdriver import IDLE_LOOK, BotDriver
from ..protocol.replica import CommandError, Phase, StartRound
from ..records.summary import SummaryWriter
from ..waits import wait_event
from .node import HOST_GONE, NetSession

__all__ = ["BREAK", "EXPECTED_REJECTS", "HOST_GONE", "LINGER", "deal_when_ready",
           "describe", "drive_bot", "drive_partner",
           "paced", "run_headless", "watch_host"]

_log = logging.getLogger("nerts")

LINGER = 1.0
"""Seconds a peer stays after the game ends, answering resend requests for
entries (its last summary...) that slower peers may still be missing; at
least this long under ``--linger``, which keeps a headless seat serving the
game's result (``peer.results``) after it."""
BREAK = 5.0
"""Seconds a headless host without ``--auto-next`` rests between two rounds
before it deals again (when every seat is ready)."""
IDLE_WAIT = 0.5
"""Seconds a headless bot with nothing to do waits for the table to tell an event
before it looks again anyway (a deal, a round's start and its scores all come
as events: this only bounds a change that might come without one)."""
DEALING_NEWS = (ev.RosterChanged, ev.SettingsChanged, ev.ReadyChanged, ev.RoundOver,
                ev.RoundAgreed, ev.Divergence)
"""The events after which a headless host without ``--auto-start`` looks whether to
deal: the seats, the rules, who is ready, a round's end (not the plays of a
round, which would wake it for each)."""
EXPECTED_REJECTS = frozenset({"duplicate", "own_entry", "late", "dropped"})
"""Rejections every game has: copies of entries (resends cross, a peer hears
an entry from several others), our own reflected back, and the honest late
entries of a closed round or a dropped seat. Worth a debug line only."""


def table_bot(skill: str, *, pace: float = 1.0, seed: int | None = None) -> Bot:
    """A computer player for a network seat, thinking ``pace`` times as long, its
    choices seeded by ``seed``; whether it may rotate alone is the host's SETTINGS'
    to say (``drive_bot`` and ``drive_partner`` read them)."""
    return Bot(paced(SKILLS[skill], pace), random.Random(seed), lone_rotate=True)


def describe(event: ev.Event) -> tuple[int, str] | None:
    """A log level and line for an event worth a line; None for the chatter."""
    match event:
        case ev.RosterChanged(names=names):
            return logging.INFO, f"seated: {', '.join(names)}"
        case ev.SettingsChanged(summary=summary):
            return logging.INFO, f"settings: {summary}"
        case ev.RoundStarting(round=n, countdown=c):
            return logging.INFO, f"round {n} starts in {c:g} s"
        case ev.NertsCalled(name=name):
            return logging.INFO, f"{name} calls Nerts!"
        case ev.Rotated(count=count):
            return logging.INFO, f"everyone stuck: stocks rotated ({count})"
        case ev.RoundOver(round=n, end=end, totals=totals):
            return logging.INFO, f"round {n} over ({end}); totals {list(totals)}"
        case ev.RoundAgreed(round=n):
            return logging.INFO, f"round {n}: every peer agrees"
        case ev.Divergence(round=n, seats=seats):
            return logging.WARNING, f"round {n}: seats {list(seats)} computed another result"
        case ev.GameOver(winner=winner, totals=totals):
            return logging.INFO, f"game over: {winner} wins {list(totals)}"
        case ev.PeerDropped(name=name):
            return logging.WARNING, f"{name} dropped out of the round"
        case ev.Flagged(name=name, reason=reason):
            return logging.WARNING, f"{name} flagged: {reason}"
        case ev.Refused(reason=reason):
            return logging.ERROR, f"the table refused us: {reason}"
        case ev.Notice(text=text):
            return logging.INFO, text
    return None


async def drive_bot(session: NetSession, bot: Bot, clock: Callable[[], float],
                    changed: asyncio.Event | None = None) -> None:
    """Let a bot play this seat through the same commands a player's keys send;
    under share-a-deck, a second bot like it plays the tableau with it.

    ``changed``: set whenever the table tells an event; while the table gives
    the bots nothing to do, they wait for it (or IDLE_WAIT) instead of looking
    again every ``IDLE_LOOK``."""
    partner = Bot(bot.skill, random.Random(bot.rng.random()), lone_rotate=bot.lone_rotate)
    await _drive(session, [BotDriver(session.replica, bot),
                           BotDriver(session.replica, partner, partner=True)],
                 bot.lone_rotate, clock, changed)


async def drive_partner(session: NetSession, bot: Bot, clock: Callable[[], float]) -> None:
    """A computer partner for the player at this terminal, until the session closes:
    under share-a-deck it plays their tableau with them (``nerts host/join
    --partner``, or ``partner`` in the settings for the lobby's tables);
    otherwise it waits."""
    driving = asyncio.ensure_future(_drive(
        session, [BotDriver(session.replica, bot, partner=True, name="Your partner")],
        bot.lone_rotate, clock))
    try:
        await session.wait_closed()
    finally:
        driving.cancel()


async def _drive(session: NetSession, drivers: list[BotDriver], rotates: bool,
                 clock: Callable[[], float], changed: asyncio.Event | None = None) -> None:
    heard = True  # the table changed since the drivers last looked (at first: unknown)
    while True:
        rnd = session.replica.view().round
        now = clock()
        for driver in drivers:
            if driver.next_at is not None and now < driver.next_at \
                    and not (heard and driver.idle):
                # Not its time: a partner off duty (no share-a-deck), say, would
                # cost the seat a pass through its shell at every move of the other.
                continue
            # The host's settings decide the variant, not our command line.
            driver.bot.lone_rotate = rotates and rnd is not None and rnd.variants.lone_rotate
            session.step_bot(driver)
        heard = False
        if changed is not None and all(d.idle for d in drivers):
            # What the steps made the table tell is theirs, not news: only what
            # comes from now on wakes them (a bot saying it is ready, again and
            # again, would otherwise never sleep).
            changed.clear()
            heard = await wait_event(changed, IDLE_WAIT)
            continue
        due = min((d.next_at for d in drivers if d.next_at is not None), default=None)
        await asyncio.sleep(max(0.0, due - clock()) if due is not None else IDLE_LOOK)


async def watch_host(session: NetSession, give_up: float, clock: Callable[[], float]) -> None:
    """Return once the host has been out of reach for ``give_up`` seconds.

    It looks twenty times within ``give_up`` (every second at the default), no
    more: each look wakes the whole process, and at a busy table every wake-up
    is CPU taken from the peers handling a play."""
    lost_at: float | None = None
    while True:
        now = clock()
        if session.host_reachable:
            lost_at = None
        elif lost_at is None:
            lost_at = now
        elif now - lost_at >= give_up:
            return
        await asyncio.sleep(give_up / 20)


async def deal_when_ready(session: NetSession, clock: Callable[[], float],
                          changed: asyncio.Event, pause: float = BREAK) -> None:
    """A headless host without ``--auto-start`` (nobody at its keys) deals once at
    least two players sit and every guest says it is ready (a bot always does),
    ``pause`` seconds after a round closes unless ``--auto-next`` decides; it
    logs what it waits for whenever that changes.

    It looks again when the table tells one of the DEALING_NEWS (``changed``),
    when its rest after a round is up, or every IDLE_WAIT at most: not on a
    clock of its own, which would wake the whole process for nothing."""
    said: str | None = None
    closed_at: float | None = None
    while True:
        changed.clear()  # news from here on: what it looks at next is older
        closed_at, waiting = _deal_or_say(session, clock(), closed_at, pause)
        if waiting is not None and waiting != said:
            _log.info("%s", waiting)
        said = waiting
        rest = IDLE_WAIT
        if closed_at is not None and (left := closed_at + pause - clock()) > 0:
            rest = min(rest, left)
        await wait_event(changed, rest)


def _deal_or_say(session: NetSession, now: float, closed_at: float | None,
                 pause: float) -> tuple[float | None, str | None]:
    """One look of :func:`deal_when_ready` at ``now``: deal if it may, and when the
    round it rests after closed (None: it is not between rounds), with what it
    waits for (None: nothing to say)."""
    r = session.replica
    if r.phase is not Phase.BETWEEN:
        closed_at = None
    elif closed_at is None:
        closed_at = now
    if r.phase not in (Phase.LOBBY, Phase.BETWEEN) or (
            r.phase is Phase.BETWEEN and r.seating.auto_next is not None):
        return closed_at, None
    guests = [s for s in r.view().seats if s.key != r.host_key]
    unready = [s.name for s in guests if not r.seating.ready.get(s.key, False)]
    if not guests:
        return closed_at, ("waiting for players: this table deals once a player has joined "
                           "and is ready (or use --auto-start N)")
    if unready:
        return closed_at, (f"waiting for {', '.join(unready)} to be ready before dealing "
                           "(or use --auto-start N)")
    if closed_at is not None and now - closed_at < pause:
        return closed_at, None
    try:
        session.act(StartRound())
    except CommandError as exc:
        return closed_at, f"cannot deal yet: {exc}"
    return closed_at, None


async def run_headless(session: NetSession, *, bot: Bot | None, summary: TextIO | None,
                       linger: float = LINGER, host_gone: float = HOST_GONE,
                       clock: Callable[[], float] = time.monotonic) -> int:
    """Play until the game is over (0), we are refused a first seat or lose the host (1),
    or a signal; after the game, stay ``linger`` seconds, or until a signal. (A seat
    dropped from a round and refused on its way back waits for the next break:
    ``NetSession`` asks again.)"""
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[int] = loop.create_future()
    signalled = asyncio.Event()
    writer = SummaryWriter(session.replica, summary)
    writer.resumed()
    seated = session.replica.view().my_seat is not None
    changed = asyncio.Event()  # the table told an event: the bot looks again
    news = asyncio.Event()  # one of the DEALING_NEWS: the host's dealer looks again

    def settle(code: int) -> None:
        if not outcome.done():
            outcome.set_result(code)

    def on_event(event: ev.Event) -> None:
        nonlocal seated
        changed.set()
        if isinstance(event, DEALING_NEWS):
            news.set()
        writer.on_event(event)
        line = describe(event)
        if isinstance(event, ev.RoundStarting) and not session.watching \
                and session.replica.view().my_seat is None:
            line = None  # a latecomer catching up on a round it is not dealt in
        if line is not None:
            _log.log(*line)
        if isinstance(event, ev.RosterChanged):
            seated = seated or event.me is not None
        elif isinstance(event, ev.GameOver):
            settle(0)
        elif isinstance(event, ev.Refused) and not seated and not session.waiting_for_seat:
            settle(1)
        if isinstance(event, ev.RoundAgreed | ev.Divergence):
            loop.call_soon(writer.closed)

    def on_signal(signum: int) -> None:
        signalled.set()
        settle(128 + signum)

    session.subscribe(on_event)
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, on_signal, signum)
    runner = loop.create_task(session.run())
    watcher = loop.create_task(watch_host(session, host_gone, clock))
    player = (loop.create_task(drive_bot(session, bot, clock, changed))
              if bot is not None else None)
    dealer = (loop.create_task(deal_when_ready(session, clock, news))
              if session.replica.is_host and session.replica.seating.auto_start is None else None)
    waiters: list[asyncio.Future[Any]] = [outcome, runner, watcher]
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    if watcher.done() and not outcome.done():
        _log.error("lost the host: no connection to it for %g s", host_gone)
    if runner.done() and not runner.cancelled() and runner.exception() is not None:
        _log.error("the table stopped: %r", runner.exception(), exc_info=runner.exception())
    code = outcome.result() if outcome.done() else 1
    if code == 0:
        if linger > LINGER:
            _log.info("staying %g s after the game, serving its result "
                      "(Ctrl-C or SIGTERM ends it)", linger)
        await wait_event(signalled, linger)
    helpers = [watcher, *(task for task in (player, dealer) if task is not None)]
    for task in helpers:
        task.cancel()
    session.close()
    await asyncio.gather(runner, *helpers, return_exceptions=True)
    rejected = session.replica.rejected
    for expected in (True, False):
        counts = sorted((k, v) for k, v in rejected.items() if (k in EXPECTED_REJECTS) is expected)
        if counts:
            _log.log(logging.DEBUG if expected else logging.WARNING, "%s: %s",
                     "expected copies and late entries set aside" if expected
                     else "entries rejected from the network",
                     ", ".join(f"{k}={v}" for k, v in counts))
    writer.finish({"me": session.replica.me.name, "rejected": dict(rejected)})
    return code
