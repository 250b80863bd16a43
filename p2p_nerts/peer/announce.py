"""The host's mDNS announcement of its table: what the lobbies on the LAN see of it.

It lives apart from :class:`~p2p_nerts.peer.node.NetSession` because the two
do different jobs: the session routes frames between its replica and the
mesh, and no frame depends on the ad; the ad is only what a lobby shows of
the table (its name, seats, rules, state and next deal), kept current as
those change and withdrawn as the table closes. It reads the table through
the replica it is given and is told by the session when to look again; a
lobby line that cannot be updated is logged, never a reason to stop a table.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..net.discovery import MAX_VARIANT_CHARS, TableAd, TableAdvertiser
from ..net.interfaces import Interfaces
from ..net.wire import NET_VERSION
from ..protocol.replica import Phase, Replica

__all__ = ["AdFacts", "TableAnnouncer"]

_log = logging.getLogger(__name__)

_AD_STATES = {Phase.LOBBY: "lobby", Phase.SHUFFLE: "playing", Phase.PLAYING: "playing",
              Phase.SCORING: "playing", Phase.BETWEEN: "break", Phase.OVER: "over"}
"""What the lobby shows of a table's phase (``discovery.TABLE_STATES``)."""


@dataclass(frozen=True, slots=True)
class AdFacts:
    """What a host's mDNS ad says of its table; a tick that finds them changed
    re-announces it (seats, rules, and state all change in several places)."""

    seats: int
    variant: str
    state: str
    next_at: float | None  # the replica's clock time of the next deal, between rounds

    @classmethod
    def of(cls, replica: Replica) -> AdFacts:
        """What the ad says of ``replica``'s table as it is now."""
        seating, phase = replica.seating, replica.phase
        return cls(min(replica.view().seats_taken, seating.max_seats),
                   seating.variants.summary()[:MAX_VARIANT_CHARS], _AD_STATES[phase],
                   seating.next_round_at if phase is Phase.BETWEEN else None)


class TableAnnouncer:
    """A host's table on mDNS while it is open: published by :meth:`start`,
    re-announced when what it says changes (coalesced), withdrawn by :meth:`close`.

    It exists from the session's start, before the table does, so that a change
    heard while the ad is being published is announced once it is. ``clock``
    is the session's (the replica's times are on it). ``advertiser`` is
    injectable so that what it announces can be tested without a network.
    """

    def __init__(self, clock: Callable[[], float], *,
                 advertiser: Callable[[TableAd, Interfaces], TableAdvertiser] = TableAdvertiser
                 ) -> None:
        self._clock = clock
        self._new_advertiser = advertiser
        self._replica: Replica | None = None
        self._advertiser: TableAdvertiser | None = None
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._shown: AdFacts | None = None  # what the ad says now

    async def start(self, replica: Replica, interfaces: Interfaces, *, name: str,
                    fingerprint: str, host: str, needs_code: bool, port: int) -> None:
        """Publish ``replica``'s table on ``interfaces``, and keep its ad current.

        ``name`` is the table's, ``host`` its host player's and ``fingerprint``
        the host's key's (``node.fingerprint_hex``); ``port`` is the one to dial.
        """
        self._replica = replica
        facts = self._shown = self._facts()
        ad = TableAd(
            name=name, fingerprint=fingerprint, protocol_version=NET_VERSION,
            seats_taken=facts.seats, seats_total=replica.seating.max_seats,
            variant=facts.variant, needs_code=needs_code, port=port, host=host,
            state=facts.state, next_deal=self._next_deal(facts.next_at),
        )
        self._advertiser = self._new_advertiser(ad, interfaces)
        published = await self._advertiser.start()
        _log.info("advertised as %r on %s port %d", published.instance,
                  ",".join(published.addresses), published.port)
        self._task = asyncio.get_running_loop().create_task(self._keep())

    def changed(self) -> None:
        """Something the ad says may have changed (the seats): announce it again."""
        self._changed.set()

    def check(self) -> None:
        """Announce the ad again if the table is no longer what it says (each of the
        session's ticks asks: rules, state and the next deal change in several places)."""
        if self._advertiser is not None and self._facts() != self._shown:
            self._changed.set()

    async def close(self) -> None:
        """Stop keeping the ad current and withdraw it (lobbies drop the table at once)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._advertiser is not None:
            try:
                await self._advertiser.close()
            except Exception:  # noqa: BLE001
                _log.exception("withdrawing the table's mDNS record failed")

    def _facts(self) -> AdFacts:
        assert self._replica is not None  # start set it, before the advertiser
        return AdFacts.of(self._replica)

    def _next_deal(self, at: float | None) -> int | None:
        """The replica's clock time of the next deal, as Unix time for the lobbies."""
        return None if at is None else max(0, round(time.time() + at - self._clock()))

    async def _keep(self) -> None:
        """Re-announce the TXT record when seats or settings change (coalesced)."""
        advertiser = self._advertiser
        assert advertiser is not None
        while True:
            await self._changed.wait()
            self._changed.clear()
            facts = self._shown = self._facts()
            try:
                await advertiser.update(seats_taken=facts.seats, variant=facts.variant,
                                        state=facts.state,
                                        next_deal=self._next_deal(facts.next_at))
            except Exception:  # noqa: BLE001 - a stale lobby line is not worth a crash
                _log.exception("updating the table's mDNS record failed")
