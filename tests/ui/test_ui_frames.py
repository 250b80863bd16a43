"""What reaches the terminal: every frame shows the state as it is, never a stale one.

The screen's text blocks keep the cells of their last layout and the
renderer writes only the cells that changed, so a cache that missed a
change would leave old text on the terminal. These tests run the real app
into a real VT100 output, replay the escape codes on a small terminal
model, and after each change compare the terminal with the screen laid out
from scratch (every cache dropped).
"""

from __future__ import annotations

import asyncio
import io
import random
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import prompt_toolkit.renderer
import pytest
from prompt_toolkit.application import Application
from prompt_toolkit.application.current import set_app
from prompt_toolkit.data_structures import Point, Size
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import DummyInput, PipeInput
from prompt_toolkit.layout import Dimension, HSplit, VSplit, Window, walk
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Screen, WritePosition
from prompt_toolkit.mouse_events import MouseButton, MouseEvent, MouseEventType
from prompt_toolkit.output import ColorDepth, DummyOutput, Output
from prompt_toolkit.output.vt100 import Vt100_Output
from wcwidth import wcwidth

from p2p_nerts.game.foundations import Fate, Play
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.replica import Phase
from p2p_nerts.testing.screen import screen_lines
from p2p_nerts.ui import screendiff
from p2p_nerts.ui.app import NertsApp
from p2p_nerts.ui.theme import build_style
from p2p_nerts.ui.widgets import Columns, Rows, Text, on_click

from ..gamekit import c
from ..uikit import ESC, RIGHT, Harness

_CODE = re.compile(r"\x1b\[([?0-9;]*)([A-Za-z])|\x1b\][^\x07]*\x07|\x1b[()][0-9A-B]|[\r\n\b]")


class Terminal:
    """Just enough of a VT100 to show what prompt_toolkit's renderer writes.

    Keeps each cell's character and the SGR attributes it was written with.
    """

    encoding = "utf-8"

    def __init__(self, size: Callable[[], Size]) -> None:
        self.size = size
        self.cells: dict[tuple[int, int], tuple[str, str]] = {}
        self.x = self.y = 0
        self.sgr = ""

    def write(self, data: str) -> int:
        at = 0
        for code in _CODE.finditer(data):
            self._text(data[at:code.start()])
            self._control(code)
            at = code.end()
        self._text(data[at:])
        return len(data)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def _text(self, text: str) -> None:
        columns = self.size().columns
        for ch in text:
            width = wcwidth(ch)
            if width == 0 and self.x:
                char, sgr = self.cells.get((self.x - 1, self.y), ("", ""))
                self.cells[self.x - 1, self.y] = (char + ch, sgr)
                continue
            x = min(self.x, columns - 1)  # autowrap is off: the last column takes it
            self.cells[x, self.y] = (ch, self.sgr)
            for cover in range(1, width):
                self.cells[x + cover, self.y] = ("", self.sgr)
            self.x = x + width

    def _control(self, code: re.Match[str]) -> None:
        text = code.group(0)
        if text == "\r":
            self.x = 0
        elif text == "\n":
            self.y += 1
        elif text == "\b":
            self.x = max(0, self.x - 1)
        elif code.group(2) is not None:
            params, final = code.group(1), code.group(2)
            n = int(params) if params.isdigit() else 1
            if final == "m":
                self.sgr = "" if params in ("", "0") else params
            elif final == "H":
                row, _, col = params.partition(";")
                self.y, self.x = int(row or 1) - 1, int(col or 1) - 1
            elif final in "ABCD" and not params.startswith("?"):
                dx, dy = {"A": (0, -n), "B": (0, n), "C": (n, 0), "D": (-n, 0)}[final]
                self.x, self.y = max(0, self.x + dx), max(0, self.y + dy)
            elif final == "J":
                self._erase(lambda x, y: params == "2" or y > self.y or (
                    y == self.y and x >= self.x))
            elif final == "K":
                self._erase(lambda x, y: y == self.y and x >= self.x)

    def _erase(self, where: Callable[[int, int], bool]) -> None:
        self.cells = {at: cell for at, cell in self.cells.items() if not where(*at)}

    def lines(self) -> list[str]:
        size = self.size()
        return ["".join(self.cells.get((x, y), (" ", ""))[0] for x in range(size.columns)).rstrip()
                for y in range(size.rows)]

    def sgr_of(self, text: str) -> str:
        """The attributes the first character of ``text`` (first on screen) was written with."""
        for y, line in enumerate(self.lines()):
            if text in line:
                return self.cells[line.index(text), y][1]
        raise AssertionError(f"{text!r} is not on the terminal")


