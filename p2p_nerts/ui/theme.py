"""Colours and card glyphs: one place decides how a card looks.

Cards are drawn with width-1 glyphs only (the rank, then ♠♥♦♣ or ¤ for a
joker): prompt_toolkit measures fragments by ``len()`` to place click
handlers, so a double-width glyph would shift every click after it. Colours
use the terminal's own ANSI palette and never set a background, so the table
reads on dark and light themes alike; black suits keep the default colour.
"""

from __future__ import annotations

from prompt_toolkit.styles import Style

from ..game.cards import JOKER_RANK, card_name

#: Width of one card on screen: rank right-aligned in two cells, then the suit.
CARD_WIDTH = 3

_BASE = {
    "title": "reverse bold",
    "rule": "",
    "rule.title": "bold",
    "label": "bold",
    "key": "bold underline",
    "dim": "#888888",
    "empty": "#888888",
    "selected": "reverse",
    "cursor": "underline",
    "pending": "italic",
    "landed": "ansigreen bold",  # where a card just went up, for a moment
    "bounced": "ansiyellow bold",  # where a card just bounced
    "you": "bold",
    "good": "ansigreen bold",
    "warn": "ansiyellow bold",
    "msg.event": "",
    "msg.error": "ansired bold",
    "help": "",
    "help.frame": "bold",
    "countdown": "reverse bold",
    "confirm": "reverse bold",
    "suit.0": "bold",
    "suit.1": "ansired bold",
    "suit.2": "ansired bold",
    "suit.3": "bold",
    "suit.joker": "ansimagenta bold",
}

#: The four-colour deck: diamonds blue and clubs green, told apart at a glance.
_FOUR_COLOUR = {"suit.2": "ansiblue bold", "suit.3": "ansigreen bold"}


def build_style(*, four_colour: bool) -> Style:
    rules = dict(_BASE)
    if four_colour:
        rules.update(_FOUR_COLOUR)
    return Style.from_dict(rules)


def suit_class(card: int) -> str:
    """The style class of a card (or face): by suit, jokers apart."""
    if card & 15 == JOKER_RANK:
        return "class:suit.joker"
    return f"class:suit.{(card >> 4) & 3}"


def card_text(card: int) -> str:
    """A card padded to :data:`CARD_WIDTH` cells: ``" 7♥"``, ``"10♠"``, ``" ¤1"``."""
    return card_name(card).rjust(CARD_WIDTH)


def card_fragment(card: int, extra: str = "") -> tuple[str, str]:
    return (f"{suit_class(card)} {extra}".rstrip(), card_text(card))


def card_or_gap(card: int | None) -> tuple[str, str]:
    """A card, or a dot where a pile is empty."""
    return card_fragment(card) if card is not None else ("class:empty", "·".rjust(CARD_WIDTH))
