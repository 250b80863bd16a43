"""Mutual authentication: success both ways, every tampering detected, and a real TCP run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hypothesis import given, settings

from p2p_nerts.net.framing import FrameDecoder, encode_frame
from p2p_nerts.net.handshake import SIGNATURE_DOMAIN, Handshake, HandshakeError

from ..strategies import junk

pytestmark = pytest.mark.timeout(10)

TABLE = bytes(range(16))


def raw(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


class Pair:
    """Two sides with fixed keys and nonces, driven by hand."""

    def __init__(self, table_b: bytes = TABLE) -> None:
        self.key_a = Ed25519PrivateKey.generate()
        self.key_b = Ed25519PrivateKey.generate()
        self.a = Handshake(self.key_a, TABLE, b"A" * 32)
        self.b = Handshake(self.key_b, table_b, b"B" * 32)


def run_clean(pair: Pair) -> None:
    hello_a, hello_b = pair.a.start(), pair.b.start()
    auth_a = pair.a.receive(hello_b)
    auth_b = pair.b.receive(hello_a)
    assert auth_a is not None and auth_b is not None
    assert pair.a.receive(auth_b) is None
    assert pair.b.receive(auth_a) is None


def test_success_both_ways() -> None:
    pair = Pair()
    assert not pair.a.done and pair.a.peer_key is None
    run_clean(pair)
    assert pair.a.done and pair.b.done
    assert pair.a.peer_key == raw(pair.key_b)
    assert pair.b.peer_key == raw(pair.key_a)


def test_both_ends_derive_the_same_link_keys_one_per_direction() -> None:
    pair = Pair()
    with pytest.raises(RuntimeError):
        _ = pair.a.link_keys
    run_clean(pair)
    a_send, a_receive = pair.a.link_keys
    b_send, b_receive = pair.b.link_keys
    assert (a_send, a_receive) == (b_receive, b_send)
    assert a_send != a_receive and len(a_send) == 32
    other = Pair()
    run_clean(other)
    assert not {a_send, a_receive} & set(other.a.link_keys)  # fresh keys per connection


def test_order_of_arrival_does_not_matter() -> None:
    # b answers a's HELLO before a has heard anything: the AUTH waits in a's queue.
    pair = Pair()
    hello_a, hello_b = pair.a.start(), pair.b.start()
    auth_b = pair.b.receive(hello_a)
    auth_a = pair.a.receive(hello_b)
    assert auth_a is not None and auth_b is not None
    pair.b.receive(auth_a)
    pair.a.receive(auth_b)
    assert pair.a.done and pair.b.done


def edit(payload: bytes, change: Callable[[dict[str, Any]], object]) -> bytes:
    message = msgpack.unpackb(payload)
    change(message)
    return msgpack.packb(message)


def flip_last_byte(value: bytes) -> bytes:
    return value[:-1] + bytes([value[-1] ^ 1])


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        (lambda m: m.update(v=2), "version"),
        (lambda m: m.update(v=True), "version"),
        (lambda m: m.pop("v"), "fields"),
        (lambda m: m.update(table=bytes(16)), "another table"),
        (lambda m: m.update(table=b"short"), "'table' must be 16 bytes"),
        (lambda m: m.update(key=b"k" * 31), "'key' must be 32 bytes"),
        (lambda m: m.update(key="text" * 8), "'key' must be 32 bytes"),
        (lambda m: m.update(nonce=b"n" * 33), "'nonce' must be 32 bytes"),
        (lambda m: m.update(extra=1), "fields"),
        (lambda m: m.pop("nonce"), "fields"),
        (lambda m: m.pop("dh"), "fields"),
        (lambda m: m.update(dh=b"d" * 31), "'dh' must be 32 bytes"),
        (lambda m: m.update(dh=bytes(32)), "X25519 key is unusable"),
    ],
)
def test_tampered_hello_fails(tamper: Callable[[dict[str, Any]], object], reason: str) -> None:
    pair = Pair()
    pair.a.start()
    with pytest.raises(HandshakeError, match=reason):
        pair.a.receive(edit(pair.b.start(), tamper))
    with pytest.raises(HandshakeError):  # failure is final
        pair.a.receive(b"\x80")


@pytest.mark.parametrize("field", ["key", "nonce", "dh"])
def test_tampering_hello_in_flight_breaks_the_signature(field: str) -> None:
    # A man in the middle swaps b's key, nonce or X25519 key (to learn the link
    # keys) in the HELLO that a receives: b's real AUTH no longer verifies at a.
    pair = Pair()
    hello_a, hello_b = pair.a.start(), pair.b.start()
    replacement = {"key": raw(Ed25519PrivateKey.generate()), "nonce": b"M" * 32,
                   "dh": X25519PrivateKey.generate().public_key().public_bytes_raw()}[field]
    pair.a.receive(edit(hello_b, lambda m: m.update({field: replacement})))
    auth_b = pair.b.receive(hello_a)
    assert auth_b is not None
    with pytest.raises(HandshakeError, match="signature"):
        pair.a.receive(auth_b)
    assert not pair.a.done and pair.a.peer_key is None


def test_tampered_signature_fails() -> None:
    pair = Pair()
    hello_a, hello_b = pair.a.start(), pair.b.start()
    pair.a.receive(hello_b)
    auth_b = pair.b.receive(hello_a)
    assert auth_b is not None
    with pytest.raises(HandshakeError, match="signature"):
        pair.a.receive(edit(auth_b, lambda m: m.update(sig=flip_last_byte(m["sig"]))))


def test_signature_by_another_key_fails() -> None:
    # Mallory claims b's key but can only sign with her own.
    pair = Pair()
    pair.a.start()
    pair.a.receive(pair.b.start())
    mallory = Ed25519PrivateKey.generate()
    forged = mallory.sign(SIGNATURE_DOMAIN + TABLE + b"B" * 32 + b"A" * 32 + raw(pair.key_a))
    with pytest.raises(HandshakeError, match="signature"):
        pair.a.receive(msgpack.packb({"sig": forged}))


def test_replayed_auth_from_another_session_fails() -> None:
    # An eavesdropper recorded b's HELLO and AUTH; a's next session has a fresh nonce.
    key_a, key_b = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    old_a, old_b = Handshake(key_a, TABLE, b"1" * 32), Handshake(key_b, TABLE, b"B" * 32)
    old_hello_a, recorded_hello_b = old_a.start(), old_b.start()
    recorded_auth_b = old_b.receive(old_hello_a)
    assert recorded_auth_b is not None
    new_a = Handshake(key_a, TABLE, b"2" * 32)
    new_a.start()
    new_a.receive(recorded_hello_b)
    with pytest.raises(HandshakeError, match="signature"):
        new_a.receive(recorded_auth_b)


def test_reflected_hello_fails() -> None:
    key = Ed25519PrivateKey.generate()
    side = Handshake(key, TABLE, b"A" * 32)
    hello = side.start()
    with pytest.raises(HandshakeError, match="own key"):
        side.receive(hello)
    other = Handshake(Ed25519PrivateKey.generate(), TABLE, b"A" * 32)
    other.start()
    with pytest.raises(HandshakeError, match="own nonce"):
        other.receive(hello)


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"\xc1",
        b"\x91\x01",
        msgpack.packb([1, 2]),
        msgpack.packb({1: 2}),
        msgpack.packb({"v": 1}) + b"trailing",
        bytes(300),
    ],
)
def test_garbage_fails_cleanly(payload: bytes) -> None:
    side = Handshake(Ed25519PrivateKey.generate(), TABLE, b"A" * 32)
    side.start()
    with pytest.raises(HandshakeError):
        side.receive(payload)


def test_auth_where_hello_expected_and_messages_after_done() -> None:
    pair = Pair()
    pair.a.start()
    with pytest.raises(HandshakeError, match="HELLO has fields"):
        pair.a.receive(msgpack.packb({"sig": bytes(64)}))
    pair = Pair()
    run_clean(pair)
    with pytest.raises(HandshakeError, match="unexpected"):
        pair.a.receive(msgpack.packb({"sig": bytes(64)}))


def test_misuse_is_a_programming_error() -> None:
    side = Handshake(Ed25519PrivateKey.generate(), TABLE, b"A" * 32)
    with pytest.raises(RuntimeError):
        side.receive(b"")
    side.start()
    with pytest.raises(RuntimeError):
        side.start()
    with pytest.raises(ValueError):
        Handshake(Ed25519PrivateKey.generate(), TABLE[:15], b"A" * 32)
    with pytest.raises(ValueError):
        Handshake(Ed25519PrivateKey.generate(), TABLE, b"A" * 31)


# --- over real TCP on 127.0.0.1 ------------------------------------------------------


async def drive(
    handshake: Handshake, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> bytes:
    """The thin I/O shell a mesh would use: frame out, deframe in, until done."""
    decoder = FrameDecoder()
    writer.write(encode_frame(handshake.start()))
    while not handshake.done:
        data = await reader.read(4096)
        if not data:
            raise ConnectionError("peer closed during handshake")
        for payload in decoder.feed(data):
            reply = handshake.receive(payload)
            if reply is not None:
                writer.write(encode_frame(reply))
        await writer.drain()
    assert handshake.peer_key is not None
    return handshake.peer_key


def test_handshake_over_tcp_loopback() -> None:
    server_key, client_key = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()

    async def scenario() -> tuple[bytes, bytes]:
        accepted: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                accepted.set_result(
                    await drive(Handshake(server_key, TABLE, b"S" * 32), reader, writer)
                )
            except Exception as exc:  # noqa: BLE001 - hand any failure to the test
                accepted.set_exception(exc)
            finally:
                writer.close()

        server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                client_saw = await drive(Handshake(client_key, TABLE, b"C" * 32), reader, writer)
            finally:
                writer.close()
                await writer.wait_closed()
            server_saw = await asyncio.wait_for(accepted, 5)
        return client_saw, server_saw

    client_saw, server_saw = asyncio.run(scenario())
    assert client_saw == raw(server_key)
    assert server_saw == raw(client_key)


@pytest.mark.timeout(120)  # 300 handshakes: the module's 10 s is for one, on a busy machine
@settings(max_examples=300, deadline=None)
@given(junk(["v", "key", "nonce", "table", "dh", "sig"]), junk(["sig"]))
def test_anything_a_peer_sends_is_a_handshake_error_or_taken(first: bytes, second: bytes) -> None:
    """Whatever arrives in place of HELLO and AUTH, only HandshakeError comes out."""
    h = Handshake(Ed25519PrivateKey.generate(), TABLE, bytes(32), b"")
    h.start()
    try:
        h.receive(first)
        h.receive(second)
    except HandshakeError:
        pass