class OnTerminal(Harness):
    """The solo-table harness drawing through a real VT100 output into a :class:`Terminal`."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.size = self.output  # tests resize through it, as in the other harness
        self.term = Terminal(self.size.get_size)

    async def __aenter__(self) -> OnTerminal:
        await super().__aenter__()
        return self

    def make_app(self, input: PipeInput) -> NertsApp:
        output = Vt100_Output(self.term, self.size.get_size)  # type: ignore[arg-type]
        return NertsApp(self.table, self.config, input=input, output=output)

    def afresh(self) -> list[str]:
        """The screen laid out from scratch: every block's cache dropped."""
        for container in walk(self.app.layout.container):
            container.reset()
        return screen_lines(self.app)

    async def shows_truly(self) -> list[str]:
        """Wait for a frame of the state as it is; the terminal must show just that."""
        await self.redrawn()
        lines = self.term.lines()
        assert lines == self.afresh(), "\n".join(lines)
        return lines


def test_every_frame_on_the_terminal_is_the_state_as_it_is() -> None:
    async def main() -> None:
        async with OnTerminal(bots=3, seed=2) as h:
            await h.shows_truly()
            await h.deal()
            first = await h.shows_truly()
            # A move of mine: the ace leaves the Nerts pile for the foundations.
            h.set_tableau(nerts="9C AS", work=("KS", "8D", "7C", "3H"))
            await h.shows_truly()
            await h.press("n", "f")
            lines = await h.shows_truly()
            assert any("♠ │" in line and "A♠" in line for line in lines)
            assert any("Nerts  9♣" in line for line in lines)
            # A selection and the cursor moving over the work piles.
            await h.press("2", RIGHT, "3")
            await h.shows_truly()
            # A bounce, in words.
            rs = h.replica.rs
            assert rs is not None
            other = next(s for s in range(len(rs.names)) if s != h.me)
            mine = Play(40, h.me, c("4H", h.me), c("AH", other), 0)
            h.table.announce(ev.PlayFinal(1, mine, Fate.BOUNCE, True, rs.names[other]))
            lines = await h.shows_truly()
            assert any(f"Your 4♥ bounced: {rs.names[other]} was first" in line
                       for line in lines)
            # The bots play on: foundations, views, counts of cards up.
            h.advance(3.0)
            lines = await h.shows_truly()
            assert lines != first
            # The help over the table, then gone again.
            await h.press("?")
            lines = await h.shows_truly()
            assert any("| Help |" in line for line in lines)
            await h.press(ESC)
            lines = await h.shows_truly()
            assert not any("Help" in line for line in lines)
            # Resizes: larger, too small, and back.
            for columns, rows in ((140, 44), (70, 20), (100, 32)):
                h.size.size = Size(rows=rows, columns=columns)
                lines = await h.shows_truly()
                assert len(lines) == rows
                assert any("The terminal is 70×20" in line for line in lines) == (columns == 70)
    asyncio.run(main())


def test_a_score_change_reaches_the_header() -> None:
    async def main() -> None:
        async with OnTerminal(bots=2, seed=5, skill="hard") as h:
            await h.deal()
            before = (await h.shows_truly())[0]
            for _ in range(2400):  # bounded: a round of hard bots ends well within
                if h.replica.phase is not Phase.PLAYING:
                    break
                h.advance(0.05)
            assert h.replica.phase is not Phase.PLAYING
            h.advance(1.0)
            lines = await h.shows_truly()
            assert any("Round 1 is over" in line for line in lines)
            assert lines[0] != before  # the totals moved
            match = h.replica.match
            assert match is not None and str(max(match.totals)) in lines[0]
    asyncio.run(main())


def test_a_theme_change_redraws_the_cards_in_their_new_colours() -> None:
    async def main() -> None:
        async with OnTerminal() as h:
            await h.deal()
            h.set_tableau(nerts="AS", work=("KS", "8D", "7C", "3H"))
            await h.shows_truly()
            two_colour = h.term.sgr_of("8♦")
            assert two_colour == h.term.sgr_of("3♥")  # diamonds red, like hearts
            h.app.style = build_style(four_colour=True)
            await h.shows_truly()
            assert h.term.sgr_of("8♦") != two_colour
            assert h.term.sgr_of("3♥") == two_colour
    asyncio.run(main())


def _copy(screen: Screen) -> Screen:
    """A screen holding the same cells in rows of its own (prompt_toolkit's diff adds
    blank cells to the rows it walks)."""
    copy = Screen()
    copy.__dict__.update(screen.__dict__)
    copy.data_buffer = defaultdict(screen.data_buffer.default_factory, {
        y: defaultdict(row.default_factory, row) for y, row in screen.data_buffer.items()})
    return copy


