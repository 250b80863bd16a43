"""The shared foundations: building up, collisions, ties, the Nerts cut-off."""

from __future__ import annotations

import copy
import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2p_nerts.game.cards import make_face
from p2p_nerts.game.foundations import Fate, FoundationLog, Play, before, fold, order
from p2p_nerts.game.tableau import NERTS, WASTE

from ..gamekit import c

AS0 = c("AS", 0)  # pile ids: the ace (or joker) that started the pile
AS1 = c("AS", 1)
AH2 = c("AH", 2)


def play(lamport: int, author: int, card: str, pile: int, *, src: int = NERTS,
         declared: int = 0) -> Play:
    return Play(lamport, author, c(card, author), pile, src, declared)


def ace(lamport: int, author: int, suit: str = "S") -> Play:
    card = c("A" + suit, author)
    return Play(lamport, author, card, card, NERTS)


def fates(log: FoundationLog, plays: list[Play]) -> list[Fate]:
    return [log.fate(p.key) for p in plays]


def test_a_pile_builds_up_in_suit_from_an_ace_to_the_king() -> None:
    plays = [ace(1, 0)] + [play(r, r % 3, f"{n}S", AS0) for r, n in
                           enumerate(["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q",
                                      "K"], start=2)]
    log = fold(plays)
    assert fates(log, plays) == [Fate.STAY] * 13
    assert log.piles[AS0].complete and log.completed() == 1
    assert log.piles[AS0].wants is None
    assert log.pile_for(make_face(0, 13)) is None
    # A completed pile is out of play but its cards still score.
    assert [log.cards_of(s) for s in range(3)] == [5, 4, 4]
    assert sorted(log.staying_cards()) == sorted(p.card for p in plays)


@pytest.mark.parametrize(("card", "why"), [("3S", "skips a rank"), ("2H", "other suit"),
                                           ("AS", "an ace does not go on a pile")])
def test_wrong_cards_bounce(card: str, why: str) -> None:
    log = fold([ace(1, 0)])
    bad = play(2, 1, card, AS0)
    assert log.add(bad) == [bad]
    assert log.fate(bad.key) is Fate.BOUNCE, why
    assert log.pile_for(make_face(0, 2)) == AS0  # the pile still waits for its 2


def test_outcome_is_the_fate_and_the_play_of_a_key() -> None:
    plays = [ace(1, 0), play(2, 1, "2S", AS0), play(2, 0, "2S", AS0), play(3, 1, "4S", AS0)]
    log = fold(plays)
    assert {log.outcome(p.key)[0] for p in plays} == {Fate.STAY, Fate.BOUNCE}
    assert [log.outcome(p.key) for p in plays] == [(log.fate(p.key), p) for p in plays]
    assert log.outcome((plays[1].lamport, plays[1].author)) == (log.fate(plays[1].key), plays[1])
    with pytest.raises(KeyError):
        log.outcome((9, 9))


def test_a_play_on_a_pile_nobody_started_bounces() -> None:
    log = fold([play(3, 1, "2S", AS0)])
    assert log.fate((3, 1)) is Fate.BOUNCE
    assert log.cards_of(1) == 0 and log.pile_for(make_face(0, 3)) is None


def test_an_ace_starts_only_its_own_pile() -> None:
    log = fold([ace(1, 0), Play(2, 1, AS1, AS0, NERTS)])
    assert log.fate((2, 1)) is Fate.BOUNCE


def test_several_piles_of_one_suit() -> None:
    log = fold([ace(1, 1), ace(2, 0)])
    assert log.pile_for(make_face(0, 2)) == min(AS0, AS1)  # the lowest-numbered pile
    log.add(play(3, 2, "2S", AS0))
    assert log.pile_for(make_face(0, 2)) == AS1
    assert log.pile_for(make_face(0, 3)) == AS0
    assert set(log.wanted_faces()) == {make_face(0, 2), make_face(0, 3)}
    assert log.pile_for(make_face(0, 1)) is None  # aces start piles: none "takes" one


def test_first_in_lamport_order_wins_whatever_the_arrival_order() -> None:
    early, late = play(5, 2, "2S", AS0), play(6, 1, "2S", AS0)
    for arrival in itertools.permutations([ace(1, 0), early, late]):
        log = fold(arrival)
        assert log.fate(early.key) is Fate.STAY and log.fate(late.key) is Fate.BOUNCE
        assert log.first_over(late.key) == early


def drawn(lamport: int, seats: range | list[int]) -> list[int]:
    """``seats`` as plays of theirs at ``lamport`` are ordered."""
    return sorted(seats, key=lambda seat: order((lamport, seat)))


