"""Game records: kept by every player alike, verified by a fresh replica, tamper-evident."""

from __future__ import annotations

import functools
import io
import json
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import msgpack
import pytest

from p2p_nerts import cli
from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.authors import MAX_HELD
from p2p_nerts.protocol.botdriver import BotDriver
from p2p_nerts.protocol.envelope import DOMAIN, HEADER_LEN, MAGIC, Entry, open_entry, seal
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import MsgType
from p2p_nerts.protocol.replica import Phase, Replica, StartRound
from p2p_nerts.records.history import Game, keep, statistics, summarize
from p2p_nerts.records.record import GameRecord, RecordError, decode, encode
from p2p_nerts.records.summary import SummaryWriter
from p2p_nerts.records.verify import replay, verify
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.testing.memnet import TABLE_ID, MemNet, bot_table, identities
from p2p_nerts.testing.peers import shared_lines

from ..replica_harness import game_record, play_round

PLAYERS = 3


@functools.cache
def _game() -> MemNet:
    """One whole game of three bots, played to its end (shared: tests only read it)."""
    net = bot_table(PLAYERS, seed=5, variants=Variants(target=20))
    host = net.replicas[0]
    host.seating.auto_next = 0.2
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: all(r.phase is Phase.OVER and r.rs is not None
                               and len(r.rs.signed_results) == PLAYERS
                               for r in net.replicas), limit=3600)
    return net


def _record(k: int = 1) -> GameRecord:
    return game_record(_game(), k, "Test table", 1_700_000_000.0)


def _summary_lines(k: int) -> list[dict[str, object]]:
    """What player ``k``'s ``--summary`` said, from the events it heard."""
    net = _game()
    out = io.StringIO()
    writer = SummaryWriter(net.replicas[k], out)
    for event in net.events[k]:
        writer.on_event(event)
    writer.finish({})
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _with(record: GameRecord, entries: list[bytes]) -> GameRecord:
    return GameRecord(record.table_id, record.host, record.table, record.saved_at,
                      tuple(entries))


def _resigned(entries: list[bytes], i: int,
              change: Callable[[dict[str, object]], None]) -> list[bytes]:
    """The record's entries with entry ``i``'s payload changed and signed again by
    its own author, and that author's later entries chained on to it: a player who
    lies in what it signs and covers its tracks with its own key."""
    entry = open_entry(entries[i])
    author = next(k for k in identities(PLAYERS) if k.public_key == entry.author)
    payload = dict(entry.payload)
    change(payload)
    # An entry names its predecessor by its signature (envelope.py).
    renamed = {entry.signature: _sealed(author, entry, payload, entry.prev)}
    out = list(entries)
    out[i] = renamed[entry.signature].raw
    for j in range(i + 1, len(out)):
        later = open_entry(out[j])
        if later.author == entry.author and later.prev in renamed:
            renamed[later.signature] = _sealed(author, later, dict(later.payload),
                                               renamed[later.prev].signature)
            out[j] = renamed[later.signature].raw
    return out


def _sealed(author: Identity, entry: Entry, payload: dict[str, object], prev: bytes) -> Entry:
    return seal(author, table_id=entry.table_id, round=entry.round, seq=entry.seq,
                lamport=entry.lamport, type=entry.type, payload=payload, prev=prev)


def _first(record: GameRecord, kind: MsgType, author: int = 1) -> int:
    key = identities(PLAYERS)[author].public_key
    return next(i for i, raw in enumerate(record.entries)
                if (e := open_entry(raw)).type == kind and e.author == key)


def test_every_player_keeps_the_same_record_and_it_prints_their_summary() -> None:
    records = [encode(_record(k)) for k in range(PLAYERS)]
    assert records[0] == records[1] == records[2]
    done = verify(decode(records[0]))
    assert done.game_over
    for k in range(PLAYERS):
        assert shared_lines(done.lines) == shared_lines(_summary_lines(k))
    assert done.lines[-1]["winner"] == _summary_lines(0)[-1]["winner"] is not None


