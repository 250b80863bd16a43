"""Running the app with no terminal: a fixed-size output and the screen as text.

Tests and ``scripts/bench_tui.py`` drive the real :class:`~prompt_toolkit.Application`
through a pipe input; these helpers give it a screen size without a
terminal and read back what it would show, cell by cell, by rendering the
layout into a prompt_toolkit :class:`Screen` exactly as the renderer does.
"""

from __future__ import annotations

from prompt_toolkit.application import Application
from prompt_toolkit.application.current import set_app
from prompt_toolkit.data_structures import Size
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Screen, WritePosition
from prompt_toolkit.output import DummyOutput


class FixedOutput(DummyOutput):
    """An output that draws nothing and reports a size (change ``size`` to "resize")."""

    def __init__(self, columns: int = 100, rows: int = 32) -> None:
        self.size = Size(rows=rows, columns=columns)

    def get_size(self) -> Size:
        return self.size


def render_screen(app: Application[None]) -> Screen:
    """Lay the app out at its output's size, floats included, as the renderer would."""
    size = app.output.get_size()
    screen = Screen()
    # A new frame number, as Application._redraw does: controls cache their
    # fragments per frame, and this frame must show the state as it is now.
    app.render_counter += 1
    with set_app(app):
        app.layout.container.write_to_screen(
            screen, MouseHandlers(), WritePosition(0, 0, size.columns, size.rows),
            parent_style="", erase_bg=False, z_index=None)
        screen.draw_all_floats()
    return screen


def screen_lines(app: Application[None]) -> list[str]:
    """The text on screen, one string per row, trailing blanks removed."""
    size = app.output.get_size()
    buffer = render_screen(app).data_buffer
    return ["".join(buffer[y][x].char for x in range(size.columns)).rstrip()
            for y in range(size.rows)]