def test_the_draw_is_fixed() -> None:
    """Every peer, of every version that plays together, must order ties alike: these
    values are part of the protocol (docs/PROTOCOL.md)."""
    assert [drawn(lamport, range(4)) for lamport in range(4, 9)] == [
        [1, 2, 3, 0], [2, 3, 0, 1], [2, 1, 0, 3], [2, 0, 3, 1], [3, 1, 0, 2]]
    # The value the reference C of SplitMix64 (Vigna) gives for (5 << 16 | 1).
    assert order((5, 1)) == (5, 12602055934350809113, 1)


@given(a=st.tuples(st.integers(0, 2**53), st.integers(0, 15)),
       b=st.tuples(st.integers(0, 2**53), st.integers(0, 15)), same=st.booleans())
def test_before_is_the_order_without_drawing_unless_it_must(
        a: tuple[int, int], b: tuple[int, int], same: bool) -> None:
    if same:
        b = (a[0], b[1])
    assert before(a, b) == (order(a) < order(b))
    assert not (before(a, b) and before(b, a))
    assert a == b or before(a, b) or before(b, a)


def test_same_lamport_time_from_different_authors() -> None:
    """Equal times are ordered by the draw: at time 5, seat 2 before seat 1."""
    assert drawn(5, [1, 2]) == [2, 1]
    a, b = play(5, 1, "2S", AS0), play(5, 2, "3S", AS0)  # (5, 2) is ordered first
    log = fold([ace(1, 0), a, b])
    assert log.fate(b.key) is Fate.BOUNCE and log.fate(a.key) is Fate.STAY
    a, b = play(5, 2, "2S", AS0), play(5, 1, "3S", AS0)
    log = fold([ace(1, 0), a, b])
    assert log.fate(b.key) is log.fate(a.key) is Fate.STAY


def test_ties_favour_no_seat() -> None:
    """Over many Lamport times, between any two of eight seats each wins about half
    the ties, and each seat is first of all eight about an eighth of the time (a
    fixed seat order, or one turning with the time, fails this)."""
    times = range(1, 4001)
    for a, b in itertools.combinations(range(8), 2):
        wins = sum(order((t, a)) < order((t, b)) for t in times)
        assert 0.45 < wins / len(times) < 0.55, (a, b, wins)
    firsts = Counter(drawn(t, range(8))[0] for t in times)
    assert all(0.1 < firsts[seat] / len(times) < 0.15 for seat in range(8)), firsts


def test_late_arrival_returns_every_play_whose_fate_changed() -> None:
    log = fold([ace(1, 0)])
    second, third = play(7, 1, "2S", AS0), play(8, 1, "3S", AS0)
    assert log.add(second) == [second] and log.add(third) == [third]
    first = play(6, 2, "2S", AS0)
    assert log.add(first) == [first, second]  # the 3S stays either way
    assert fates(log, [first, second, third]) == [Fate.STAY, Fate.BOUNCE, Fate.STAY]
    rival = play(6, 3, "3S", AS0)  # now a 3S comes first: the old one bounces
    assert log.add(rival) == [rival, third]
    assert log.add(first) == []  # a duplicate delivery is a no-op
    assert len(log) == 5 and first.key in log


def test_same_time_tie_both_stay_and_building_goes_on() -> None:
    a, b = play(5, 1, "2S", AS0), play(5, 2, "2S", AS0)
    nxt = play(6, 3, "3S", AS0)
    for arrival in itertools.permutations([ace(1, 0), a, b, nxt]):
        log = fold(arrival)
        assert fates(log, [a, b, nxt]) == [Fate.STAY] * 3
        assert log.cards_of(1) == log.cards_of(2) == 1
        assert log.pile_for(make_face(0, 4)) == AS0


def test_same_rank_at_different_times_is_no_tie() -> None:
    log = fold([ace(1, 0), play(4, 1, "2S", AS0), play(5, 2, "2S", AS0)])
    assert log.fate((5, 2)) is Fate.BOUNCE


def test_tie_only_with_the_pile_top_time() -> None:
    first, second, third = drawn(5, [1, 2, 3])
    plays = [play(5, first, "2S", AS0), play(5, second, "3S", AS0), play(5, third, "2S", AS0)]
    log = fold([ace(1, 0), *plays])
    assert fates(log, plays) == [Fate.STAY, Fate.STAY, Fate.BOUNCE]


def test_tied_plays_that_do_not_fit_both_bounce() -> None:
    log = fold([ace(1, 0), play(5, 1, "3S", AS0), play(5, 2, "3S", AS0)])
    assert log.fate((5, 1)) is log.fate((5, 2)) is Fate.BOUNCE


