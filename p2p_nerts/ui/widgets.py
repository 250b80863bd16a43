"""Small layout pieces shared by the screens: a text line, a titled rule, clicks, counts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from operator import itemgetter
from typing import NamedTuple, cast
from weakref import WeakKeyDictionary

from prompt_toolkit.application import get_app
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import Container, Dimension, HSplit, VSplit
from prompt_toolkit.layout.containers import AnyContainer
from prompt_toolkit.layout.dimension import sum_layout_dimensions
from prompt_toolkit.layout.mouse_handlers import MouseHandler as ScreenMouseHandler
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Char, Screen, WritePosition
from prompt_toolkit.mouse_events import MouseEvent, MouseEventType
from prompt_toolkit.utils import get_cwidth

Fragments = Callable[[], StyleAndTextTuples]
#: prompt_toolkit types a mouse handler's result (None or NotImplemented) as object.
MouseHandler = Callable[[MouseEvent], object]


def text(fragments: Fragments, *, height: int | None = 1, stretch: bool = False,
         keep: bool = False, width: int | None = None) -> Text:
    """A block of rows drawing ``fragments()`` as they are on every frame.

    ``height`` is exact unless ``stretch`` (then it is the least, and the
    block takes spare rows) or None (as tall as its content; ``keep``: never
    shorter, so that a block the screen must show whole gives no row away
    to a stretching one). ``width``: exactly so many columns (beside others).
    """
    return Text(fragments, height=height, stretch=stretch, keep=keep, width=width)


#: Where a clickable fragment landed: (fragment index, row, first column, column after).
_Click = tuple[int, int, int, int]
#: A run of narrow characters drawn as one cell: (row, column, its cell, characters, style).
_Run = tuple[int, int, Char, tuple[str, ...], str]
_FILLER = Char("", "")  # a cell covered by the wide cell before it
_STYLE_TEXT = itemgetter(0, 1)  # a fragment's style and text, without its click handler
_MENDING = 1 << 30  # after every float
_SHOWN_OTHERWISE = frozenset(Char.display_mappings)


class _Line(NamedTuple):
    """A line laid out: what it shows (styles and texts, a clickable one marked by a
    third item), its cells, its runs (column, cell, characters, style) and where its
    clickable fragments landed (place in the line, first column, column after)."""

    shown: list[tuple[str, str] | tuple[str, str, None]]
    cells: dict[int, Char]
    runs: list[tuple[int, Char, tuple[str, ...], str]]
    clicks: list[tuple[int, int, int]]


def _lines_of(fragments: StyleAndTextTuples,
              height: int) -> list[tuple[StyleAndTextTuples, list[int]]]:
    """``fragments`` cut into lines (no more than ``height`` of them): each line's
    fragments, and where each of them is in ``fragments`` (a fragment across
    lines is in each, cut)."""
    lines: list[tuple[StyleAndTextTuples, list[int]]] = [([], [])]
    for index, fragment in enumerate(fragments):
        text = fragment[1]
        if "\n" not in text:
            lines[-1][0].append(fragment)
            lines[-1][1].append(index)
            continue
        for part, piece in enumerate(text.split("\n")):
            if part:
                if len(lines) == height:
                    return lines
                lines.append(([], []))
            if piece:
                lines[-1][0].append((fragment[0], piece) if len(fragment) < 3
                                    else (fragment[0], piece, fragment[2]))
                lines[-1][1].append(index)
    return lines


def _lay_out(fragments: StyleAndTextTuples, xpos: int, end: int, prefix: str) -> tuple[
        dict[int, Char], list[tuple[int, Char, tuple[str, ...], str]], list[tuple[int, int, int]]]:
    """One line's cells from ``xpos`` up to ``end``, its runs and its clicks (as in
    :class:`_Line`).

    Each stretch of narrow characters in one style becomes one wide cell
    (the characters as its text, covering the cells after it), as
    prompt_toolkit draws a double-width character: the screen diff then
    writes a whole word at once instead of moving cell by cell.
    """
    row: dict[int, Char] = {}
    runs: list[tuple[int, Char, tuple[str, ...], str]] = []
    clicks: list[tuple[int, int, int]] = []
    x = xpos
    run: list[str] = []  # the narrow characters (with any combining marks) not yet placed
    run_at, run_style = x, ""

    def flush() -> None:
        if not run:
            return
        head = Char("".join(run), run_style)
        row[run_at] = head
        if len(run) > 1:
            row.update(dict.fromkeys(range(run_at + 1, run_at + len(run)), _FILLER))
            runs.append((run_at, head, tuple(run), run_style))
        run.clear()

    for index, fragment in enumerate(fragments):
        style = prefix + fragment[0]
        start = x
        if _narrow(fragment[1]):  # the usual case: the whole text joins the run at once
            piece = fragment[1][:max(0, end - x)]
            if piece and not style and not piece.strip(" "):
                # Blanks in no style are what the screen holds where nothing
                # is drawn: left out, they cost the screen diff nothing.
                flush()
                x += len(piece)
            elif piece:
                if run and run_style != style:
                    flush()
                if not run:
                    run_at, run_style = x, style
                run.extend(piece)
                x += len(piece)
        else:
            for ch in fragment[1]:
                if ch in _SHOWN_OTHERWISE:  # a control character, shown as ^[ and the like
                    width = Char(ch, style).width
                else:
                    width = get_cwidth(ch)
                    if width == 0:
                        if run:  # a combining mark: part of the character before it
                            run[-1] += ch
                        continue
                if x + width > end:
                    continue
                if width == 1 and ch not in _SHOWN_OTHERWISE:
                    if run and run_style != style:
                        flush()
                    if not run:
                        run_at, run_style = x, style
                    run.append(ch)
                else:  # wide, or shown otherwise: a cell of its own
                    flush()
                    row[x] = Char(ch, style)
                    row.update(dict.fromkeys(range(x + 1, x + width), _FILLER))
                x += width
        if len(fragment) > 2 and x > start:
            clicks.append((index, start, x))
    flush()
    return row, runs, clicks


class Text(Container):
    """Rows of fragments written straight into the screen, laid out again only when
    what they show changed.

    A prompt_toolkit Window would turn the fragments into a UIContent, copy it
    line by line and restyle every cell of its last row, on every frame, for
    every line of the table. Here the fragments are still asked for afresh on
    every frame (so nothing shown can be stale), but their styles and texts
    are compared with the last frame's: when they are the same at the same
    place, the cells laid out then are written again as they are, one dict
    update per row, and the screen diff finds the very same characters.
    Click handlers are always taken from this frame's fragments, since a
    handler may hold objects that changed while the text did not.
    """

    def __init__(self, fragments: Fragments, *, height: int | None = 1,
                 stretch: bool = False, keep: bool = False, width: int | None = None) -> None:
        self.fragments = fragments
        self.height = height
        self.stretch = stretch
        self.keep = keep
        self.width = width
        self._width = Dimension() if width is None else Dimension.exact(width)
        self._frame = -1  # the render this frame's fragments were asked for
        self._now: StyleAndTextTuples = []
        self._fixed = Dimension.exact(height) if height is not None and not stretch else None
        self._sized = -1  # the render self._dim was worked out for
        self._dim = Dimension()
        #: The styles and texts laid out into _rows; a clickable one marked by a third item.
        self._shown: list[tuple[str, str] | tuple[str, str, None]] = []
        self._place: tuple[int, int, int, str] = (-1, -1, -1, "")  # xpos, width, height, style
        self._texts: list[tuple[str, str]] = []  # the styles and texts of _shown
        self._lengths: list[int] = []  # and their fragments' lengths (3: clickable)
        self._lines: list[_Line] = []
        self._rows: list[dict[int, Char]] = []
        self._runs: list[_Run] = []
        self._clicks: list[_Click] = []

    def _current(self) -> StyleAndTextTuples:
        """This frame's fragments, asked for once however often the layout needs them."""
        frame = get_app().render_counter
        if frame != self._frame:
            self._frame = frame
            self._now = self.fragments()
        return self._now

    def reset(self) -> None:
        self._place = (-1, -1, -1, "")

    def preferred_width(self, max_available_width: int) -> Dimension:
        return self._width

    def preferred_height(self, width: int, max_available_height: int) -> Dimension:
        if self._fixed is not None:
            return self._fixed
        if self._sized != self._frame or self._frame != get_app().render_counter:
            lines = 1 + "".join([f[1] for f in self._current()]).count("\n")
            self._sized = self._frame
            if self.height is None:
                self._dim = Dimension(min=lines if self.keep else 1, preferred=lines,
                                      max=lines)
            else:
                self._dim = Dimension(min=self.height, preferred=max(self.height, lines))
        return self._dim

    def write_to_screen(self, screen: Screen, mouse_handlers: MouseHandlers,
                        write_position: WritePosition, parent_style: str, erase_bg: bool,
                        z_index: int | None) -> None:
        if z_index is not None:
            screen.draw_with_z_index(z_index, lambda: self._write(
                screen, mouse_handlers, write_position, parent_style, erase_bg))
        else:
            self._write(screen, mouse_handlers, write_position, parent_style, erase_bg)

    def _write(self, screen: Screen, mouse_handlers: MouseHandlers, wp: WritePosition,
               parent_style: str, erase_bg: bool) -> None:
        now = self._current()
        place = (wp.xpos, wp.width, wp.height, parent_style)
        shown = self._shown
        # Lists of plain (style, text) pairs compare whole at once; a clickable
        # fragment carries this frame's handler, so those compare by their styles
        # and texts, and whether each is clickable (its length).
        if place != self._place or (now != shown and (
                list(map(_STYLE_TEXT, now)) != self._texts
                or list(map(len, now)) != self._lengths)):
            self._layout(now, place)
        buffer = screen.data_buffer
        if erase_bg:
            blank = Char(" ", "")
            for y in range(wp.ypos, wp.ypos + wp.height):
                buffer[y].update(dict.fromkeys(range(wp.xpos, wp.xpos + wp.width), blank))
        for y, cells in enumerate(self._rows, wp.ypos):
            buffer[y].update(cells)
        if self._runs:
            blocks = _TO_MEND.get(screen)
            if blocks is None:
                blocks = _TO_MEND[screen] = []
                screen.draw_with_z_index(_MENDING, partial(_mend_all, screen))
            blocks.append((self, wp.ypos))
        screen.height = max(screen.height, wp.ypos + wp.height)
        # As MouseHandlers.set_mouse_handler_for_range does, a row at a time.
        handlers = mouse_handlers.mouse_handlers
        for index, row, start, end in self._clicks:
            handler = cast(ScreenMouseHandler, now[index][2])  # type: ignore[misc]
            handlers[wp.ypos + row].update(dict.fromkeys(range(start, end), handler))

    def _layout(self, fragments: StyleAndTextTuples, place: tuple[int, int, int, str]) -> None:
        """Turn ``fragments`` into cells as a Window without wrapping would: lines cut
        at the right edge, rows past the height dropped.

        Line by line: a line that shows what a line showed on the last frame,
        at the same place, keeps the cells laid out then, on whichever row it
        is now. One player's box that changed in a band of them lays out the
        lines of the band that changed, not the band; news that scrolled up
        lays out its newest line (and the screen diff finds the very same
        cells in the others, a dict compare by identity).
        """
        xpos, width, height, parent_style = place
        last = self._lines if place == self._place else []
        kept: dict[tuple[tuple[str, str] | tuple[str, str, None], ...], _Line] | None = None
        self._place = place
        self._shown = [(f[0], f[1]) if len(f) < 3 else (f[0], f[1], None) for f in fragments]
        self._texts = list(map(_STYLE_TEXT, fragments))
        self._lengths = list(map(len, fragments))
        prefix = f"{parent_style} " if parent_style.strip() else ""
        lines: list[_Line] = []
        rows: list[dict[int, Char]] = []
        runs: list[_Run] = []
        clicks: list[_Click] = []
        for row, (pieces, indices) in enumerate(_lines_of(fragments, height)):
            shown = [(f[0], f[1]) if len(f) < 3 else (f[0], f[1], None) for f in pieces]
            if row < len(last) and last[row].shown == shown:
                line = last[row]
            else:
                if kept is None:  # the last frame's lines by what they show
                    kept = {tuple(line.shown): line for line in last}
                line = kept.get(tuple(shown)) or _Line(
                    shown, *_lay_out(pieces, xpos, xpos + width, prefix))
            lines.append(line)
            rows.append(line.cells)
            runs += [(row, *run) for run in line.runs]
            clicks += [(indices[at], row, first, after) for at, first, after in line.clicks]
        self._lines = lines
        self._rows = rows
        self._runs = runs
        self._clicks = clicks

    def _mend(self, screen: Screen, ypos: int, over: list[WritePosition]) -> None:
        """After the floats: split the runs a float drew over back into single cells.

        A float's windows write their own cells over part of a run, but the
        run's first cell would still tell the diff to write the whole run,
        over the float. Every prompt_toolkit window records where it drew
        (``over``), so only the runs under one are split; the float's own
        cells stay.
        """
        buffer = screen.data_buffer
        for y, x, head, cells, style in self._runs:
            y += ypos
            if not any(wp.ypos <= y < wp.ypos + wp.height and wp.xpos < x + len(cells)
                       and x < wp.xpos + wp.width for wp in over):
                continue
            row = buffer[y]
            for at, text in enumerate(cells, x):
                if row[at] is head or row[at] is _FILLER:
                    row[at] = Char(text, style)

    def get_children(self) -> list[Container]:
        return []


