#!/usr/bin/env python3
"""How long from "start browsing" to "table resolved": our TableBrowser vs stock zeroconf.

Everything runs on 127.0.0.1 (the lab rule: no traffic leaves this host).
One table is advertised with our TableAdvertiser at normal RFC 6762 timings;
then, for each repetition and with fresh zeroconf instances each time:

* theirs - python-zeroconf's minimal browse: AsyncServiceBrowser with default
  settings, then AsyncServiceInfo.async_request with default settings;
* ours   - TableBrowser.start() until the table is in ``tables``.

The two alternate, and each run waits ``--gap`` seconds first: a responder
may not multicast the same record twice within a second (RFC 6762 §14), so
back-to-back runs would measure that rate limit rather than discovery.

``--crowd`` adds idle zeroconf instances on 127.0.0.1, like other programs on
the same host. They share port 5353, so the kernel hands a unicast reply to
any one of the sockets: the stock browser's first (QU) query then often goes
unanswered and it finds the table only with its second query, ~1 s later.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import time
from collections.abc import Awaitable, Callable

from zeroconf import ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from p2p_nerts.net.discovery import SERVICE_TYPE, TableAd, TableAdvertiser, TableBrowser

LOOPBACK = ["127.0.0.1"]
GIVE_UP = 5.0  # seconds; a run that finds nothing by then counts as this long
TARGET_RATIO = 1.5


async def started_zeroconf() -> AsyncZeroconf:
    aiozc = AsyncZeroconf(interfaces=LOOPBACK)
    await aiozc.zeroconf.async_wait_for_start()
    return aiozc


async def theirs(aiozc: AsyncZeroconf, full_name: str) -> float:
    """Stock zeroconf: default browser, resolve on the first Added for our table."""
    loop = asyncio.get_running_loop()
    resolved: asyncio.Future[float] = loop.create_future()
    tasks: list[asyncio.Task[None]] = []

    async def resolve(zeroconf: Zeroconf, name: str) -> None:
        info = AsyncServiceInfo(SERVICE_TYPE, name)
        if await info.async_request(zeroconf, 3000) and not resolved.done():
            resolved.set_result(time.perf_counter())

    def handler(
        zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange
    ) -> None:
        if state_change is ServiceStateChange.Added and name.lower() == full_name.lower():
            tasks.append(loop.create_task(resolve(zeroconf, name)))

    start = time.perf_counter()
    browser = AsyncServiceBrowser(aiozc.zeroconf, SERVICE_TYPE, handlers=[handler])
    try:
        return await asyncio.wait_for(resolved, GIVE_UP) - start
    except TimeoutError:
        return GIVE_UP
    finally:
        await browser.async_cancel()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def ours(aiozc: AsyncZeroconf, instance: str) -> float:
    """Our TableBrowser, from start() until the table is listed (resolved and validated)."""
    browser = TableBrowser(LOOPBACK, aiozc=aiozc)
    start = time.perf_counter()
    try:
        await browser.start()
        await browser.wait_for(lambda ts: any(t.instance == instance for t in ts), GIVE_UP)
        return time.perf_counter() - start
    except TimeoutError:
        return GIVE_UP
    finally:
        await browser.close()


def summary(label: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[math.ceil(0.99 * len(ordered)) - 1]
    return (
        f"  {label:7} median {statistics.median(ordered) * 1000:7.1f} ms"
        f"   p99 {p99 * 1000:7.1f} ms   max {ordered[-1] * 1000:7.1f} ms"
        f"   min {ordered[0] * 1000:6.1f} ms"
    )


async def scenario(ad: TableAd, reps: int, gap: float, crowd: int) -> tuple[float, float]:
    idle = [await started_zeroconf() for _ in range(crowd)]
    full_name = f"{ad.instance}.{SERVICE_TYPE}"
    methods: dict[str, Callable[[AsyncZeroconf], Awaitable[float]]] = {
        "theirs": lambda zc: theirs(zc, full_name),
        "ours": lambda zc: ours(zc, ad.instance),
    }
    samples: dict[str, list[float]] = {name: [] for name in methods}
    try:
        for rep in range(reps):
            order = list(methods) if rep % 2 == 0 else list(reversed(methods))
            for name in order:
                await asyncio.sleep(gap)
                aiozc = await started_zeroconf()
                try:
                    samples[name].append(await methods[name](aiozc))
                finally:
                    await aiozc.async_close()
    finally:
        for aiozc in idle:
            await aiozc.async_close()
    print(f"{reps} runs each, {crowd} idle zeroconf instance(s) beside the two under test:")
    for name, values in samples.items():
        print(summary(name, values))
    ratio = statistics.median(samples["ours"]) / statistics.median(samples["theirs"])
    verdict = "ok" if ratio <= TARGET_RATIO else "SLOWER than target"
    print(f"  ratio ours/theirs (medians) {ratio:.2f}  (target <= {TARGET_RATIO}: {verdict})")
    return statistics.median(samples["ours"]), statistics.median(samples["theirs"])


async def main(reps: int, gap: float, crowds: list[int]) -> None:
    ad = TableAd(
        name="bench table",
        fingerprint="0123456789abcdef",
        protocol_version=1,
        seats_taken=1,
        seats_total=4,
        variant="classic",
        needs_code=False,
        port=40000,
    )
    async with TableAdvertiser(ad, LOOPBACK) as advertiser:
        await asyncio.sleep(1.0)  # let the start-up announcements finish
        print(f"advertising {advertiser.ad.instance!r} on 127.0.0.1\n")
        for crowd in crowds:
            await scenario(advertiser.ad, reps, gap, crowd)
            print()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15, help="runs per method (default 15)")
    parser.add_argument("--gap", type=float, default=1.1, help="seconds between runs")
    parser.add_argument(
        "--crowd",
        default="0,6",
        help="comma-separated numbers of idle zeroconf instances, one scenario each",
    )
    args = parser.parse_args()
    asyncio.run(main(args.reps, args.gap, [int(n) for n in args.crowd.split(",")]))