def test_every_player_history_has_the_same_scores(tmp_path: Path) -> None:
    net = _game()
    games = []
    for k, replica in enumerate(net.replicas):
        with Store(tmp_path / str(k) / DB_FILE) as store:
            number = keep(store, replica, "Test table", 1_700_000_000.0, journal=net.written(k))
            assert keep(store, replica, "Test table", 1_700_000_001.0,
                        journal=net.written(k)) == number  # replaced
            [(kept, game)] = store.games()
            assert kept == number
            games.append(game)
    assert all(g["me"] == r.me.fingerprint for g, r in zip(games, net.replicas, strict=True))
    shared = [{k: v for k, v in g.items() if k != "me"} for g in games]
    assert shared[0] == shared[1] == shared[2]
    overs = {e.round: e for e in net.events[0] if isinstance(e, ev.RoundOver)}
    game = games[0]
    assert [r["round"] for r in game["rounds"]] == sorted(overs)
    for r in game["rounds"]:
        over = overs[r["round"]]
        assert sorted(r["scores"].values()) == sorted(x.score for x in over.results)
    totals = {p["name"]: p["total"] for p in game["players"]}
    assert totals == dict(zip(over.names, over.totals, strict=True))
    assert game["flags"] == [] and game["winner"] == max(totals, key=lambda n: totals[n])


def test_statistics_per_player_and_per_opponent() -> None:
    net = _game()
    record = _record(0)
    with_me = [keep_summary(record, r) for r in net.replicas]
    me = net.replicas[0].me.fingerprint
    stats = statistics(with_me[:1], me)
    overs = [e for e in net.events[0] if isinstance(e, ev.RoundOver)]
    mine = [e.results[0].score for e in overs]
    assert stats["games"] == 1 and stats["rounds"] == len(overs)
    assert stats["best_round"] == max(mine)
    assert stats["average_per_round"] == round(sum(mine) / len(mine), 2)
    assert stats["nerts_calls"] == sum(e.results[0].called for e in overs)
    assert stats["wins"] == (with_me[0]["winner"] == "p0")
    assert [o["name"] for o in stats["opponents"]] == ["p1", "p2"]
    assert all(o["games"] == 1 for o in stats["opponents"])


def keep_summary(record: GameRecord, replica: Replica) -> Game:
    game = summarize(record, replay(record), replica.me.public_key)
    assert game is not None
    return game


def test_a_game_a_newcomer_joined_between_rounds_verifies_from_every_seat() -> None:
    """The newcomer's entries come before the ROSTER that seats it in a replay: they
    are a player's, held until it is seated, never refused as a stranger's."""
    net = bot_table(2, seed=31, variants=Variants(target=10_000))
    host = net.replicas[0]
    play_round(net)
    late = Replica(Identity.from_seed(b"\x31" * 32, "Cy"), TABLE_ID, host.me.public_key,
                   rng=random.Random(31).randbytes, countdown=0.0, drop_after=5.0)
    net.join(late, BotDriver(late, Bot(SKILLS["hard"], random.Random(31))))
    assert net.run(lambda: late.me.public_key in host.view().seated, limit=net.now + 10)
    play_round(net)
    play_round(net)
    replays = [replay(game_record(net, k, "Test table", 1_700_000_000.0)) for k in range(3)]
    assert [done.problems for done in replays] == [[], [], []]
    assert [len(done.rounds) for done in replays] == [3, 3, 3]  # the newcomer caught up on round 1
    assert late.me.public_key in replays[0].round_keys[3]
    assert replays[0].replica.totals == replays[2].replica.totals == host.totals


