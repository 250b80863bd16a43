"""The organiser's event server against bad input: each bad connection is closed, and
the event goes on serving honest players."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

import msgpack
import pytest

from p2p_nerts.peer.event_host import EventSettings, Organiser
from p2p_nerts.peer.event_seat import EventLink
from p2p_nerts.peer.event_wire import WireError, hello
from p2p_nerts.protocol.identity import Identity

from ..netkit import until

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("value", [
    {"v": 2, "reg": None, "from": [0, 0]},
    {"v": 1, "reg": "text", "from": [0, 0]},
    {"v": 1, "reg": None, "from": [0]},
    {"v": 1, "reg": None, "from": [-1, 0]},
    {"v": 1, "reg": None},
])
def test_a_malformed_hello_is_refused(value: dict[str, object]) -> None:
    with pytest.raises(WireError, match="a malformed hello"):
        hello(value)


def frame(value: object) -> bytes:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return struct.pack(">I", len(data)) + data


def test_bad_connections_are_closed_and_an_honest_player_still_registers(
        tmp_path: Path) -> None:
    async def closed(port: int, data: bytes) -> bool:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(data)
        await writer.drain()
        try:
            async with asyncio.timeout(15):
                while await reader.read(1 << 16):
                    pass  # an answer (a refusal) may come before the close
            return True
        finally:
            writer.close()

    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings("Wire cup"), resume=False)
        await organiser.start(None, bind="127.0.0.1")
        try:
            port = organiser.port
            assert await closed(port, struct.pack(">I", 1 << 30))  # a huge frame announced
            assert await closed(port, frame([1, 2, 3]))  # not a map
            assert await closed(port, b"\x00\x00\x00\x05junk!")  # not msgpack
            assert await closed(port, frame({"v": 1, "reg": b"forged", "from": [0, 0]}))
            assert await closed(port, b"")  # says nothing: closed after HELLO_TIME
            follower = await asyncio.open_connection("127.0.0.1", port)  # then talks nonsense
            follower[1].write(frame({"v": 1, "reg": None, "from": [0, 0]})
                              + frame({"what": "is this"}))
            assert not organiser.registered
            link = EventLink(Identity.generate("Ana"), ("127.0.0.1", port), register=True)
            following = asyncio.ensure_future(link.run())
            await until(lambda: link.registered, "Ana's registration")
            assert [r.name for r in organiser.registered] == ["Ana"]
            link.close()
            await following
            follower[1].close()
        finally:
            await organiser.close()

    asyncio.run(scenario())


def test_a_registration_replayed_by_someone_else_does_not_make_its_player_present(
        tmp_path: Path) -> None:
    """Registrations are public; being counted present (and so seated) takes the
    player's key, proven on the connection itself."""
    async def scenario() -> None:
        organiser = Organiser.open(Identity.generate("Olga"), tmp_path / "event.journal",
                                   EventSettings("Present cup"), resume=False)
        await organiser.start(None, bind="127.0.0.1")
        ana = Identity.generate("Ana")
        link = EventLink(ana, ("127.0.0.1", organiser.port), register=True)
        following = asyncio.ensure_future(link.run())
        try:
            await until(lambda: ana.public_key in organiser.connected, "Ana present")
            _opening, registration = organiser.book.entries
            link.close()
            await following
            await until(lambda: not organiser.connected, "Ana gone")
            reader, writer = await asyncio.open_connection("127.0.0.1", organiser.port)
            writer.write(frame({"v": 1, "reg": registration, "from": [0, 0]}))
            answer = await reader.readexactly(4)
            assert answer  # accepted as a follower: the registration is Ana's, and valid
            writer.write(frame({"here": b"\x00" * 64}))  # no signature of Ana's
            await writer.drain()
            async with asyncio.timeout(15):
                while await reader.read(1 << 16):
                    pass  # closed by the organiser
            assert ana.public_key not in organiser.connected
            writer.close()
        finally:
            link.close()
            await organiser.close()

    asyncio.run(scenario())