def test_the_screen_diff_writes_what_prompt_toolkits_own_writes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Frame after frame of a table of eight at 200x60, the diff that passes over the
    unchanged rows writes byte for byte what prompt_toolkit's own diff writes."""
    frames: list[tuple[int, int]] = []  # (rows passed over, rows drawn) in each frame

    def both(app: Application[Any], output: Output, screen: Screen, current_pos: Point,
             color_depth: ColorDepth, previous_screen: Screen | None, *args: Any,
             **kwargs: Any) -> tuple[Point, str | None]:
        """Both diffs, each into an output of its own, from the same state."""
        ours_text, theirs_text = io.StringIO(), io.StringIO()
        ours_out, theirs_out = (Vt100_Output(text, app.output.get_size)
                                for text in (ours_text, theirs_text))
        theirs_screen = _copy(screen)
        theirs_previous = None if previous_screen is None else _copy(previous_screen)
        theirs = screendiff.STOCK_DIFF(app, theirs_out, theirs_screen, current_pos,
                                       color_depth, theirs_previous, *args, **kwargs)
        ours = screendiff.output_screen_diff(app, ours_out, screen, current_pos,
                                             color_depth, previous_screen, *args, **kwargs)
        ours_out.flush()
        theirs_out.flush()
        if previous_screen is not None:
            rows = screen.data_buffer.keys() | previous_screen.data_buffer.keys()
            same = sum(screen.data_buffer.get(y) == previous_screen.data_buffer.get(y)
                       for y in rows)
            frames.append((same, len(rows) - same))
        assert ours == theirs
        assert ours_text.getvalue() == theirs_text.getvalue()
        output.write_raw(ours_text.getvalue())
        return ours

    monkeypatch.setattr(prompt_toolkit.renderer, "_output_screen_diff", both)
    monkeypatch.setattr(screendiff, "install", lambda: None)

    async def main() -> None:
        async with OnTerminal(bots=7, seed=3, skill="hard", columns=200, rows=60) as h:
            await h.shows_truly()
            await h.deal()
            for keys in (("2",), (RIGHT,), ("3",), ("w",), ("n", "f"), ("?",), (ESC,)):
                await h.press(*keys)
                await h.shows_truly()
                h.advance(0.5)  # the bots play on
                await h.shows_truly()
            h.size.size = Size(rows=36, columns=120)
            await h.shows_truly()
    asyncio.run(main())
    assert len(frames) > 10
    assert all(same for same, _drawn in frames[1:])  # each frame passes over rows
    assert sum(drawn for _same, drawn in frames) > len(frames)  # and draws others


def _cells(screen: Screen, columns: int, rows: int) -> list[list[tuple[str, str]]]:
    """Each column's character and style, a run of narrow characters taken apart."""
    out = []
    for y in range(rows):
        row, cells, x = screen.data_buffer[y], [], 0
        while x < columns:
            cell = row[x]
            parts: list[str] = []
            for ch in cell.char:  # a run: one part per column, combining marks kept on theirs
                if parts and wcwidth(ch) == 0:
                    parts[-1] += ch
                else:
                    parts.append(ch)
            if cell.width != len(parts):
                parts = [cell.char]  # one character of its own (wide, or shown as ^[)
            style = " ".join(s for s in cell.style.split()
                             if s not in ("class:last-line", "[transparent]"))
            cells += [(part, style) for part in parts]
            cells += [("", style)] * (cell.width - len(parts))
            x += max(1, cell.width)
        out.append(cells[:columns])
    return out


def _bare() -> Application[None]:
    return Application(input=DummyInput(), output=DummyOutput())


def _drawn(container: Text | Window, columns: int, rows: int) -> list[list[tuple[str, str]]]:
    screen = Screen()
    with set_app(_bare()):
        container.write_to_screen(screen, MouseHandlers(), WritePosition(0, 0, columns, rows),
                                  parent_style="", erase_bg=False, z_index=None)
        screen.draw_all_floats()
    return _cells(screen, columns, rows)


def test_a_text_block_draws_the_cells_a_window_would() -> None:
    samples: list[StyleAndTextTuples] = [
        [("class:a", "  Nerts "), ("bold", "10♠"), ("", " "), ("class:b", " 7♥")],
        [("", "名前 Ada"), ("class:x", "e\u0301t\u00e9")],  # wide, combining, precomposed
        [("", "one\ntwo"), ("class:y", " and\nthree\nfour\nfive")],  # more lines than rows
        [("class:rule", "─" * 150)],  # cut at the right edge
        [("", "abc"), ("", "def"), ("class:x", "名"), ("", "ghijklmnopqrstuvwxyz0123456789")],
        [("", "a\x1bb"), ("class:z", "tab\there")],  # control characters are shown
        [],
    ]
    for fragments in samples:
        for columns, rows in ((40, 3), (12, 1)):
            def frags(f: StyleAndTextTuples = fragments) -> StyleAndTextTuples:
                return f
            window = Window(FormattedTextControl(frags), height=Dimension.exact(rows))
            assert _drawn(Text(frags, height=rows), columns, rows) == _drawn(
                window, columns, rows), fragments


