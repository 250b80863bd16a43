"""Cards as ints, decks, the deterministic shuffle, and the variants value."""

from __future__ import annotations

import hashlib

import pytest

from p2p_nerts.game.cards import (
    ACE,
    BLACK,
    KING,
    RED,
    SHUFFLE_DOMAIN,
    _words,
    card_name,
    cards_text,
    color_of,
    face_name,
    face_of,
    full_deck,
    is_joker,
    is_valid_card,
    make_card,
    make_face,
    owner_of,
    rank_of,
    shuffle_deck,
    stacks_on,
    suit_of,
)
from p2p_nerts.game.variants import VariantError, Variants

from ..gamekit import c


def test_encoding_round_trips_every_card_of_every_seat() -> None:
    seen = set()
    for owner in range(8):
        for suit in range(4):
            for rank in range(ACE, KING + 1):
                card = make_card(owner, suit, rank)
                assert (owner_of(card), suit_of(card), rank_of(card)) == (owner, suit, rank)
                assert face_of(card) == make_face(suit, rank)
                assert not is_joker(card)
                assert is_valid_card(card, seats=owner + 1, jokers=False)
                seen.add(card)
    assert len(seen) == 8 * 52
    assert max(seen) < 1024  # fits the wire's 0..1023


@pytest.mark.parametrize(("owner", "suit", "rank"), [(8, 0, 1), (-1, 0, 1), (0, 4, 1),
                                                     (0, 0, 14), (0, -1, 3)])
def test_make_card_rejects_impossible_cards(owner: int, suit: int, rank: int) -> None:
    with pytest.raises(ValueError):
        make_card(owner, suit, rank)


def test_colours_red_hearts_diamonds_black_spades_clubs() -> None:
    assert color_of(c("5H")) == color_of(c("5D")) == RED
    assert color_of(c("5S")) == color_of(c("5C")) == BLACK


def test_stacking_rule_one_rank_down_other_colour() -> None:
    deck = full_deck(0) + full_deck(5)
    for card in deck:
        for below in deck:
            expected = (rank_of(card) == rank_of(below) - 1
                        and color_of(card) != color_of(below))
            assert stacks_on(card, below) == expected, (card_name(card), card_name(below))
    assert stacks_on(c("6H"), c("7S")) and stacks_on(c("6D", 2), c("7C", 4))
    assert not stacks_on(c("6H"), c("7D")) and not stacks_on(c("KS"), c("AH"))


def test_names() -> None:
    assert card_name(c("10H")) == "10♥"
    assert card_name(c("QS", 3)) == "Q♠"
    assert card_name(c("AD")) == "A♦"
    assert face_name(make_face(3, KING)) == "K♣"
    assert card_name(c("J0")) == "¤1" and card_name(c("J1")) == "¤2"
    assert cards_text([c("AS"), c("2H")]) == "A♠ 2♥"


def test_jokers_are_rank_zero_and_only_two_per_deck() -> None:
    j0, j1 = c("J0", 5), c("J1", 5)
    assert is_joker(j0) and is_joker(j1) and owner_of(j1) == 5
    assert is_valid_card(j0) and is_valid_card(j1)
    assert not is_valid_card(j0, jokers=False)
    assert not is_valid_card(make_card(0, 2, 0))  # a third joker does not exist
    assert not is_valid_card(c("AS", 4), seats=4)  # seat 4 is not at a 4-seat table
    assert not is_valid_card(-1) and not is_valid_card(14)  # rank 14 of seat 0


def test_full_deck() -> None:
    deck = full_deck(2)
    assert len(deck) == len(set(deck)) == 52
    assert all(owner_of(x) == 2 and not is_joker(x) for x in deck)
    assert deck[0] == c("AS", 2) and deck[-1] == c("KC", 2)
    jdeck = full_deck(2, jokers=True)
    assert len(jdeck) == len(set(jdeck)) == 54
    assert jdeck[-2:] == [c("J0", 2), c("J1", 2)]


