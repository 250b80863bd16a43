"""``peer.tables``: reading a join target, and trying a found table's addresses in turn.

``NetSession.join`` is replaced by a fake that answers per address, so these
tests open no socket.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from p2p_nerts.net.discovery import TableAd
from p2p_nerts.net.link import LinkError, Refused
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.peer.tables import LanTables, join_found, parse_target
from p2p_nerts.protocol.identity import Identity

ME = Identity.from_seed(b"\x0d" * 32, "Ida")


@pytest.mark.parametrize(("text", "address"), [
    ("127.0.0.1:4000", ("127.0.0.1", 4000)),
    ("[::1]:80", ("::1", 80)),
    ("tess-laptop.local:40123", ("tess-laptop.local", 40123)),
    ("Tess's table", None),
    ("kitchen", None),
    ("Room 2: 30", None),
    (None, None),
])
def test_parse_target_tells_an_address_from_a_table_name(
        text: str | None, address: tuple[str, int] | None) -> None:
    assert parse_target(text) == address


@pytest.mark.parametrize("text", ["tess-laptop.local:0", "tess-laptop.local:65536",
                                  "127.0.0.1:99999", "[::1]:0", "kitchen:123456"])
def test_parse_target_refuses_a_bad_port(text: str) -> None:
    """An address with a bad port is a mistake to point out, not a table's name."""
    with pytest.raises(ValueError, match=r"port must be 1\.\.65535"):
        parse_target(text)


LOOPBACK = "127.0.0.1"


def ad(addresses: int) -> TableAd:
    """A table advertising ``addresses`` addresses (all loopback: the fake tells them apart
    by the order it is asked in)."""
    return TableAd(name="Ana's table", fingerprint="0123456789abcdef", protocol_version=1,
                   seats_taken=1, seats_total=4, variant="classic", needs_code=True,
                   port=40123, addresses=(LOOPBACK,) * addresses)


def fake_join(monkeypatch: pytest.MonkeyPatch,
              outcomes: list[BaseException | str]) -> list[tuple[str, int]]:
    """The n-th NetSession.join answers ``outcomes[n]`` (raised, or returned); the list
    logs each address tried."""
    tried: list[tuple[str, int]] = []

    async def join(identity: Identity, address: tuple[str, int], *args: Any,
                   **kwargs: Any) -> Any:
        assert kwargs.get("fingerprint") in (None, "0123456789abcdef")
        outcome = outcomes[len(tried)]
        tried.append(address)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    monkeypatch.setattr(NetSession, "join", join)
    return tried


def found(table: TableAd) -> Any:
    return asyncio.run(join_found(ME, table, TableConfig(), Endpoint()))


def test_an_unreachable_address_moves_on_to_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    tried = fake_join(monkeypatch, [LinkError("cannot reach it"), OSError("reset"), "seated"])
    assert found(ad(3)) == "seated"
    assert tried == [(LOOPBACK, 40123)] * 3


def test_a_refusal_ends_the_search_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    tried = fake_join(monkeypatch, [Refused("the table is full"), "seated"])
    with pytest.raises(Refused, match="the table is full"):
        found(ad(2))
    assert len(tried) == 1


def test_the_last_failure_is_the_one_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_join(monkeypatch, [OSError("reset"), LinkError("cannot reach the second")])
    with pytest.raises(LinkError, match="cannot reach the second"):
        found(ad(2))
    with pytest.raises(LinkError, match="table Ana's table has no address"):
        found(ad(0))


def test_the_lobby_gets_a_refusal_in_its_own_words(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_join(monkeypatch, [Refused("Table Ana's table needs a code: use --code")])
    lan = LanTables(ME, [LOOPBACK])
    with pytest.raises(ConnectionError) as error:
        asyncio.run(lan.join_address((LOOPBACK, 40123), None))
    assert str(error.value) == "Table Ana's table needs a code: type it in the code field"
