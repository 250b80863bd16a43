"""Helpers for the rules-engine tests: readable cards, hand-made decks, snapshots."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from p2p_nerts.game.cards import full_deck, make_card
from p2p_nerts.game.tableau import Tableau

_SUITS = {"S": 0, "H": 1, "D": 2, "C": 3, "♠": 0, "♥": 1, "♦": 2, "♣": 3}
_RANKS = {"A": 1, "J": 11, "Q": 12, "K": 13}


def c(text: str, owner: int = 0) -> int:
    """A card from text: ``c("10H")``, ``c("QS", 2)``, ``c("J0")`` / ``c("J1")`` for jokers."""
    if text in ("J0", "J1"):
        return make_card(owner, int(text[1]), 0)
    rank_text, suit_text = text[:-1], text[-1].upper()
    rank = _RANKS[rank_text] if rank_text in _RANKS else int(rank_text)
    return make_card(owner, _SUITS[suit_text], rank)


def cs(text: str, owner: int = 0) -> list[int]:
    """Several cards: ``cs("KS QH JC")``."""
    return [c(t, owner) for t in text.split()]


def deck_for(owner: int = 0, *, nerts: Sequence[int] = (), work: Sequence[int] = (),
             stock: Sequence[int] = (), jokers: bool = False,
             stock_len: int | None = None) -> list[int]:
    """A full deck dealt so that the named cards land where asked.

    ``nerts`` is the Nerts pile bottom to top (the last is the face-up top; fewer
    than 13 cards are padded underneath), ``work`` the first work cards, ``stock``
    the first stock cards in the order they will be turned. Every other card of
    the deck fills the gaps in ``full_deck`` order. ``stock_len`` cuts the stock
    short (a partial deck, for small stock scenarios).
    """
    named = [*nerts, *work, *stock]
    if len(set(named)) != len(named):
        raise ValueError("a card is named twice")
    rest = [x for x in full_deck(owner, jokers=jokers) if x not in set(named)]
    pad = 13 - len(nerts)
    nerts_pile = [*rest[:pad], *nerts]
    rest = rest[pad:]
    work_cards = [*work, *rest[: 4 - len(work)]]
    rest = rest[4 - len(work):]
    stock_cards = [*stock, *rest]
    if stock_len is not None:
        stock_cards = stock_cards[:stock_len]
    return nerts_pile + work_cards + stock_cards


def tableau(owner: int = 0, *, nerts: Sequence[int] = (), work: Sequence[Sequence[int]] = (),
            stock: Sequence[int] = (), waste: Sequence[int] = (), stock_turn: int = 3,
            jokers: bool = False) -> Tableau:
    """A tableau in an arbitrary position (for move tests): piles given bottom to top.

    ``stock`` is in turn order (first card turned first). The log is cleared.
    """
    tab = Tableau(owner, deck_for(owner, jokers=jokers), stock_turn=stock_turn, jokers=jokers)
    tab.nerts = list(nerts)
    tab.work = [list(p) for p in work] + [[] for _ in range(4 - len(work))]
    tab.stock = list(reversed(stock))
    tab.waste = list(waste)
    return tab


#: Whether the engine imported is the compiled build's (``NERTS_COMPILE=1``, ``setup.py``):
#: plain Python can neither subclass nor deep-copy its classes.
ENGINE_COMPILED = hasattr(Tableau, "__mypyc_attrs__")
#: Everything a tableau holds: its slots (pure Python), or the attributes
#: mypyc lists for its compiled class (the compiled build).
STATE: tuple[str, ...] = (getattr(Tableau, "__slots__", None)
                          or Tableau.__mypyc_attrs__)  # type: ignore[attr-defined]


def snap(tab: Tableau) -> dict[str, Any]:
    """A deep snapshot of everything a move may change."""
    return copy.deepcopy({name: getattr(tab, name) for name in STATE})


def where(tab: Tableau) -> list[int]:
    """Every card the tableau holds, sorted (for 'nothing lost' checks)."""
    return sorted(tab.cards())
