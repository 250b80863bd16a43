"""Build tables of replicas on the in-memory network, and check rounds on them."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.cards import full_deck
from p2p_nerts.game.foundations import Fate
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.botdriver import BotDriver
from p2p_nerts.protocol.envelope import open_entry, seal
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Open, Outbound, Phase, Replica, StartRound
from p2p_nerts.records.record import GameRecord, record_of
from p2p_nerts.testing.memnet import TABLE_ID, Faults, MemNet, bot_table


def ask_for_seat(newcomer: Replica, host: Replica, now: float) -> Outbound:
    """A newcomer's opening, straight to the host: its HELLO, the host's answer (it
    holds nothing of this key), then its JOIN. Returns what the JOIN made the host do."""
    answer = host.receive(newcomer.handle(Open(), now).sends[0].data, now)
    ack = next(s.data for s in answer.sends if s.to == newcomer.me.public_key)
    out = Outbound()
    for join in newcomer.receive(ack, now, via=host.me.public_key).sends:
        out.extend(host.receive(join.data, now))
    return out


def game_record(net: MemNet, k: int, table: str, saved_at: float) -> GameRecord:
    """Replica ``k``'s record of the game: what it still holds and what it journaled
    (as a node makes it: a replica forgets finished rounds)."""
    return record_of(net.replicas[k], table, saved_at, net.written(k))


def resigned(record: GameRecord, salt: int) -> GameRecord:
    """A forger's copy of a game: every entry signed again, each author under a fresh
    key (seeded by ``salt``) of the same name, every key a payload names swapped too,
    each chain linked anew. It verifies as well as the real record: a signature
    proves who signed, not who sat."""
    fresh: dict[bytes, Identity] = {}
    for raw in record.entries:
        author = open_entry(raw).author
        if author not in fresh:
            name = f"forger {len(fresh)}"
            fresh[author] = Identity.from_seed(bytes([salt, len(fresh)]) * 16, name)
    keys = {old: new.public_key for old, new in fresh.items()}

    def swap(value: Any) -> Any:
        if isinstance(value, bytes):
            return keys.get(value, value)
        if isinstance(value, list | tuple):
            return type(value)(swap(v) for v in value)
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        return value

    signatures: dict[bytes, bytes] = {}
    entries = []
    for raw in record.entries:
        e = open_entry(raw)
        new = seal(fresh[e.author], table_id=e.table_id, round=e.round, seq=e.seq,
                   lamport=e.lamport, type=e.type, payload=swap(dict(e.payload)),
                   prev=signatures.get(e.prev, e.prev))
        signatures[e.signature] = new.signature
        entries.append(new.raw)
    return GameRecord(record.table_id, keys[record.host], record.table,
                      record.saved_at, tuple(entries))


def replica_with(**options: Any) -> Callable[..., Replica]:
    """A seat for ``bot_table(classes=...)`` started with other options than the rest
    (bot_table gives every replica ``countdown=0.0, drop_after=5.0``)."""
    return lambda *args, **given: Replica(*args, **(given | options))


def quiet_deal(n: int, seed: int) -> MemNet:
    """``n`` bots dealt a round, then stopped: nobody plays on, and what was in
    flight has landed (a second later), so a test's own frames come next."""
    net = bot_table(n, seed=seed)
    net.output(0, net.replicas[0].handle(StartRound(), net.now))
    assert net.run(lambda: all(r.view().can_move() for r in net.replicas), limit=60)
    net.drivers.clear()
    quiet = net.now + 1
    assert net.run(lambda: net.now >= quiet, limit=quiet + 1)
    return net


def deal_and_play(net: MemNet, plays: int) -> Replica:
    """The host deals a round and the bots play until ``plays`` cards are up (within
    600 simulated seconds); the host's replica."""
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= plays,
                   limit=net.now + 600)
    return host


def play_round(net: MemNet, *, limit: float = 1800.0) -> int:
    """Start the next round and run it to its agreed end; return the round number."""
    host = net.replicas[0]
    number = (host.rs.number if host.rs else 0) + 1
    net.output(0, host.handle(StartRound(), net.now))

    def done() -> bool:
        return all(r.rs is not None and r.rs.number == number
                   and r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas)

    assert net.run(done, limit=net.now + limit), "round did not end"
    return number


def round_overs(net: MemNet, number: int) -> list[ev.RoundOver]:
    found = []
    for events in net.events:
        mine = [e for e in events if isinstance(e, ev.RoundOver) and e.round == number]
        assert len(mine) == 1
        found.append(mine[0])
    return found


def check_round(net: MemNet, number: int, *, honest: set[int] | None = None) -> ev.RoundOver:
    """Every replica agrees on the round, and every card of every deck is somewhere."""
    overs = round_overs(net, number)
    first = overs[0]
    for other in overs[1:]:
        assert other.foundation_hash == first.foundation_hash
        assert other.results == first.results
        assert other.totals == first.totals
    for i, events in enumerate(net.events):
        assert not any(isinstance(e, ev.Divergence) for e in events), f"replica {i} diverged"
        cuts = [e for e in events if isinstance(e, ev.PlayFinal) and e.round == number
                and e.fate is Fate.CUT]
        assert all(e.ended == first.end for e in cuts), "a cut play says how the round ended"
    host = net.replicas[0]
    assert host.rs is not None
    log = host.rs.log
    for replica in net.replicas:
        rs = replica.rs
        assert rs is not None and rs.tab is not None
        assert not rs.tab.in_flight
        mine = rs.me
        assert mine is not None
        held = sorted([*rs.tab.cards(), *(c for c in log.staying_cards() if c >> 6 == mine)])
        assert held == sorted(full_deck(mine, jokers=rs.variants.jokers)), f"seat {mine}"
        assert log.cards_of(mine) == first.results[mine].foundation_cards
    if honest is not None:
        for i in honest:
            seat = net.replicas[i].view().my_seat
            assert first.verdicts[seat or 0] == "", first.verdicts
    return first


