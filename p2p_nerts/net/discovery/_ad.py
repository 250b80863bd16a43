"""A table's mDNS advertisement: its fields, checked one by one, and its TXT record.

Everything here is pure: a TXT record from the network is validated field by
field, and a bad one raises ``AdError`` (the browser logs and ignores it).
"""

from __future__ import annotations

import ipaddress
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

SERVICE_TYPE = "_nerts._tcp.local."
MAX_NAME_CHARS = 32
MAX_VARIANT_CHARS = 48
MAX_HOST_CHARS = 24
"""A player's name (``identity.MAX_NAME_LEN``): the host's, shown beside its table."""
TABLE_STATES = ("lobby", "playing", "break", "over")
"""What a table is doing: seating players before its first deal, playing a round,
between two rounds, or done (its game is over)."""
MAX_SEATS = 16
MAX_TABLES = 128
"""More tables than any LAN party has; beyond it a flood of fake ads is ignored."""
_MAX_ADDRESSES = 8
_MAX_INSTANCE_BYTES = 63  # DNS label limit

_DIGITS = re.compile(r"[0-9]{1,5}")
_LONG_DIGITS = re.compile(r"[0-9]{1,12}")
_FINGERPRINT = re.compile(r"[0-9a-f]{16,64}")
_SUFFIX = re.compile(r"[0-9a-z]{1,8}")


class DiscoveryError(Exception):
    """Base of the errors a caller of discovery may want to show a player."""


class AdError(DiscoveryError, ValueError):
    """A table advertisement (ours or one from the network) is invalid."""


class AdvertiseError(DiscoveryError):
    """The table could not be published under any instance name."""


class TableNotFoundError(DiscoveryError, LookupError):
    """No table matched within the timeout."""


class AmbiguousTableError(DiscoveryError, LookupError):
    """Several tables matched; ``candidates`` lets the UI ask which one."""

    def __init__(self, message: str, candidates: Sequence[TableAd]) -> None:
        super().__init__(message)
        self.candidates = tuple(candidates)


@dataclass(frozen=True, slots=True)
class TableAd:
    """What a table tells the LAN about itself; always valid once constructed.

    ``fingerprint`` is the host's identity-key fingerprint (lowercase hex), so
    a joiner can check the key it meets in the handshake. ``addresses`` may be
    empty only on an ad given to ``TableAdvertiser``, which fills it in;
    ``instance`` is the unique DNS-SD instance label, empty until published.
    ``host`` is the host player's name and ``fingerprint`` its key: together
    they tell apart two tables of one name. ``state`` is one of
    ``TABLE_STATES``; between rounds ``next_deal`` is when the host deals again
    (Unix time, s; None when a person deals). ``revision`` counts the host's
    updates (see the module docstring).
    """

    name: str
    fingerprint: str
    protocol_version: int
    seats_taken: int
    seats_total: int
    variant: str
    needs_code: bool
    port: int
    addresses: tuple[str, ...] = ()
    instance: str = ""
    host: str = ""
    state: str = "lobby"
    next_deal: int | None = None
    revision: int = 0

    def __post_init__(self) -> None:
        _check_text("name", self.name, MAX_NAME_CHARS, allow_empty=False)
        _check_text("host", self.host, MAX_HOST_CHARS, allow_empty=True)
        if self.state not in TABLE_STATES:
            raise AdError(f"state must be one of {', '.join(TABLE_STATES)}")
        if self.next_deal is not None:
            _check_int("next_deal", self.next_deal, 0, 10**12 - 1)
        _check_int("revision", self.revision, 0, 10**12 - 1)
        _check_text("variant", self.variant, MAX_VARIANT_CHARS, allow_empty=True)
        if not isinstance(self.fingerprint, str) or not _FINGERPRINT.fullmatch(self.fingerprint):
            raise AdError("fingerprint must be 16-64 lowercase hex digits")
        _check_int("protocol_version", self.protocol_version, 1, 65535)
        _check_int("seats_total", self.seats_total, 1, MAX_SEATS)
        _check_int("seats_taken", self.seats_taken, 0, self.seats_total)
        if not isinstance(self.needs_code, bool):
            raise AdError("needs_code must be a bool")
        _check_int("port", self.port, 1, 65535)
        if not isinstance(self.addresses, tuple) or len(self.addresses) > _MAX_ADDRESSES:
            raise AdError(f"addresses must be a tuple of at most {_MAX_ADDRESSES}")
        for address in self.addresses:
            try:
                ipaddress.ip_address(address)
            except ValueError:
                raise AdError(f"address {address!r} is not an IP address") from None
        if self.instance:
            _check_text("instance", self.instance, _MAX_INSTANCE_BYTES, allow_empty=False)
            if len(self.instance.encode()) > _MAX_INSTANCE_BYTES:
                raise AdError(f"instance is longer than {_MAX_INSTANCE_BYTES} bytes")


