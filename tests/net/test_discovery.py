"""Discovery over real mDNS, pinned to 127.0.0.1 so nothing leaves this host.

Other test runs on the machine may advertise ``_nerts._tcp`` tables at the same
time, so every test uses unique table names and only looks at its own tables.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from zeroconf import InterfaceChoice, ServiceInfo
from zeroconf.asyncio import AsyncZeroconf

from p2p_nerts.net.discovery import (
    MAX_NAME_CHARS,
    SERVICE_TYPE,
    AdError,
    AmbiguousTableError,
    TableAd,
    TableAdvertiser,
    TableBrowser,
    TableChange,
    TableEvent,
    TableNotFoundError,
    decode_txt,
    encode_txt,
    find_table,
)
from p2p_nerts.net.interfaces import advertised_addresses, interfaces_from, interfaces_setting

from ..netkit import SETTLE, AnsweringPorts

pytestmark = pytest.mark.timeout(90)  # a safety net above the 20 s each look may wait

LOOPBACK = ["127.0.0.1"]
FINGERPRINT = "0123456789abcdef"


def unique_name() -> str:
    return f"t-{secrets.token_hex(4)}"


def make_ad(name: str, **changes: object) -> TableAd:
    ad = TableAd(
        name=name,
        fingerprint=FINGERPRINT,
        protocol_version=1,
        seats_taken=1,
        seats_total=4,
        variant="classic · 100 pts",
        needs_code=False,
        port=40123,
    )
    return replace(ad, **changes)  # type: ignore[arg-type]


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


def named(name: str) -> Callable[[list[TableAd]], bool]:
    return lambda tables: any(t.name == name for t in tables)


def seated(name: str, seats: int) -> Callable[[list[TableAd]], bool]:
    return lambda tables: only(tables, name).seats_taken == seats


def only(tables: list[TableAd], name: str) -> TableAd:
    (table,) = [t for t in tables if t.name == name]
    return table


# --- TXT codec and validation (no network) -------------------------------------------


def good_txt() -> dict[bytes, bytes | None]:
    return {k.encode(): v.encode() for k, v in encode_txt(make_ad("Ana")).items()}


def test_txt_round_trip() -> None:
    ad = make_ad("Ana's table", needs_code=True, addresses=("10.0.0.5",), instance="Ana #1a2b")
    decoded = decode_txt(
        good_txt() | {b"code": b"1", b"n": b"Ana's table"},
        instance="Ana #1a2b",
        addresses=["10.0.0.5"],
        port=40123,
    )
    assert decoded == ad


@given(
    name=st.text(min_size=1, max_size=MAX_NAME_CHARS).filter(
        lambda s: s.isprintable() and s == s.strip()
    ),
    total=st.integers(1, 16),
    data=st.data(),
)
def test_any_valid_ad_survives_txt(name: str, total: int, data: st.DataObject) -> None:
    ad = make_ad(
        name,
        seats_total=total,
        seats_taken=data.draw(st.integers(0, total)),
        addresses=("127.0.0.1",),
        instance="x #1",
    )
    raw = {k.encode(): v.encode() for k, v in encode_txt(ad).items()}
    assert decode_txt(raw, instance="x #1", addresses=["127.0.0.1"], port=ad.port) == ad


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        (b"n", None, "missing"),
        (b"n", b"", "empty"),
        (b"n", b"\xff\xfe", "UTF-8"),
        (b"n", b"evil\x1b[2J", "control"),
        (b"n", "bidi\u202etrick".encode(), "control"),
        (b"n", b"x" * 33, "longer"),
        (b"n", b" padded", "edge spaces"),
        (b"st", b"5", "seats_taken"),
        (b"st", b"-1", "decimal"),
        (b"st", "٣".encode(), "decimal"),
        (b"st", b"1_0", "decimal"),
        (b"sn", b"0", "seats_total"),
        (b"sn", b"99", "seats_total"),
        (b"v", b"0", "protocol_version"),
        (b"v", b"123456", "decimal"),
        (b"fp", b"XYZ", "fingerprint"),
        (b"fp", b"ABCDEF0123456789", "fingerprint"),
        (b"code", b"yes", "code"),
        (b"var", b"v" * 49, "longer"),
        (b"h", b"Ana\x1b[2J", "control"),
        (b"h", b"x" * 25, "longer"),
        (b"ph", b"dancing", "state"),
        (b"r", b"-3", "decimal"),
        (b"nt", b"soon", "decimal"),
    ],
)
def test_bad_txt_is_rejected_with_a_reason(key: bytes, value: bytes | None, reason: str) -> None:
    properties = good_txt()
    if value is None:
        del properties[key]
    else:
        properties[key] = value
    with pytest.raises(AdError, match=reason):
        decode_txt(properties, instance="x #1", addresses=["127.0.0.1"], port=1)


def test_an_older_hosts_txt_has_no_host_state_or_revision() -> None:
    properties = {k: v for k, v in good_txt().items() if k not in (b"h", b"ph", b"r", b"nt")}
    ad = decode_txt(properties, instance="x #1", addresses=["127.0.0.1"], port=1)
    assert (ad.host, ad.state, ad.next_deal, ad.revision) == ("", "lobby", None, 0)


def test_state_and_next_deal_survive_txt() -> None:
    ad = make_ad("Ana", host="Tess", state="break", next_deal=1_800_000_000, revision=7,
                 addresses=("127.0.0.1",), instance="x #1")
    raw = {k.encode(): v.encode() for k, v in encode_txt(ad).items()}
    assert decode_txt(raw, instance="x #1", addresses=["127.0.0.1"], port=ad.port) == ad


def test_unknown_txt_keys_are_ignored() -> None:
    properties = good_txt() | {b"future": b"thing", b"flag": None}
    assert decode_txt(properties, instance="x #1", addresses=["127.0.0.1"], port=1).name == "Ana"


@pytest.mark.parametrize(
    ("addresses", "port", "reason"),
    [
        ([], 1, "address"),
        (["127.0.0.1"], None, "port"),
        (["nonsense"], 1, "IP"),
        (["127.0.0.1"], 0, "port"),
    ],
)
def test_records_must_say_where_to_connect(
    addresses: list[str], port: int | None, reason: str
) -> None:
    with pytest.raises(AdError, match=reason):
        decode_txt(good_txt(), instance="x #1", addresses=addresses, port=port)


# --- interfaces ------------------------------------------------------------------------


def test_interfaces_parsing() -> None:
    assert interfaces_from(None) is InterfaceChoice.All
    assert interfaces_from("  ") is InterfaceChoice.All
    assert interfaces_from("ALL") is InterfaceChoice.All
    assert interfaces_from("default") is InterfaceChoice.Default
    assert interfaces_from("127.0.0.1, 10.0.0.2,127.0.0.1") == ["127.0.0.1", "10.0.0.2"]
    assert interfaces_from("::1") == ["::1"]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("eth0", "not an IP address"),
        ("127.0.0.1,,10.0.0.1", "empty entry"),
        ("all,127.0.0.1", "cannot be mixed"),
        ("0.0.0.0", "not the address of an interface"),
        ("224.0.0.251", "not the address of an interface"),
    ],
)
def test_bad_interfaces_say_what_is_wrong(option: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        interfaces_from(option)


def test_flag_beats_environment() -> None:
    env = {"NERTS_INTERFACES": "127.0.0.1"}
    assert interfaces_setting(None, env) == ["127.0.0.1"]
    assert interfaces_setting("default", env) is InterfaceChoice.Default
    assert interfaces_setting(None, {}) is InterfaceChoice.All


def test_advertised_addresses() -> None:
    assert advertised_addresses(["127.0.0.1", "fe80::1%2"]) == ["127.0.0.1", "fe80::1"]
    found = advertised_addresses(InterfaceChoice.All)
    assert found and all(":" not in a for a in found)  # IPv4, like zeroconf's default


# --- over mDNS on 127.0.0.1 -----------------------------------------------------------


@pytest.mark.usefixtures("quick_mdns")
def test_advertised_table_is_found_with_its_fields(answering: AnsweringPorts) -> None:
    name, port = unique_name(), answering.new()

    async def scenario() -> None:
        async with TableAdvertiser(make_ad(name, port=port), LOOPBACK) as advertiser:
            await asyncio.sleep(0.1)  # announcements over: the browser must ask
            async with TableBrowser(LOOPBACK) as browser:
                tables = await browser.wait_for(named(name), timeout=20)
        table = only(tables, name)
        assert table == advertiser.ad
        assert table == make_ad(name, port=port, addresses=("127.0.0.1",),
                                instance=table.instance)
        assert table.instance.startswith(f"{name} #")

    run(scenario)


@pytest.mark.usefixtures("quick_mdns")
def test_seat_update_and_goodbye_are_seen(answering: AnsweringPorts) -> None:
    name = unique_name()
    events: list[TableEvent] = []

    def mine(event: TableEvent) -> None:
        if event.table.name == name:
            events.append(event)

    async def scenario() -> None:
        async with TableBrowser(LOOPBACK, on_event=mine) as browser:
            advertiser = TableAdvertiser(make_ad(name, port=answering.new()), LOOPBACK)
            await advertiser.start()
            await browser.wait_for(named(name), timeout=20)
            await advertiser.update(seats_taken=3)
            await browser.wait_for(lambda ts: only(ts, name).seats_taken == 3, timeout=20)
            # Back to a count heard before, twice over: each is a new revision, and
            # the browser reads the newest whatever its cache still holds.
            for seats in (1, 3, 1):
                await advertiser.update(seats_taken=seats)
                await browser.wait_for(seated(name, seats), timeout=20)
            assert advertiser.ad.revision == 4
            assert await advertiser.update(seats_taken=1) == advertiser.ad  # no change
            assert advertiser.ad.revision == 4
            await advertiser.close()
            await browser.wait_for(lambda ts: not named(name)(ts), timeout=20)

    run(scenario)
    assert [(e.change, e.table.seats_taken) for e in events] == [
        (TableChange.ADDED, 1),
        (TableChange.UPDATED, 3),
        (TableChange.UPDATED, 1),
        (TableChange.UPDATED, 3),
        (TableChange.UPDATED, 1),
        (TableChange.REMOVED, 1),
    ]


@pytest.mark.usefixtures("quick_mdns")
def test_two_tables_coexist_on_one_shared_zeroconf(answering: AnsweringPorts) -> None:
    first, second = unique_name(), unique_name()

    async def scenario() -> None:
        async with AsyncZeroconf(interfaces=LOOPBACK) as aiozc:
            async with (
                TableAdvertiser(make_ad(first, port=answering.new()), LOOPBACK, aiozc=aiozc),
                TableAdvertiser(make_ad(second, port=answering.new(), needs_code=True), LOOPBACK),
                TableBrowser(LOOPBACK, aiozc=aiozc) as browser,
            ):
                tables = await browser.wait_for(
                    lambda ts: named(first)(ts) and named(second)(ts), timeout=20
                )
            assert not only(tables, first).needs_code
            assert only(tables, second).needs_code
            assert not aiozc.zeroconf.done  # the shared instance stays the caller's

    run(scenario)


@pytest.mark.usefixtures("quick_mdns")
def test_name_collision_picks_another_suffix() -> None:
    name = unique_name()

    def suffixes() -> Iterator[str]:
        yield from ["aaaa", "aaaa", "bbbb"]

    chosen = suffixes()

    async def scenario() -> None:
        async with (
            TableAdvertiser(make_ad(name), LOOPBACK, suffix=lambda: next(chosen)) as one,
            TableAdvertiser(make_ad(name), LOOPBACK, suffix=lambda: next(chosen)) as two,
        ):
            assert one.ad.instance == f"{name} #aaaa"
            assert two.ad.instance == f"{name} #bbbb"

    run(scenario)


@pytest.mark.usefixtures("quick_mdns")
def test_malformed_txt_is_ignored_and_logged(answering: AnsweringPorts,
                                             caplog: pytest.LogCaptureFixture) -> None:
    bad, good = unique_name(), unique_name()
    properties = encode_txt(make_ad(bad)) | {"st": "9"}
    info = ServiceInfo(
        SERVICE_TYPE,
        f"{bad} #dead.{SERVICE_TYPE}",
        port=1,
        properties=properties,
        parsed_addresses=["127.0.0.1"],
    )

    async def scenario() -> None:
        async with AsyncZeroconf(interfaces=LOOPBACK) as rogue:
            await rogue.async_register_service(info)
            async with TableBrowser(LOOPBACK) as browser:
                await asyncio.sleep(0.2)
                async with TableAdvertiser(make_ad(good, port=answering.new()), LOOPBACK):
                    tables = await browser.wait_for(named(good), timeout=20)
            assert not named(bad)(tables)

    with caplog.at_level(logging.WARNING, logger="p2p_nerts.net.discovery"):
        run(scenario)
    assert any(bad in r.getMessage() and "seats_taken" in r.getMessage() for r in caplog.records)


@pytest.mark.usefixtures("quick_mdns")
def test_find_table_by_name_and_its_failures(answering: AnsweringPorts) -> None:
    name, twin = unique_name(), unique_name()

    async def scenario() -> None:
        async with (
            TableAdvertiser(make_ad(name, port=answering.new()), LOOPBACK) as advertiser,
            TableAdvertiser(make_ad(twin, port=answering.new()), LOOPBACK),
            TableAdvertiser(make_ad(twin, port=answering.new()), LOOPBACK),
        ):
            assert await find_table(name.upper(), LOOPBACK, timeout=20) == advertiser.ad
            exact = advertiser.ad.instance
            assert await find_table(exact, LOOPBACK, timeout=20) == advertiser.ad
            # A responder multicasts a record at most once a second (RFC 6762 §6):
            # a fresh browse right after the last one may hear only one twin.
            await asyncio.sleep(1.1)
            with pytest.raises(AmbiguousTableError) as ambiguous:
                await find_table(twin, LOOPBACK, timeout=20, settle=SETTLE)
            assert len(ambiguous.value.candidates) == 2
            with pytest.raises(TableNotFoundError, match="no table named"):
                await find_table(unique_name(), LOOPBACK, timeout=0.3)

    run(scenario)


def test_own_ad_is_validated_before_publishing() -> None:
    with pytest.raises(AdError, match="seats_taken"):
        make_ad("Ana", seats_taken=5)
    with pytest.raises(AdError, match="control"):
        make_ad("Ana\n")
