"""A seat back at a table with a journal that is behind never signs a number twice.

It learns from the others where its own chain ends, fetches what it lacks,
says in one line that its journal was behind, sits the round out (a GOODBYE
signed after the table's head) and plays again from the next round. Nobody is
flagged, no proof is raised, and every replica agrees.
"""

from __future__ import annotations

import random

import pytest

from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.moves import foundation_target
from p2p_nerts.game.simulate import cards_accounted
from p2p_nerts.game.tableau import SOURCES, Target
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.botdriver import BotDriver
from p2p_nerts.protocol.envelope import open_entry
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.journal import Kind, Record, boot_record, snapshot_of, written_in
from p2p_nerts.protocol.messages import MsgType
from p2p_nerts.protocol.replica import Move, Open, Phase, Replica, StartRound
from p2p_nerts.protocol.resume import LEARN_TIMEOUT
from p2p_nerts.testing.memnet import TABLE_ID, MemNet, bot_table
from p2p_nerts.ui.others import health

from ..replica_harness import AskBack, ask_for_seat, crash_and_restore, play_round


def _own_entries(records: list[Record], key: bytes) -> list[int]:
    return [i for i, r in enumerate(records) if r.kind is Kind.ENTRY and r.data[2:34] == key]


def _come_back(net: MemNet, k: int, records: list[Record] | None,
               boot: bytes | None = None) -> Replica:
    """Replica ``k`` stops dead and starts again at once, from ``records`` (None: no
    journal at all, a fresh replica with the same key), on a machine in ``boot``."""
    dead = net.replicas[k]
    host_key = net.replicas[0].me.public_key
    rng = random.Random(k).randbytes
    if records is None:
        back = Replica(dead.me, TABLE_ID, host_key, rng=rng, countdown=0.0, drop_after=5.0)
        net.output(k, back.handle(Open(), net.now))
    else:
        back = Replica.restore(dead.me, TABLE_ID, host_key, records, net.now, rng=rng,
                               countdown=0.0, drop_after=5.0, boot=boot)
    net.replicas[k] = back
    net.journals[k] = list(records or [])
    net.drivers[k] = BotDriver(back, Bot(SKILLS["hard"], random.Random(k)))
    return back


def _no_harm(net: MemNet, k: int) -> None:
    for i, events in enumerate(net.events):
        assert not any(isinstance(e, ev.Flagged | ev.Divergence) for e in events), i
    for i, r in enumerate(net.replicas):
        assert not r.rejected.get("equivocation") and not r.rejected.get("broken_chain"), i
        assert not r.view().equivocators, i


def _run_to_next_round(net: MemNet, k: int) -> int:
    """Run until the seat back at the table has played a whole round again."""
    host, back = net.replicas[0], net.replicas[k]
    ask_back = AskBack(net)
    assert host.rs is not None
    start = host.rs.number

    def played_again() -> bool:
        ask_back()
        rs = host.rs
        return (rs is not None and rs.number > start and back.me.public_key in rs.keys
                and all(r.rs is not None and r.rs.number == rs.number
                        and r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas))

    assert net.run(played_again, limit=net.now + 1800)
    assert host.rs is not None
    return host.rs.number


def _agreed(net: MemNet, number: int) -> None:
    overs = [next(e for e in reversed(events) if isinstance(e, ev.RoundOver)
                  and e.round == number) for events in net.events]
    assert len({(o.foundation_hash, o.results, o.totals) for o in overs}) == 1
    assert all(v == "" for v in overs[0].verdicts)
    assert len({tuple(sorted(r.totals.items())) for r in net.replicas}) == 1


def _under_way(seed: int, *, signed: int) -> tuple[MemNet, int, bytes]:
    """A round of four under way (the host deals the next by itself), 12 cards up and
    seat 2 past ``signed`` entries of its own: the table, that seat and its key."""
    net = bot_table(4, seed=seed)
    host = net.replicas[0]
    host.seating.auto_next = 1.0
    net.output(0, host.handle(StartRound(), net.now))
    k = 2
    key = net.replicas[k].me.public_key
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 12
                   and len(_own_entries(net.journals[k], key)) > signed, limit=600)
    return net, k, key


@pytest.mark.parametrize(("seed", "lost"), [(51, 1), (52, 3), (53, 6)])
def test_a_seat_back_from_a_truncated_journal_sits_out_cleanly(seed: int, lost: int) -> None:
    net, k, key = _under_way(seed, signed=lost + 3)
    host = net.replicas[0]
    records = net.journals[k]
    # The journal loses its tail from the ``lost``-th last entry the seat signed
    # (the others hold those entries, and what the seat did after them).
    cut = _own_entries(records, key)[-lost]
    seq_before = net.replicas[k].view().seq
    back = _come_back(net, k, records[:cut])
    assert back.view().seq < seq_before
    # Its box on every other screen says it sits the round out (it plays the next),
    # not "leaving" or "left".
    others = [r for i, r in enumerate(net.replicas) if i != k]
    rounds = [r.view().round for r in others]
    seat = host.rs.keys.index(key) if host.rs is not None else -1
    assert net.run(lambda: all(rnd is not None and seat in rnd.left for rnd in rounds),
                   limit=net.now + 30)
    for r in others:
        view = r.view()
        assert view.round is not None and health(view, view.round, seat)[1] == "sits out"
    _cards_where_the_table_says(net, back)
    number = _run_to_next_round(net, k)
    _no_harm(net, k)
    notes = [e.text for e in net.events[k] if isinstance(e, ev.Notice)
             and "journal did not" in e.text]
    assert len(notes) == 1 and "sitting this round out" in notes[0], notes
    assert back.view().seq > seq_before  # it went on after the table's head
    _no_moves_after_goodbye(net.journals[k], key)
    _agreed(net, number)


