"""Intake on its own: a frame's envelope, whose entries are heard, which entries
wait, and which PLAYs are refused (no network, no replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.cards import make_card
from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.tableau import NERTS
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.envelope import GENESIS, Entry, EnvelopeError
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import (
    Ack,
    Goodbye,
    Head,
    Hello,
    Join,
    Nerts,
    Payload,
    Play,
    Ready,
    Resend,
    Result,
    Roster,
    Seat,
    Summary,
    link_message,
    seal_message,
)
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.protocol.replica._base import MAX_AUTHORS, MAX_LAMPORT_JUMP
from p2p_nerts.protocol.replica._effects import Emit, Reject, Sign
from p2p_nerts.protocol.replica._intake import (
    ACK,
    ASK_AGAIN,
    EPHEMERAL_NOW,
    SEQUENCED,
    Places,
    Stop,
    deliverable,
    has_place,
    next_held,
    offer,
    open_frame,
    stranger_to_forget,
)
from p2p_nerts.protocol.replica._state import RoundState

from ..stepkit import steps_at

pytestmark = pytest.mark.fast

AUTHOR = Identity.from_seed(b"\x05" * 32, "a")
SEAT = 1


def _round(number: int = 2) -> RoundState:
    return RoundState(number=number, keys=(b"\x01" * 32, AUTHOR.public_key),
                      names=("me", "a"), variants=Variants(), me=0, live={0, 1},
                      log=FoundationLog(strict_ties=False))


def _entry(payload: Payload, round_no: int) -> Entry:
    return seal_message(AUTHOR, payload, table_id=b"t" * 16, round=round_no, seq=1,
                        lamport=1, prev=GENESIS)


def test_round_entries_wait_for_their_round_and_plays_for_the_deal() -> None:
    rs = _round()
    ace = make_card(SEAT, 0, 1)
    play = _entry(Play(ace, ace, NERTS, 0, 0), 2)
    assert not deliverable(None, Phase.LOBBY, play)
    assert not deliverable(rs, Phase.SHUFFLE, play)  # not dealt yet
    rs.joint = b"j" * 32
    assert deliverable(rs, Phase.PLAYING, play)
    assert not deliverable(rs, Phase.PLAYING, _entry(Nerts(), 3))  # the next round's
    assert deliverable(rs, Phase.SCORING, _entry(Summary(b"d" * 32, (0, 0)), 1))  # judged late
    assert deliverable(rs, Phase.PLAYING, _entry(Ready(True), 0))


def test_a_goodbye_signed_in_a_round_not_begun_here_waits_for_it() -> None:
    """It leaves the round it was signed in, on every peer: one that has not
    begun that round takes it as the round begins, not as leaving this one."""
    rs = _round()
    for phase in (Phase.BETWEEN, Phase.PLAYING):
        assert not deliverable(rs, phase, _entry(Goodbye("bye"), 3))
        assert deliverable(rs, phase, _entry(Goodbye("bye"), 2))
        assert deliverable(rs, phase, _entry(Goodbye("bye"), 1))
    assert deliverable(None, Phase.LOBBY, _entry(Goodbye("bye"), 0))  # before any round
    assert not deliverable(None, Phase.LOBBY, _entry(Goodbye("bye"), 1))


def test_the_next_rounds_roster_and_a_closing_result_wait_for_this_round_to_close() -> None:
    rs = _round()
    roster = _entry(Roster((Seat(AUTHOR.public_key, "a"),)), 3)
    result = _entry(Result((1, 2), b"d" * 32), 2)
    for phase in (Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING):
        assert not deliverable(rs, phase, roster) and not deliverable(rs, phase, result)
    assert deliverable(rs, Phase.BETWEEN, roster) and deliverable(rs, Phase.OVER, result)


TABLE = b"t" * 16


def _refused(raw: bytes, via: bytes | None = None, clock: int = 0) -> str:
    with pytest.raises(EnvelopeError) as exc:
        open_frame(raw, via, TABLE, clock)
    return exc.value.reason


def test_a_frame_is_opened_and_decoded() -> None:
    entry = seal_message(AUTHOR, Ready(True), table_id=TABLE, round=0, seq=1, lamport=3,
                         prev=GENESIS)
    opened, payload = open_frame(entry.raw, None, TABLE, 0)
    assert (opened.author, opened.seq, payload) == (AUTHOR.public_key, 1, Ready(True))


def test_a_frame_for_another_table_or_from_too_far_ahead_is_refused() -> None:
    other = seal_message(AUTHOR, Ready(True), table_id=b"u" * 16, round=0, seq=1, lamport=3,
                         prev=GENESIS)
    assert _refused(other.raw) == "wrong_table"
    jump = seal_message(AUTHOR, Ready(True), table_id=TABLE, round=0, seq=1,
                        lamport=MAX_LAMPORT_JUMP + 11, prev=GENESIS)
    assert _refused(jump.raw, clock=10) == "lamport_jump"
    assert open_frame(jump.raw, None, TABLE, 11)[1] == Ready(True)


def test_an_unsigned_frame_needs_its_authors_link_and_a_link_type() -> None:
    ack = link_message(AUTHOR.public_key, Ack(()), table_id=TABLE, round=0, seq=1, lamport=1,
                       prev=GENESIS)
    assert open_frame(ack, AUTHOR.public_key, TABLE, 0)[1] == Ack(())
    assert _refused(ack) == "unlinked"
    hello = link_message(AUTHOR.public_key, Hello("a", 1), table_id=TABLE, round=0, seq=1,
                         lamport=1, prev=GENESIS)
    assert _refused(hello, AUTHOR.public_key) == "unsigned_type"  # a HELLO is always signed


def _signed(payload: Payload) -> Entry:
    return seal_message(AUTHOR, payload, table_id=TABLE, round=0, seq=1, lamport=1,
                        prev=GENESIS)


def test_a_host_hears_a_stranger_ask_for_a_seat_and_nothing_else() -> None:
    places, seated = Places(), frozenset({b"\x01" * 32})
    for asks in (Hello("a", 1), Join("a", None)):
        assert places.heard_of(_signed(asks), is_host=True, seated=seated)
    assert not places.heard_of(_signed(Ready(True)), is_host=True, seated=seated)
    places.placed.add(AUTHOR.public_key)  # once it had a place, it is heard
    assert places.heard_of(_signed(Ready(True)), is_host=True, seated=seated)


def test_a_guest_that_knows_no_seats_yet_hears_everyone() -> None:
    places = Places()
    assert places.heard_of(_signed(Ready(True)), is_host=False, seated=frozenset())
    assert not places.heard_of(_signed(Ready(True)), is_host=False,
                               seated=frozenset({b"\x01" * 32}))


def test_whoever_asks_for_entries_is_heard_and_watches_while_its_chain_is_kept() -> None:
    places = Places()
    asks = _signed(Resend(b"\x01" * 32, 1, 4))
    assert places.heard_of(asks, is_host=False, seated=frozenset({b"\x01" * 32}))
    places.watch(AUTHOR.public_key)
    assert not places.watchers  # no chain kept for it: nothing kept by its key either
    places.begin_log(AUTHOR.public_key, lambda k: False)
    places.watch(AUTHOR.public_key)
    assert places.watchers == {AUTHOR.public_key}


HOST = b"\x01" * 32
ME = b"\x02" * 32


def _arrival(places: Places, entry: Entry, *, placed: bool, is_host: bool = True,
             me: bytes = ME, my_seq: int = 0) -> object:
    return places.arrival(entry, placed=placed, me=me, my_seq=my_seq, is_host=is_host,
                          seated=frozenset({HOST}))


def test_an_arrival_is_sequenced_journaled_as_an_ack_or_acted_on_at_once() -> None:
    places = Places()
    assert _arrival(places, _signed(Ready(True)), placed=True) is SEQUENCED
    assert _arrival(places, _signed(Ack(())), placed=True) is ACK
    assert _arrival(places, _signed(Hello("a", 1)), placed=True) is EPHEMERAL_NOW
    assert AUTHOR.public_key in places.placed  # heard while it had a place: a player


def test_a_host_fetches_the_join_behind_a_newcomers_ack() -> None:
    places = Places()
    assert _arrival(places, _signed(Ack(())), placed=False) is ASK_AGAIN
    places.admit({AUTHOR.public_key})  # a player already: its ACK is taken as it is
    assert _arrival(places, _signed(Ack(())), placed=False) is ACK


def _arrival_refused(places: Places, entry: Entry, **kw: object) -> str:
    with pytest.raises(EnvelopeError) as exc:
        places.arrival(entry, seated=frozenset({HOST}), **kw)  # type: ignore[arg-type]
    return exc.value.reason


def test_my_own_entries_come_back_only_past_what_i_signed_and_strangers_are_dropped() -> None:
    places = Places()
    mine = dict(placed=True, me=AUTHOR.public_key, is_host=False)
    assert _arrival_refused(places, _signed(Ready(True)), my_seq=1, **mine) == "own_entry"
    assert _arrival_refused(places, _signed(Ack(())), my_seq=0, **mine) == "own_entry"
    assert _arrival(places, _signed(Ready(True)), placed=True, me=AUTHOR.public_key,
                    my_seq=0, is_host=False) is SEQUENCED  # fetched back: my journal lost it
    assert _arrival_refused(places, _signed(Ready(True)), placed=False, me=ME, my_seq=0,
                            is_host=True) == "stranger"
    assert not places.placed


def test_a_place_is_a_seat_the_host_me_the_waiting_list_or_the_round() -> None:
    rs = _round()
    def has(key: bytes, waiting: dict[bytes, str] | None = None) -> bool:
        return has_place(key, seated=frozenset({HOST}), host_key=ME, me=b"\x03" * 32,
                         waiting=waiting or {}, rs=rs)
    assert has(HOST) and has(ME) and has(b"\x03" * 32) and has(AUTHOR.public_key)
    stranger = b"\x09" * 32
    assert not has(stranger) and has(stranger, {stranger: "s"})
    assert Places().player(stranger, True) and not Places().player(stranger, False)


def test_the_longest_silent_stranger_is_forgotten_first() -> None:
    keys = [HOST, b"\x08" * 32, b"\x09" * 32]
    heard = {HOST: 0.0, b"\x08" * 32: 5.0, b"\x09" * 32: 3.0}
    assert stranger_to_forget(keys, lambda k: k == HOST, heard) == b"\x09" * 32
    assert stranger_to_forget([HOST], lambda k: k == HOST, heard) is None


def _chain(n: int, lamports: tuple[int, ...] | None = None) -> list[Entry]:
    entries, prev = [], GENESIS
    for seq in range(1, n + 1):
        lamport = lamports[seq - 1] if lamports else seq
        e = seal_message(AUTHOR, Ready(True), table_id=TABLE, round=0, seq=seq, lamport=lamport,
                         prev=prev)
        entries.append(e)
        prev = e.signature
    return entries


def test_a_strangers_early_entry_is_not_kept_and_a_players_is_held() -> None:
    first, second = _chain(2)
    log = AuthorLog(AUTHOR.public_key)
    with pytest.raises(EnvelopeError, match="stranger"):
        offer(log, second, player=False)
    assert offer(log, second, player=True) == "held"
    assert offer(log, first, player=False) == "next" and log.held[1] is first
    assert offer(log, first, player=False) == "duplicate"


def test_held_entries_come_out_in_sequence_while_deliverable() -> None:
    first, second = _chain(2)
    log = AuthorLog(AUTHOR.public_key)
    assert next_held(log, None, Phase.LOBBY) is None
    log.held = {2: second, 1: first}
    assert next_held(log, None, Phase.LOBBY) is first
    log.mark_delivered(first)
    assert next_held(log, None, Phase.LOBBY) is second and not log.held


def test_a_broken_chain_or_an_impossible_time_stops_the_author() -> None:
    second = _chain(2)[1]
    log = AuthorLog(AUTHOR.public_key)
    log.held = {2: second}
    log.delivered = 1  # another entry 1 than ours: 2 does not follow our head
    assert next_held(log, None, Phase.LOBBY) == Stop("broken_chain", None)
    assert not log.held  # taken out all the same
    one, two = _chain(2, lamports=(5, 5))
    log = AuthorLog(AUTHOR.public_key)
    log.mark_delivered(one)
    log.held = {2: two}
    stop = next_held(log, None, Phase.LOBBY)
    assert isinstance(stop, Stop) and stop.reason == "lamport_not_increasing"
    assert stop.flag is not None


def test_a_stopped_author_is_flagged_or_asked_about_the_entry_before() -> None:
    log = AuthorLog(AUTHOR.public_key)
    log.mark_delivered(_chain(1)[0])
    steps, table = steps_at(b"\x01" * 32, _round(), Phase.PLAYING)
    steps.stopped(log, Stop("lamport_not_increasing", "lied"))
    assert table.done == [Reject("lamport_not_increasing"), Emit(ev.Flagged(1, "a", "lied"))]
    # Another branch: whoever holds it answers with a second entry 1, the proof.
    table.done = []
    steps.stopped(log, Stop("broken_chain", None))
    assert table.done == [Reject("broken_chain"), Sign(Resend(AUTHOR.public_key, 1, 1))]


def test_an_invalid_entry_flags_its_author_unless_it_was_only_too_late() -> None:
    steps, table = steps_at(b"\x01" * 32, _round(), Phase.PLAYING)
    for reason in ("dropped", "late", "void"):
        table.done = []
        steps.refused(AUTHOR.public_key, reason)
        assert table.done == [Reject(reason)]
    table.done = []
    steps.refused(AUTHOR.public_key, "bad_field:card")
    assert table.done == [Reject("bad_field:card"), Emit(ev.Flagged(
        1, "a", "sent an invalid entry (bad_field:card)"))]


def _key(n: int) -> bytes:
    return n.to_bytes(32, "big")


def test_a_full_table_forgets_the_longest_silent_stranger_for_a_new_author() -> None:
    places = Places()
    for n in range(MAX_AUTHORS):
        log = places.begin_log(_key(n), lambda k: True)
        assert log is not None and log.key == _key(n)
        places.last_heard[_key(n)] = float(n)
    placed = {_key(0), _key(1)}  # silent longest, but they hold a place
    log = places.begin_log(_key(999), lambda k: k in placed)
    assert log is places.authors[_key(999)]
    assert _key(2) not in places.authors and _key(2) not in places.last_heard
    assert len(places.authors) == MAX_AUTHORS


def test_a_key_forgotten_takes_its_watching_and_its_resend_budget_with_it() -> None:
    places = Places()
    log = places.begin_log(_key(0), lambda k: True)
    assert log is not None
    places.watch(_key(0))
    places.resends.answer(_key(0), log, 1, 1, 0.0)  # a budget of its own begun
    places.resends.answer(None, log, 1, 1, 0.0)  # and the one the seatless share
    assert places.resends.budgets() == 2
    for n in range(1, MAX_AUTHORS + 1):  # room made for each: key 0 silent longest
        places.last_heard[_key(n - 1)] = float(n)
        places.begin_log(_key(n), lambda k: False)
    assert _key(0) not in places.authors and not places.watchers
    assert places.resends.budgets() == 1  # the shared one stays


def test_a_full_table_of_places_begins_no_chain() -> None:
    places = Places()
    for n in range(MAX_AUTHORS):
        places.begin_log(_key(n), lambda k: True)
    before = dict(places.authors)
    assert places.begin_log(_key(999), lambda k: True) is None
    assert places.authors == before


def test_the_chains_note_claims_take_heads_and_admit_as_told() -> None:
    places = Places()
    places.claim(_key(1), 4, lambda k: True)  # a chain begun to note it on
    assert places.authors[_key(1)].claimed == 4
    places.admit({_key(2)})
    assert places.player(_key(2), False)
    for n in range(2, MAX_AUTHORS + 1):
        places.begin_log(_key(n), lambda k: True)
    places.claim(_key(999), 1, lambda k: True)  # no room: nothing begun
    assert _key(999) not in places.authors
    places.take_heads((Head(_key(1), 6, 30, b"i" * 64),), lambda k: True)
    assert places.authors[_key(1)].delivered == 6


def test_a_round_beginning_hears_its_seats_now_and_never_earlier() -> None:
    places = Places()
    places.last_heard.update({HOST: 2.0, ME: 9.0})
    places.heard_all((HOST, ME, AUTHOR.public_key), 5.0)
    assert places.last_heard == {HOST: 5.0, ME: 9.0, AUTHOR.public_key: 5.0}