def test_a_game_longer_than_a_table_holds_early_verifies() -> None:
    """A replay reads the whole record before any round closes, so every later
    round's entries wait held: more of one player's than a table holds early
    (``MAX_HELD``) must not be dropped, or the replay stops short of the end."""
    net = bot_table(2, seed=7, variants=Variants(target=500))
    host = net.replicas[0]
    host.seating.auto_next = 0.2
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: all(r.phase is Phase.OVER and r.rs is not None
                               and len(r.rs.signed_results) == 2 for r in net.replicas),
                   limit=36_000)
    record = game_record(net, 1, "Test table", 1_700_000_000.0)
    later = Counter(e.author for e in map(open_entry, record.entries) if e.round > 1)
    assert max(later.values()) > MAX_HELD  # what the replay must hold at once
    done = verify(record)
    assert done.game_over and done.replica.totals == host.totals


def test_a_forged_signature_is_found() -> None:
    record = _record()
    entries = list(record.entries)
    i = _first(record, MsgType.PLAY)
    raw = entries[i]
    entries[i] = raw[:HEADER_LEN - 1] + bytes([raw[HEADER_LEN - 1] ^ 1]) + raw[HEADER_LEN:]
    with pytest.raises(RecordError, match=f"entry {i + 1}: the signature does not match"):
        verify(_with(record, entries))


