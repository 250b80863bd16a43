"""Actions, their default keys, the player's remaps, and the key bindings.

Every action is bound to single keys, never to a sequence, and every binding
is ``eager``: no key ever waits to see whether a longer one follows. Actions
are grouped by the screen they work on (the round, the screens between
rounds, the network lobby; the arrows serve two of them); within one screen
(plus the global actions) a key may mean only one thing, which is what the
remap check enforces. The keys of an open form are fixed, like those of the
overlays: they edit text, so no remap could take them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum

from prompt_toolkit.filters import Filter
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys


class Action(StrEnum):
    NERTS = "nerts"
    WASTE = "waste"
    PILE1 = "pile1"
    PILE2 = "pile2"
    PILE3 = "pile3"
    PILE4 = "pile4"
    SEND = "send"
    DECLARE = "declare"
    TURN = "turn"
    STUCK = "stuck"
    CALL = "call"
    ROTATE = "rotate"
    LEFT = "left"
    RIGHT = "right"
    UP = "up"
    DOWN = "down"
    ACTIVATE = "activate"
    CANCEL = "cancel"
    NEXT = "next"
    AGAIN = "again"
    READY = "ready"
    SETTINGS = "settings"
    PARTNERS = "partners"
    JOIN = "join"
    ADDRESS = "address"
    CREATE = "create"
    SOLO = "solo"
    WATCH = "watch"
    HISTORY = "history"
    STANDINGS = "standings"
    HELP = "help"
    QUIT = "quit"


PILES = (Action.PILE1, Action.PILE2, Action.PILE3, Action.PILE4)
PLAY = frozenset({Action.NERTS, Action.WASTE, *PILES, Action.SEND, Action.TURN, Action.STUCK,
                  Action.DECLARE,
                  Action.CALL, Action.ROTATE, Action.LEFT, Action.RIGHT, Action.UP, Action.DOWN,
                  Action.ACTIVATE, Action.CANCEL})
BETWEEN = frozenset({Action.NEXT, Action.AGAIN, Action.READY, Action.SETTINGS,
                     Action.PARTNERS})
BROWSE = frozenset({Action.UP, Action.DOWN, Action.JOIN, Action.ADDRESS, Action.CREATE,
                    Action.SOLO, Action.WATCH, Action.HISTORY, Action.STANDINGS})
GLOBAL = frozenset({Action.HELP, Action.QUIT})

KeyMap = Mapping[Action, tuple[str, ...]]

DEFAULT_KEYS: KeyMap = {
    Action.NERTS: ("n",),
    Action.WASTE: ("w",),
    Action.PILE1: ("1",),
    Action.PILE2: ("2",),
    Action.PILE3: ("3",),
    Action.PILE4: ("4",),
    Action.SEND: ("f",),
    Action.DECLARE: ("d",),
    Action.TURN: ("space",),
    Action.STUCK: ("s",),
    Action.CALL: ("!", "N"),
    Action.ROTATE: ("r",),
    Action.LEFT: ("left",),
    Action.RIGHT: ("right",),
    Action.UP: ("up",),
    Action.DOWN: ("down",),
    Action.ACTIVATE: ("enter",),
    Action.CANCEL: ("escape",),
    Action.NEXT: ("enter",),
    Action.AGAIN: ("n",),
    Action.READY: ("r",),
    Action.SETTINGS: ("o",),
    Action.PARTNERS: ("p",),
    Action.JOIN: ("enter",),
    Action.ADDRESS: ("a",),
    Action.CREATE: ("c",),
    Action.SOLO: ("s",),
    Action.WATCH: ("w",),
    Action.HISTORY: ("h",),
    Action.STANDINGS: ("e",),
    Action.HELP: ("?", "f1"),
    Action.QUIT: ("q", "c-c"),
}

#: What the actions without their own help line do (short: the help shows two a row).
DESCRIPTIONS: Mapping[Action, str] = {
    Action.SEND: "send the selected card where it fits best (foundation first)",
    Action.DECLARE: "joker ¤1 ¤2: choose the card it stands for (again: the next)",
    Action.TURN: "turn the stock",
    Action.STUCK: "vote stuck / withdraw",
    Action.CALL: "call Nerts!",
    Action.ROTATE: "stuck alone: rotate stock",
    Action.ACTIVATE: "click at the cursor",
    Action.CANCEL: "drop the selection",
    Action.NEXT: "host: deal the next round",
    Action.AGAIN: "host, game over: play again",
    Action.READY: "ready / not ready",
    Action.SETTINGS: "host: change the rules",
    Action.PARTNERS: "host: choose partners",
    Action.JOIN: "join the chosen table",
    Action.ADDRESS: "join by address (HOST:PORT)",
    Action.CREATE: "open a table of your own",
    Action.SOLO: "play against computer players",
    Action.WATCH: "watch the chosen table (no seat)",
    Action.HISTORY: "your past games, statistics, replays",
    Action.STANDINGS: "event standings across the tables",
    Action.HELP: "this help",
    Action.QUIT: "quit (asks first)",
}


def parse_key(key: str) -> str | None:
    """prompt_toolkit's name for ``key`` ("f", "space", "enter", "f1", "c-x"...), or None.

    Asking prompt_toolkit itself keeps its aliases ("enter" is "c-m") in one place.
    """
    kb = KeyBindings()
    try:
        kb.add(key)(_nothing)
    except ValueError:
        return None
    parsed = kb.bindings[0].keys[0]
    return parsed.value if isinstance(parsed, Keys) else parsed


def _nothing(_event: KeyPressEvent) -> None:
    """The handler of a throwaway binding (see :func:`parse_key`)."""


def resolve_keys(remaps: Mapping[str, tuple[str, ...]]) -> tuple[KeyMap, list[str]]:
    """Apply the player's remaps to the defaults; return the key map and any problems.

    A remap naming an unknown action or key is skipped with a message. If the
    result binds one key to two actions of one screen, the remaps are
    dropped altogether: a half-applied layout would only confuse.
    """
    problems: list[str] = []
    keys = dict(DEFAULT_KEYS)
    for name, spec in remaps.items():
        try:
            action = Action(name)
        except ValueError:
            problems.append(f"keys: no action called {name!r} "
                            f"(actions: {', '.join(a.value for a in Action)})")
            continue
        bad = [k for k in spec if parse_key(k) is None]
        if bad:
            problems.append(f"keys.{name}: {', '.join(map(repr, bad))} is not a key I know")
            continue
        keys[action] = tuple(spec)
    clashes = [clash for group in (PLAY, BETWEEN, BROWSE)
               if (clash := _clash(keys, group | GLOBAL))]
    if clashes:
        problems.append(f"keys: {clashes[0]}; using the default keys")
        return DEFAULT_KEYS, problems
    return keys, problems


def _clash(keys: KeyMap, group: frozenset[Action]) -> str | None:
    owner: dict[str, Action] = {}
    for action in sorted(group):
        for key in keys[action]:
            canon = parse_key(key) or key
            if canon in owner:
                return f"{key!r} is bound to both {owner[canon]} and {action}"
            owner[canon] = action
    return None


_NAMES = {"escape": "Esc", "enter": "Enter", "space": "Space", "tab": "Tab", "left": "←",
          "right": "→", "up": "↑", "down": "↓"}


def key_name(key: str) -> str:
    """A key as people write it: "n", "Space", "Esc", "F1", "Ctrl-C"."""
    if key in _NAMES:
        return _NAMES[key]
    if key.startswith("c-"):
        return "Ctrl-" + key[2:].upper()
    if key[:1] == "f" and key[1:].isdigit():
        return key.upper()
    return key


def label(keys: KeyMap, action: Action) -> str:
    """How an action's first key is shown on screen."""
    return key_name(keys[action][0])


Handler = Callable[[], None]


def build_bindings(keys: KeyMap, handlers: Mapping[Action, Handler],
                   active: Filter) -> KeyBindings:
    """Bind the keys of every handled action, all filtered to when ``active`` holds.

    No key here edits text, so none saves a text buffer's undo state first
    (with no buffer on screen, prompt_toolkit makes one to save, on every key).
    """
    kb = KeyBindings()
    for action, handler in handlers.items():
        for key in keys[action]:
            kb.add(key, filter=active, eager=True, save_before=_no_undo)(on_key(handler))
    return kb


def _no_undo(_event: KeyPressEvent) -> bool:
    return False


def on_key(handler: Handler) -> Callable[[KeyPressEvent], None]:
    """A key binding's handler that runs ``handler`` (it needs nothing from the key event)."""
    def run(_event: KeyPressEvent) -> None:
        handler()
    return run