#: The text blocks written into a screen (each with its top row) whose runs are
#: mended after the screen's floats: one mending a screen, not one a block, for
#: the screen sorts what it draws after its floats again after each of them.
_TO_MEND: WeakKeyDictionary[Screen, list[tuple[Text, int]]] = WeakKeyDictionary()


def _mend_all(screen: Screen) -> None:
    """Mend (:meth:`Text._mend`) the runs of every block written into ``screen``."""
    blocks = _TO_MEND.pop(screen, [])
    over = [wp for wp in screen.visible_windows_to_write_positions.values()
            if wp.width and wp.height]
    if over:
        for block, ypos in blocks:
            block._mend(screen, ypos, over)


_NARROW: dict[str, bool] = {}
_NARROW_KEPT = 4096  # texts remembered (most repeat: card faces, labels, rules)


def _narrow(text: str) -> bool:
    """Whether every character of ``text`` takes one cell and is shown as itself."""
    known = _NARROW.get(text)
    if known is None:
        known = all(get_cwidth(ch) == 1 and ch not in _SHOWN_OTHERWISE for ch in text)
        if len(_NARROW) >= _NARROW_KEPT:
            _NARROW.clear()
        _NARROW[text] = known
    return known


class Rows(HSplit):
    """An HSplit that shares out its rows exactly as prompt_toolkit's does, faster.

    prompt_toolkit grows its children one row at a time in turn, drawing
    each turn from a generator and summing all the sizes again, so every
    spare row of a tall terminal costs a pass over the children. The same
    turns are taken here with two integers; children of unequal weights are
    left to HSplit.

    Two more costs of a split are left out. It puts a window between every
    two children (a padding, of no rows here) that every pass asks for its
    size and draws; a Rows has no padding, so none. And a frame asks a split
    for its children's sizes several times over (its parent, to share out
    its own rows; then the split itself, to share out its children's): they
    are asked once a frame, as a text block asks for its fragments.
    """

    def __init__(self, children: Sequence[AnyContainer]) -> None:
        super().__init__(children)
        self._asked: tuple[int, int, int] = (-1, -1, -1)  # frame, width, height
        self._dims: list[Dimension] = []

    @property
    def _all_children(self) -> list[Container]:
        return self.children

    def _heights(self, width: int, height: int) -> list[Dimension]:
        """The children's heights, asked once a frame for a given room."""
        asked = (get_app().render_counter, width, height)
        if asked != self._asked:
            self._asked = asked
            self._dims = [c.preferred_height(width, height) for c in self.children]
        return self._dims

    def preferred_height(self, width: int, max_available_height: int) -> Dimension:
        if self.height is not None:
            return super().preferred_height(width, max_available_height)
        return sum_layout_dimensions(self._heights(width, max_available_height))

    def _divide_heights(self, write_position: WritePosition) -> list[int] | None:
        if not self.children:
            return []
        dims = self._heights(write_position.width, write_position.height)
        if any(d.weight != 1 for d in dims):
            return _unpadded(HSplit(self.children)._divide_heights(write_position))
        total = sum_layout_dimensions(dims)
        height = write_position.height
        if total.min > height:
            return None
        sizes = [d.min for d in dims]
        turn = _grow(sizes, [d.preferred for d in dims], min(height, total.preferred), 0)
        if not get_app().is_done:
            _grow(sizes, [d.max for d in dims], min(height, total.max), turn)
        return sizes


