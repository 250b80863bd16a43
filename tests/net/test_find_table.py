"""Finding a table by what a player types: a part of its name, and what to say when
nothing (or more than one table) fits.

The mDNS cases run on 127.0.0.1; other runs on this machine may advertise
tables too, so every name here has a unique part, and only that part is typed.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import replace
from types import TracebackType

import pytest

from p2p_nerts.net.discovery import (
    AmbiguousTableError,
    DiscoveryError,
    QuietMdnsErrors,
    TableAd,
    TableAdvertiser,
    TableNotFoundError,
    describe_table,
    find_table,
    matching,
)
from p2p_nerts.net.discovery import _find as finding
from p2p_nerts.net.discovery._find import table_label

from ..netkit import SETTLE, AnsweringPorts

pytestmark = pytest.mark.timeout(90)  # a safety net above the 20 s each look may wait

LOOPBACK = ["127.0.0.1"]


def ad(name: str, instance: str = "", host: str = "Ana",
       fingerprint: str = "0123456789abcdef") -> TableAd:
    return TableAd(name=name, fingerprint=fingerprint, protocol_version=1, seats_taken=1,
                   seats_total=4, variant="classic", needs_code=False, port=40123,
                   host=host, instance=instance or f"{name} #0001")


RED, REDWOOD, BIG_RED = ad("Red"), ad("Redwood"), ad("Big red")


@pytest.mark.parametrize(("typed", "found"), [
    (None, [RED, REDWOOD, BIG_RED]),
    ("red", [RED]),  # an exact name wins over the names it starts
    ("REDW", [REDWOOD]),  # a prefix, any case
    ("re", [RED, REDWOOD]),  # prefixes win over parts
    ("g r", [BIG_RED]),  # a part of the name
    ("Redwood #0001", [REDWOOD]),  # the instance name
    ("blue", []),
])
def test_what_a_typed_name_matches(typed: str | None, found: list[TableAd]) -> None:
    assert matching([RED, REDWOOD, BIG_RED], typed) == found


def test_a_table_is_described_by_its_host_and_fingerprint() -> None:
    assert describe_table(RED) == '"Red@0123" (Ana)'
    assert describe_table(replace(RED, host="")) == '"Red@0123"'
    twin = replace(RED, fingerprint="0123ffff00000000", host="Bo")
    assert describe_table(RED, [RED, twin]) == '"Red@01234567" (Ana)'  # told apart
    assert table_label(RED, [RED, replace(twin, name="Blue")]) == "Red@0123"


MAIN = ad("Main table", "Main table #0001", host="Tess", fingerprint="22d7b07e00000000")
MAIN_TOO = ad("Main table", "Main table #0002", host="Bo", fingerprint="9a0122d700000000")
SIDE = ad("Side table", "Side table #0003", host="Tess", fingerprint="22d7b07e00000000")


@pytest.mark.parametrize(("typed", "found"), [
    ("Main table@22d7", [MAIN]),  # as the lobby and the errors write it
    ("main TABLE@22D7-B07E", [MAIN]),  # any case, dashes as the lobby shows them
    ("Main@9a", [MAIN_TOO]),  # a part of the name, a shorter prefix
    ("@22d7", [MAIN, SIDE]),  # the host's tables
    ("Main table@ffff", []),  # no such host: the name alone does not do
    ("Bo", [MAIN_TOO]),  # the host's name
    ("tess", [MAIN, SIDE]),
    ("Main table", [MAIN, MAIN_TOO]),
])
def test_a_table_is_picked_by_name_and_fingerprint_or_by_its_hosts_name(
        typed: str, found: list[TableAd]) -> None:
    assert matching([MAIN, MAIN_TOO, SIDE], typed) == found


def test_every_candidate_in_an_error_can_be_typed_back() -> None:
    for table in (MAIN, MAIN_TOO):
        label = describe_table(table, [MAIN, MAIN_TOO]).split('"')[1]
        assert matching([MAIN, MAIN_TOO, SIDE], label) == [table]


@pytest.mark.usefixtures("quick_mdns")
def test_find_by_prefix_or_part_and_the_candidates_of_an_ambiguous_name(
        answering: AnsweringPorts) -> None:
    tag = secrets.token_hex(4)
    red = replace(ad(f"x{tag} Red room"), port=answering.new())
    blue = replace(ad(f"x{tag} Blue room", host="Bo", fingerprint="fedcba9876543210"),
                   port=answering.new())

    async def scenario() -> None:
        async with (TableAdvertiser(replace(red, instance=""), LOOPBACK) as one,
                    TableAdvertiser(replace(blue, instance=""), LOOPBACK) as two):
            assert await find_table(f"X{tag} red", LOOPBACK, timeout=20) == one.ad
            # A responder answers a record at most once a second (RFC 6762 §6).
            await asyncio.sleep(1.1)
            with pytest.raises(AmbiguousTableError) as ambiguous:
                await find_table(f"x{tag}", LOOPBACK, timeout=20, settle=SETTLE)
            assert sorted(t.instance for t in ambiguous.value.candidates) == sorted(
                [one.ad.instance, two.ad.instance])
            said = str(ambiguous.value)
            assert f'"x{tag} Red room@0123" (Ana)' in said
            assert f'"x{tag} Blue room@fedc" (Bo)' in said
            assert "NAME@FINGERPRINT" in said
            await asyncio.sleep(1.1)
            with pytest.raises(TableNotFoundError) as missing:
                await find_table(f"y{tag}", LOOPBACK, timeout=1.5)
            assert f"found no table named 'y{tag}'" in str(missing.value)
            assert "tables seen: " in str(missing.value)
            assert f'"x{tag} Blue room@fedc" (Bo)' in str(missing.value)

    asyncio.run(scenario())


class _Silence:
    """A browser on a network where nothing answers (multicast blocked)."""

    def __init__(self, _interfaces: object) -> None:
        self.tables: list[TableAd] = []

    async def __aenter__(self) -> _Silence:
        return self

    async def __aexit__(self, _t: type[BaseException] | None, _e: BaseException | None,
                        _tb: TracebackType | None) -> None: ...

    async def wait_for(self, _predicate: Callable[[list[TableAd]], bool],
                       timeout: float) -> list[TableAd]:
        raise TimeoutError


def test_no_answer_at_all_suggests_the_hosts_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(finding, "TableBrowser", _Silence)
    with pytest.raises(TableNotFoundError) as missing:
        asyncio.run(find_table("Red", LOOPBACK, timeout=0.1))
    assert str(missing.value) == (
        "found no table named 'Red' on the network in 0.1 s; no table answered at all "
        "(is multicast blocked on this network?): join by the host's address instead: "
        "nerts join HOST:PORT")


def test_a_socket_mdns_cannot_use_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    class Blocked(_Silence):
        async def __aenter__(self) -> Blocked:
            raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(finding, "TableBrowser", Blocked)
    with pytest.raises(DiscoveryError) as error:
        asyncio.run(find_table("Red", LOOPBACK, timeout=0.1))
    assert str(error.value) == ("cannot use mDNS here (Operation not permitted): join by the "
                                "host's address instead: nerts join HOST:PORT")


def test_zeroconfs_socket_tracebacks_become_one_line() -> None:
    """zeroconf logs a blocked socket's error with its traceback, once per socket."""
    logger = logging.getLogger("zeroconf.test-quiet")
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    logger.addHandler(handler)
    logger.addFilter(QuietMdnsErrors())
    try:
        for sock in ("eth0", "wlan0"):
            try:
                raise PermissionError(1, "Operation not permitted")
            except PermissionError as exc:
                logger.warning("Error with socket %s): %s", sock, exc, exc_info=exc)
        logger.warning("something else")
    finally:
        logger.removeHandler(handler)
    assert [(r.getMessage(), r.exc_info, r.levelno) for r in records] == [
        ("mDNS could not use the network once (Operation not permitted): if no table "
         "shows, join by the host's address instead: nerts join HOST:PORT", None,
         logging.INFO),  # a lossy firewall fails sends on a network that works
        ("something else", None, logging.WARNING)]
