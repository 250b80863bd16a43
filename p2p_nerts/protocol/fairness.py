"""Fair shuffle by commit–reveal: nobody chooses their own deck, nobody sees another's.

Before a round each seat draws two secrets: a *deck secret* (kept until the
audit) and a *joint share* (revealed once every seat has committed). The joint
value mixes every share, so it is unpredictable while one seat is honest; each
deck is shuffled from its owner's deck secret and the joint value. A cheater
cannot grind their deck secret after seeing the joint value because it was
committed first, and the audit checks it against that commitment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ..game.cards import shuffle_deck

SECRET_LEN = 32
_COMMIT = b"p2p-nerts/v1/commit\x00"
_JOINT = b"p2p-nerts/v1/joint\x00"
_DECK = b"p2p-nerts/v1/deck\x00"


def commitment(secret: bytes) -> bytes:
    """The published hash of a secret (deck secret or joint share)."""
    return hashlib.sha256(_COMMIT + secret).digest()


def joint_value(table_id: bytes, round_no: int, shares: Sequence[bytes]) -> bytes:
    """The round's joint value from every seat's share, in seat order."""
    h = hashlib.sha256(_JOINT + table_id + round_no.to_bytes(4, "big"))
    for share in shares:
        h.update(share)
    return h.digest()


def deck_seed(deck_secret: bytes, joint: bytes) -> bytes:
    return hashlib.sha256(_DECK + deck_secret + joint).digest()


def deal_for(seat: int, deck_secret: bytes, joint: bytes, *, jokers: bool) -> list[int]:
    """Seat ``seat``'s deck in dealing order (see ``game.cards.shuffle_deck``)."""
    return shuffle_deck(deck_seed(deck_secret, joint), seat, jokers=jokers)
