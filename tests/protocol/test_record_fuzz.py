"""A fuzzer for game records: ``nerts verify`` and the standings' reading of a record
(``Tally.add``, what ``nerts event`` does with each record it hears) on records
mutated as a forger or a broken disk would: signed again under fresh keys,
truncated, reordered, spliced from two games, with bytes changed, oversized.

Every mutant gets a clear one-line refusal or a correct verdict, never a
traceback: a reordered record is the same game (a reader must not rely on the
order), a re-signed one the same game under other keys."""

from __future__ import annotations

import contextlib
import functools
import io
import random
import tempfile
from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2p_nerts import cli
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.envelope import MAX_ENTRY
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.records.record import MAX_RECORD, GameRecord, RecordError, decode, encode
from p2p_nerts.records.standings import Tally
from p2p_nerts.records.verify import Replayed, verify
from p2p_nerts.testing.memnet import bot_table

from ..replica_harness import game_record, resigned
from .test_records import _record, _with

pytestmark = [pytest.mark.sweep, pytest.mark.timeout(900)]


@functools.cache
def _other() -> GameRecord:
    """Another game, of two players under the same keys at the same table id."""
    net = bot_table(2, seed=11, variants=Variants(target=10))
    net.replicas[0].seating.auto_next = 0.2
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    assert net.run(lambda: all(r.phase is Phase.OVER and r.rs is not None
                               and len(r.rs.signed_results) == 2
                               for r in net.replicas), limit=3600)
    return game_record(net, 1, "Other table", 1_700_000_100.0)


@functools.cache
def _lines(data: bytes) -> list[dict[str, object]] | str:
    """What ``verify`` makes of a record's bytes: its summary lines, or its refusal."""
    try:
        return verify(decode(data)).lines
    except RecordError as exc:
        return str(exc)


def _as_far_as_it_goes(data: bytes) -> Replayed | str:
    """What ``nerts verify`` makes of them: a game left early (a cut record) is
    verified as far as it goes; else the same refusal."""
    try:
        return verify(decode(data), unfinished=True)
    except RecordError as exc:
        return str(exc)


def _mutant(how: str, rng: random.Random) -> tuple[bytes, bytes | None]:
    """A mutated record's bytes, and the record whose verdict it must have (None: any
    verdict, or a refusal)."""
    real = _record()
    entries = list(real.entries)
    if how == "resigned":
        return encode(resigned(real, rng.randrange(1, 200))), None
    if how == "reordered":
        rng.shuffle(entries)
        return encode(_with(real, entries)), encode(real)
    if how == "truncated entries":
        return encode(_with(real, entries[:rng.randrange(len(entries))])), None
    if how == "truncated bytes":
        data = encode(real)
        return data[:rng.randrange(len(data))], None
    if how == "dropped":
        del entries[rng.randrange(len(entries))]
        return encode(_with(real, entries)), None
    if how == "duplicated":
        entries.insert(rng.randrange(len(entries)), rng.choice(entries))
        return encode(_with(real, entries)), encode(real)  # a replay changes nothing
    if how == "spliced":
        other = list(rng.choice([_other(), resigned(real, 7)]).entries)
        cut = rng.randrange(len(entries))
        mixed = entries[:cut] + rng.sample(other, rng.randrange(len(other)))
        rng.shuffle(mixed)
        return encode(_with(rng.choice([real, _other()]), mixed)), None
    if how == "flipped":
        flipped = bytearray(encode(real))
        for _ in range(rng.randrange(1, 4)):
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        return bytes(flipped), None
    if how == "oversized entry":
        entries[rng.randrange(len(entries))] += bytes(MAX_ENTRY)
        return encode(_with(real, entries)), None
    if how == "oversized record":
        pad = MAX_RECORD - len(encode(real)) + rng.randrange(1, 64)
        return encode(real) + bytes(pad), None
    if how == "many entries":
        return msgpack.packb(["p2p-nerts record", 1, {"table_id": real.table_id,
                                                       "host": real.host, "table": "t",
                                                       "saved_at": 0.0},
                              [b"NZ"] * 200_000]), None
    raise AssertionError(how)


HOW = ["resigned", "reordered", "truncated entries", "truncated bytes", "dropped",
       "duplicated", "spliced", "flipped", "oversized entry", "oversized record",
       "many entries"]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(how=st.sampled_from(HOW), seed=st.integers(0, 2**32 - 1))
def test_every_mutant_is_refused_in_a_line_or_judged_correctly(how: str, seed: int) -> None:
    data, same_as = _mutant(how, random.Random(seed))
    verdict = _lines(data)  # RecordError, or lines: anything else fails the test
    if same_as is not None:
        assert verdict == _lines(same_as), how
    if how == "resigned":  # the same game, every total the same, under other keys
        assert verdict == _lines(encode(_record()))
    if how in ("oversized record", "many entries"):
        assert isinstance(verdict, str) and verdict.startswith("not a game record")

    # nerts verify: exit 0 with the summary, or 1 with one line; never a traceback.
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "mutant.nerts"
        file.write_bytes(data)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(["verify", str(file)])
    assert "Traceback" not in out.getvalue() + err.getvalue()
    [line] = err.getvalue().splitlines()
    partly = _as_far_as_it_goes(data)
    if isinstance(partly, str):
        assert code == 1 and line == f"nerts: {file}: {partly}"
    elif isinstance(verdict, str):  # cut short of its end: honest as far as it goes
        assert not partly.game_over
        assert code == 0 and line.startswith(
            f"{file}: unfinished: verified to round {partly.verified_to}: ")
    else:
        assert code == 0 and line.startswith(f"{file}: verified: ")

    # The standings' reading: a refusal with its reason, or the game counted.
    counting = Tally(0.0)
    counting.add("10.0.0.66:4100", data)
    standings = counting.standings()
    if isinstance(verdict, str):
        assert standings.refused == [("10.0.0.66:4100", verdict)] and not standings.games
    else:
        assert standings.refused == [] and len(standings.games) == 1
