"""The lobby on its own: the host's answer to a JOIN, the roster as a round
closes, what a host may ask between rounds and when it deals by itself, and
what a ROSTER or SETTINGS sets (no network, no replica): the answers, and the
effects the facade applies for them, in their order."""

from __future__ import annotations

from dataclasses import replace

import pytest

from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.envelope import Entry, EnvelopeError, open_entry
from p2p_nerts.protocol.identity import Identity, fingerprint_of
from p2p_nerts.protocol.messages import (
    Goodbye,
    Join,
    Leave,
    Payload,
    Ready,
    Resend,
    Roster,
    Seat,
    Settings,
    seal_message,
)
from p2p_nerts.protocol.messages import Refuse as Refusal
from p2p_nerts.protocol.replica import (
    ArrangeSeats,
    AskToWatch,
    CommandError,
    LeaveTable,
    Phase,
    SeatLost,
    SetReady,
    StartRound,
    TurnAway,
)
from p2p_nerts.protocol.replica._base import SIT_DOWN_WAIT, settings_of
from p2p_nerts.protocol.replica._effects import (
    Emit,
    Sign,
)
from p2p_nerts.protocol.replica._lobby import (
    EQUIVOCATOR,
    FULL,
    OVER,
    Gone,
    Joined,
    Left,
    ReadySaid,
    Refuse,
    Reseated,
    Retell,
    Ruled,
    Seated,
    SeatIt,
    Table,
    Wait,
    answer_join,
    arrange,
    arranged,
    auto_deal,
    auto_deal_due,
    change_settings,
    check_deal,
    closing_roster,
    command,
    delivered,
    goodbye,
    host_between_rounds,
    join,
    ordinal,
    reseat,
    roster,
    roster_begins,
    seat_lost,
    settings,
    start_round,
    taken,
    unseat,
    variants_of,
)
from p2p_nerts.protocol.replica._state import RoundState

pytestmark = pytest.mark.fast

HOST, A, B, NEW = (bytes([k]) * 32 for k in range(1, 5))
SEATS = (Seat(HOST, "host"), Seat(A, "a"), Seat(B, "b"))


def _round() -> RoundState:
    return RoundState(number=1, keys=(HOST, A, B), names=("host", "a", "b"),
                      variants=Variants(), me=0, live={0, 1, 2},
                      log=FoundationLog(strict_ties=False))


def _answer(key: bytes, *, in_round: bool = False, over: bool = False, room: int = 4,
            waiting: dict[bytes, str] | None = None, proven: bool = False,
            rs: RoundState | None = None) -> object:
    rs = rs if rs is not None else _round()
    table = _table(Phase.PLAYING if in_round else Phase.BETWEEN, waiting=waiting)
    return answer_join(key, rs=rs, in_round=in_round, over=over,
                       seated=frozenset(s.key for s in SEATS), taken=taken(table, rs),
                       waiting=waiting or {}, proven=proven, room=room)


def test_between_rounds_a_newcomer_sits_unless_full_or_over() -> None:
    assert _answer(NEW) == SeatIt()
    assert _answer(NEW, room=3) == Refuse(FULL)
    assert _answer(NEW, over=True) == Refuse(OVER)
    assert _answer(A) == Retell()  # asked again: told the roster again
    assert _answer(NEW, proven=True) == Refuse(EQUIVOCATOR)


def test_mid_round_a_player_waits_for_the_round_to_close() -> None:
    rs = _round()
    assert _answer(A, in_round=True, rs=rs) is None  # live: it catches up by resends
    rs.live.discard(1)
    assert _answer(A, in_round=True, rs=rs) == Wait()  # dropped: back next round
    assert _answer(A, in_round=True, rs=rs, waiting={A: "a"}) is None  # waiting already
    assert _answer(NEW, in_round=True) == Wait()
    assert _answer(NEW, in_round=True, waiting={b"w" * 32: "w"}) == Refuse(FULL)
    assert _answer(NEW, in_round=True, proven=True) == Refuse(EQUIVOCATOR)
    rs.live.discard(2)  # b dropped too: its seat is free, for a newcomer or for a
    assert _answer(NEW, in_round=True, rs=rs, waiting={b"w" * 32: "w"}, room=3) == Wait()
    assert _answer(A, in_round=True, rs=rs, waiting={NEW: "new", b"w" * 32: "w"},
                   room=3) == Refuse(FULL)  # a's seat went to a latecomer meanwhile


