"""What floats over the table: help, the countdown, the quit question, "too small"."""

from __future__ import annotations

import math

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import Window, WindowAlign
from prompt_toolkit.layout.controls import FormattedTextControl

from ..protocol.replica import Phase, Replica
from .keys import DESCRIPTIONS, Action, KeyMap, key_name

MIN_COLUMNS, MIN_ROWS = 80, 24


def too_small(columns: int, rows: int) -> Window:
    def fragments() -> StyleAndTextTuples:
        return [("class:label",
                 f"\n The terminal is {columns}×{rows}.\n"
                 f" Nerts needs at least {MIN_COLUMNS}×{MIN_ROWS}:\n"
                 " please make the window bigger.\n\n q quits.")]
    return Window(FormattedTextControl(fragments), wrap_lines=True)


def help_text(keys: KeyMap, config_file: str) -> StyleAndTextTuples:
    out: StyleAndTextTuples = [("class:label", "Keys (one press each, nothing waits)\n\n")]
    for action in Action:
        if action in (Action.PILE2, Action.PILE3, Action.PILE4):
            continue
        names = ", ".join(key_name(k) for k in keys[action])
        if action is Action.PILE1:
            names = ", ".join(key_name(keys[a][0]) for a in
                              (Action.PILE1, Action.PILE2, Action.PILE3, Action.PILE4))
            out.append(("class:key", f"  {names:<14}"))
            out.append(("", " work piles: select its card; again: walk up the run;\n"
                            f"{'':17}with a card selected: move it there (or slide it under)\n"))
            continue
        out += [("class:key", f"  {names:<14}"), ("", f" {DESCRIPTIONS[action]}\n")]
    out += [
        ("class:label", "\nMouse\n"),
        ("", "  click a card to select it, click it again to send it;\n"
             "  click a work pile to move the selection there; click the stock to turn.\n"),
        ("class:label", "\nPlay\n"),
        ("", "  Foundations build up by suit from the ace; work piles build down,\n"
             "  alternating colours. Empty your Nerts pile, then call Nerts!\n"
             "  A card marked … is on its way: it may still bounce if someone was first.\n"),
        ("class:dim", f"\nRemap keys in {config_file}   (any of Esc, Enter, ? closes this)"),
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


def centred(fragments: StyleAndTextTuples) -> Window:
    return Window(FormattedTextControl(fragments), align=WindowAlign.CENTER, height=1)
