"""Which network interfaces mDNS uses, and which addresses a table advertises.

Players on a real LAN want every interface (the default). Tests, benchmarks and
odd setups (a laptop on two networks, a lab namespace) need to pin zeroconf to
chosen addresses, which is why the choice comes from ``--interfaces`` or
``NERTS_INTERFACES`` rather than being hard-wired. The rule for tests on a shared
machine is to pin ``127.0.0.1``: nothing then leaves the host.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping

import ifaddr
from zeroconf import InterfaceChoice

__all__ = [
    "ENV_VAR",
    "Interfaces",
    "advertised_addresses",
    "bind_addresses",
    "interfaces_from",
    "interfaces_setting",
    "listen_addresses",
]

ENV_VAR = "NERTS_INTERFACES"

Interfaces = InterfaceChoice | list[str]
"""What zeroconf's ``interfaces=`` accepts: a named choice or a list of IP addresses."""

_KEYWORDS = {"all": InterfaceChoice.All, "default": InterfaceChoice.Default}


def interfaces_from(option: str | None) -> Interfaces:
    """Parse ``--interfaces``/``NERTS_INTERFACES`` into a zeroconf interface choice.

    ``None`` or blank means every interface, which is what a player on a LAN
    needs. Otherwise the value is ``all``, ``default`` or comma-separated IP
    addresses; anything else raises ``ValueError`` with a message a user can act
    on, because a typo here would otherwise surface as "no tables found".
    """
    if option is None or not option.strip():
        return InterfaceChoice.All
    keyword = _KEYWORDS.get(option.strip().lower())
    if keyword is not None:
        return keyword
    addresses: list[str] = []
    for raw in option.split(","):
        item = raw.strip()
        if not item:
            raise ValueError(
                f"interfaces {option!r}: empty entry; expected 'all', 'default' "
                "or comma-separated IP addresses such as '192.168.1.20,127.0.0.1'"
            )
        if item.lower() in _KEYWORDS:
            raise ValueError(f"interfaces {option!r}: {item!r} cannot be mixed with addresses")
        try:
            address = ipaddress.ip_address(item)
        except ValueError:
            raise ValueError(
                f"interfaces {option!r}: {item!r} is not an IP address; expected 'all', "
                "'default' or comma-separated IP addresses"
            ) from None
        if address.is_unspecified or address.is_multicast:
            raise ValueError(
                f"interfaces {option!r}: {item!r} is not the address of an interface "
                "(use 'all' for every interface)"
            )
        if str(address) not in addresses:
            addresses.append(str(address))
    return addresses


def interfaces_setting(flag: str | None, environ: Mapping[str, str] = os.environ) -> Interfaces:
    """Apply the precedence a user expects: the command-line flag, then the environment."""
    return interfaces_from(flag if flag is not None else environ.get(ENV_VAR))


def advertised_addresses(interfaces: Interfaces) -> list[str]:
    """The addresses a table puts in its A/AAAA records so joiners can reach it.

    Pinned addresses are advertised as given. For ``all``/``default`` every IPv4
    address of the host is used (zeroconf speaks IPv4 by default), loopback
    excluded because a remote joiner dialling 127.0.0.1 would reach itself;
    loopback is kept only when the host has nothing else, so a game on an
    offline laptop still works.
    """
    if isinstance(interfaces, list):
        return [address.split("%")[0] for address in interfaces]  # records carry no scope
    found = [
        ip.ip for adapter in ifaddr.get_adapters() for ip in adapter.ips if isinstance(ip.ip, str)
    ]
    unique = list(dict.fromkeys(found))
    routable = [a for a in unique if not ipaddress.ip_address(a).is_loopback]
    return routable or unique or ["127.0.0.1"]


def listen_addresses(bind: str, interfaces: Interfaces) -> str:
    """Where a seat's TCP listener binds: ``--bind`` if given, else the addresses the
    user restricted ``--interfaces`` to (comma-separated), else "" (every interface).

    A user who says "127.0.0.1 only" means the table, not just its mDNS: a
    listener on every interface would let anyone on the network dial it.
    """
    if bind or not isinstance(interfaces, list):
        return bind
    return ",".join(interfaces)


def bind_addresses(bind: str) -> list[str]:
    """The addresses a listener binds for ``bind`` (comma-separated, as
    :func:`listen_addresses` gives it), all on one port; "" is every IPv4 interface:
    what is advertised is IPv4, and binding IPv4 and IPv6 apart with port 0 would
    give the two sockets different ports."""
    return [a.strip() for a in bind.split(",") if a.strip()] or ["0.0.0.0"]