def test_a_tampered_file_is_refused_and_says_how(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A record read from a file is checked in full (each signature once, by the
    replica that reads it): whatever was done to an entry, ``nerts verify`` fails
    on that entry and says what is wrong with it, in one line."""
    record = _record()
    i = _first(record, MsgType.PLAY)
    raw = record.entries[i]
    entry = open_entry(raw)
    author = identities(PLAYERS)[1]
    not_msgpack = b"\xc1"
    elsewhere = seal(author, table_id=bytes(16), round=entry.round, seq=entry.seq,
                     lamport=entry.lamport, type=entry.type, payload=dict(entry.payload),
                     prev=entry.prev).raw
    cases = {
        raw[:HEADER_LEN - 1] + bytes([raw[HEADER_LEN - 1] ^ 1]) + raw[HEADER_LEN:]:
            f"entry {i + 1}: the signature does not match (forged or changed)",
        MAGIC + author.public_key + author.sign(DOMAIN + not_msgpack) + not_msgpack:
            f"entry {i + 1} is malformed (malformed_body)",
        elsewhere: f"entry {i + 1} belongs to another table",
    }
    file = tmp_path / "game.nerts"
    file.write_bytes(encode(record))
    assert cli.main(["verify", str(file)]) == 0
    capsys.readouterr()
    for changed, reason in cases.items():
        entries = list(record.entries)
        entries[i] = changed
        file.write_bytes(encode(_with(record, entries)))
        assert cli.main(["verify", str(file)]) == 1
        assert capsys.readouterr().err == f"nerts: {file}: {reason}\n"


def test_a_changed_card_is_found_signed_or_not() -> None:
    record = _record()
    i = _first(record, MsgType.AUDIT)
    entry = open_entry(record.entries[i])
    moves = entry.payload["m"]
    assert isinstance(moves, list)
    # Not signed again: the signature no longer matches.
    body = bytearray(entry.body)
    at = body.rfind(bytes([0x93]))  # some small move array near the end
    body[at + 1] ^= 1
    entries = list(record.entries)
    entries[i] = MAGIC + entry.author + entry.signature + bytes(body)
    with pytest.raises(RecordError, match="signature does not match"):
        verify(_with(record, entries))

    # Signed again by its own player: a card its deck never dealt shows in the audit.
    def other_card(payload: dict[str, object]) -> None:
        log = payload["m"]
        assert isinstance(log, list)
        found = next(k for k, m in enumerate(log) if len(m) >= 3)
        log[found] = [*log[found][:2], log[found][2] ^ 1, *log[found][3:]]

    entries = _resigned(list(record.entries), i, other_card)
    with pytest.raises(RecordError, match="p1 is flagged"):
        verify(_with(record, entries))


def test_a_dropped_entry_is_found() -> None:
    record = _record()
    entries = list(record.entries)
    i = _first(record, MsgType.PLAY, author=2)
    del entries[i]
    with pytest.raises(RecordError, match=r"entries of .* are missing"):
        verify(_with(record, entries))
    # Each seat's last entries missing (no gap to see): their word on the round is.
    last_round = max(open_entry(raw).round for raw in record.entries)

    def without(*kinds: MsgType) -> GameRecord:
        return _with(record, [raw for raw in record.entries
                              if (e := open_entry(raw)).round != last_round
                              or e.type not in kinds])

    with pytest.raises(RecordError, match=f"round {last_round}: no signed summary from "
                                          "p0, p1, p2"):
        verify(without(MsgType.SUMMARY, MsgType.RESULT))
    with pytest.raises(RecordError, match=f"the record stops in round {last_round}, before"):
        verify(without(MsgType.SUMMARY, MsgType.AUDIT, MsgType.RESULT))


def test_a_changed_score_is_found() -> None:
    record = _record()
    entries = list(record.entries)
    i = _first(record, MsgType.SUMMARY, author=2)
    entry = open_entry(entries[i])

    def more_for_me(payload: dict[str, object]) -> None:
        scores = payload["s"]
        assert isinstance(scores, list)
        scores[2] += 10

    entries = _resigned(entries, i, more_for_me)
    with pytest.raises(RecordError, match=f"round {entry.round}: the result signed by seat"):
        verify(_with(record, entries))


def test_a_damaged_file_is_one_line() -> None:
    data = encode(_record())
    for bad, reason in ((b"", "not msgpack"), (b"hello", "not a game record"),
                        (msgpack.packb(["p2p-nerts record", 9, {}, []]), "version 9"),
                        (data[:-10], "not msgpack")):
        with pytest.raises(RecordError, match=reason):
            decode(bad)


def test_history_export_and_verify_on_the_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    net = _game()
    data_dir = tmp_path / "p1"
    with Store(data_dir / DB_FILE) as store:
        number = keep(store, net.replicas[1], "Test table", 1_700_000_000.0,
                      journal=net.written(1))
    assert cli.main(["history", "--json", "--data-dir", str(data_dir)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["me"] == net.replicas[1].me.fingerprint
    [game] = listed["games"]
    assert game["number"] == number and game["table"] == "Test table"
    assert listed["statistics"]["games"] == 1
    assert cli.main(["history", "--data-dir", str(data_dir)]) == 0
    text = capsys.readouterr().out
    assert f"#{number} " in text and "Test table" in text and "You: 1 game, " in text

    file = tmp_path / "game.nerts"
    assert cli.main(["export", str(number), str(file), "--data-dir", str(data_dir)]) == 0
    capsys.readouterr()
    assert cli.main(["verify", str(file)]) == 0
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert shared_lines(lines) == shared_lines(_summary_lines(1))
    assert "verified" in err

    assert cli.main(["export", "99", str(file), "--data-dir", str(data_dir)]) == 1
    assert capsys.readouterr().err == "nerts: there is no game #99 (nerts history lists them)\n"
    file.write_bytes(b"garbage")
    assert cli.main(["verify", str(file)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a game record" in err


def test_every_seat_signs_the_result_and_a_changed_one_is_found() -> None:
    record = _record()
    entries = list(record.entries)
    i = _first(record, MsgType.RESULT, author=2)
    entry = open_entry(entries[i])
    assert entry.payload["t"] == list(_game().replicas[0].match.totals)  # type: ignore[union-attr]

    def a_win_for_me(payload: dict[str, object]) -> None:
        totals = payload["t"]
        assert isinstance(totals, list)
        totals[2] += 100

    entries = _resigned(entries, i, a_win_for_me)
    with pytest.raises(RecordError, match="p2 signed another result than the entries give"):
        verify(_with(record, entries))
    del entries[i]
    with pytest.raises(RecordError, match="p2 did not sign the game's result"):
        verify(_with(record, entries))


def test_a_game_given_up_after_a_round_is_kept_as_abandoned(tmp_path: Path) -> None:
    net = bot_table(2, seed=3, variants=Variants(target=1000))
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    assert net.run(lambda: all(r.phase is Phase.BETWEEN for r in net.replicas), limit=3600)
    with Store(tmp_path / DB_FILE) as store:
        number = keep(store, net.replicas[1], "Long table", 1_700_000_000.0)
        [(kept, game)] = store.games()
        record = store.game_record(kept)
    assert kept == number and game["flags"] == ["abandoned"]
    assert game["winner"] is None and game["winners"] == [] and len(game["rounds"]) == 1
    assert record is not None
    with pytest.raises(RecordError, match="the record stops in round 1, before the game"):
        verify(decode(record))
    assert statistics([game], net.replicas[1].me.fingerprint)["finished"] == 0


def test_verify_passes_an_honest_game_left_early_as_far_as_it_went(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``nerts verify`` on a game its players left after a round: exit 0, and it says
    how far it checked; the same record with one entry changed still fails."""
    net = bot_table(2, seed=3, variants=Variants(target=1000))
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    assert net.run(lambda: all(r.phase is Phase.BETWEEN for r in net.replicas), limit=3600)
    record = game_record(net, 1, "Long table", 1_700_000_000.0)
    file = tmp_path / "left.nerts"
    file.write_bytes(encode(record))
    assert cli.main(["verify", str(file)]) == 0
    out, err = capsys.readouterr()
    assert err == (f"{file}: unfinished: verified to round 1: "
                   f"{len(record.entries)} signed entries\n")
    assert json.loads(out.splitlines()[0])["round"] == 1
    entries = list(record.entries)
    i = next(k for k, raw in enumerate(entries) if open_entry(raw).type == MsgType.PLAY)
    raw = entries[i]
    entries[i] = raw[:HEADER_LEN - 1] + bytes([raw[HEADER_LEN - 1] ^ 1]) + raw[HEADER_LEN:]
    file.write_bytes(encode(_with(record, entries)))
    assert cli.main(["verify", str(file)]) == 1
    assert capsys.readouterr().err == (f"nerts: {file}: entry {i + 1}: the signature does "
                                       "not match (forged or changed)\n")


def test_a_hostile_sequence_number_is_reported_not_counted_out() -> None:
    """An author claiming the largest sequence number costs nothing to check."""
    record = _record()
    author = identities(PLAYERS)[1]
    held = sum(open_entry(raw).author == author.public_key for raw in record.entries)
    late = seal(author, table_id=record.table_id, round=1, seq=2**53 - 1, lamport=10_000,
                type=MsgType.LEAVE, payload={}).raw
    with pytest.raises(RecordError, match=f"^{2**53 - 2 - held} entries of {author.fingerprint} "
                                          rf"are missing \(number {held + 1} the first\)$"):
        verify(_with(record, [*record.entries, late]))


def test_verify_reads_no_more_than_a_record_can_be(capsys: pytest.CaptureFixture[str]) -> None:
    endless = Path("/dev/zero")
    if not endless.exists():
        pytest.skip("no /dev/zero here")
    assert cli.main(["verify", str(endless)]) == 1
    assert capsys.readouterr().err == ("nerts: /dev/zero: not a game record: "
                                       "the file is too large\n")


def test_replay_away_from_a_terminal_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store(tmp_path / DB_FILE) as store:
        number = keep(store, _game().replicas[0], "Test table", 1_700_000_000.0,
                      journal=_game().written(0))
    assert cli.main(["replay", str(number), "--data-dir", str(tmp_path)]) == 1  # captured
    assert capsys.readouterr().err == "nerts: nerts replay plays in a terminal: run it in one\n"
    assert cli.main(["replay", str(number), "--round", "9", "--data-dir", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("nerts: there is no round 9")