def test_seats_taken_in_a_round_are_those_the_next_deal_goes_to() -> None:
    """What the lobby and a newcomer count: a seat the table dropped is free at once,
    a seat a latecomer waits for is taken; between rounds, the seats."""
    rs = _round()
    assert taken(_table(Phase.PLAYING), rs) == 3
    assert taken(_table(Phase.PLAYING, waiting={NEW: "new"}), rs) == 4
    rs.live.discard(1)  # a dropped
    assert taken(_table(Phase.PLAYING, waiting={NEW: "new"}), rs) == 3
    assert taken(_table(Phase.PLAYING, waiting={NEW: "new", A: "a"}), rs) == 4  # a asked back
    rs.live.discard(0)  # the host stays, dropped or not
    assert taken(_table(Phase.SCORING), rs) == 2
    assert taken(_table(Phase.BETWEEN), rs) == 3
    assert taken(_table(Phase.LOBBY), None) == 3


def test_as_a_round_closes_the_dropped_leave_and_those_waiting_sit() -> None:
    rs = _round()
    rs.live -= {0, 2}  # the host and b dropped
    assert reseat(rs, SEATS, {NEW: "new"}, set(), HOST, 8) == (
        Seat(HOST, "host"), Seat(A, "a"), Seat(NEW, "new"))  # the host stays
    assert reseat(rs, SEATS, {B: "b"}, set(), HOST, 8) == SEATS  # b asked back
    assert reseat(_round(), SEATS, {}, {A}, HOST, 8) == (Seat(HOST, "host"), Seat(B, "b"))
    assert reseat(_round(), SEATS, {NEW: "new"}, set(), HOST, 3) == SEATS  # no room


def test_only_the_host_changes_the_table_and_only_between_rounds() -> None:
    host_between_rounds(True, Phase.LOBBY, "deals", "not now")
    host_between_rounds(True, Phase.BETWEEN, "deals", "not now")
    with pytest.raises(CommandError, match="only the host deals"):
        host_between_rounds(False, Phase.LOBBY, "deals", "not now")
    for phase in (Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING, Phase.OVER):
        with pytest.raises(CommandError, match="not now"):
            host_between_rounds(True, phase, "deals", "not now")


def test_a_deal_needs_seats_the_rules_play() -> None:
    check_deal(SEATS, Variants())
    with pytest.raises(CommandError, match="nobody is seated"):
        check_deal((), Variants())
    with pytest.raises(CommandError, match="pairs need 4, 6 or 8 players"):
        check_deal(SEATS, Variants(teams="pairs"))


def test_seats_are_arranged_once_each() -> None:
    assert arranged(SEATS, (A, HOST, B)) == (SEATS[1], SEATS[0], SEATS[2])
    assert arranged(SEATS, (HOST, A, B)) is None  # as they are
    for order in ((A, HOST), (A, A, B), (A, HOST, NEW)):
        with pytest.raises(CommandError, match="exactly one seat"):
            arranged(SEATS, order)


def test_a_host_deals_by_itself_once_enough_sit_and_after_each_break() -> None:
    seated = frozenset({HOST, A})
    assert auto_deal_due(Phase.LOBBY, 2, 2, None, 0.0, (), seated)
    assert not auto_deal_due(Phase.LOBBY, 1, 2, None, 0.0, (), seated)
    assert not auto_deal_due(Phase.LOBBY, 5, None, None, 0.0, (), seated)
    assert not auto_deal_due(Phase.BETWEEN, 2, 2, 10.0, 9.0, (), seated)
    assert auto_deal_due(Phase.BETWEEN, 2, None, 10.0, 10.0, (), seated)
    assert not auto_deal_due(Phase.BETWEEN, 2, None, 10.0, 10.0, (A,), seated)  # catching up
    assert auto_deal_due(Phase.BETWEEN, 2, None, 10.0, 10.0 + SIT_DOWN_WAIT, (A,), seated)
    assert not auto_deal_due(Phase.PLAYING, 2, 2, 10.0, 20.0, (), seated)