@pytest.mark.parametrize(("lamport", "first"), [(4, 1), (5, 2), (6, 2), (8, 1)])
def test_strict_ties_let_only_the_first_stay(lamport: int, first: int) -> None:
    a, b = play(lamport, first, "2S", AS0), play(lamport, 3 - first, "2S", AS0)
    for arrival in itertools.permutations([ace(1, 0), b, a]):
        log = fold(arrival, strict_ties=True)
        assert fates(log, [a, b]) == [Fate.STAY, Fate.BOUNCE]
        assert log.first_over(b.key) == a


def test_cutoff_cuts_plays_after_the_nerts_call() -> None:
    plays = [ace(1, 0), play(4, 1, "2S", AS0), play(8, 2, "3S", AS0), ace(9, 2, "H"),
             play(10, 0, "4S", AS0)]
    log = fold(plays)
    changed = log.set_cutoff((7, 3))
    assert set(changed) == set(plays[2:])
    assert fates(log, plays) == [Fate.STAY, Fate.STAY, Fate.CUT, Fate.CUT, Fate.CUT]
    assert [log.cards_of(s) for s in range(3)] == [1, 1, 0]
    late = play(11, 1, "3S", AS0)
    assert log.add(late) == [late] and log.fate(late.key) is Fate.CUT
    early = play(6, 3, "3S", AS0)  # still in the air at the call: it lands and counts
    assert log.add(early) == [early] and log.fate(early.key) is Fate.STAY
    assert fold([*plays, late, early], cutoff=(7, 3)).state_hash() == log.state_hash()


def test_a_play_at_the_call_time_counts_if_drawn_before_the_call() -> None:
    """Seat 3 calls at time 7, where the draw orders the seats 2, 0, 3, 1."""
    assert drawn(7, range(4)) == [2, 0, 3, 1]
    plays = [ace(1, 0), play(7, 2, "2S", AS0), ace(7, 0, "H"), play(7, 1, "3S", AS0)]
    log = fold(plays, cutoff=(7, 3))
    assert fates(log, plays) == [Fate.STAY, Fate.STAY, Fate.STAY, Fate.CUT]


def test_jokers_show_their_declared_face() -> None:
    joker = c("J0", 1)
    jace = Play(2, 1, joker, joker, WASTE, declared=make_face(1, 1))
    two = Play(3, 2, c("2H", 2), joker, NERTS)
    jthree = Play(4, 3, c("J1", 3), joker, NERTS, declared=make_face(1, 3))
    log = fold([jace, two, jthree])
    assert jace.face == make_face(1, 1) and two.face == two.card & 63
    assert fates(log, [jace, two, jthree]) == [Fate.STAY] * 3
    assert log.pile_for(make_face(1, 4)) == joker
    assert [log.cards_of(s) for s in (1, 2, 3)] == [1, 1, 1]
    undeclared = Play(5, 0, c("J0", 0), joker, NERTS)
    assert log.add(undeclared) and log.fate(undeclared.key) is Fate.BOUNCE


def test_state_hash_depends_on_staying_cards_only() -> None:
    base = [ace(1, 0), play(2, 1, "2S", AS0)]
    with_bounce = [*base, play(3, 2, "2S", AS0)]
    assert fold(base).state_hash() == fold(with_bounce).state_hash()
    assert fold(base).state_hash() != fold(base[:1]).state_hash()
    assert fold([]).state_hash() == FoundationLog().state_hash()
    assert len(fold(base).state_hash()) == 32


def test_first_over_without_a_winner() -> None:
    log = fold([play(3, 1, "2S", AS0)])
    assert log.first_over((3, 1)) is None
    log = fold([ace(1, 0), play(3, 1, "4S", AS0)])
    assert log.first_over((3, 1)) == log.play((1, 0))  # the top it did not fit on


def test_a_play_is_a_value() -> None:
    """Equal and hashed by its fields, printed by them, and copied as itself (a
    replica's deep copy shares it), like the frozen dataclass it replaces."""
    a, same, other = play(3, 1, "2S", AS0), play(3, 1, "2S", AS0), play(3, 1, "2S", AS1)
    assert a == same and hash(a) == hash(same) and a != other and a != a.key
    assert len({a, same, other}) == 2
    assert copy.deepcopy(a) is a and copy.copy(a) is a
    assert repr(a) == (f"Play(lamport=3, author=1, card={c('2S', 1)}, pile={AS0}, "
                       f"src={NERTS}, declared=0)")
    assert (a.key, a.face) == ((3, 1), c("2S") & 63)
