"""What every screen's inputs share: the input count, the help overlay and the open form.

Both the table's :class:`~p2p_nerts.ui.control.Controller` and the network
lobby's :class:`~p2p_nerts.ui.browser.Browser` are :class:`Hands`: the app
sends the form keys and the help key to whichever one is on screen, without
knowing which it is.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

from prompt_toolkit.key_binding import KeyBindingsBase
from prompt_toolkit.layout import Container

from .form import Form
from .state import UiState

P = ParamSpec("P")
H = TypeVar("H", bound="Hands")


def player_input(method: Callable[Concatenate[H, P], None]) -> Callable[Concatenate[H, P], None]:
    """Mark a method as a player input: it counts in :attr:`Hands.handled`."""
    @functools.wraps(method)
    def run(self: H, /, *args: P.args, **kwargs: P.kwargs) -> None:
        self.handled += 1
        method(self, *args, **kwargs)
    return run


def sentence(text: str) -> str:
    """A reason from the rules or the network as a line on screen: capital first."""
    return text[:1].upper() + text[1:]


class Hands:
    """The player's inputs on one screen."""

    def __init__(self, state: UiState | None = None) -> None:
        self.state = state or UiState()
        #: Inputs handled so far: a test or a benchmark waits on it to know a key landed.
        self.handled = 0

    @player_input
    def toggle_help(self) -> None:
        self.state.show_help = not self.state.show_help
        self.state.rules_page = False  # help opens on its keys

    @player_input
    def flip_help_page(self) -> None:
        """Between the help's two pages: the keys, and the rules in short."""
        self.state.rules_page = not self.state.rules_page

    @player_input
    def edit_form(self, change: Callable[[Form], None]) -> None:
        """A key in the open form: move, change a choice, type, or submit."""
        if self.state.form is not None:
            change(self.state.form)

    @player_input
    def close_form(self) -> None:
        self.state.form = None


class Page(Hands):
    """A screen the lobby opens over its list of tables (history, a replay,
    standings): it draws ``screen``, takes the keys of ``keys``, and runs its
    background work (a ticker, a collector) only while it is open.

    ``on_leave`` goes back to what was under it; ``on_change`` asks for a
    frame when its background work changed what it shows.
    """

    def __init__(self) -> None:
        super().__init__()
        self.on_leave: Callable[[], None] = lambda: None
        self.on_change: Callable[[], None] = lambda: None
        self.tasks: set[asyncio.Task[None]] = set()

    @property
    def screen(self) -> Container:
        raise NotImplementedError

    @property
    def keys(self) -> KeyBindingsBase:
        raise NotImplementedError

    def start(self) -> None:
        """Begin the page's background work (nothing by default)."""

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def stop(self) -> None:
        """The page is closed: its background work ends."""
        for task in self.tasks:
            task.cancel()

    @player_input
    def leave(self) -> None:
        self.on_leave()
