"""The network lobby's screen: the tables on the LAN, live, and the lobby's help.

Rows, top to bottom::

    header: NERTS · lobby, and who you are (name, key fingerprint)
    ── Tables on your network ──
    one row per event (an evening's tournament), if there are any: its name,
    the game it is at, and the player's seat in it once registered
    one row per table (name@fingerprint as ``nerts join`` takes it, host, seats,
    what it is doing, rules, protocol version, marks),
    or how to get a table when there is none
    ── News ──
    event lines
    key hints

A row is drawn from the table's advertisement every frame, so a table that
fills up, changes its rules or goes away shows it at the next frame.
"""

from __future__ import annotations

import time
from functools import partial

from prompt_toolkit.application import get_app
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import Container, HSplit

from ..lan import EventListing, TableListing
from ..lines import counted
from .browser import Browser, is_full
from .keys import DESCRIPTIONS, Action, KeyMap, key_name, label
from .overlays import PAGES
from .table import MESSAGE_ROWS, messages
from .widgets import on_click, rule, screen_width, spread, text

#: Rows of the screen that are not table rows: header, two rules, column titles
#: and the blank lines around the list, the "shown" line, event lines, key hints.
_OTHER_ROWS = 8 + MESSAGE_ROWS
_SEATS_WIDTH = 5  # "12/16"
_STATE_WIDTH = len("next round in 99 s")
_BROWSE_KEYS = (Action.JOIN, Action.WATCH, Action.ADDRESS, Action.CREATE, Action.SOLO,
                Action.HISTORY, Action.STANDINGS, Action.HELP, Action.QUIT)


def browser_screen(b: Browser, keys: KeyMap) -> Container:
    return HSplit([
        text(lambda: spread([("class:title", " NERTS "), ("class:dim", " lobby")], you(b))),
        rule(lambda: tables_title(b)),
        text(lambda: table_rows(b, keys), height=None),
        rule(lambda: [("class:rule.title", "News")]),
        text(lambda: messages(b.state), height=MESSAGE_ROWS, stretch=True),
        text(lambda: hints(keys)),
    ])


def you(b: Browser) -> StyleAndTextTuples:
    return [("class:you", b.identity.name), ("class:dim", f" {b.identity.fingerprint} ")]


def tables_title(b: Browser) -> StyleAndTextTuples:
    count = len(b.network.tables)
    found = counted(count, "table") if count else "none found yet"
    return [("class:rule.title", "Tables on your network"), ("class:dim", f" · {found}")]


def event_rows(b: Browser) -> StyleAndTextTuples:
    """One row per event, above the tables: the chosen one highlighted, each clickable."""
    events = b.listed_events()
    if not events or b.events is None:
        return []
    labels = {e.instance: b.events.event_label(e) for e in events}
    width = max(len("Event"), *(len(n) for n in labels.values()))
    out: StyleAndTextTuples = [("class:label", f"\n    {'Event':<{width}}  Now\n")]
    for event in events:
        here = event.instance == b.chosen
        click = on_click(partial(b.click_event, event.instance))
        style = "class:selected" if here else ""
        out.append((style, f"  {'▸' if here else ' '} {labels[event.instance]:<{width}}  "
                           f"{_event_doing(event)}", click))
        if event.needs_code:
            out.append(("class:warn", " code"))
        out += [*_event_place(b, event), ("", "\n")]
    return out


def _event_doing(event: EventListing) -> str:
    if not event.game:
        return f"registering · {counted(event.games, 'game')}"
    return f"game {event.game} of {event.games}"


def _event_place(b: Browser, event: EventListing) -> StyleAndTextTuples:
    """The player's place at the event: registered, and their seat in the game under way."""
    place = b.place_at(event)
    if place is None or not place.registered:
        return [("class:dim", "  Enter: register")]
    line = place.seat_line
    if line is None:
        return [("class:dim", "  registered")]
    return [("class:warn", f"  {line}"), ("class:dim", " (Enter: go)")]


