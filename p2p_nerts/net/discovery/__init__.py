"""Finding tables on the LAN with mDNS/DNS-SD (python-zeroconf, asyncio API).

A table is a ``_nerts._tcp.local.`` service: the SRV/A records say where to
connect, the TXT record says what the lobby shows (name, seats, variant...).
There is no server, so this is the only way players meet; it must be quick on
a LAN and must never trust what it hears: a TXT record from the network is
validated field by field and a bad one is logged and ignored.

The package: the ad and its TXT record (``_ad``), the advertiser, the
browser (which says why its first queries are its own) and ``find_table``.
"""

from __future__ import annotations

from ._ad import (
    MAX_HOST_CHARS,
    MAX_NAME_CHARS,
    MAX_SEATS,
    MAX_TABLES,
    MAX_VARIANT_CHARS,
    SERVICE_TYPE,
    TABLE_STATES,
    AdError,
    AdvertiseError,
    AmbiguousTableError,
    DiscoveryError,
    TableAd,
    TableNotFoundError,
    decode_txt,
    encode_txt,
    random_suffix,
)
from ._advertiser import TableAdvertiser
from ._browser import TableBrowser, TableChange, TableEvent
from ._event import (
    EVENT_SERVICE,
    EventAd,
    EventAdvertiser,
    decode_event_txt,
    encode_event_txt,
    find_event,
    look_for_events,
)
from ._find import QuietMdnsErrors, describe_table, find_table, matching, table_label

__all__ = [
    "EVENT_SERVICE",
    "MAX_HOST_CHARS",
    "MAX_NAME_CHARS",
    "MAX_SEATS",
    "MAX_TABLES",
    "MAX_VARIANT_CHARS",
    "SERVICE_TYPE",
    "TABLE_STATES",
    "AdError",
    "AdvertiseError",
    "AmbiguousTableError",
    "DiscoveryError",
    "EventAd",
    "EventAdvertiser",
    "QuietMdnsErrors",
    "TableAd",
    "TableAdvertiser",
    "TableBrowser",
    "TableChange",
    "TableEvent",
    "TableNotFoundError",
    "decode_event_txt",
    "decode_txt",
    "describe_table",
    "encode_event_txt",
    "encode_txt",
    "find_event",
    "find_table",
    "look_for_events",
    "matching",
    "random_suffix",
    "table_label",
]