class Columns(VSplit):
    """A VSplit that shares out its columns exactly as prompt_toolkit's does, faster
    (see :class:`Rows`: it would take a turn per spare column; and it has no
    padding either, and shares out a width once a frame)."""

    def __init__(self, children: Sequence[AnyContainer]) -> None:
        super().__init__(children)
        self._asked: tuple[int, int] = (-1, -1)  # frame, width
        self._sizes: list[int] | None = []

    @property
    def _all_children(self) -> list[Container]:
        return self.children

    def _divide_widths(self, width: int) -> list[int] | None:
        asked = (get_app().render_counter, width)
        if asked != self._asked:
            self._asked = asked
            self._sizes = self._share(width)
        return self._sizes

    def _share(self, width: int) -> list[int] | None:
        children = self.children
        if not children:
            return []
        dims = [c.preferred_width(width) for c in children]
        if any(d.weight != 1 for d in dims):
            return _unpadded(VSplit(children)._divide_widths(width))
        total = sum_layout_dimensions(dims)
        if total.min > width:
            return None
        sizes = [d.min for d in dims]
        turn = _grow(sizes, [d.preferred for d in dims], min(width, total.preferred), 0)
        _grow(sizes, [d.max for d in dims], min(width, total.max), turn)
        return sizes


def _unpadded(sizes: list[int] | None) -> list[int] | None:
    """A prompt_toolkit split's sizes without its paddings' (every other one, all 0)."""
    return None if sizes is None else sizes[::2]


