"""The full-screen application: screens, overlays, key bindings, and the run loop.

The app and the session share one asyncio loop. Session events reach the
screen through a listener that records them and asks for a frame; those
frames are capped (:class:`FrameCap`) so a burst of plays from fast peers
costs at most one redraw per interval, while a key press redraws at once
(prompt_toolkit invalidates after every key handler).

The root is a chooser over whole screens (too small, table lobby, table,
scores): a table browser for network play is one more screen in
:meth:`NertsApp._screen`.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Sequence
from functools import partial

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.filters import Condition, Filter
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyBindingsBase, merge_key_bindings
from prompt_toolkit.layout import (
    ConditionalContainer,
    Container,
    DynamicContainer,
    Float,
    FloatContainer,
    HSplit,
    Layout,
    Window,
    WindowAlign,
)
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output
from prompt_toolkit.widgets import Frame

from ..game.tableau import NERTS, WASTE, WORK0
from ..protocol.events import Event, RoundStarting
from ..protocol.replica import Phase
from ..session import Session
from .config import Config, config_path
from .control import Controller
from .keys import (
    BETWEEN,
    GLOBAL,
    PILES,
    PLAY,
    Action,
    Handler,
    build_bindings,
    on_key,
    resolve_keys,
)
from .overlays import (
    MIN_COLUMNS,
    MIN_ROWS,
    confirm_text,
    countdown_text,
    counting_down,
    help_text,
    too_small,
)
from .scores import lobby_screen, scores_screen
from .table import table_screen
from .theme import build_style

FRAME_INTERVAL = 1 / 30  # least time between frames caused by session events
REFRESH_INTERVAL = 0.25  # clock-driven redraws: countdown, peers going silent
ESC_TIMEOUT = 0.05  # how long a lone Esc waits to be sure it is not an escape sequence

class FrameCap:
    """Ask for a frame on session events, at most once per ``interval``."""

    def __init__(self, app: Application[None], interval: float = FRAME_INTERVAL) -> None:
        self._app = app
        self._interval = interval
        self._due = False
        self._last = 0.0
        app.after_render += self._rendered

    def _rendered(self, _app: Application[None]) -> None:
        self._last = time.monotonic()

    def request(self) -> None:
        if self._due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop yet: the first frame will show everything anyway
        self._due = True
        loop.call_later(max(0.0, self._last + self._interval - time.monotonic()), self._fire)

    def _fire(self) -> None:
        self._due = False
        self._app.invalidate()


class NertsApp:
    """One player's screen at one table."""

    def __init__(self, session: Session, config: Config, notes: Sequence[str] = (), *,
                 input: Input | None = None, output: Output | None = None) -> None:
        self.session = session
        self.ctl = Controller(session)
        self.keys, problems = resolve_keys(config.keys)
        for note in (*notes, *problems):
            self.ctl.state.error(note)
        self._screens = {
            "lobby": lobby_screen(self.ctl, self.keys),
            "table": table_screen(self.ctl, self.keys),
            "scores": scores_screen(self.ctl, self.keys),
        }
        # The focus stays on a window that is always there: prompt_toolkit only
        # sends clicks to windows in the focused window's tree, and the screens
        # below come and go.
        anchor = Window(height=0)
        self.app: Application[None] = Application(
            layout=Layout(HSplit([anchor, self._root(str(config_path()))]),
                          focused_element=anchor),
            key_bindings=self._bindings(),
            style=build_style(four_colour=config.four_colour),
            full_screen=True,
            mouse_support=True,
            refresh_interval=REFRESH_INTERVAL,
            # Draw as soon as asked: the default lets a busy loop put a frame off
            # by up to 10 ms, and FrameCap already limits the event-driven frames.
            max_render_postpone_time=None,
            input=input,
            output=output,
        )
        self.app.ttimeoutlen = ESC_TIMEOUT
        self.app.timeoutlen = ESC_TIMEOUT
        self.ctl.on_quit = self.app.exit
        self.frames = FrameCap(self.app)
        self._tidy = False  # see tidy_heap: only in a real run, not under a test's loop
        session.subscribe(self._on_event)

    def _on_event(self, event: Event) -> None:
        self.ctl.on_event(event)
        self.frames.request()
        if self._tidy and isinstance(event, RoundStarting):
            tidy_heap()

    async def run(self) -> None:
        """Run the screen and the table together until the player leaves."""
        tidy_heap()
        self._tidy = True
        table = asyncio.create_task(self.session.run())
        table.add_done_callback(self._table_stopped)
        try:
            await self.app.run_async()
        finally:
            self.session.close()
            await asyncio.wait([table])

    def _table_stopped(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.ctl.state.error(f"The table stopped: {task.exception()}")
            self.app.invalidate()

    # ----------------------------------------------------------------- layout
    def _size_ok(self) -> bool:
        size = get_app().output.get_size()
        return size.columns >= MIN_COLUMNS and size.rows >= MIN_ROWS

    def _screen(self) -> Container:
        if not self._size_ok():
            size = get_app().output.get_size()
            return too_small(size.columns, size.rows)
        phase = self.ctl.replica.phase
        if phase in (Phase.LOBBY, Phase.SHUFFLE):
            return self._screens["lobby"]
        return self._screens["table" if phase is Phase.PLAYING else "scores"]

    def _root(self, config_file: str) -> Container:
        state, r = self.ctl.state, self.ctl.replica
        return FloatContainer(
            content=DynamicContainer(self._screen),
            floats=[
                Float(ConditionalContainer(
                    Frame(Window(FormattedTextControl(lambda: help_text(self.keys, config_file)),
                                 style="class:help"), title="Help", style="class:help.frame"),
                    filter=Condition(lambda: state.show_help and self._size_ok()))),
                Float(ConditionalContainer(
                    Window(FormattedTextControl(lambda: countdown_text(r)), height=1,
                           dont_extend_width=True),
                    filter=Condition(lambda: counting_down(r) and self._size_ok()))),
                Float(ConditionalContainer(
                    Window(FormattedTextControl(confirm_text), height=1,
                           align=WindowAlign.CENTER),
                    filter=Condition(lambda: state.confirm_quit)), bottom=0, left=0, right=0),
            ],
        )

    # ------------------------------------------------------------------- keys
    def mode(self) -> str:
        """Which keys apply now: confirm, help, small, play or between."""
        state = self.ctl.state
        if state.confirm_quit:
            return "confirm"
        if state.show_help:
            return "help"
        if not self._size_ok():
            return "small"
        return "play" if self.ctl.replica.phase is Phase.PLAYING else "between"

    def _active(self, action: Action) -> Filter:
        if action in PLAY:
            modes: tuple[str, ...] = ("play",)
        elif action in BETWEEN:
            modes = ("between",)
        else:
            assert action in GLOBAL
            modes = ("play", "between", "small")
        return Condition(lambda: self.mode() in modes)

    def _bindings(self) -> KeyBindingsBase:
        ctl = self.ctl
        handlers: dict[Action, Handler] = {
            Action.NERTS: lambda: ctl.pile_key(NERTS),
            Action.WASTE: lambda: ctl.pile_key(WASTE),
            **{a: partial(ctl.pile_key, WORK0 + i) for i, a in enumerate(PILES)},
            Action.SEND: ctl.send,
            Action.TURN: ctl.turn,
            Action.STUCK: ctl.toggle_stuck,
            Action.CALL: ctl.call_nerts,
            Action.ROTATE: ctl.rotate,
            Action.LEFT: lambda: ctl.move_cursor(0, -1),
            Action.RIGHT: lambda: ctl.move_cursor(0, 1),
            Action.UP: lambda: ctl.move_cursor(-1, 0),
            Action.DOWN: lambda: ctl.move_cursor(1, 0),
            Action.ACTIVATE: ctl.activate,
            Action.CANCEL: ctl.cancel,
            Action.NEXT: ctl.next_round,
            Action.HELP: ctl.toggle_help,
            Action.QUIT: ctl.ask_quit,
        }
        return merge_key_bindings([build_bindings(self.keys, handlers, self._active),
                                   self._overlay_bindings()])

    def _overlay_bindings(self) -> KeyBindings:
        """Fixed keys of the overlays: closing help, answering the quit question."""
        kb = KeyBindings()
        ctl = self.ctl
        helping = Condition(lambda: self.mode() == "help")
        confirming = Condition(lambda: self.mode() == "confirm")
        for key in {"escape", "enter", "q", *self.keys[Action.HELP]}:
            kb.add(key, filter=helping, eager=True)(on_key(ctl.toggle_help))
        for key in ("y", "Y"):
            kb.add(key, filter=confirming, eager=True)(on_key(lambda: ctl.answer_quit(True)))
        for key in ("n", "N", "escape"):
            kb.add(key, filter=confirming, eager=True)(on_key(lambda: ctl.answer_quit(False)))
        return kb


def tidy_heap() -> None:
    """Collect, then freeze what survives, so later collections skip it.

    A full collection walks every long-lived object: with a table's replicas
    in the heap that is 10-20 ms, long enough to make a key feel late. Done
    here, at start and while a new round is dealt, it costs nothing anyone
    feels, and the collections during play only see the round's new objects.
    Frozen objects are still freed by reference counting when dropped.
    """
    gc.collect()
    gc.freeze()


def run_app(session: Session, config: Config, notes: Sequence[str] = ()) -> None:
    """Play at ``session`` in this terminal until the player quits."""
    asyncio.run(NertsApp(session, config, notes).run())
