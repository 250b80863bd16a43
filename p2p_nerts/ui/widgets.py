"""Small layout pieces shared by the screens: a text line, a titled rule, clicks, counts."""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.application import get_app
from prompt_toolkit.formatted_text import StyleAndTextTuples, fragment_list_width
from prompt_toolkit.layout import Dimension, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.mouse_events import MouseEvent, MouseEventType

Fragments = Callable[[], StyleAndTextTuples]
#: prompt_toolkit types a mouse handler's result (None or NotImplemented) as object.
MouseHandler = Callable[[MouseEvent], object]


def counted(count: int, noun: str) -> str:
    """"1 pile", "3 piles": a count as it reads (the nouns on screen take an s)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def text(fragments: Fragments, *, height: int | None = 1, stretch: bool = False) -> Window:
    """A window drawing ``fragments()`` afresh every frame.

    ``height`` is exact unless ``stretch`` (then it is the least, and the
    window takes spare rows) or None (as tall as its content).
    """
    if height is None:
        dim = Dimension(min=1)
    else:
        dim = Dimension(min=height) if stretch else Dimension.exact(height)
    return Window(FormattedTextControl(fragments), height=dim,
                  dont_extend_height=height is None)


def screen_width() -> int:
    return get_app().output.get_size().columns


def rule(title: Fragments) -> Window:
    """``── Title ─────────`` across the whole width.

    One window that pads itself: a split with a filler window would cost the
    layout a cell-by-cell width division on every frame.
    """
    def fragments() -> StyleAndTextTuples:
        out: StyleAndTextTuples = [("class:rule", "── "), *title(), ("class:rule", " ")]
        return [*out, ("class:rule", "─" * (screen_width() - fragment_list_width(out)))]
    return text(fragments)


def spread(left: StyleAndTextTuples, right: StyleAndTextTuples) -> StyleAndTextTuples:
    """``left`` at the left edge and ``right`` at the right edge of one line."""
    gap = screen_width() - fragment_list_width(left) - fragment_list_width(right)
    return [*left, ("", " " * max(1, gap)), *right]


def on_click(action: Callable[[], None]) -> MouseHandler:
    """A fragment's mouse handler: run ``action`` when the button goes down."""
    def handler(event: MouseEvent) -> object:
        if event.event_type is not MouseEventType.MOUSE_DOWN:
            return NotImplemented
        action()
        return None
    return handler
