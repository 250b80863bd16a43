"""What floats over a screen: help, the countdown, the quit question, a form, "too small"."""

from __future__ import annotations

import math

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import Window
from prompt_toolkit.layout.controls import FormattedTextControl

from ..game.variants import Variants
from ..protocol.replica import Phase, TableView
from .form import Form, TextField
from .keys import DESCRIPTIONS, PILES, Action, KeyMap, key_name, label

MIN_COLUMNS, MIN_ROWS = 80, 24


def too_small(columns: int, rows: int) -> Window:
    def fragments() -> StyleAndTextTuples:
        return [("class:label",
                 f"\n The terminal is {columns}×{rows}.\n"
                 f" Nerts needs at least {MIN_COLUMNS}×{MIN_ROWS}:\n"
                 " please make the window bigger.\n\n q quits.")]
    return Window(FormattedTextControl(fragments), wrap_lines=True)


#: Help rows: two actions side by side, or one alone; in a round, then between rounds.
_PLAY_ROWS: tuple[tuple[Action, ...], ...] = (
    (Action.SEND,), (Action.DECLARE,), (Action.TURN, Action.STUCK), (Action.CALL, Action.ROTATE),
    (Action.ACTIVATE, Action.CANCEL), (Action.HELP, Action.QUIT),
)
_BETWEEN_ROWS: tuple[tuple[Action, ...], ...] = ((Action.NEXT, Action.READY),
                                                  (Action.SETTINGS, Action.PARTNERS))


def help_text(keys: KeyMap, config_file: str) -> StyleAndTextTuples:
    """The help overlay; it fits an 80×24 terminal."""
    def names(*actions: Action) -> str:
        return ", ".join(key_name(k) for a in actions for k in keys[a])

    piles = " ".join(key_name(keys[a][0]) for a in PILES)
    out: StyleAndTextTuples = [
        ("class:label", "Keys: one press each, nothing waits\n"),
        ("class:key", f"  {names(Action.NERTS)}"), ("", " Nerts card   "),
        ("class:key", names(Action.WASTE)), ("", " waste card   "),
        ("class:key", piles), ("", " work piles\n"),
        ("", "     a pile key selects its card; again on a work pile walks up the run;\n"
             "     with a card selected, a work pile key moves it there (or under it)\n"),
    ]

    def rows(actions: tuple[tuple[Action, ...], ...]) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        for row in actions:
            for i, action in enumerate(row):
                text = DESCRIPTIONS[action]
                out += [("class:key", f"  {names(action):<10}"),
                        ("", f" {text:<26}" if i < len(row) - 1 else f" {text}")]
            out.append(("", "\n"))
        return out

    arrows = names(Action.LEFT, Action.RIGHT, Action.UP, Action.DOWN).replace(",", "")
    out += [
        *rows(_PLAY_ROWS),
        ("class:key", f"  {arrows:<10}"), ("", " move the cursor\n"),
        ("class:label", "Between rounds\n"), *rows(_BETWEEN_ROWS),
        ("class:label", "Mouse\n"),
        ("", "  click a card to select it, again to send it; click a work pile to move\n"
             "  the selection there; click the stock to turn; the foundations to send up\n"),
        ("class:label", "Play\n"),
        ("", "  Foundations go up by suit from the ace; work piles go down in alternating\n"
             "  colours. Empty your Nerts pile, then call Nerts! A card marked … may bounce.\n"),
        ("class:dim", f"Remap keys in {config_file}\n{PAGES}"),
    ]
    return out


PAGES = "(r or Tab: the rules · Esc, Enter or ? closes this)"
"""The help's last line: how to turn its page, how to close it."""