def test_a_roster_for_the_next_round_begins_it_and_one_between_rounds_reseats() -> None:
    assert roster_begins(3, 2, Phase.BETWEEN, Variants(), SEATS)
    assert not roster_begins(2, 2, Phase.BETWEEN, Variants(), SEATS)
    with pytest.raises(EnvelopeError, match="wrong_round"):
        roster_begins(2, 2, Phase.PLAYING, Variants(), SEATS)
    with pytest.raises(EnvelopeError, match="wrong_round"):
        roster_begins(5, 2, Phase.BETWEEN, Variants(), SEATS)
    with pytest.raises(EnvelopeError, match="bad_field:roster"):
        roster_begins(3, 2, Phase.BETWEEN, Variants(), SEATS[:1])


def test_settings_set_the_rules_between_rounds_only() -> None:
    rules = Variants(stock_turn=1, jokers=True, target=50)
    assert variants_of(settings_of(rules, 3.0, 10.0), Phase.BETWEEN) == rules
    with pytest.raises(EnvelopeError, match="settings_mid_round"):
        variants_of(settings_of(rules, 3.0, 10.0), Phase.PLAYING)
    with pytest.raises(EnvelopeError, match="bad_field:settings"):
        variants_of(Settings(stock_turn=7), Phase.LOBBY)


def _table(phase: Phase = Phase.BETWEEN, *, me: bytes = HOST, seats: tuple[Seat, ...] = SEATS,
           number: int = 2, max_seats: int = 8, waiting: dict[bytes, str] | None = None,
           proven: frozenset[bytes] = frozenset()) -> Table:
    return Table(me, HOST, phase, seats, number, Variants(), 3.0, 10.0, max_seats,
                 waiting or {}, proven)


def test_a_join_gets_a_seat_a_place_on_the_waiting_list_a_retelling_or_a_no() -> None:
    assert join(_table(), NEW, "new", _round()) == Joined(
        NEW, "new", False, False, [Sign(Roster((*SEATS, Seat(NEW, "new"))))])
    assert join(_table(Phase.PLAYING), NEW, "new", _round()) == Joined(
        NEW, "new", False, True, [Emit(ev.Notice("new sits down when this round ends"))])
    assert join(_table(), A, "a", _round()) == Joined(A, "a", False, False,
                                                      [Sign(Roster(SEATS))])
    assert join(_table(max_seats=3), NEW, "new", _round()) == Joined(NEW, "new", True, False, [
        Sign(Refusal(NEW, f"{FULL}: you are 1st in line for a seat"))])
    assert join(_table(proven=frozenset({NEW})), NEW, "new", None) == Joined(
        NEW, "new", False, False, [Sign(Refusal(NEW, EQUIVOCATOR))])
    # Live: it catches up.
    assert join(_table(Phase.PLAYING), A, "a", _round()) == Joined(A, "a", False, False, [])


def test_at_a_full_table_players_wait_in_line_and_seats_go_to_them_in_its_order() -> None:
    """``join --wait``: refused, each is told its place in line; a seat that frees
    goes to the first in line, whoever asks first; one gone leaves the line."""
    w1, w2 = b"\x05" * 32, b"\x06" * 32

    def table(phase: Phase = Phase.BETWEEN, **kw: object) -> Table:
        return replace(_table(phase, **kw), queue={w1: "w1", w2: "w2"})  # type: ignore[arg-type]

    full = table(max_seats=3)
    assert join(full, NEW, "new", _round()) == Joined(NEW, "new", True, False, [
        Sign(Refusal(NEW, f"{FULL}: you are 3rd in line for a seat"))])
    assert join(full, w2, "w2", _round()) == Joined(w2, "w2", True, False, [
        Sign(Refusal(w2, f"{FULL}: you are 2nd in line for a seat"))])
    free = table(max_seats=4)  # one seat free: the first in line's
    assert join(free, w2, "w2", _round()).then == [
        Sign(Refusal(w2, f"{FULL}: you are 2nd in line for a seat"))]
    assert join(free, w1, "w1", _round()) == Joined(w1, "w1", False, False, [
        Sign(Roster((*SEATS, Seat(w1, "w1"))))])
    rs = _round()
    rs.live.discard(1)  # in a round, a dropped seat is free: the first in line waits for it
    assert join(table(Phase.PLAYING, max_seats=3), w1, "w1", rs) == Joined(
        w1, "w1", False, True, [Emit(ev.Notice("w1 sits down when this round ends"))])
    for phase in (Phase.BETWEEN, Phase.PLAYING):
        lost = seat_lost(table(phase), w1)
        assert lost is not None and lost.unqueue
    assert ordinal(1) == "1st" and ordinal(12) == "12th" and ordinal(22) == "22nd"


