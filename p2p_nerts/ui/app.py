"""The full-screen application: screens, overlays, key bindings, and the run loop.

The app and the session share one asyncio loop. Session events reach the
screen through a listener that records them and asks for a frame; those
frames are capped (:class:`FrameCap`) so a burst of plays from fast peers
costs at most one redraw per interval, while a key press redraws at once
(prompt_toolkit invalidates after every key handler).

The root is a chooser over whole screens (too small, the network lobby,
table lobby, table, scores; :meth:`NertsApp._screen`). The app starts at a
table (``nerts solo/host/join``) or in the network lobby (``nerts``); from
the lobby, a seat won swaps the lobby for that table, and leaving the table
brings the lobby back. A page the lobby opens (its history, a replay, standings) stands
in for its list until Esc, with the page's own keys. Forms, help and the quit
question float over whichever screen is showing, and go to whichever
:class:`Hands` is in charge (the table's controller, else the lobby's page or
browser).
"""

from __future__ import annotations

import asyncio
import gc
import signal
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.filters import Condition, Filter
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import (
    ConditionalKeyBindings,
    DynamicKeyBindings,
    KeyBindings,
    KeyBindingsBase,
    KeyPressEvent,
    merge_key_bindings,
)
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import (
    ConditionalContainer,
    Container,
    DynamicContainer,
    Float,
    FloatContainer,
    Layout,
    Window,
    WindowAlign,
)
from prompt_toolkit.layout.containers import AnyContainer
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output
from prompt_toolkit.widgets import Frame

