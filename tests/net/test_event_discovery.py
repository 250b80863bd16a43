"""An event's mDNS ad: checked field by field, published, and found by name on 127.0.0.1."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from p2p_nerts.net.discovery import (
    AdError,
    EventAd,
    EventAdvertiser,
    TableNotFoundError,
    decode_event_txt,
    encode_event_txt,
    find_event,
)

pytestmark = pytest.mark.timeout(60)

LOOPBACK = ["127.0.0.1"]
FP = "22d7" + "0" * 60


def ad(name: str = "Friday cup", **changes: object) -> EventAd:
    fields: dict[str, object] = {"name": name, "fingerprint": FP, "needs_code": True,
                                 "game": 1, "games": 3, "port": 4321}
    fields.update(changes)
    return EventAd(**fields)  # type: ignore[arg-type]


def test_an_event_ad_goes_through_its_txt_record_unchanged() -> None:
    one = ad()
    txt = {k.encode(): v.encode() for k, v in encode_event_txt(one).items()}
    assert decode_event_txt(txt, 4321, ()) == one
    assert one.label == "Friday cup@22d7"


@pytest.mark.parametrize(("key", "value", "why"), [
    ("v", "2", "another version"),
    ("code", "yes", "malformed"),
    ("game", "4", "game <= games"),
    ("games", "x", "malformed"),
    ("name", "", "name must be"),
    ("fp", "XYZ", "fingerprint"),
])
def test_a_bad_field_in_an_event_ad_is_refused_in_one_line(key: str, value: str,
                                                           why: str) -> None:
    txt = {k.encode(): v.encode() for k, v in encode_event_txt(ad()).items()}
    txt[key.encode()] = value.encode()
    with pytest.raises(AdError, match=why):
        decode_event_txt(txt, 4321, ())


def test_an_event_is_found_by_its_name_and_an_unknown_one_is_said_so() -> None:
    tag = secrets.token_hex(3)

    async def scenario() -> None:
        advertiser = EventAdvertiser(ad(f"Cup {tag}", needs_code=False), LOOPBACK)
        await advertiser.start()
        try:
            found = await find_event(f"cup {tag}@22d7", LOOPBACK, 3.0)
            assert (found.name, found.port, found.needs_code) == (f"Cup {tag}", 4321, False)
            assert "127.0.0.1" in found.addresses
            await advertiser.update(game=2)
            with pytest.raises(TableNotFoundError, match=f"no event named 'Nope {tag}'"):
                await find_event(f"Nope {tag}", LOOPBACK, 1.5)
        finally:
            await advertiser.close()

    asyncio.run(scenario())