@pytest.mark.parametrize("jokers", [False, True])
def test_shuffle_is_a_deterministic_permutation(jokers: bool) -> None:
    a = shuffle_deck(b"seed", 1, jokers=jokers)
    assert sorted(a) == sorted(full_deck(1, jokers=jokers))
    assert a == shuffle_deck(b"seed", 1, jokers=jokers)
    assert a != shuffle_deck(b"seed2", 1, jokers=jokers)
    assert a != full_deck(1, jokers=jokers)
    # The permutation depends on the seed only; the owner only tags the cards.
    assert [face_of(x) for x in shuffle_deck(b"seed", 3, jokers=jokers)] == [
        face_of(x) for x in a
    ]


def _reference_shuffle(seed: bytes, owner: int) -> list[int]:
    """The documented algorithm written out plainly, independent of the engine's code."""
    deck = full_deck(owner)
    stream = hashlib.shake_256(SHUFFLE_DOMAIN + seed).digest(4096)
    pos = 0
    for i in range(len(deck) - 1, 0, -1):
        n = i + 1
        while True:
            word = int.from_bytes(stream[pos:pos + 4], "big")
            pos += 4
            if word < (1 << 32) - (1 << 32) % n:
                break
        j = word % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@pytest.mark.parametrize("seed", [bytes(range(32)), b"", b"abc" * 50])
def test_shuffle_matches_the_documented_algorithm(seed: bytes) -> None:
    assert shuffle_deck(seed, 4) == _reference_shuffle(seed, 4)


def test_shuffle_vector_is_stable() -> None:
    """Pinned output (taken from the engine; the reference above agrees)."""
    deck = shuffle_deck(bytes(range(32)), 0)
    assert deck[:5] == [40, 3, 8, 9, 29]
    assert hashlib.sha256(bytes(deck)).hexdigest() == (
        "3eea930b6cd8ef4f19d8d2c55bdfa69d91d229780c791f066030d4b96c3aa84a")


def test_word_stream_extends_the_same_xof() -> None:
    material = SHUFFLE_DOMAIN + b"x"
    stream = _words(material)
    words = [next(stream) for _ in range(300)]  # 1200 bytes: past the first 512
    raw = hashlib.shake_256(material).digest(1200)
    assert words == [int.from_bytes(raw[i:i + 4], "big") for i in range(0, 1200, 4)]


# -------------------------------------------------------------------- variants
def test_variant_defaults_are_the_classic_game() -> None:
    v = Variants()
    assert (v.stock_turn, v.strict_ties, v.lone_rotate, v.penalty, v.target, v.teams,
            v.jokers) == (3, False, False, True, 100, "none", False)
    assert v.summary() == "turn3 ties:both pen tgt100"
    assert v.words() == "turn 3 · both stay on ties · −2 per Nerts card · to 100"
    assert Variants(stock_turn=1, strict_ties=True, penalty=False, target=50, lone_rotate=True,
                    jokers=True, teams="pairs").summary() == (
        "turn1 ties:strict nopen tgt50 lone jokers pairs")
    assert Variants(stock_turn=1, strict_ties=True, penalty=False, target=50, lone_rotate=True,
                    jokers=True, teams="share").words() == (
        "turn 1 · one stays on ties · no penalty · to 50 · stuck alone may rotate · jokers"
        " · two at each tableau")


@pytest.mark.parametrize("kwargs", [{"stock_turn": 2}, {"target": 0}, {"target": 10_001},
                                    {"teams": "trios"}])
def test_bad_variants_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(VariantError):
        Variants(**kwargs)  # type: ignore[arg-type]


def test_player_counts() -> None:
    """2 to 8 players; pairs two teams or more; share-a-deck 6 or 8 players."""
    for seats in (2, 8):
        Variants().check_players(seats)
    for bad in (0, 1, 9):
        with pytest.raises(VariantError, match="2 to 8 players"):
            Variants().check_players(bad)
    for seats in (4, 6, 8):
        Variants(teams="pairs").check_players(seats)
    for bad in (2, 3, 5):
        with pytest.raises(VariantError, match="pairs need 4, 6 or 8 players"):
            Variants(teams="pairs").check_players(bad)
    for tableaux in (3, 4):  # six or eight players, two at each
        Variants(teams="share").check_players(tableaux)
    for bad in (1, 2, 5, 8):
        with pytest.raises(VariantError, match="share-a-deck needs 6 or 8 players"):
            Variants(teams="share").check_players(bad)