def rules_text(keys: KeyMap, variants: Variants | None) -> StyleAndTextTuples:
    """The help's rules page (``variants``: the table's, when there is one); it fits
    an 80×24 terminal. The whole rules are in docs/RULES.md."""
    stuck, call = label(keys, Action.STUCK), label(keys, Action.CALL)
    out: StyleAndTextTuples = [
        ("class:label", "The rules in short"), ("class:dim", " (all of them: docs/RULES.md)\n"),
        ("", "  Everyone plays at once, no turns. Empty your Nerts pile before the others:\n"
             "  every card of yours on a foundation scores.\n"
             "  Work piles go down in alternating colours (a red 6 on a black 7); a card\n"
             "  moves with the cards on it. An empty work pile takes any card of yours.\n"
             "  Foundations go up by suit from the ace; anyone plays on any of them.\n"
             "  Turn the stock onto the waste; only the waste's top card plays.\n"),
        ("", "  The table's clock orders every play: a card that comes too late bounces\n"
             "  back to you. Two at the very same moment both stay (strict ties: one,\n"
             "  by a fair draw).\n"),
        ("class:label", "Stuck\n"),
        ("", "  No move left? "), ("class:key", stuck), ("", " votes stuck. All stuck: every "
                                                          "stock rotates. All stuck again\n"
                                                          "  with nothing up since: the "
                                                          "round ends.\n"),
    ]
    if variants is not None and variants.lone_rotate:
        out += [("", "  Stuck alone: "), ("class:key", label(keys, Action.ROTATE)),
                ("", " puts your top stock card at the bottom.\n")]
    out += [
        ("class:label", "Nerts!\n"),
        ("", "  Nerts pile empty: "), ("class:key", call),
        ("", " calls it. Plays made before the call count, later ones\n"
             "  come back. +1 per own card up, −2 per card left in your Nerts pile.\n"
             "  Rounds go on until someone reaches the target: the highest total wins.\n"),
    ]
    if variants is not None and variants.jokers:
        out += [("class:label", "Jokers "),
                ("", "¤1 ¤2 stand for any card: "), ("class:key", label(keys, Action.DECLARE)),
                ("", " on one chooses which (up, or covered).\n")]
    if variants is not None:
        out += [("class:label", "This table: "), *_wrapped(variants.words(), 64)]
    out.append(("class:dim", "(r or Tab: the keys · Esc, Enter or ? closes this)"))
    return out


def _wrapped(words: str, width: int) -> StyleAndTextTuples:
    """A rules line of " · "-separated parts, broken between parts to ``width``."""
    lines = [""]
    for part in words.split(" · "):
        joined = f"{lines[-1]} · {part}" if lines[-1] else part
        if len(joined) > width and lines[-1]:
            lines.append(part)
        else:
            lines[-1] = joined
    return [("", "\n  · ".join(lines) + "\n")]


def countdown_text(r: TableView) -> StyleAndTextTuples:
    rnd = r.round
    if rnd is None or rnd.play_from is None:
        return []
    left = max(1, math.ceil(rnd.play_from - r.now))
    return [("class:countdown", f"  Round {rnd.number} starts in {left}…  ")]


def counting_down(r: TableView) -> bool:
    rnd = r.round
    return r.phase is Phase.PLAYING and rnd is not None and not rnd.started


def confirm_text() -> StyleAndTextTuples:
    return [("class:confirm", " Leave the table? y: yes · n or Esc: no ")]


def form_text(form: Form) -> StyleAndTextTuples:
    """A form: one row per field (the current one marked), its error, then its keys."""
    width = max(len(f.label) for f in form.fields)
    out: StyleAndTextTuples = []
    for row, field in enumerate(form.fields):
        here = row == form.row
        out.append(("class:key", "▸ " if here else "  "))
        out.append(("class:label", f"{field.label:<{width}}  "))
        if isinstance(field, TextField):
            out += [("", "  "), ("class:selected" if here else "", field.text),
                    ("class:cursor", "_" if here else " ")]
        else:
            out += [("class:dim", "◂ " if here else "  "),
                    ("class:selected" if here else "", field.shown),
                    ("class:dim", " ▸" if here else "")]
        out.append(("", "\n"))
    if form.error:
        out.append(("class:msg.error", f"\n{form.error}\n"))
    out.append(("class:dim", f"\n↑↓ field  ←→ change  Enter: {form.action}  Esc: cancel"))
    return out
