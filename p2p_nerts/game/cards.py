"""Cards as small ints, so the engine, the wire and the audit share one encoding.

A card is ``owner << 6 | suit << 4 | rank``: owner is the seat (0..7) whose deck
it belongs to, suit 0..3 is ♠ ♥ ♦ ♣, rank 1..13 is A..K. A joker has rank 0 and
its suit field holds the joker's index in its deck (0 or 1). Ints keep the hot
paths of the bots and the simulator cheap (no allocation, dict keys for free)
and are what ``docs/PROTOCOL.md`` puts on the wire.

A *face* is the owner-less part, ``suit << 4 | rank``: what a foundation needs.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Final

SUITS: Final = "♠♥♦♣"
RANK_NAMES = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
ACE: Final = 1
KING: Final = 13
JOKER_RANK: Final = 0
BLACK: Final = 0
RED: Final = 1
MAX_SEATS: Final = 8
JOKER_GLYPH: Final = "¤"

#: Colour of each suit: ♠ black, ♥ red, ♦ red, ♣ black.
SUIT_COLOR: Final = (BLACK, RED, RED, BLACK)


def make_card(owner: int, suit: int, rank: int) -> int:
    """Encode a card; ``rank`` 0 makes joker number ``suit`` of ``owner``'s deck."""
    if not 0 <= owner < MAX_SEATS or not 0 <= suit < 4 or not 0 <= rank <= KING:
        raise ValueError(f"no such card: owner={owner} suit={suit} rank={rank}")
    return owner << 6 | suit << 4 | rank


def owner_of(card: int) -> int:
    return card >> 6


def suit_of(card: int) -> int:
    return (card >> 4) & 3


def rank_of(card: int) -> int:
    return card & 15


def face_of(card: int) -> int:
    return card & 63


def is_joker(card: int) -> bool:
    return card & 15 == JOKER_RANK


def color_of(card: int) -> int:
    return SUIT_COLOR[(card >> 4) & 3]


def make_face(suit: int, rank: int) -> int:
    return suit << 4 | rank


def _stack_bases(face: int) -> frozenset[int]:
    rank, color = face & 15, SUIT_COLOR[(face >> 4) & 3]
    if not ACE <= rank < KING:
        return frozenset()
    return frozenset(make_face(s, rank + 1) for s in range(4) if SUIT_COLOR[s] != color)


#: By face: the faces it may lie on in a work pile (one rank up, the other colour).
STACK_BASES: Final[tuple[frozenset[int], ...]] = tuple(_stack_bases(face) for face in range(64))


def stacks_on(card: int, below: int) -> bool:
    """Whether plain ``card`` may lie on plain ``below`` on a work pile: one rank lower,
    the other colour (jokers are the tableau's business)."""
    return below & 63 in STACK_BASES[card & 63]


def is_valid_card(card: int, *, seats: int = MAX_SEATS, jokers: bool = True) -> bool:
    """Whether ``card`` is a card some deck at this table really holds."""
    if not 0 <= card < seats << 6:
        return False
    rank = card & 15
    if rank == JOKER_RANK:
        return jokers and (card >> 4) & 3 < 2
    return rank <= KING


def face_name(face: int) -> str:
    """``"10♥"``-style name of a face (suit and rank, no owner)."""
    return f"{RANK_NAMES[face & 15]}{SUITS[(face >> 4) & 3]}"


def card_name(card: int) -> str:
    """Human name of a card: ``"Q♠"``, or ``"¤1"`` for a deck's first joker."""
    if is_joker(card):
        return f"{JOKER_GLYPH}{suit_of(card) + 1}"
    return face_name(card)


def full_deck(owner: int, *, jokers: bool = False) -> list[int]:
    """One player's deck in a fixed order: suits ♠♥♦♣, ranks A..K, then jokers."""
    return list(_deck(owner, jokers))  # (a copy: the caller may shuffle it)


@cache
def _deck(owner: int, jokers: bool) -> tuple[int, ...]:
    """:func:`full_deck`, built once per seat: every round deals and counts each deck."""
    deck = [owner << 6 | suit << 4 | rank for suit in range(4) for rank in range(1, KING + 1)]
    if jokers:
        deck += [owner << 6 | 0 << 4 | JOKER_RANK, owner << 6 | 1 << 4 | JOKER_RANK]
    return tuple(deck)


SHUFFLE_DOMAIN: Final = b"p2p-nerts/v1/shuffle\x00"


def shuffle_deck(seed: bytes, owner: int, *, jokers: bool = False) -> list[int]:
    """Shuffle ``owner``'s deck from ``seed``, identically in any language.

    Fisher–Yates from the last index down; each index ``i`` takes a uniform
    ``j`` in ``0..i`` drawn from SHAKE-256(domain || seed) read as big-endian
    uint32 words, rejecting words at or above the largest multiple of ``i + 1``
    (no modulo bias). The exact algorithm is part of ``docs/PROTOCOL.md``
    because every peer re-derives every deck during the audit.
    """
    deck = full_deck(owner, jokers=jokers)
    words = _words(SHUFFLE_DOMAIN + seed)
    for i in range(len(deck) - 1, 0, -1):
        n = i + 1
        limit = (1 << 32) - (1 << 32) % n
        while (word := next(words)) >= limit:
            pass
        j = word % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _words(material: bytes) -> Iterator[int]:
    """Big-endian uint32 words from SHAKE-256, without end: extended on demand
    (rarely), as the XOF's longer output starts with the same bytes. A generator,
    as every round deals a deck to each seat: taking a word resumes it, no call."""
    xof = hashlib.shake_256(material)
    size, done = 512, 0
    while True:
        words = _be_words(xof.digest(size))
        yield from words[done:]
        done, size = len(words), 2 * size


def _be_words(data: bytes) -> tuple[int, ...]:
    return struct.unpack(f">{len(data) // 4}I", data)


def cards_text(cards: Iterable[int]) -> str:
    return " ".join(card_name(c) for c in cards)
