"""prompt_toolkit's screen diff, passing over the rows that did not change.

A frame reaches the terminal as the difference between the new screen and
the last one: prompt_toolkit's renderer walks every row of both, cell by
cell in Python, even where nothing changed. On a 200x60 table that was a
third of a frame when one card moved. The table's text blocks
(:class:`~p2p_nerts.ui.widgets.Text`) write the very same cell objects where
what they show did not change, so a whole row compares at once, at C speed
(dict equality tries identity first). The rows found equal are handed to
prompt_toolkit's diff empty on both sides, which it passes over writing
nothing, exactly as it would have for the rows themselves; it draws the
others as ever, so what reaches the terminal is byte for byte the same.

The diff fills every row it walks with blank cells. It gets copies of the
rows that changed: filled rows would never again compare equal to the same
row drawn afresh, and every frame after would walk them again.

In a row that changed, the diff still steps column by column over the
stretches where nothing is drawn, in this frame or the last (the gaps
between the others' boxes, their padding: most of the columns it steps over
at 200x60). In the copies each such stretch is one blank cell as wide as
the stretch, the same on both sides, which the diff steps over at once,
writing nothing, as it would have stepped over each of its columns.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import prompt_toolkit.renderer
from prompt_toolkit.application import Application
from prompt_toolkit.data_structures import Point, Size
from prompt_toolkit.layout.screen import Char, Screen, Transparent
from prompt_toolkit.output import ColorDepth, Output

#: prompt_toolkit's own diff, which does the drawing (and which the tests compare with).
STOCK_DIFF = prompt_toolkit.renderer._output_screen_diff
_BLANK = Char(" ", Transparent)  # what a screen holds where nothing is drawn

Rows = defaultdict[int, defaultdict[int, Char]]

#: An unchanged row as the diff is given it, on both sides: one blank cell, the
#: only one it reads in a row with nothing drawn (so it adds none).
_PASSED_OVER: defaultdict[int, Char] = defaultdict(lambda: _BLANK, {0: _BLANK})


def output_screen_diff(app: Application[Any], output: Output, screen: Screen,
                       current_pos: Point, color_depth: ColorDepth,
                       previous_screen: Screen | None, last_style: str | None, is_done: bool,
                       full_screen: bool, attrs_for_style_string: Any,
                       style_string_has_style: Any, size: Size,
                       previous_width: int) -> tuple[Point, str | None]:
    """prompt_toolkit's diff of ``screen`` against ``previous_screen``, given only the
    rows that differ (the same arguments, the same result).

    A first frame, a last one and a frame at a new width are drawn whole, as
    prompt_toolkit draws them: every row, whatever the last screen held (the
    stretches where nothing is drawn stepped over at once there too).
    """
    def diff() -> tuple[Point, str | None]:
        return STOCK_DIFF(app, output, screen, current_pos, color_depth, previous_screen,
                          last_style, is_done, full_screen=full_screen,
                          attrs_for_style_string=attrs_for_style_string,
                          style_string_has_style=style_string_has_style, size=size,
                          previous_width=previous_width)

    # A wide blank counts towards a row's length as a blank does only in no style.
    over_blanks = not style_string_has_style[Transparent]
    if previous_screen is None or is_done or previous_width != size.columns:
        if not over_blanks:
            return diff()
        # Against a screen with nothing on it (which the diff takes then).
        drawn = screen.data_buffer
        whole: Rows = defaultdict(drawn.default_factory)
        for y, row in drawn.items():
            whole[y] = defaultdict(row.default_factory, row)
            _step_over_blanks(whole[y], None)
        screen.data_buffer = whole
        try:
            return diff()
        finally:
            screen.data_buffer = drawn
    new, old = screen.data_buffer, previous_screen.data_buffer
    empty: dict[int, Char] = {}
    changed_new: Rows = defaultdict(new.default_factory)
    changed_old: Rows = defaultdict(old.default_factory)
    last = -1  # the last row that changed
    for y in new.keys() | old.keys():
        new_row, old_row = new.get(y, empty), old.get(y, empty)
        if new_row == old_row:
            changed_new[y] = changed_old[y] = _PASSED_OVER
            continue
        last = max(last, y)
        if y in new:
            changed_new[y] = defaultdict(new[y].default_factory, new_row)
        if y in old:
            changed_old[y] = defaultdict(old[y].default_factory, old_row)
        if over_blanks and y in new and y in old:
            _step_over_blanks(changed_new[y], changed_old[y])
    screen.data_buffer, previous_screen.data_buffer = changed_new, changed_old
    # The diff walks every row down to the screens' height: where both are as
    # high, it is told they end after the last row that changed (it does the
    # same after its walk whatever that height, the two being equal).
    heights = screen.height, previous_screen.height
    if heights[0] == heights[1]:
        screen.height = previous_screen.height = min(heights[0], last + 1)
    try:
        return diff()
    finally:
        screen.data_buffer, previous_screen.data_buffer = new, old
        screen.height, previous_screen.height = heights


def _step_over_blanks(new_row: defaultdict[int, Char],
                      old_row: defaultdict[int, Char] | None) -> None:
    """Make each stretch of two or more columns with no cell in either row one cell
    as wide as the stretch, in both (``old_row`` None: the last screen had nothing
    on it), blank as the cells a screen holds where nothing is drawn.

    The diff must come to the stretch's first column to step over it: it does
    unless a wide cell before covers it, and a wide cell is always followed by
    cells for the columns it covers (prompt_toolkit's windows and the text
    blocks write them so), so only the cell just before the stretch can.
    """
    drawn = sorted(new_row.keys() if old_row is None else new_row.keys() | old_row.keys())
    for before, after in zip([-1, *drawn], drawn, strict=False):  # pairs of neighbours
        if after - before > 2:
            cell = new_row.get(before)
            if cell is not None and cell.width > 1:
                continue
            blank = Char(" ", Transparent)
            blank.width = after - before - 1
            new_row[before + 1] = blank
            if old_row is not None:
                old_row[before + 1] = blank


def install() -> None:
    """Have every prompt_toolkit renderer in this process draw through
    :func:`output_screen_diff` (once is enough; a second call changes nothing)."""
    prompt_toolkit.renderer._output_screen_diff = output_screen_diff