def table_rows(b: Browser, keys: KeyMap) -> StyleAndTextTuples:
    """One row per event, then per table: the chosen one highlighted, every row clickable."""
    events = event_rows(b)
    tables = b.network.tables
    if not tables:
        return [*events, ("class:dim",
                          "\n  Tables opened on your network show up here by themselves.\n"
                          f"  {label(keys, Action.CREATE)} opens a table of your own, "
                          f"{label(keys, Action.ADDRESS)} joins one by its address, "
                          f"{label(keys, Action.SOLO)} plays against the computer.\n")]
    chosen = b.selected()
    now = time.time()
    names = {t.instance: b.network.label(t) for t in tables}
    name_width = max(len("Table"), *(len(n) for n in names.values()))
    host_width = max(len("Host"), *(len(t.host) for t in tables))
    marks_width = len("  v00 code full")
    rules_width = max(10, screen_width() - 4 - name_width - 2 - host_width - 2 - _SEATS_WIDTH
                      - 2 - _STATE_WIDTH - 2 - marks_width)
    out: StyleAndTextTuples = [*events,
        ("class:label", f"\n    {'Table':<{name_width}}  {'Host':<{host_width}}  "
                        f"{'Seats':>{_SEATS_WIDTH}}  {'Now':<{_STATE_WIDTH}}  Rules\n")]
    shown_events = len(b.listed_events()) + 2 if events else 0
    room = max(1, get_app().output.get_size().rows - _OTHER_ROWS - shown_events)
    index = next((i for i, t in enumerate(tables)
                  if chosen is not None and t.instance == chosen.instance), 0)
    first = max(0, min(index - room // 2, len(tables) - room))
    for table in tables[first:first + room]:
        here = chosen is not None and table.instance == chosen.instance
        click = on_click(partial(b.click_table, table.instance))
        style = "class:selected" if here else ""
        seats = f"{table.seats_taken}/{table.seats_total}"
        rules = _cut(table.variant, rules_width)
        out.append((style, f"  {'▸' if here else ' '} {names[table.instance]:<{name_width}}  "
                           f"{table.host:<{host_width}}  {seats:>{_SEATS_WIDTH}}  "
                           f"{doing(table, now):<{_STATE_WIDTH}}  {rules:<{rules_width}}",
                    click))
        out += [(style, " ", click), *_marks(b, table), ("", "\n")]
    if len(tables) > room:
        out.append(("class:dim", f"    {room} of {len(tables)} shown: "
                                 f"{label(keys, Action.UP)} {label(keys, Action.DOWN)} scroll\n"))
    return out


def doing(table: TableListing, now: float) -> str:
    """What the table is doing, in a few words; ``now`` is Unix time."""
    if table.state == "playing":
        return "playing"
    if table.state == "over":
        return "game over"
    if table.state == "break":
        left = None if table.next_deal is None else round(table.next_deal - now)
        if left is None or left > 99:  # a person deals, or a long break (or a clock far off)
            return "between rounds"
        return f"next round in {left} s" if left > 0 else "dealing…"
    return "seating players"


def _marks(b: Browser, table: TableListing) -> StyleAndTextTuples:
    """Protocol version (red if not ours), then "code" and "full" where they apply."""
    out: StyleAndTextTuples = [("class:dim" if b.speaks(table) else "class:msg.error",
                                f" v{table.protocol_version}")]
    if table.needs_code:
        out.append(("class:warn", " code"))
    if is_full(table):
        out.append(("class:warn", " full"))
    return out


def _cut(words: str, width: int) -> str:
    return words if len(words) <= width else words[:width - 1] + "…"


#: Hints given up first where the line is too narrow for all (the help lists them all).
#: Joining by address stays: it is the way in where multicast is blocked.
_SPARE_HINTS = (Action.STANDINGS, Action.HISTORY, Action.SOLO, Action.WATCH, Action.ADDRESS)
_HINT_WORDS = {Action.JOIN: "join", Action.WATCH: "watch", Action.ADDRESS: "address",
               Action.CREATE: "new", Action.SOLO: "solo", Action.HISTORY: "history",
               Action.STANDINGS: "standings", Action.HELP: "help", Action.QUIT: "quit"}


def hints(keys: KeyMap, width: int | None = None) -> StyleAndTextTuples:
    """The lobby's key line, within ``width`` (the screen's): closer together, then
    without the hints a player needs least, but always with help and quit."""
    width = screen_width() if width is None else width
    shown = list(_BROWSE_KEYS)
    arrows = f"{label(keys, Action.UP)}{label(keys, Action.DOWN)}"

    def line(gap: str) -> StyleAndTextTuples:
        out: StyleAndTextTuples = [("", " "), ("class:key", arrows),
                                   ("class:dim", f" choose{gap}")]
        for action in shown:
            out += [("class:key", label(keys, action)),
                    ("class:dim", f" {_HINT_WORDS[action]}{gap}")]
        return out

    def fits(gap: str) -> bool:  # the last gap may overhang
        return sum(len(t[1]) for t in line(gap)) - len(gap) <= width

    spare = list(_SPARE_HINTS)
    while not fits("  ") and not fits(" ") and spare:
        shown.remove(spare.pop(0))
    return line("  ") if fits("  ") else line(" ")


def browser_help_text(keys: KeyMap, config_file: str) -> StyleAndTextTuples:
    """The lobby's help overlay: its keys, and what the marks on a table mean."""
    out: StyleAndTextTuples = [("class:label", "Keys in the lobby\n")]
    arrows = f"{key_name(keys[Action.UP][0])} {key_name(keys[Action.DOWN][0])}"
    out += [("class:key", f"  {arrows:<10}"), ("", " choose a table (or click it)\n")]
    for action in _BROWSE_KEYS:
        names = ", ".join(key_name(k) for k in keys[action])
        what = "quit" if action is Action.QUIT else DESCRIPTIONS[action]  # nothing to lose here
        out += [("class:key", f"  {names:<10}"), ("", f" {what}\n")]
    out += [
        ("class:label", "Tables\n"),
        ("", "  Tables on your network appear by themselves (mDNS): no server, no setup.\n"
             "  Where multicast is blocked, join by the host's address and port instead.\n"
             "  Table: its name@the start of its host's key fingerprint (two tables may\n"
             "  share a name), as nerts join takes it: nerts join \"Main table@22d7\".\n"
             "  Host: the host's name.\n"
             "  Now: seating players, playing, next round in N s (or between rounds).\n"
             "  Marks: vN the table's protocol version (red: not this nerts'), code: the\n"
             "  table asks for a code, full: no free seat (Enter: wait or watch).\n"),
        ("class:label", "Events\n"),
        ("", "  An evening's tournament shows above the tables. Enter registers (its code\n"
             "  asked if it has one); when a game seats you, its row says where and with\n"
             "  whom, and Enter takes you to your table, which deals once all sit.\n"),
        ("class:label", "Forms\n"),
        ("", "  ↑↓ field, ←→ or Space change it, type into text, Enter goes, Esc cancels\n"),
        ("class:dim", f"Remap keys in {config_file}\n{PAGES}"),
    ]
    return out
