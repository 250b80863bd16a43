"""The mesh's own frames: the info frame that opens a connection, and the peers list.

Everything else on a connection is a signed replica entry (it starts with the
envelope's magic), which the transport forwards without looking inside. These
few frames are transport business: they say who is calling and where the other
peers listen, so they are small, validated field by field, and never trusted
for anything the signatures already decide.

Info frame (the first frame both ways, before the handshake)::

    {"v": protocol version, "tid": table id (16 bytes) or nil, "name": text,
     "port": listen port, "seats": seated, "full": bool, "playing": bool,
     "code": bool, "views": bool}

A guest joining by address does not know the table id yet: it sends nil and
learns it from the host's info frame. The version is read before anything
else, so a newer peer with other fields still gets a clear "wrong version".

Peers frame (host to guests, after the handshake)::

    {"peers": [[public key (32 bytes), "ip:port"], ...]}
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import msgpack

from ..protocol.envelope import LINK_MAGIC, MAGIC, TABLE_ID_LEN
from ..protocol.identity import PUBLIC_KEY_LEN
from .framing import unpack_map

__all__ = [
    "MAX_PEERS",
    "NET_VERSION",
    "Info",
    "WireError",
    "decode_info",
    "decode_peers",
    "encode_info",
    "encode_peers",
    "format_address",
    "is_entry",
    "parse_address",
    "refusal",
]

NET_VERSION = 12
"""The version two peers must share to sit at one table, read first of all.