def test_a_guest_s_seat_is_given_up_and_the_host_s_never() -> None:
    assert unseat(_table(), A) == [Sign(Roster((SEATS[0], SEATS[2])))]
    assert unseat(_table(), HOST) == []
    assert unseat(_table(), NEW) == []


def test_a_guest_gone_between_rounds_loses_its_seat_and_its_place_on_the_waiting_list() -> None:
    gone = Left(A, True, [Sign(Roster((SEATS[0], SEATS[2])))])
    assert seat_lost(_table(), A) == gone and goodbye(_table(), A) == gone
    assert seat_lost(_table(Phase.LOBBY), NEW) == Left(NEW, True, [])  # waited, never sat
    for phase in (Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING, Phase.OVER):
        # In a round, the drop vote decides; it sits down no more.
        assert seat_lost(_table(phase), A) == Left(A, True, [])
        assert goodbye(_table(phase), A) == Left(A, True, [])
        # A latecomer gone before the deal is never seated: the deal would wait for it.
        assert seat_lost(_table(phase, waiting={NEW: "new"}), NEW) == Left(NEW, True, [])
    guest = _table(me=A)
    assert seat_lost(guest, B) is None and goodbye(guest, B) == Left(B, False, [])


def test_host_commands_sign_what_every_peer_then_plays_by() -> None:
    t = _table()
    assert start_round(t) == [Sign(t.settings), Sign(Roster(SEATS), round_no=3)]
    rules = Variants(target=50)
    assert change_settings(t, rules, None, 20.0) == [Sign(settings_of(rules, 3.0, 20.0))]
    assert arrange(t, (A, HOST, B)) == [Sign(Roster((SEATS[1], SEATS[0], SEATS[2])))]
    assert arrange(t, (HOST, A, B)) == []
    with pytest.raises(CommandError, match="only the host starts a round"):
        start_round(_table(me=A))
    with pytest.raises(CommandError, match="countdown"):
        change_settings(t, rules, -1.0, None)


def test_a_table_command_signs_what_it_asks_and_only_where_it_may() -> None:
    t = _table()
    assert command(t, StartRound(), watching=False) == start_round(t)
    assert command(t, ArrangeSeats((A, HOST, B)), watching=False) == arrange(t, (A, HOST, B))
    assert command(t, SeatLost(A), watching=False) == seat_lost(t, A)
    assert command(t, SetReady(True), watching=False) == [Sign(Ready(True))]
    with pytest.raises(CommandError, match="spectator"):
        command(t, SetReady(True), watching=True)
    for phase in (Phase.LOBBY, Phase.BETWEEN, Phase.OVER):  # a seat given up as well
        assert command(_table(phase), LeaveTable("x" * 300), watching=False) == [
            Sign(Leave()), Sign(Goodbye("x" * 200))]
    assert command(_table(Phase.PLAYING), LeaveTable(), watching=False) == [
        Sign(Goodbye("left the table"))]  # in a round, the drop vote gives the seat up
    assert command(t, TurnAway(NEW, "no"), watching=False) == [Sign(Refusal(NEW, "no"))]
    assert command(t, TurnAway(A, "no"), watching=False) == []  # seated: not turned away
    assert command(_table(me=A), TurnAway(NEW, "no"), watching=False) == []  # not the host
    assert command(t, AskToWatch(A), watching=True) == [Sign(Resend(A, 1, 1024), to=A)]


def test_a_host_dealing_by_itself_deals_once_due_or_says_once_why_it_cannot() -> None:
    t = _table()
    assert auto_deal(t, auto_start=None, next_round_at=10.0, now=9.0, sitting_down=()) is None
    assert auto_deal(t, auto_start=None, next_round_at=10.0, now=10.0,
                     sitting_down=()) == start_round(t)
    alone = _table(Phase.LOBBY, seats=SEATS[:1])
    assert auto_deal(alone, auto_start=1, next_round_at=None, now=0.0,
                     sitting_down=()) == "a table seats 2 to 8 players, not 1"


def _entry(author: Identity, payload: Payload, number: int) -> Entry:
    return open_entry(seal_message(author, payload, table_id=b"t" * 16, round=number, seq=1,
                                   lamport=1).raw)


