"""The record format's test vector in docs/RECORD.md, checked byte for byte."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Hello, seal_message
from p2p_nerts.records.record import GameRecord, RecordError, decode, encode
from p2p_nerts.records.verify import verify

DOC = Path(__file__).parents[2] / "docs" / "RECORD.md"


def _vector() -> bytes:
    block = re.search(r"```text\nrecord\s+(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert block is not None
    return bytes.fromhex("".join(block.group(1).split()))


def test_the_documented_record_is_what_we_write_and_read() -> None:
    ana = Identity.from_seed(bytes(range(32)), "Ana")
    hello = seal_message(ana, Hello("Ana", 1), table_id=bytes(range(16)), round=0, seq=1,
                         lamport=1)
    record = GameRecord(bytes(range(16)), ana.public_key, "Ana's table", 1_700_000_000.0,
                        (hello.raw,))
    assert encode(record) == _vector()
    assert decode(_vector()) == record
    with pytest.raises(RecordError, match="the record stops before the first round"):
        verify(record)
