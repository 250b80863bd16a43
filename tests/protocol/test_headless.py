"""The headless summary: every field from the agreed log, whenever the events are heard."""

from __future__ import annotations

import io
import json
from dataclasses import replace

from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase, Replica, StartRound
from p2p_nerts.records.summary import SummaryWriter
from p2p_nerts.testing.memnet import TABLE_ID, bot_table

from ..replica_harness import ask_for_seat, crash_and_restore, play_round


def test_a_rounds_line_names_its_own_players_when_heard_after_the_next_deal() -> None:
    """One replica call can close a round and begin the next (the host's ROSTER
    waited for the close): the line must still be about the round that ended."""
    net = bot_table(3, seed=31)
    host, guest = net.replicas[0], net.replicas[1]
    number = play_round(net)
    late = [e for e in net.events[1]
            if isinstance(e, ev.RoundOver | ev.PlayFinal | ev.RoundAgreed)]
    names = guest.rs.names if guest.rs else ()
    # A fourth player sits down and the host deals round 2 before anyone listens.
    newcomer = Replica(Identity.from_seed(b"\x77" * 32, "newcomer"), TABLE_ID,
                       host.me.public_key)
    net.output(0, ask_for_seat(newcomer, host, net.now))
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: guest.rs is not None and guest.rs.number == number + 1,
                   limit=net.now + 60)
    assert guest.phase is Phase.SHUFFLE and guest.rs is not None and len(guest.rs.names) == 4
    out = io.StringIO()
    writer = SummaryWriter(guest, out)
    for event in late:
        writer.on_event(event)
    writer.finish({})
    line = json.loads(out.getvalue().splitlines()[0])
    assert line["round"] == number
    assert [p["name"] for p in line["players"]] == list(names)
    assert line["local"]["cards_ok"] is True
    mine = next(p for p in line["players"] if p["name"] == guest.me.name)
    assert line["local"]["nerts_left"] == mine["nerts_left"]  # its own tableau's, as played
    assert line["bounces"] == sum(1 for e in late if isinstance(e, ev.PlayFinal)
                                  and e.fate.name == "BOUNCE")


def test_a_round_scored_again_is_written_once_with_the_last_result() -> None:
    """A seat that scored before its drop was agreed scores again: one line, the last word."""
    net = bot_table(2, seed=32)
    guest = net.replicas[1]
    play_round(net)
    over = next(e for e in net.events[1] if isinstance(e, ev.RoundOver))
    first = replace(over, results=tuple(replace(r, score=r.score + 5) for r in over.results))
    out = io.StringIO()
    writer = SummaryWriter(guest, out)
    writer.on_event(first)
    writer.on_event(over)
    writer.finish({})
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line.get("round") for line in lines] == [over.round, None]
    assert [p["score"] for p in lines[0]["players"]] == [r.score for r in over.results]
    assert lines[1]["rounds"] == 1


def test_a_seat_back_from_a_crash_between_scoring_and_close_still_writes_the_round() -> None:
    """Its RoundOver came before the crash and a restore tells nothing again: the
    line is taken up from the round as it stands, and written as it closes."""
    net = bot_table(3, seed=33)
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    guest = net.replicas[1]
    assert net.run(lambda: guest.phase is Phase.SCORING and guest.rs is not None
                   and bool(guest.rs.results), limit=600)
    back = crash_and_restore(net, 1, 0.0)
    assert back.phase is Phase.SCORING and back.rs is not None and back.rs.results
    out = io.StringIO()
    writer = SummaryWriter(back, out)
    writer.resumed()
    heard = len(net.events[1])
    assert net.run(lambda: back.phase in (Phase.BETWEEN, Phase.OVER), limit=net.now + 60)
    for event in net.events[1][heard:]:
        writer.on_event(event)
    writer.finish({})
    line = json.loads(out.getvalue().splitlines()[0])
    over = next(e for e in net.events[0] if isinstance(e, ev.RoundOver))
    assert line["round"] == over.round and line["agreed"] is True
    assert [p["score"] for p in line["players"]] == [r.score for r in over.results]
    assert line["foundation_hash"] == over.foundation_hash.hex()
