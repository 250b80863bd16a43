"""The test vectors in docs/PROTOCOL.md, checked byte for byte.

The document is the specification other implementations will follow, so the
hex it shows is read from the document itself, not copied into this file.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from p2p_nerts.net.linkmac import FrameMac
from p2p_nerts.protocol.envelope import (
    DOMAIN,
    GENESIS,
    LINK_MAGIC,
    MAGIC,
    EnvelopeError,
    open_entry,
    open_link_entry,
)
from p2p_nerts.protocol.identity import Identity, fingerprint_of, verify
from p2p_nerts.protocol.messages import (
    Ack,
    AckMark,
    Commit,
    Fork,
    Hello,
    MsgType,
    Payload,
    Play,
    Result,
    Settings,
    link_message,
    parse_payload,
    seal_message,
)
from p2p_nerts.protocol.proof import check_fork

DOC = Path(__file__).parents[2] / "docs" / "PROTOCOL.md"


def _blocks() -> list[dict[str, str]]:
    """Every ```text block of `label value` lines; indented lines continue a value."""
    blocks = []
    for text in re.findall(r"```text\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S):
        fields: dict[str, str] = {}
        last = ""
        for line in text.splitlines():
            if line.startswith(" ") and last:
                fields[last] += line.strip()
            elif line.strip():
                last, _, value = line.partition(" ")
                fields[last] = value.strip()
        blocks.append(fields)
    return blocks


BLOCKS = _blocks()
KEY = next(b for b in BLOCKS if "seed" in b)
VECTORS = {b["vector"]: b for b in BLOCKS if "vector" in b}
ANA = Identity.from_seed(bytes.fromhex(KEY["seed"]), "Ana")



def _frame(name: str) -> bytes:
    return bytes.fromhex(VECTORS[name]["frame"])


def _signature(name: str) -> bytes:
    return bytes.fromhex(VECTORS[name]["signature"])


PAYLOADS: dict[str, Payload] = {
    "hello": Hello(name="Ana", version=1),
    "settings": Settings(),
    "commit": Commit(deck=bytes(range(32, 64)), share=bytes(range(64, 96))),
    "play": Play(card=0x11, pile=0x11, src=0, decl=0, mv=3),
    "play_twin": Play(card=0x21, pile=0x21, src=0, decl=0, mv=3),
    "ack": Ack(upto=(AckMark(ANA.public_key, 7, _signature("play")),)),
    "fork": Fork(first=_frame("play"), second=_frame("play_twin")),
    "result": Result(totals=(21, -4, 13), digest=bytes(range(32))),
}


def test_key_block() -> None:
    assert KEY["seed"] == bytes(range(32)).hex()
    assert KEY["public"] == ANA.public_key.hex()
    assert KEY["fingerprint"] == fingerprint_of(ANA.public_key)
    assert len(bytes.fromhex(KEY["table_id"])) == 16


def test_domain_hex_in_doc() -> None:
    assert DOMAIN.hex() in DOC.read_text(encoding="utf-8")


def test_every_vector_is_covered() -> None:
    assert sorted(VECTORS) == sorted(PAYLOADS)


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_vector(name: str) -> None:
    v = VECTORS[name]
    payload = PAYLOADS[name]
    body, sig, frame = (bytes.fromhex(v[k]) for k in ("body", "signature", "frame"))
    assert int(v["type"].split()[0]) == payload.TYPE
    assert v["type"].split()[1] == f"({MsgType(payload.TYPE).name})"

    sealed = seal_message(
        ANA,
        payload,
        table_id=bytes.fromhex(KEY["table_id"]),
        round=int(v["round"]),
        seq=int(v["seq"]),
        lamport=int(v["lamport"]),
        prev=bytes.fromhex(v["prev"]),
    )
    assert sealed.body.hex() == v["body"]
    assert sealed.signature.hex() == v["signature"]
    assert sealed.raw.hex() == v["frame"]
    assert sealed.id.hex() == v["id"]

    assert frame == MAGIC + ANA.public_key + sig + body
    assert verify(ANA.public_key, sig, DOMAIN + body)
    assert hashlib.sha256(body).hexdigest() == v["id"]
    entry = open_entry(frame)
    assert entry == sealed
    assert (entry.round, entry.seq, entry.lamport) == (
        int(v["round"]),
        int(v["seq"]),
        int(v["lamport"]),
    )
    assert parse_payload(entry.type, entry.payload) == payload


def test_link_ack_vector() -> None:
    """The ACK vector's body as an unsigned link entry, and its tag on the wire."""
    link = next(b for b in BLOCKS if b.get("link") == "ack")
    ack = VECTORS["ack"]
    frame = bytes.fromhex(link["frame"])
    assert frame == LINK_MAGIC + bytes.fromhex(ack["body"])
    built = link_message(ANA.public_key, PAYLOADS["ack"],
                         table_id=bytes.fromhex(KEY["table_id"]), round=int(ack["round"]),
                         seq=int(ack["seq"]), lamport=int(ack["lamport"]),
                         prev=bytes.fromhex(ack["prev"]))
    assert built == frame
    entry = open_link_entry(frame, ANA.public_key)
    assert entry.author == ANA.public_key and entry.body == bytes.fromhex(ack["body"])
    assert parse_payload(entry.type, entry.payload) == PAYLOADS["ack"]
    assert link["counter"] == "0"
    sender = FrameMac(bytes.fromhex(link["link_key"]), bytes(32))
    assert sender.tag(frame) == frame + bytes.fromhex(link["tag"])


def test_chain_vectors_link_up() -> None:
    """COMMIT names SETTINGS (Ana's entries 1 and 2); the ACK names the PLAY as Ana's
    head; the FORK's two PLAYs are one author's, one number, one predecessor."""
    assert VECTORS["settings"]["prev"] == GENESIS.hex()
    assert VECTORS["commit"]["prev"] == VECTORS["settings"]["signature"]
    assert VECTORS["ack"]["prev"] == VECTORS["play"]["signature"]
    proof = check_fork(_frame("play"), _frame("play_twin"), bytes.fromhex(KEY["table_id"]))
    assert (proof.author, proof.seq, proof.cut) == (ANA.public_key, 7, 6)
    with pytest.raises(EnvelopeError, match="bad_proof"):
        check_fork(_frame("play"), _frame("play"), bytes.fromhex(KEY["table_id"]))
    with pytest.raises(EnvelopeError, match="bad_proof"):
        check_fork(_frame("play"), _frame("commit"), bytes.fromhex(KEY["table_id"]))
