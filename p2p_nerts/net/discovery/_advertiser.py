"""Publishing one table on the LAN for as long as it is open."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from types import TracebackType
from typing import Any, Self

from zeroconf import (
    NonUniqueNameException,
    ServiceInfo,
    ServiceNameAlreadyRegistered,
)
from zeroconf.asyncio import AsyncZeroconf

from ..interfaces import Interfaces, advertised_addresses
from ._ad import (
    _SUFFIX,
    SERVICE_TYPE,
    AdvertiseError,
    TableAd,
    _instance_label,
    encode_txt,
    random_suffix,
)

_log = logging.getLogger(__name__)

_RECORD_TTL = 120
"""Seconds. The RFC's 75-minute default would keep a crashed table in lobbies
for an hour; two minutes bounds that at the cost of a refresh query per table
every ~90 s."""


def _service_info(ad: TableAd, server: str) -> ServiceInfo:
    return ServiceInfo(
        SERVICE_TYPE,
        f"{ad.instance}.{SERVICE_TYPE}",
        port=ad.port,
        properties=encode_txt(ad),
        server=server,
        host_ttl=_RECORD_TTL,
        other_ttl=_RECORD_TTL,
        parsed_addresses=list(ad.addresses),
    )


class _Keep:
    """``TableAdvertiser.update``'s default for ``next_deal``: leave it as it is."""


class TableAdvertiser:
    """Publishes one table on the LAN for as long as it is open.

    Give it an ``AsyncZeroconf`` to share one mDNS stack with a browser in the
    same process; otherwise it opens its own on ``interfaces`` and closes it.
    ``suffix`` is injectable so name-collision handling can be tested.
    """

    def __init__(
        self,
        ad: TableAd,
        interfaces: Interfaces,
        *,
        aiozc: AsyncZeroconf | None = None,
        suffix: Callable[[], str] = random_suffix,
        attempts: int = 5,
    ) -> None:
        self._ad = ad
        self._interfaces = interfaces
        self._aiozc = aiozc
        self._owns_zeroconf = aiozc is None
        self._suffix = suffix
        self._attempts = attempts
        self._info: ServiceInfo | None = None
        self._broadcast: asyncio.Future[Any] | None = None

    @property
    def ad(self) -> TableAd:
        """The ad as currently published (instance and addresses filled in)."""
        return self._ad

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> TableAd:
        """Probe for a free instance name, register, and start announcing.

        Takes about a second with RFC 6762 timings (three probes); raises
        ``AdvertiseError`` if every name tried was taken.
        """
        if self._info is not None:
            raise RuntimeError("TableAdvertiser already started")
        if self._aiozc is None:
            self._aiozc = AsyncZeroconf(interfaces=self._interfaces)
        addresses = self._ad.addresses or tuple(advertised_addresses(self._interfaces))
        try:
            for _ in range(self._attempts):
                suffix = self._suffix()
                if not _SUFFIX.fullmatch(suffix):
                    raise ValueError(f"instance suffix {suffix!r} must be 1-8 of [0-9a-z]")
                ad = replace(
                    self._ad, instance=_instance_label(self._ad.name, suffix), addresses=addresses
                )
                server = f"nerts-{ad.fingerprint[:12]}-{suffix}.local."
                info = _service_info(ad, server)
                try:
                    announce = await self._aiozc.async_register_service(info)
                except (NonUniqueNameException, ServiceNameAlreadyRegistered):
                    _log.info("table instance name %r is taken; trying another", ad.instance)
                    continue
                self._broadcast = asyncio.ensure_future(announce)
                self._info, self._ad = info, ad
                return ad
        except BaseException:
            await self._close_zeroconf()
            raise
        await self._close_zeroconf()
        raise AdvertiseError(f"no free instance name for table {self._ad.name!r}")

    async def update(
        self,
        *,
        seats_taken: int | None = None,
        seats_total: int | None = None,
        variant: str | None = None,
        needs_code: bool | None = None,
        state: str | None = None,
        next_deal: int | type[_Keep] | None = _Keep,
    ) -> TableAd:
        """Change what the lobby shows (seats, state) and re-announce the TXT record
        under the next revision. ``next_deal`` is kept unless given (None clears it)."""
        if self._info is None or self._aiozc is None:
            raise RuntimeError("TableAdvertiser.update() before start()")
        old = self._ad
        new = replace(
            old,
            seats_taken=old.seats_taken if seats_taken is None else seats_taken,
            seats_total=old.seats_total if seats_total is None else seats_total,
            variant=old.variant if variant is None else variant,
            needs_code=old.needs_code if needs_code is None else needs_code,
            state=old.state if state is None else state,
            next_deal=old.next_deal if not isinstance(next_deal, int | None) else next_deal,
        )
        if new == old:
            return old
        new = replace(new, revision=old.revision + 1)
        assert self._info.server is not None  # always set by _service_info
        info = _service_info(new, self._info.server)
        # A pending announcement would re-send the old TXT after the new one.
        self._cancel_broadcast()
        self._broadcast = asyncio.ensure_future(await self._aiozc.async_update_service(info))
        self._info, self._ad = info, new
        return new

    async def close(self) -> None:
        """Send goodbyes (lobbies drop the table at once) and release mDNS."""
        info, self._info = self._info, None
        if info is not None and self._aiozc is not None:
            self._cancel_broadcast()
            goodbye = await self._aiozc.async_unregister_service(info)
            await goodbye
        await self._close_zeroconf()

    def _cancel_broadcast(self) -> None:
        if self._broadcast is not None:
            self._broadcast.cancel()
            self._broadcast = None

    async def _close_zeroconf(self) -> None:
        if self._owns_zeroconf and self._aiozc is not None:
            aiozc, self._aiozc = self._aiozc, None
            await aiozc.async_close()