def txt_text(properties: Mapping[bytes, bytes | None], key: str) -> str:
    """The text of one key of a TXT record as heard, or ``AdError`` saying why not
    (a table's ad and an event's read their fields so)."""
    raw = properties.get(key.encode())
    if raw is None:
        raise AdError(f"TXT key {key!r} is missing or has no value")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise AdError(f"TXT key {key!r} is not UTF-8") from None


def _check_text(field: str, value: object, max_chars: int, *, allow_empty: bool) -> None:
    """Text shown in a terminal: bounded, no control/format characters, no edge spaces."""
    if not isinstance(value, str):
        raise AdError(f"{field} must be text")
    if not value and not allow_empty:
        raise AdError(f"{field} must not be empty")
    if len(value) > max_chars:
        raise AdError(f"{field} is longer than {max_chars} characters")
    if not value.isprintable() or value != value.strip():
        raise AdError(f"{field} {value!r} has control characters or edge spaces")


def _check_int(field: str, value: object, low: int, high: int) -> None:
    if type(value) is not int or not low <= value <= high:
        raise AdError(f"{field} must be an integer in {low}..{high}, got {value!r}")


def encode_txt(ad: TableAd) -> dict[str, str]:
    """The TXT properties for ``ad``; keys are short because TXT space is scarce."""
    return {
        "v": str(ad.protocol_version),
        "n": ad.name,
        "fp": ad.fingerprint,
        "st": str(ad.seats_taken),
        "sn": str(ad.seats_total),
        "var": ad.variant,
        "code": "1" if ad.needs_code else "0",
        "h": ad.host,
        "ph": ad.state,
        "r": str(ad.revision),
        **({} if ad.next_deal is None else {"nt": str(ad.next_deal)}),
    }


def decode_txt(
    properties: Mapping[bytes, bytes | None],
    *,
    instance: str,
    addresses: Sequence[str],
    port: int | None,
) -> TableAd:
    """Build a ``TableAd`` from untrusted TXT properties, or raise ``AdError`` saying why.

    Unknown keys are ignored so later versions can add fields; the host's
    name, state, next deal and revision are optional (an older host sends none).
    """

    def text(key: str) -> str:
        return txt_text(properties, key)

    def number(key: str, digits: re.Pattern[str] = _DIGITS) -> int:
        value = text(key)
        if not digits.fullmatch(value):
            raise AdError(f"TXT key {key!r} is not a small decimal number: {value!r}")
        return int(value)

    def optional(key: str) -> bool:
        return properties.get(key.encode()) is not None

    code = text("code")
    if code not in ("0", "1"):
        raise AdError(f"TXT key 'code' must be 0 or 1, got {code!r}")
    if not addresses:
        raise AdError("no address records")
    if port is None:
        raise AdError("no port")
    return TableAd(
        name=text("n"),
        fingerprint=text("fp"),
        protocol_version=number("v"),
        seats_taken=number("st"),
        seats_total=number("sn"),
        variant=text("var"),
        needs_code=code == "1",
        port=port,
        addresses=tuple(addresses[:_MAX_ADDRESSES]),
        instance=instance,
        host=text("h") if optional("h") else "",
        state=text("ph") if optional("ph") else "lobby",
        next_deal=number("nt", _LONG_DIGITS) if optional("nt") else None,
        revision=number("r", _LONG_DIGITS) if optional("r") else 0,
    )


def _txt_properties(rdata: bytes) -> dict[bytes, bytes | None]:
    """A TXT record's strings (RFC 6763 §6: length-prefixed ``key=value``) as properties;
    the first of a repeated key counts, as the RFC says."""
    properties: dict[bytes, bytes | None] = {}
    at = 0
    while at < len(rdata):
        length = rdata[at]
        item = rdata[at + 1:at + 1 + length]
        at += 1 + length
        key, eq, value = item.partition(b"=")
        if key and key not in properties:
            properties[key] = value if eq else None
    return properties


def _revision(properties: Mapping[bytes, bytes | None]) -> int:
    raw = properties.get(b"r")
    return int(raw) if raw is not None and raw.isdigit() and len(raw) <= 12 else -1


def random_suffix() -> str:
    """A short tag that makes the instance name unique on the LAN."""
    return secrets.token_hex(2)


def _instance_label(name: str, suffix: str) -> str:
    """``"Ana's table #3f2a"``, cut to the 63-byte DNS label limit on a character boundary."""
    tag = f" #{suffix}"
    budget = _MAX_INSTANCE_BYTES - len(tag.encode())
    head = name.encode()[:budget].decode("utf-8", errors="ignore").rstrip()
    return head + tag


def _instance_from_service_name(name: str) -> str:
    if not name.lower().endswith("." + SERVICE_TYPE):
        raise AdError(f"{name!r} is not a {SERVICE_TYPE} instance")
    return name[: -len(SERVICE_TYPE) - 1]