def random_table(rng: random.Random, seed: int, auto_next: Sequence[float]) -> MemNet:
    """3 to 5 bots on a lossy network, all drawn from ``rng``; the first round dealt.

    The host deals each next round by itself ``auto_next`` seconds (one of) after
    the last closes, so whole games run without anyone starting them.
    """
    n = rng.choice([3, 4, 5])
    faults = Faults(max_delay=rng.choice([0.01, 0.05, 0.2]), duplicate=rng.choice([0, 0.05]),
                    drop=rng.choice([0, 0.02]))
    net = bot_table(n, seed=seed, faults=faults)
    host = net.replicas[0]
    host.seating.auto_next = rng.choice(auto_next)
    net.output(0, host.handle(StartRound(), net.now))
    return net


class AskBack:
    """What NetSession does: a guest out of the round asks for its seat, once a round.

    Call it from a ``MemNet.run`` condition (it is always False).
    """

    def __init__(self, net: MemNet) -> None:
        self.net = net
        self.asked: dict[int, int] = {}

    def __call__(self) -> bool:
        net = self.net
        for k, r in enumerate(net.replicas[1:], start=1):
            rs = r.rs
            number = rs.number if rs is not None else 0
            if (k not in net.down and (rs is None or rs.me is None or rs.me not in rs.live)
                    and self.asked.get(k) != number):
                self.asked[k] = number
                net.output(k, r.handle(Open(), net.now))
        return False


def assert_one_agreed_game(net: MemNet) -> None:
    """Every replica has the same last word on every round, and the same totals.

    The last word: a seat that scored before a drop was agreed scores again.
    """
    overs: dict[int, set[tuple[object, ...]]] = {}
    for events in net.events:
        assert not any(isinstance(e, ev.Divergence | ev.Flagged) for e in events)
        last = {e.round: e for e in events if isinstance(e, ev.RoundOver)}
        for number, e in last.items():
            overs.setdefault(number, set()).add((e.foundation_hash, e.results, e.names))
    assert all(len(found) == 1 for found in overs.values()), overs
    assert len({tuple(sorted(r.totals.items())) for r in net.replicas}) == 1


def state_of(r: Replica) -> tuple[object, ...]:
    """What a replica restored from its journal must have exactly as it was."""
    rs = r.rs
    assert rs is not None
    tab = rs.tab
    mine = () if tab is None else (  # a seat out of the round watches without one
        tuple(tab.nerts), tuple(map(tuple, tab.work)), tuple(tab.stock), tuple(tab.waste),
        dict(tab.in_flight), dict(tab.bound), tuple(tab.log))
    # The clock too: an ACK sent before the crash told the others how far it
    # was, and nothing signed after the restart may be dated earlier.
    return (*mine, rs.log.state_hash(), r.view().seq, r.clock.time, r.phase, rs.number, rs.me,
            sorted(rs.live), r.seating.countdown, r.seating.drop_after, rs.my_vote, rs.my_vote_at)


def crash_and_restore(net: MemNet, k: int, outage: float) -> Replica:
    """Kill replica ``k`` (a crash: it stops dead), wait, then restart it from its journal."""
    dead = net.replicas[k]
    before = state_of(dead)
    net.down.add(k)
    del net.drivers[k]
    until = net.now + outage
    assert net.run(lambda: net.now >= until, limit=until + 1)
    host_key = net.replicas[0].me.public_key
    back = Replica.restore(dead.me, TABLE_ID, host_key, net.journals[k], net.now,
                           rng=random.Random(1).randbytes, countdown=0.0, drop_after=5.0,
                           auto_start=dead.seating.auto_start, auto_next=dead.seating.auto_next)
    assert state_of(back) == before, "the restarted replica has exactly its old tableau"
    net.replicas[k] = back
    net.drivers[k] = BotDriver(back, Bot(SKILLS["hard"], random.Random(k)))
    net.down.discard(k)
    return back


def vote_anywhere(monkeypatch: Any) -> None:
    """Let a seat vote stuck (and rotate alone) wherever it stands, for the tests of
    the vote's mechanics at a fresh deal, where nobody is stuck yet: the command
    takes the vote, and the audit finds no move in hand at any moment. (Without
    this the command refuses a vote with a move left, and the audit flags one.)"""
    import p2p_nerts.protocol.audit as audit_module
    import p2p_nerts.protocol.replica._commands as commands_module
    monkeypatch.setattr(commands_module, "is_stuck", lambda tab, fnd: True)
    monkeypatch.setattr(audit_module, "move_in_hand", lambda tab: False)