from ..game.tableau import NERTS, WASTE, WORK0
from ..protocol.events import Event, RoundStarting
from ..protocol.replica import Phase
from ..session import Session
from . import screendiff
from .browser import Browser
from .config import Config, config_path
from .control import Controller
from .form import Form
from .hands import Hands
from .keys import PILES, Action, Handler, build_bindings, on_key, resolve_keys
from .listing import browser_help_text, browser_screen
from .overlays import (
    MIN_COLUMNS,
    MIN_ROWS,
    confirm_text,
    countdown_text,
    counting_down,
    form_text,
    help_text,
    rules_text,
    too_small,
)
from .scores import lobby_screen, scores_screen
from .table import table_screen
from .theme import build_style
from .widgets import Rows

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
    """One player's screen: the network lobby, and the table they sit at.

    Give it a ``session`` to open at that table, a ``browser`` to open in the
    network lobby, or both (leaving the table then goes back to the lobby).
    ``code`` is the ``session``'s table code, if it has one: the host's table
    lobby shows it, as it does for a table opened from the network lobby.
    """

    def __init__(self, session: Session | None, config: Config, notes: Sequence[str] = (), *,
                 browser: Browser | None = None, code: str | None = None,
                 input: Input | None = None, output: Output | None = None) -> None:
        if session is None and browser is None:
            raise ValueError("the app needs a table or a lobby")
        self.keys, problems = resolve_keys(config.keys)
        self.browser = browser
        self._ctl: Controller | None = None
        self._screens: dict[str, Container] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._config_file = str(config_path())
        self._lobby = None if browser is None else browser_screen(browser, self.keys)
        if session is not None:
            self._seat(session, code)
        # The focus stays on a window that is always there: prompt_toolkit only
        # sends clicks to windows in the focused window's tree, and the screens
        # below come and go.
        anchor = Window(height=0)
        screendiff.install()
        self.app: Application[None] = Application(
            layout=Layout(Rows([anchor, self._root()]), focused_element=anchor),
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
        self.frames = FrameCap(self.app)
        self._tidy = False  # see tidy_heap: only in a real run, not under a test's loop
        self._tidy_due = False  # a tidy_heap waits for the next frame
        if self._ctl is not None:
            self._listen(self._ctl)
        if browser is not None:
            browser.on_session = self._sit_down
            browser.on_change = self.frames.request
            browser.on_quit = self.app.exit
        for note in (*notes, *problems):
            self.hands.state.error(note)

    @property
    def ctl(self) -> Controller:
        """The controller of the table on screen (there must be one)."""
        assert self._ctl is not None
        return self._ctl

    @property
    def hands(self) -> Hands:
        """Who takes the player's inputs now: the table's controller, else the lobby."""
        if self._ctl is not None:
            return self._ctl
        assert self.browser is not None
        return self.browser.page or self.browser

    async def run(self, *, tidy: bool = True) -> None:
        """Run the screen, the lobby and the table together until the player leaves.

        ``tidy`` freezes the heap (see :func:`tidy_heap`); a test's loop says no.
        """
        if tidy:
            tidy_heap()
            self._tidy = True
        if self._ctl is not None:
            self._start(self._ctl.session)
        if self.browser is not None:
            self.browser.open()
        try:
            await self.app.run_async()
        finally:
            if self.browser is not None:
                await self.browser.close()  # first: no seat can be won after this
            if self._ctl is not None:
                self._ctl.session.close()
            if self._tasks:
                await asyncio.wait(self._tasks)

    # ----------------------------------------------------------------- tables
    def _seat(self, session: Session, code: str | None) -> None:
        """Put ``session``'s table on screen (``code``: its table code, if we know it)."""
        ctl = Controller(session, code=code)
        ctl.on_quit = self._leave
        self._ctl = ctl
        self._screens = {
            "lobby": lobby_screen(ctl, self.keys),
            "table": table_screen(ctl, self.keys),
            "scores": scores_screen(ctl, self.keys),
        }

    def _listen(self, ctl: Controller) -> None:
        """Hear the table's events; only once the frames are there to ask for, since a
        networked session hands its first listener the backlog of events at once."""
        ctl.session.subscribe(partial(self._on_event, ctl))

    def _sit_down(self, session: Session, code: str | None) -> None:
        """A seat won in the lobby: show its table and keep it running."""
        self._seat(session, code)
        self._listen(self.ctl)
        self._start(session)
        self.frames.request()

    def _start(self, session: Session) -> None:
        task = asyncio.get_running_loop().create_task(session.run())
        self._tasks.add(task)
        task.add_done_callback(self._table_stopped)

    def _leave(self) -> None:
        """The player left the table: back to the lobby, or out if there is none."""
        self.ctl.session.close()
        if self.browser is None:
            self.app.exit()
            return
        self._ctl = None
        self._screens = {}
        self.browser.state.say("You left the table")

    def _on_event(self, ctl: Controller, event: Event) -> None:
        ctl.on_event(event)
        self.frames.request()
        if self._tidy and isinstance(event, RoundStarting):
            self._tidy_after_frame()

    def _tidy_after_frame(self) -> None:
        """:func:`tidy_heap` once the frame that shows the deal is on the terminal: the
        deal comes in the handler of the key that asked for it, and a collection
        there would hold that frame back as long again."""
        if self._tidy_due:
            return
        self._tidy_due = True

        def tidy(_app: Application[None]) -> None:
            self.app.after_render -= tidy
            self._tidy_due = False
            tidy_heap()
        self.app.after_render += tidy

    def _table_stopped(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.hands.state.error(f"The table stopped: {task.exception()}")
            self.app.invalidate()

    # ----------------------------------------------------------------- layout
    def _size_ok(self) -> bool:
        size = get_app().output.get_size()
        return size.columns >= MIN_COLUMNS and size.rows >= MIN_ROWS

    def _screen(self) -> Container:
        if not self._size_ok():
            size = get_app().output.get_size()
            return too_small(size.columns, size.rows)
        if self._ctl is None:
            assert self._lobby is not None and self.browser is not None
            page = self.browser.page
            return self._lobby if page is None else page.screen
        phase = self._ctl.view.phase
        if phase in (Phase.LOBBY, Phase.SHUFFLE):
            return self._screens["lobby"]
        return self._screens["table" if phase is Phase.PLAYING else "scores"]

    def _help(self) -> StyleAndTextTuples:
        if self.hands.state.rules_page:
            return rules_text(self.keys, None if self._ctl is None else self._ctl.view.variants)
        if self._ctl is None:
            return browser_help_text(self.keys, self._config_file)
        return help_text(self.keys, self._config_file)

    def _form(self) -> StyleAndTextTuples:
        form = self.hands.state.form
        return form_text(form) if form is not None else []

    def _form_title(self) -> str:
        form = self.hands.state.form
        return form.title if form is not None else ""

    def _counting_down(self) -> bool:
        return self._ctl is not None and counting_down(self._ctl.view)

    def _root(self) -> Container:
        def state_shows(flag: Callable[[], bool]) -> Filter:
            return Condition(lambda: flag() and self._size_ok())

        return FloatContainer(
            content=DynamicContainer(self._screen),
            floats=[
                Float(shown_while(
                    Frame(Window(FormattedTextControl(self._help), style="class:help"),
                          title="Help", style="class:help.frame"),
                    state_shows(lambda: self.hands.state.show_help))),
                Float(shown_while(
                    Frame(Window(FormattedTextControl(self._form), style="class:help"),
                          title=self._form_title, style="class:help.frame"),
                    state_shows(lambda: self.hands.state.form is not None))),
                Float(ConditionalContainer(
                    Window(FormattedTextControl(lambda: countdown_text(self.ctl.view)),
                           height=1, dont_extend_width=True),
                    filter=state_shows(self._counting_down))),
                Float(ConditionalContainer(
                    Window(FormattedTextControl(confirm_text), height=1,
                           align=WindowAlign.CENTER),
                    filter=Condition(lambda: self.hands.state.confirm_quit)),
                      bottom=0, left=0, right=0),
            ],
        )

    # ------------------------------------------------------------------- keys
    def mode(self) -> str:
        """Which keys apply now: confirm, help, small, form, play, between, browse or page."""
        state = self.hands.state
        if state.confirm_quit:
            return "confirm"
        if state.show_help:
            return "help"
        if not self._size_ok():
            return "small"
        if state.form is not None:
            return "form"
        if self._ctl is None:
            assert self.browser is not None
            return "browse" if self.browser.page is None else "page"
        return "play" if self._ctl.view.phase is Phase.PLAYING else "between"

    def _in(self, *modes: str) -> Filter:
        return Condition(lambda: self.mode() in modes)

    def _bindings(self) -> KeyBindingsBase:
        def table(method: Callable[[Controller], None]) -> Handler:
            return lambda: method(self.ctl)

        def lobby(method: Callable[[Browser], None]) -> Handler:
            def run() -> None:
                assert self.browser is not None  # the lobby's keys apply only in the lobby
                method(self.browser)
            return run

        play: dict[Action, Handler] = {
            Action.NERTS: table(lambda c: c.pile_key(NERTS)),
            Action.WASTE: table(lambda c: c.pile_key(WASTE)),
            **{a: table(partial(Controller.pile_key, src=WORK0 + i))
               for i, a in enumerate(PILES)},
            Action.SEND: table(Controller.send),
            Action.DECLARE: table(Controller.declare),
            Action.TURN: table(Controller.turn),
            Action.STUCK: table(Controller.toggle_stuck),
            Action.CALL: table(Controller.call_nerts),
            Action.ROTATE: table(Controller.rotate),
            Action.LEFT: table(lambda c: c.move_cursor(0, -1)),
            Action.RIGHT: table(lambda c: c.move_cursor(0, 1)),
            Action.UP: table(lambda c: c.move_cursor(-1, 0)),
            Action.DOWN: table(lambda c: c.move_cursor(1, 0)),
            Action.ACTIVATE: table(Controller.activate),
            Action.CANCEL: table(Controller.cancel),
        }
        between: dict[Action, Handler] = {
            Action.NEXT: table(Controller.next_round),
            Action.AGAIN: table(Controller.play_again),
            Action.READY: table(Controller.toggle_ready),
            Action.SETTINGS: table(Controller.open_settings),
            Action.PARTNERS: table(Controller.open_partners),
        }
        browse: dict[Action, Handler] = {
            Action.UP: lobby(lambda b: b.move(-1)),
            Action.DOWN: lobby(lambda b: b.move(1)),
            Action.JOIN: lobby(Browser.join),
            Action.ADDRESS: lobby(Browser.ask_address),
            Action.CREATE: lobby(Browser.create),
            Action.SOLO: lobby(Browser.solo),
            Action.WATCH: lobby(Browser.watch),
            Action.HISTORY: lobby(Browser.history),
            Action.STANDINGS: lobby(Browser.standings),
        }
        everywhere: dict[Action, Handler] = {
            Action.HELP: lambda: self.hands.toggle_help(),
            Action.QUIT: self._quit,
        }
        return merge_key_bindings([
            build_bindings(self.keys, play, self._in("play")),
            build_bindings(self.keys, between, self._in("between")),
            build_bindings(self.keys, browse, self._in("browse")),
            build_bindings(self.keys, everywhere, self._in("play", "between", "browse", "small")),
            ConditionalKeyBindings(DynamicKeyBindings(self._page_keys), filter=self._in("page")),
            self._form_bindings(),
            self._overlay_bindings(),
        ])

    def _page_keys(self) -> KeyBindingsBase | None:
        page = None if self.browser is None else self.browser.page
        return None if page is None else page.keys

    def _quit(self) -> None:
        """At a table: ask first (a round may be on). In the lobby: nothing to lose."""
        if self._ctl is not None:
            self._ctl.ask_quit()
        else:
            assert self.browser is not None
            self.browser.quit()

    def _form_bindings(self) -> KeyBindings:
        """The fixed keys of an open form; any other key is typed into it."""
        kb = KeyBindings()
        editing = self._in("form")
        edits: dict[str, Callable[[Form], None]] = {
            "up": lambda f: f.move(-1), "s-tab": lambda f: f.move(-1),
            "down": lambda f: f.move(1), "tab": lambda f: f.move(1),
            "left": lambda f: f.change(-1), "right": lambda f: f.change(1),
            "backspace": Form.erase, "enter": Form.submit,
        }
        for key, change in edits.items():
            kb.add(key, filter=editing, eager=True)(on_key(partial(self._edit, change)))
        kb.add("escape", filter=editing, eager=True)(on_key(lambda: self.hands.close_form()))

        def typed(event: KeyPressEvent) -> None:
            # A key prompt_toolkit named (F5, Home...) types nothing, not its escape code.
            key = event.key_sequence[0].key
            text = "" if isinstance(key, Keys) and key is not Keys.BracketedPaste else event.data
            self.hands.edit_form(lambda f: f.type(text))

        kb.add(Keys.Any, filter=editing)(typed)
        kb.add(Keys.BracketedPaste, filter=editing)(typed)
        return kb

    def _edit(self, change: Callable[[Form], None]) -> None:
        self.hands.edit_form(change)

    def _overlay_bindings(self) -> KeyBindings:
        """Fixed keys of the overlays: closing help, answering the quit question."""
        kb = KeyBindings()
        helping = self._in("help")
        confirming = self._in("confirm")
        for key in {"escape", "enter", "q", *self.keys[Action.HELP]}:
            kb.add(key, filter=helping, eager=True)(on_key(lambda: self.hands.toggle_help()))
        for key in ("r", "tab", "left", "right"):
            kb.add(key, filter=helping, eager=True)(on_key(lambda: self.hands.flip_help_page()))
        for key in ("y", "Y"):
            kb.add(key, filter=confirming, eager=True)(
                on_key(lambda: self.ctl.answer_quit(True)))
        for key in ("n", "N", "escape"):
            kb.add(key, filter=confirming, eager=True)(
                on_key(lambda: self.ctl.answer_quit(False)))
        return kb


def shown_while(container: AnyContainer, shown: Filter) -> Container:
    """``container`` while ``shown``; otherwise nothing, not even in the layout's walk.

    prompt_toolkit walks the whole layout, hidden parts included, to find its
    windows: twice for every key (to look its bindings up) and after every
    frame. A framed overlay is two dozen nodes of it; hidden, it is one.
    """
    nothing = Window()
    return ConditionalContainer(
        DynamicContainer(lambda: container if shown() else nothing), filter=shown)


def tidy_heap() -> None:
    """Collect, then freeze what survives, so later collections skip it.

    A full collection walks every long-lived object: with a table's replicas
    in the heap that is 10-20 ms, long enough to make a key feel late. Done
    at start and once a new round is dealt and drawn, it costs nothing anyone
    feels, and the collections during play only see the round's new objects.
    Frozen objects are still freed by reference counting when dropped.
    """
    gc.collect()
    gc.freeze()


def run_app(session: Session, config: Config, notes: Sequence[str] = ()) -> None:
    """Play at ``session`` in this terminal until the player quits, or a signal says
    to stop (SIGTERM; SIGHUP: the terminal closed): the table is left as on a
    quit, so that what the session keeps on leaving is kept."""
    asyncio.run(_run_until_signalled(NertsApp(session, config, notes)))


async def _run_until_signalled(ui: NertsApp) -> None:
    def stop() -> None:
        if ui.app.is_running:
            ui.app.exit()

    loop = asyncio.get_running_loop()
    for signum in _STOPS:
        loop.add_signal_handler(signum, stop)
    await ui.run()


#: The signals that end a game at this terminal as a quit does (none on Windows).
_STOPS = () if sys.platform == "win32" else (signal.SIGTERM, signal.SIGHUP)