def test_the_host_s_roster_sets_the_seats_and_may_begin_the_round() -> None:
    host = Identity.from_seed(b"h" * 32, "host")
    seats = (Seat(host.public_key, "host"), Seat(A, "a"))
    t = replace(_table(seats=seats), host_key=host.public_key)
    told = Emit(ev.RosterChanged(("host", "a"), tuple(fingerprint_of(s.key) for s in seats),
                                 None))
    assert roster(t, _entry(host, Roster(seats), 3), seats) == Seated(seats, True, told)
    assert roster(t, _entry(host, Roster(seats), 2), seats) == Seated(seats, False, told)
    with pytest.raises(EnvelopeError, match="not_host"):
        roster(_table(seats=seats), _entry(host, Roster(seats), 3), seats)


def test_the_host_s_settings_set_the_rules_and_its_clocks() -> None:
    host = Identity.from_seed(b"h" * 32, "host")
    t = replace(_table(), host_key=host.public_key)
    rules = Variants(target=50)
    sent = settings_of(rules, 1.5, 12.0)
    assert settings(t, _entry(host, sent, 2), sent) == Ruled(
        rules, sent, Emit(ev.SettingsChanged(f"{rules.words()}; 1.5 s countdown, "
                                             "silent seats dropped after 12 s")))
    with pytest.raises(EnvelopeError, match="not_host"):
        settings(_table(), _entry(host, sent, 2), sent)


def test_as_a_round_closes_one_roster_reseats_and_the_break_waits_for_newcomers() -> None:
    assert closing_roster(_table(), _round()) == Reseated(None, frozenset())
    t = _table(waiting={NEW: "new"})
    assert closing_roster(t, _round()) == Reseated((*SEATS, Seat(NEW, "new")), frozenset({NEW}))


GUEST = Identity.from_seed(b"g" * 32, "guest")


def test_a_join_reaches_only_the_host_and_a_leave_takes_a_guest_off_the_list() -> None:
    seats = (*SEATS, Seat(GUEST.public_key, "guest"))
    join_entry = _entry(GUEST, Join("guest", None), 0)
    assert delivered(_table(seats=SEATS), join_entry, Join("guest", None), _round()) == Joined(
        GUEST.public_key, "guest", False, False, [Sign(Roster(seats))])
    assert delivered(_table(me=A), join_entry, Join("guest", None), None) == []
    leave = _entry(GUEST, Leave(), 0)
    assert delivered(_table(seats=seats), leave, Leave(), None) == Left(
        GUEST.public_key, False, [Sign(Roster(SEATS))])
    # Mid-round, the seat stays until the round closes.
    assert delivered(_table(Phase.PLAYING, seats=seats), leave, Leave(), None) == Left(
        GUEST.public_key, False, [])
    assert delivered(_table(me=A, seats=seats), leave, Leave(), None) == Left(
        GUEST.public_key, False, [])


def test_a_ready_is_kept_and_told_with_every_seat_s() -> None:
    seats = (*SEATS, Seat(GUEST.public_key, "guest"))
    t = replace(_table(seats=seats), ready={A: True, GUEST.public_key: False})
    assert delivered(t, _entry(GUEST, Ready(True), 0), Ready(True), None) == ReadySaid(
        GUEST.public_key, True, Emit(ev.ReadyChanged((False, True, False, True))))


def test_a_refusal_is_told_only_to_its_newcomer_and_only_from_the_host() -> None:
    host = Identity.from_seed(b"h" * 32, "host")
    no = Refusal(A, "the table is full")
    t = replace(_table(me=A), host_key=host.public_key)
    assert delivered(t, _entry(host, no, 0), no, None) == [
        Emit(ev.Refused("the table is full"))]
    assert delivered(replace(t, me=B), _entry(host, no, 0), no, None) == []
    assert delivered(t, _entry(GUEST, no, 0), no, None) == []


def test_a_goodbye_gives_its_place_up_then_leaves_the_round_to_the_drops() -> None:
    bye = _entry(GUEST, Goodbye("bye"), 0)
    seats = (*SEATS, Seat(GUEST.public_key, "guest"))
    rs = _round()
    # Between rounds the host gives the seat up first; what the GOODBYE does to
    # the round (``drops.goodbye``) is asked with the phase as the lobby leaves it.
    assert delivered(_table(seats=seats), bye, Goodbye("bye"), rs) == Gone(
        Left(GUEST.public_key, True, [Sign(Roster(SEATS))]), "bye")
    assert delivered(_table(Phase.PLAYING, me=A), bye, Goodbye("bye"), None) == Gone(
        Left(GUEST.public_key, False, []), "bye")
