"""Event standings over records from anyone: a game is its people, a forged copy of
it is a conflict whatever order it comes in, and the player's own record wins."""

from __future__ import annotations

import itertools
import json

from p2p_nerts.protocol.identity import fingerprint_of
from p2p_nerts.records.record import GameRecord, encode
from p2p_nerts.records.standings import (
    OWN,
    Standings,
    standings_csv,
    standings_json,
    standings_text,
    tally,
)
from p2p_nerts.testing.memnet import identities

from ..net.test_net_event import _second_game
from ..replica_harness import game_record, resigned
from .test_records import PLAYERS, _game

EVENING = 1_700_000_000.0
STRANGER = "10.0.0.66:4100"


def _real(k: int = 0, table: str = "Table A") -> GameRecord:
    return game_record(_game(), k, table, EVENING)


def _winner_fp() -> str:
    [fp] = next(iter(tally([("x", encode(_real()))], 0.0).games.values()))["winners"]
    return str(fp)


def test_a_forged_copy_is_a_conflict_in_any_order_and_never_hides_the_real_game() -> None:
    real = [("10.0.0.1:4100", encode(_real(0))), ("10.0.0.2:4100", encode(_real(1)))]
    forged = (STRANGER, encode(resigned(_real(2), salt=7)))
    winner = _winner_fp()
    seen: set[str] = set()
    for order in itertools.permutations([*real, forged]):
        s = tally(order, EVENING - 60)
        seen.add(json.dumps(standings_json(s)))
        assert s.games == {} and s.refused == []  # neither copy counts: they contradict
        assert len(s.conflicts) == 2 and not any(c.counted for c in s.conflicts)
        [mine] = [c for c in s.conflicts if winner in c.game["winners"]]
        assert mine.sources == ["10.0.0.1:4100", "10.0.0.2:4100"]
        [theirs] = [c for c in s.conflicts if c is not mine]
        assert theirs.sources == [STRANGER] and winner not in theirs.game["winners"]
        text = "\n".join(standings_text(s))
        assert text.count("CONFLICT") == 2 and winner in text  # both shown, by fingerprint
    assert len(seen) == 1  # the order things came in changes nothing


def test_the_players_own_record_wins_over_a_forged_copy() -> None:
    own = (OWN, encode(_real(1)))
    forged = (STRANGER, encode(resigned(_real(2), salt=7)))
    winner = _winner_fp()
    for order in ([own, forged], [forged, own]):
        s = tally(order, EVENING - 60)
        [game] = s.games.values()
        assert game["winners"] == [winner]
        assert {fingerprint_of(k.public_key) for k in identities(PLAYERS)} == {
            r["fingerprint"] for r in s.rows()}  # the forger's keys count for nothing
        by_source = {c.sources[0]: c.counted for c in s.conflicts}
        assert by_source == {OWN: True, STRANGER: False}  # the forgery is still shown
        lines = standings_text(s)
        assert any(line.startswith(f"  CONFLICT (from {STRANGER})") and "NOT COUNTED" in line
                   for line in lines)


def test_copies_of_one_game_count_once_and_its_own_copy_is_no_conflict() -> None:
    s = tally([("10.0.0.1:4100", encode(_real(0))), (OWN, encode(_real(1))),
               ("10.0.0.2:4100", encode(_real(2, "Another name")))], EVENING - 60)
    assert len(s.games) == 1 and s.conflicts == [] and s.refused == []
    assert [r["games"] for r in s.rows()] == [1] * PLAYERS


def test_a_table_id_claimed_by_another_host_is_a_conflict_even_for_other_rounds() -> None:
    """A stranger cannot add a game to a real table's id under keys of its own either:
    one table has one host."""
    real = _real(0)
    forged = resigned(real, salt=9)
    s = tally([("10.0.0.1:4100", encode(real)), (STRANGER, encode(forged))], 0.0)
    assert s.games == {} and len(s.conflicts) == 2


def test_players_who_share_a_name_are_told_apart_by_fingerprint() -> None:
    """Another table's game by other keys with the very names of the first: both count,
    and every line that names one of them says which key."""
    other = resigned(game_record(_second_game(), 0, "Table B", EVENING), salt=5)
    s = tally([("10.0.0.1:4100", encode(_real(0))), ("10.0.0.5:4100", encode(other))], 0.0)
    assert len(s.games) == 2 and s.conflicts == []
    rows = s.rows()
    assert len(rows) == 2 * PLAYERS + 1 and len({r["name"] for r in rows}) == PLAYERS + 1
    games = [line for line in standings_text(s) if line.startswith("  game ")]
    for game, line in zip(s.games.values(), games, strict=True):
        for p in game["players"]:
            shared = p["name"] != "p3"  # the second game's fourth player has a name of its own
            assert (f"{p['name']} ({p['fingerprint']}) {p['total']}" if shared
                    else f", {p['name']} {p['total']}") in line
    assert all(r["fingerprint"] in standings_csv(s) for r in rows)


def test_standings_show_no_unsigned_header() -> None:
    """The table's name in a record's header is its keeper's word, signed by nobody:
    standings name a table by its host, as the signed entries do."""
    s = tally([("10.0.0.1:4100", encode(_real(0, "Free beer at table 9")))], 0.0)
    shown = json.dumps(standings_json(s)) + "\n".join(standings_text(s))
    assert "Free beer" not in shown
    host = fingerprint_of(identities(PLAYERS)[0].public_key)
    at = host.replace("-", "")[:4]
    assert f"game hosted by p0@{at}: " in "\n".join(standings_text(s))
    assert [g["host"] for g in standings_json(s)["games"]] == [{"name": "p0",
                                                                "fingerprint": host}]


def test_empty_standings() -> None:
    assert standings_text(Standings()) == ["0 games verified"]