def _cards_where_the_table_says(net: MemNet, back: Replica) -> None:
    """The round it sits out closes with every card of its deck in one place: the
    plays its journal lost are on the foundations, not in its tableau too."""
    rs = back.rs
    assert rs is not None and rs.me is not None
    number = rs.number
    assert net.run(lambda: back.phase in (Phase.BETWEEN, Phase.OVER)
                   or (back.rs is not None and back.rs.number > number), limit=net.now + 600)
    assert back.rs is rs and rs.tab is not None
    assert cards_accounted(rs.me, rs.tab, rs.log, rs.variants.jokers)


def _no_moves_after_goodbye(records: list[Record], key: bytes) -> None:
    """A seat that said GOODBYE to sit a round out makes no move in it after that."""
    mine = [e for r in records if r.kind is Kind.ENTRY and (e := open_entry(r.data)).author == key]
    bye = next(e for e in mine if e.type == MsgType.GOODBYE)
    late = [e.seq for e in mine if e.seq > bye.seq and e.round == bye.round
            and e.type in (MsgType.PLAY, MsgType.STUCK, MsgType.NERTS)]
    assert not late, late


@pytest.mark.parametrize(("seed", "boot"), [(58, b"boot-2"), (59, b"boot-2"), (58, b"boot-1")])
def test_a_seat_back_after_a_power_cut_hears_everyone_before_it_signs_again(
        seed: int, boot: bytes) -> None:
    """A batch is made durable just after it leaves: a power cut in between takes the
    seat's last entry from its journal though the others hold it. Back in a new boot
    of the machine (``boot-2``), with its links down for longer than LEARN_TIMEOUT,
    the seat signs nothing: it waits for every peer's word, fetches what it lost,
    sits the round out, and its journal names the new boot. Had the journal been
    written in this very boot (``boot-1``), it could have lost nothing, and the seat
    goes on after LEARN_TIMEOUT on nobody's word: here, that would sign its lost
    number again, which is why a new boot waits."""
    net, k, key = _under_way(seed, signed=4)
    records = [boot_record(b"boot-1"), *net.journals[k]]
    back = _come_back(net, k, records[:_own_entries(records, key)[-1]], boot=boot)
    signed = back.view().seq
    net.cut.add(k)
    net.run(lambda: False, limit=net.now + LEARN_TIMEOUT + 1)
    net.cut.discard(k)
    assert back.view().seq == signed
    if boot == b"boot-1":
        net.run(lambda: any(r.rejected.get("equivocation") for r in net.replicas),
                limit=net.now + 60)
        assert any(r.rejected.get("equivocation") for r in net.replicas)
        return
    number = _run_to_next_round(net, k)
    _no_harm(net, k)
    notes = [e.text for e in net.events[k] if isinstance(e, ev.Notice)]
    assert sum("machine restarted" in n for n in notes) == 1, notes
    assert sum("journal did not" in n and "sitting this round out" in n for n in notes) == 1
    assert written_in(net.journals[k], b"boot-2")
    _agreed(net, number)


def test_a_seat_back_from_a_compacted_journal_that_lost_its_tail_sits_out_cleanly() -> None:
    """The journal starts at a snapshot (compacted as rounds closed) and lost its last
    entries: the seat takes the snapshot up, and still signs no number twice."""
    net = bot_table(4, seed=55, variants=Variants(target=10_000))
    host = net.replicas[0]
    host.seating.auto_next = 1.0
    net.output(0, host.handle(StartRound(), net.now))
    k = 2
    key = net.replicas[k].me.public_key
    assert net.run(lambda: host.rs is not None and host.rs.number == 4
                   and len(host.rs.log) >= 12, limit=3600)
    records = net.journals[k]
    assert records[0].kind is Kind.SNAPSHOT and snapshot_of(records[0]).round == 2
    seq_before = net.replicas[k].view().seq
    back = _come_back(net, k, records[:_own_entries(records, key)[-3]])
    assert back.view().seq < seq_before
    number = _run_to_next_round(net, k)
    _no_harm(net, k)
    notes = [e.text for e in net.events[k] if isinstance(e, ev.Notice)
             and "journal did not" in e.text]
    assert len(notes) == 1 and "sitting this round out" in notes[0], notes
    assert back.view().seq > seq_before
    _agreed(net, number)