It covers the transport (info, handshake and peers frames, link entries),
the payload schemas and the total order: signed entries keep their own body
version (``PROTOCOL_VERSION``, 2), and a payload a peer cannot parse is
refused, so a peer of another version would ask again forever for the
entries behind it. v2 added the link key to the handshake and unsigned link
entries; v3 added the table's clocks to SETTINGS; v4 lets a ROSTER's seats
come in the host's order (who partners whom) rather than by key; v5 breaks
ties of Lamport time by a draw rather than by seat (``foundations.order``):
two peers that order ties differently would score the same plays apart; v6
refuses an entry dated at or before its author's own earlier ACK, which a v5
peer restarted from its journal could sign (its clock moved on VIEWs, which
the journal does not keep); v7 chains each author's entries (body version 2:
every entry names its predecessor's id), names chain heads in ACK marks, adds
FORK, the proof that a seat signed two entries under one number, and RESULT,
each seat's signed final result; it replays a lone rotation as the top stock
card going to the bottom (no longer the whole waste folded in), fixes a
covered joker in suit as well as rank and colour, through a bounce, scores a
seat without an audit as "unaudited" (no points), voids a round ended by a
Nerts call its audit does not bear out, counts only foundation plays that
stayed as progress against a deadlock, and makes a drop take effect at a point
of the total order: a v6 peer would read the same entries apart, or flag an
honest v7 seat. v8 adds SNAPSHOT: peers forget finished rounds, and a v7
peer asking for one would wait forever for entries nobody sends. v9 adds
``views`` to the info frame: a peer that draws no other seat's tableau (a bot,
a headless seat) is sent no VIEW, and a v8 peer would never send it one.
v10 lets a run or slide in the move log declare the suit of a joker it covers
(``Tableau.move_to_work``): a v9 peer would flag an honest v10 seat that
declared one. v11 scores a round found false (a failed or missing audit, a false Nerts call,
a fork) as the forfeit for its seat alone and lets every other seat's round
stand, and fails a stuck vote or a lone rotation made with a move in hand: a
v10 peer, which voids a falsely called round for everyone, would score the
same round apart. v12 takes a seat that said GOODBYE out of the voting from
its GOODBYE on (a seat leaving needs no vote from another that left, and
votes signed after one's own GOODBYE count for nothing), and holds a GOODBYE
until the round it was signed in begins: a v11 peer would wait for the
votes of seats that left, and not drop them where a v12 peer does.
Either way the other peer is told the versions differ before anything else.
"""

MAX_PEERS = 64
_MAX_INFO = 512
_MAX_PEERS_FRAME = 64 + MAX_PEERS * (PUBLIC_KEY_LEN + 64)
_MAX_NAME = 64
_INFO_FIELDS = frozenset({"v", "tid", "name", "port", "seats", "full", "playing", "code",
                          "views"})


class WireError(Exception):
    """A transport frame is malformed: the connection that sent it is closed."""


@dataclass(frozen=True, slots=True)
class Info:
    """What one end of a new connection says about itself."""

    v: int
    tid: bytes | None
    name: str
    port: int
    seats: int = 0
    full: bool = False
    playing: bool = False
    code: bool = False
    #: It draws the other seats' tableaux (a screen), so it wants their VIEWs.
    views: bool = True


def encode_info(info: Info) -> bytes:
    return msgpack.packb({
        "v": info.v, "tid": info.tid, "name": info.name, "port": info.port,
        "seats": info.seats, "full": info.full, "playing": info.playing, "code": info.code,
        "views": info.views,
    })


def decode_info(payload: bytes) -> Info:
    """Parse an untrusted info frame, or raise ``WireError`` saying what is wrong.

    A frame of another version is returned with only ``v`` and ``name`` read,
    so the caller can tell the user which version the table speaks.
    """
    message = unpack_map(payload, _MAX_INFO, "info frame", WireError)
    version = message.get("v")
    if type(version) is not int or not 0 < version < 65536:
        raise WireError("info frame has no valid version")
    name = message.get("name")
    name = name if isinstance(name, str) and 0 < len(name) <= _MAX_NAME and name.isprintable() \
        else "?"
    if version != NET_VERSION:
        return Info(version, None, name, 0)
    if message.keys() != _INFO_FIELDS:
        raise WireError(f"info frame has fields {sorted(map(str, message))}")
    tid = message["tid"]
    if tid is not None and (type(tid) is not bytes or len(tid) != TABLE_ID_LEN):
        raise WireError("info frame: bad table id")
    port, seats = message["port"], message["seats"]
    if type(port) is not int or not 0 <= port <= 65535:
        raise WireError("info frame: bad port")
    if type(seats) is not int or not 0 <= seats <= MAX_PEERS:
        raise WireError("info frame: bad seat count")
    flags = [message[k] for k in ("full", "playing", "code", "views")]
    if any(type(f) is not bool for f in flags):
        raise WireError("info frame: flags must be booleans")
    return Info(version, tid, name, port, seats, *flags)


def refusal(peer: Info, *, joining: bool) -> str | None:
    """Why we cannot go on with this peer, as a line for the user; None when we can.

    Full only stops a newcomer: a seated player who lost its connection comes
    back whatever the table is doing. A round under way stops nobody: a
    newcomer sits down as it ends (the host keeps a waiting list) and follows
    the table meanwhile.
    """
    if peer.v != NET_VERSION:
        return f"table {peer.name} runs protocol v{peer.v}; this nerts speaks v{NET_VERSION}"
    if joining and peer.full:
        return f"table {peer.name} is full (--wait waits for a free seat)"
    return None


def encode_peers(peers: dict[bytes, str]) -> bytes:
    return msgpack.packb({"peers": [[key, addr] for key, addr in sorted(peers.items())]})


def decode_peers(payload: bytes) -> dict[bytes, tuple[str, int]]:
    """Parse an untrusted peers frame into key → (ip, port)."""
    message = unpack_map(payload, _MAX_PEERS_FRAME, "peers frame", WireError)
    items = message.get("peers")
    if message.keys() != {"peers"} or not isinstance(items, list) or len(items) > MAX_PEERS:
        raise WireError(f"peers frame: expected one list of at most {MAX_PEERS} peers")
    peers: dict[bytes, tuple[str, int]] = {}
    for item in items:
        if not isinstance(item, list) or len(item) != 2:
            raise WireError("peers frame: each peer is [key, address]")
        key, addr = item
        if type(key) is not bytes or len(key) != PUBLIC_KEY_LEN or not isinstance(addr, str):
            raise WireError("peers frame: bad key or address")
        peers[key] = parse_address(addr)
    return peers


def format_address(ip: str, port: int) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def parse_address(text: str, default_port: int | None = None) -> tuple[str, int]:
    """``"10.0.0.2:4000"`` or ``"[fe80::1]:4000"`` → (ip, port); raise ``WireError``.

    Only literal IP addresses: a peers frame must never make us resolve names.
    """
    host, sep, port_text = text.rpartition(":")
    if not sep or (":" in host and not host.startswith("[")):
        host, port_text = text, ""
    host = host.removeprefix("[").removesuffix("]")
    try:
        ip = str(ipaddress.ip_address(host))
    except ValueError:
        raise WireError(f"{host!r} is not an IP address") from None
    if not port_text and default_port is not None:
        return ip, default_port
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) <= 65535:
        raise WireError(f"bad port in {text!r}")
    return ip, int(port_text)


def is_entry(frame: bytes) -> bool:
    """Replica entries start with an envelope magic (signed or link entry); transport
    frames are msgpack maps."""
    return frame[: len(MAGIC)] in (MAGIC, LINK_MAGIC)