def test_a_text_block_sends_each_click_to_its_fragment() -> None:
    hits: list[str] = []
    fragments: StyleAndTextTuples = [
        ("", "  "), ("class:a", " 7♥", on_click(lambda: hits.append("seven"))),
        ("", " │ "), ("class:b", "名 K♠\nnext", on_click(lambda: hits.append("king")))]
    handlers = MouseHandlers()
    with set_app(_bare()):
        Text(lambda: fragments, height=2).write_to_screen(
            Screen(), handlers, WritePosition(3, 5, 30, 2), parent_style="", erase_bg=False,
            z_index=None)
    clicked: dict[tuple[int, int], str] = {}
    for y in range(4, 8):
        for x in range(40):
            hits.clear()
            handlers.mouse_handlers[y][x](MouseEvent(
                position=Point(x, y), event_type=MouseEventType.MOUSE_DOWN,
                button=MouseButton.LEFT, modifiers=frozenset()))
            if hits:
                clicked[x, y] = hits[0]
    # Placed at column 3: " 7♥" on 5-7, "名 K♠" on 11-15 (名 takes two), "next" below.
    assert clicked == {**{(x, 5): "seven" for x in range(5, 8)},
                       **{(x, 5): "king" for x in range(11, 16)},
                       **{(x, 6): "king" for x in range(3, 7)}}


class _Sized(Window):
    """A window that asks for a given height, whatever it shows."""

    def __init__(self, dim: Dimension) -> None:
        super().__init__()
        self.dim = dim

    def preferred_height(self, width: int, max_available_height: int) -> Dimension:
        return self.dim

    def preferred_width(self, max_available_width: int) -> Dimension:
        return self.dim


def _dims(rng: random.Random) -> list[Dimension]:
    dims = []
    for _ in range(rng.randint(1, 8)):
        low = rng.randint(0, 6)
        pref = low + rng.randint(0, 12)
        top = pref + rng.choice((0, 1, 5, 10**9))
        dims.append(Dimension(min=low, preferred=pref, max=top,
                              weight=rng.choice((1, 1, 1, 2))))
    # Often all but one at their cap: the case one child takes every spare row.
    if rng.random() < 0.5:
        keep = rng.randrange(len(dims))
        dims = [d if i == keep else Dimension.exact(d.min) for i, d in enumerate(dims)]
    return dims


@pytest.mark.sweep
def test_rows_share_out_the_height_as_a_split_does() -> None:
    rng = random.Random(23)
    for _ in range(400):
        children = [_Sized(d) for d in _dims(rng)]
        at = WritePosition(0, 0, 80, rng.randint(0, 90))
        with set_app(_bare()):
            theirs = HSplit(children)._divide_heights(at)  # with a padding (0) between two
            assert theirs is None or not any(theirs[1::2])
            assert Rows(children)._divide_heights(at) == (theirs and theirs[::2])


@pytest.mark.sweep
def test_columns_share_out_the_width_as_a_split_does() -> None:
    rng = random.Random(29)
    for _ in range(400):
        children = [_Sized(d) for d in _dims(rng)]
        width = rng.randint(0, 200)
        with set_app(_bare()):
            theirs = VSplit(children)._divide_widths(width)  # with a padding (0) between two
            assert theirs is None or not any(theirs[1::2])
            assert Columns(children)._divide_widths(width) == (theirs and theirs[::2])


def test_a_fragment_that_gains_or_loses_its_click_is_drawn_anew() -> None:
    hits: list[str] = []
    clickable = [False]

    def fragments() -> StyleAndTextTuples:
        if clickable[0]:
            return [("", " 7♥", on_click(lambda: hits.append("seven")))]
        return [("", " 7♥")]

    block, app = Text(fragments), _bare()
    down = MouseEvent(position=Point(1, 0), event_type=MouseEventType.MOUSE_DOWN,
                      button=MouseButton.LEFT, modifiers=frozenset())
    for state in (False, True, False, True):
        clickable[0] = state
        handlers = MouseHandlers()
        app.render_counter += 1
        with set_app(app):
            block.write_to_screen(Screen(), handlers, WritePosition(0, 0, 10, 1),
                                  parent_style="", erase_bg=False, z_index=None)
        hits.clear()
        handlers.mouse_handlers[0][1](down)
        assert hits == (["seven"] if state else [])