def test_a_seat_back_with_no_journal_at_all_sits_out_cleanly() -> None:
    net = bot_table(3, seed=54)
    host = net.replicas[0]
    host.seating.auto_next = 1.0
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 10, limit=600)
    seq_before = net.replicas[1].view().seq
    back = _come_back(net, 1, None)
    number = _run_to_next_round(net, 1)
    _no_harm(net, 1)
    notes = [e.text for e in net.events[1] if isinstance(e, ev.Notice)
             and "journal did not" in e.text]
    assert len(notes) == 1, notes
    assert back.view().seq > seq_before
    _agreed(net, number)


def test_a_seat_back_from_a_whole_journal_plays_on_without_a_word() -> None:
    """Nothing lost: it hears the others, holds all they hold of it, and plays on."""
    net = bot_table(3, seed=55)
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 10, limit=600)
    back = _come_back(net, 2, list(net.journals[2]))
    assert not back.view().can_move()  # not before it has heard the table
    assert net.run(back.view().can_move, limit=net.now + 10)
    assert net.run(lambda: all(r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas),
                   limit=net.now + 1800)
    _no_harm(net, 2)
    assert not any(isinstance(e, ev.Notice) and "journal" in e.text for e in net.events[2])
    assert not any(isinstance(e, ev.PeerDropped) for events in net.events for e in events)
    _agreed(net, 1)


def _play_of(r: Replica) -> Target | None:
    rs = r.rs
    if rs is None or rs.tab is None or not r.view().can_move():
        return None
    return next((t for src in SOURCES if (t := foundation_target(rs.tab, src, rs.log))), None)


@pytest.mark.parametrize("seed", [56, 57])
def test_a_seat_killed_between_journaling_a_play_and_sending_it_plays_on_without_it(
        seed: int) -> None:
    """Everything is journaled before anything goes out, and a crash can tear that
    last write: the play's MOVE kept, its PLAY lost, and never sent. Nobody saw the
    play. Back at the table, its card is where it was and the seat plays on: its
    audit shows no play that the wire does not (a seat flagged for it, before)."""
    net = bot_table(3, seed=seed)
    host = net.replicas[0]
    net.output(0, host.handle(StartRound(), net.now))
    k = 2
    assert net.run(lambda: host.rs is not None and len(host.rs.log) >= 6
                   and _play_of(net.replicas[k]) is not None, limit=600)
    dead = net.replicas[k]
    target = _play_of(dead)
    assert target is not None and dead.rs is not None and dead.rs.tab is not None
    tab = dead.rs.tab
    before = (list(tab.nerts), [list(pile) for pile in tab.work], list(tab.waste))
    out = dead.handle(Move(target), net.now)  # signed; killed before it went out
    moves = [rec for rec in out.journal if rec.kind is Kind.MOVE]
    assert moves and any(rec.kind is Kind.ENTRY for rec in out.journal)
    back = _come_back(net, k, [*net.journals[k], *moves])
    assert back.rs is not None and back.rs.tab is not None
    tab = back.rs.tab
    assert not tab.in_flight and (tab.nerts, tab.work, tab.waste) == before
    assert net.run(lambda: all(r.phase in (Phase.BETWEEN, Phase.OVER) for r in net.replicas),
                   limit=net.now + 1800)
    _no_harm(net, k)
    assert not any(isinstance(e, ev.Notice) and "journal" in e.text for e in net.events[k])
    _agreed(net, 1)


def test_a_host_back_between_rounds_signs_no_roster_a_deal_made_stale() -> None:
    """While it learns where its chain ends, the host deals (ROSTER for the next
    round) and then seats a newcomer (a ROSTER for the break): once the deal has
    begun the next round, that ROSTER is for a round gone, which every peer would
    refuse and which no replay of the host's journal could take. It is not signed."""
    net = bot_table(3, seed=7, variants=Variants(target=10_000))
    play_round(net)
    back = crash_and_restore(net, 0, 0.5)  # it has heard nobody yet: all it signs waits
    net.output(0, back.handle(StartRound(), net.now))
    late = Replica(Identity.from_seed(b"\x41" * 32, "Cy"), TABLE_ID, back.me.public_key,
                   rng=random.Random(41).randbytes, countdown=0.0, drop_after=5.0)
    net.output(0, ask_for_seat(late, back, net.now))
    assert net.run(lambda: back.phase is Phase.PLAYING, limit=net.now + 60)
    assert back.rs is not None and back.rs.number == 2
    mine = [open_entry(r.data) for r in net.journals[0] if r.kind is Kind.ENTRY]
    rosters = [e.round for e in mine
               if e.author == back.me.public_key and e.type == MsgType.ROSTER]
    assert rosters == sorted(rosters) and rosters[-1] == 2
    again = Replica.restore(back.me, TABLE_ID, back.me.public_key, net.journals[0], net.now,
                            rng=random.Random(1).randbytes, countdown=0.0, drop_after=5.0)
    assert again.rs is not None and again.rs.number == 2
