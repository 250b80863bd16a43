"""Replays: a round rebuilt move by move from its record ends exactly as it was scored."""

from __future__ import annotations

import re
from functools import partial

import pytest

from p2p_nerts.game.cards import full_deck
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.replica import Phase, Replica, StartRound
from p2p_nerts.records.history import round_to_replay
from p2p_nerts.records.record import RecordError
from p2p_nerts.records.replay import RoundReplay, round_replay
from p2p_nerts.records.verify import Replayed, replay
from p2p_nerts.testing.memnet import Faults, bot_table

from ..replica_harness import game_record, play_round
from .test_jokers import Declarer
from .test_records import _record


def _check(done: Replayed, number: int) -> RoundReplay:
    """The replay of round ``number`` reaches its foundations, scores and bounces exactly."""
    r = round_replay(done.rounds[number])
    over = [e for e in done.events if isinstance(e, ev.RoundOver) and e.round == number][-1]
    line = next(x for x in done.lines if x.get("round") == number)
    assert r.foundation_hash == over.foundation_hash
    assert r.scores == over.results
    assert (r.bounces, r.collisions) == (line["bounces"], line["collisions"])
    first, last = r.frames[0], r.frames[-1]
    assert first.foundations == () and all(v is not None and v.nerts == 13
                                           for v in first.tableaux)
    assert [f.step for f in r.frames] == list(range(len(r.frames)))
    # The last frame's foundations are the round's: exactly the cards that stayed.
    rs = done.rounds[number]
    assert sorted(c for pile in last.foundations for c in pile) == sorted(rs.log.staying_cards())
    for seat, view in enumerate(last.tableaux):
        assert view is not None
        assert view.nerts == over.results[seat].nerts_left
        held = view.nerts + sum(map(len, view.work)) + view.stock + (view.waste is not None)
        assert held <= len(full_deck(seat))
    return r


def test_every_round_of_a_game_replays_to_its_result() -> None:
    done = replay(_record())
    assert len(done.rounds) >= 2
    for number in done.rounds:
        _check(done, number)


def _round_over(replicas: list[Replica]) -> bool:
    return all(r.phase in (Phase.BETWEEN, Phase.OVER) for r in replicas)


def _colliding_round() -> RoundReplay:
    """The replay of the first of a few seeded rounds on slow links in which plays
    collided (whether one seed does depends on every rule of the game's timing)."""
    for seed in range(1, 9):
        net = bot_table(4, seed=seed, faults=Faults(max_delay=0.3))
        net.output(0, net.replicas[0].handle(StartRound(), net.now))
        assert net.run(partial(_round_over, net.replicas), limit=3600)
        r = _check(replay(game_record(net, 3, "t", 0.0)), 1)
        if r.collisions:
            return r
    raise AssertionError("no collision in eight rounds on slow links")


def test_collisions_and_bounces_are_shown_where_they_happened() -> None:
    r = _colliding_round()
    bounced = [f for f in r.frames if f.bounce]
    assert len(bounced) >= r.bounces
    assert any(" bounces: " in f.text and " was first" in f.text for f in bounced)
    # A bounced card goes back: the frame after its settle shows it home again.
    assert any(f.text.endswith("comes back") for f in r.frames)


def test_a_round_that_is_not_there_is_one_line() -> None:
    with pytest.raises(RecordError, match="there is no round 99: this game has rounds 1 to"):
        round_to_replay(_record(), 99)
    assert round_to_replay(_record(), None).round == max(replay(_record()).rounds)


def test_a_game_of_declared_jokers_verifies_and_replays_naming_what_each_joker_was() -> None:
    """A seat that declares its jokers (a covered one's suit in its move log, the
    card each goes up as in its plays): its record verifies, every round replays
    to its result, and the replay says which card each joker went up as."""
    net = bot_table(4, seed=6, variants=Variants(jokers=True), classes={1: Declarer})
    for _ in range(3):
        play_round(net)
    declarer = net.replicas[1]
    assert isinstance(declarer, Declarer) and declarer.covered
    done = replay(game_record(net, 0, "t", 0.0))
    overs = [e for e in done.events if isinstance(e, ev.RoundOver)]
    assert len(overs) == 3 and all(v == "" for o in overs for v in o.verdicts)
    texts = [f.text for number in done.rounds for f in _check(done, number).frames]
    assert any(re.search(r": ¤[12] as (10|[2-9AJQK])[♠♥♦♣] from the ", t) for t in texts)