def _grow(sizes: list[int], caps: list[int], stop: int, turn: int) -> int:
    """Give one row in turn to each child still under its cap until ``stop`` rows are
    given; return whose turn is next.

    The turns come to the same when only one child can grow (the news under
    the table, the middle between two side columns): it takes them all at once.
    """
    given = sum(sizes)
    count = len(sizes)
    growing = [child for child in range(count) if sizes[child] < caps[child]]
    if given < stop and len(growing) == 1:
        child = growing[0]
        sizes[child] += stop - given  # the caps add up to ``stop`` at least
        return child + 1 if child + 1 < count else 0
    while given < stop:
        if sizes[turn] < caps[turn]:
            sizes[turn] += 1
            given += 1
        turn = turn + 1 if turn + 1 < count else 0
    return turn


def width_of(fragments: StyleAndTextTuples) -> int:
    """The columns ``fragments`` take, as prompt_toolkit's fragment_list_width counts
    them, but a fragment at a time (a text's width is remembered) instead of a
    character at a time: a header or a rule's title is measured on every frame."""
    return sum(get_cwidth(f[1]) for f in fragments if "[ZeroWidthEscape]" not in f[0])


def screen_width() -> int:
    return get_app().output.get_size().columns


def rule(title: Fragments) -> Text:
    """``── Title ─────────`` across the whole width.

    One window that pads itself: a split with a filler window would cost the
    layout a cell-by-cell width division on every frame.
    """
    def fragments() -> StyleAndTextTuples:
        out: StyleAndTextTuples = [("class:rule", "── "), *title(), ("class:rule", " ")]
        return [*out, ("class:rule", "─" * (screen_width() - width_of(out)))]
    return text(fragments)


def spread(left: StyleAndTextTuples, right: StyleAndTextTuples) -> StyleAndTextTuples:
    """``left`` at the left edge and ``right`` at the right edge of one line."""
    gap = screen_width() - width_of(left) - width_of(right)
    return [*left, ("", " " * max(1, gap)), *right]


def on_click(action: Callable[[], None]) -> MouseHandler:
    """A fragment's mouse handler: run ``action`` when the button goes down."""
    def handler(event: MouseEvent) -> object:
        if event.event_type is not MouseEventType.MOUSE_DOWN:
            return NotImplemented
        action()
        return None
    return handler
