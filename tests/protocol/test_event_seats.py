"""A table seated by an event, in the lobby's pure rules: only its listed players sit,
and it deals once they all sit or once its turn-up time is over with two."""

from __future__ import annotations

from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.messages import Refuse as Refusal
from p2p_nerts.protocol.messages import Roster, Seat
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.protocol.replica._effects import Sign
from p2p_nerts.protocol.replica._lobby import (
    NOT_LISTED,
    Joined,
    Table,
    auto_deal,
    auto_deal_due,
    join,
    next_auto_deal,
    start_round,
)
from p2p_nerts.protocol.replica._seating import Seating

HOST, A, B, NEW = (bytes([k]) * 32 for k in range(1, 5))


def _table(seats: tuple[Seat, ...], only: frozenset[bytes] | None) -> Table:
    return Table(HOST, HOST, Phase.LOBBY, seats, 0, Variants(), 3.0, 10.0, 8, {}, (),
                 only=only)


def test_only_the_listed_players_sit() -> None:
    listed = frozenset({HOST, A, B})
    t = _table((Seat(HOST, "host"),), listed)
    assert join(t, A, "a", None).then == [Sign(Roster((Seat(HOST, "host"), Seat(A, "a"))))]
    assert join(t, NEW, "new", None) == Joined(NEW, "new", None, False,
                                               [Sign(Refusal(NEW, NOT_LISTED))])
    assert join(_table((Seat(HOST, "host"),), None), NEW, "new", None).then == [
        Sign(Roster((Seat(HOST, "host"), Seat(NEW, "new"))))]


def test_a_turn_up_time_deals_with_two_or_more_and_not_before_it() -> None:
    one = (Seat(HOST, "host"),)
    two = (*one, Seat(A, "a"))
    # All three listed: auto_start 3; the turn-up time is the lobby's next_round_at.
    assert not auto_deal_due(Phase.LOBBY, 2, 3, 10.0, 9.9, (), frozenset())
    assert auto_deal_due(Phase.LOBBY, 2, 3, 10.0, 10.0, (), frozenset())
    assert not auto_deal_due(Phase.LOBBY, 1, 3, 10.0, 50.0, (), frozenset())  # alone
    assert auto_deal_due(Phase.LOBBY, 3, 3, 10.0, 0.0, (), frozenset())  # all sat
    assert next_auto_deal(Phase.LOBBY, 2, 3, 10.0, 4.0, (), frozenset()) == 10.0
    t = _table(two, frozenset({HOST, A, B}))
    assert auto_deal(t, auto_start=3, next_round_at=10.0, now=10.0,
                     sitting_down=()) == start_round(t)
    assert auto_deal(_table(one, None), auto_start=3, next_round_at=10.0, now=11.0,
                     sitting_down=()) is None


def test_a_stand_in_deals_at_its_turn_up_time_only_with_more_than_half_the_table() -> None:
    """An event's stand-in host (``deal_with``: more than half of a table of four)
    deals no game that could not count: at its turn-up time with two of four it
    waits, and deals as the third sits."""
    assert not auto_deal_due(Phase.LOBBY, 2, 4, 10.0, 50.0, (), frozenset(), deal_with=3)
    assert next_auto_deal(Phase.LOBBY, 2, 4, 10.0, 50.0, (), frozenset(),
                          deal_with=3) == float("inf")  # only a seat taken can make it
    assert auto_deal_due(Phase.LOBBY, 3, 4, 10.0, 50.0, (), frozenset(), deal_with=3)
    assert next_auto_deal(Phase.LOBBY, 3, 4, 10.0, 50.0, (), frozenset(), deal_with=3) == 50.0
    two = (Seat(HOST, "host"), Seat(A, "a"))
    s = Seating(HOST, HOST, variants=Variants(), countdown=3.0, drop_after=10.0,
                auto_start=4, auto_next=8.0, max_seats=4, seat_only=(HOST, A, B, NEW),
                deal_by=10.0, deal_with=3)
    s.seats = two
    t = _table(two, frozenset({HOST, A, B, NEW}))
    assert s.auto_deal(t, 50.0) == [] and s.next_round_at == 10.0  # still waiting
    three = (*two, Seat(B, "b"))
    t = _table(three, frozenset({HOST, A, B, NEW}))
    assert s.auto_deal(t, 51.0) == start_round(t)


def test_once_dealt_the_table_seats_only_those_dealt_in() -> None:
    s = Seating(HOST, HOST, variants=Variants(), countdown=3.0, drop_after=10.0,
                auto_start=3, auto_next=8.0, max_seats=3, seat_only=(HOST, A, B),
                deal_by=10.0)
    assert s.next_round_at == 10.0
    s.seats = (Seat(HOST, "host"), Seat(A, "a"))
    s.new_round()  # B never came
    assert s.seat_only == frozenset({HOST, A}) and s.next_round_at is None
    s.seats = (Seat(HOST, "host"),)  # A lost between rounds, and back later: still listed
    s.new_round()
    assert s.seat_only == frozenset({HOST, A})
