"""What floats over a screen: help, the countdown, the quit question, a form, "too small"."""

from __future__ import annotations

import math

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import Window
from prompt_toolkit.layout.controls import FormattedTextControl

from ..protocol.replica import Phase, Replica
from .form import Form, TextField
from .keys import DESCRIPTIONS, PILES, Action, KeyMap, key_name

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
    (Action.SEND,), (Action.TURN, Action.STUCK), (Action.CALL, Action.ROTATE),
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
        ("class:dim", f"Remap keys in {config_file}\n(any of Esc, Enter, ? closes this)"),
    ]
    return out


def countdown_text(r: Replica) -> StyleAndTextTuples:
    rs = r.rs
    if rs is None or rs.play_from is None:
        return []
    left = max(1, math.ceil(rs.play_from - r.now))
    return [("class:countdown", f"  Round {rs.number} starts in {left}…  ")]


def counting_down(r: Replica) -> bool:
    rs = r.rs
    return r.phase is Phase.PLAYING and rs is not None and not rs.started


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
