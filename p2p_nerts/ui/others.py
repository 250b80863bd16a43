"""The other players at the table: each one's public tableau, in the room there is.

What is drawn of a player is what their last VIEW showed (``RoundView.views``:
the Nerts pile's count and top card, the four work piles whole, the waste's
top card, the stock's count), what the foundations say they put up, and
their running total. A seat with no VIEW yet is said to be waiting for one:
nothing is guessed.

Two ways to draw them, chosen afresh on every frame from the terminal's size
(:func:`roomy`):

* around the table (from about 120×36): a box per player, their Nerts pile,
  waste and stock on one row and each work pile fanned on its own, the boxes
  side by side in bands across the table from you, above the foundations; on
  a screen wide enough (about 200 columns) the players nearest you on either
  hand sit beside the foundations and your layout. Seats go round as at a
  real table: from the one after yours, on your left, up the left side,
  across, and down the right side to the one before yours;
* compact: one row per player, which keeps all seven on an 80×24 screen.

Where a card of theirs just went up or bounced back is marked (see
:mod:`.state`): ``*`` after the pile it left, ``!`` after the pile it came
back to.
"""

from __future__ import annotations

from functools import lru_cache

from prompt_toolkit.application import get_app
from prompt_toolkit.formatted_text import OneStyleAndTextTuple, StyleAndTextTuples

from ..game.scoring import partners
from ..game.tableau import NERTS, WASTE, WORK0, WORK_PILES
from ..protocol.messages import View
from ..protocol.replica import PLAY_HEARTBEAT, RoundView, TableView
from .state import Mark, UiState
from .theme import CARD_WIDTH, card_fragment, card_or_gap
from .widgets import MouseHandler

#: Seconds without a word from a peer before it shows as "silent": two of its
#: heartbeats at their longest (at play, a seat that only listens is heard no
#: more often), so that a heartbeat a little late on a busy machine does not
#: show a seat that is there as silent.
SILENT_AFTER = 2 * PLAY_HEARTBEAT

BOX_WIDTH = 38  # one player's box, around the table
BOX_GAP = 2  # columns between two boxes
BOX_ROWS = 2 + WORK_PILES  # name; Nerts, waste and stock; a row per work pile
ROOMY_COLUMNS = 120  # the least width that draws every layout
#: Rows of the table screen besides the players: header, foundations (rule and
#: four suits), you (rule, top row, work piles), status, two of news, key hints.
TABLE_ROWS = 1 + 5 + 2 + WORK_PILES + 1 + 2 + 1
_FAN = (BOX_WIDTH - 4) // (CARD_WIDTH + 1)  # cards of a work pile a box shows
#: Rows beside which a side column of boxes sits: the foundations (rule and four
#: suits) and your layout (rule, top row, work piles, status).
MIDDLE_ROWS = 5 + 1 + 1 + WORK_PILES + 1
SIDE_CENTRE = 110  # the least width between two side columns, for the foundations and yours
SIDE_WIDTH = BOX_WIDTH + BOX_GAP  # a side column: its boxes and the gap towards the middle
#: Columns of a compact row besides the name, at their widest ("stuck  flagged").
_ROW_BESIDES_NAME = 64


def others(rnd: RoundView) -> list[int]:
    """The seats drawn as others: round the table from the seat after mine (every
    seat, from the first, for a spectator)."""
    count = len(rnd.names)
    me = rnd.me
    start = 0 if me is None else me + 1
    return [seat % count for seat in range(start, start + count) if seat % count != me]


def per_band(columns: int) -> int:
    """Boxes side by side at ``columns``."""
    return max(1, (columns + BOX_GAP) // (BOX_WIDTH + BOX_GAP))


Seats = tuple[list[int], list[int], list[int]]  # left side, across, right side


def roomy(view: TableView) -> bool:
    """Whether the screen has room for every other player's layout (else compact rows)."""
    return _arrangement(view)[0]


def placement(view: TableView) -> Seats:
    """Where the others sit around the table: (left side top to bottom, across left
    to right, right side top to bottom); the sides are empty but on a wide screen."""
    return _arrangement(view)[1]


class _Frame:
    """The arrangement of the frame being drawn: the layout asks for it several
    times a frame, and it changes only with the terminal's size or the seats."""

    app: object = None
    number = -1
    arranged: tuple[bool, Seats] = (False, ([], [], []))


def _arrangement(view: TableView) -> tuple[bool, Seats]:
    app = get_app()
    if _Frame.app is not app or _Frame.number != app.render_counter:
        _Frame.app, _Frame.number = app, app.render_counter
        _Frame.arranged = _arrange(view, app.output.get_size().columns,
                                   app.output.get_size().rows)
    return _Frame.arranged


def _arrange(view: TableView, columns: int, rows: int) -> tuple[bool, Seats]:
    rnd = view.round
    if rnd is None:
        return False, ([], [], [])
    seats = others(rnd)
    bands = -(-len(seats) // per_band(columns))
    unseated = 1 + WORK_PILES + 1 if view.watching else 0  # no piles of mine, no status
    if columns < ROOMY_COLUMNS or TABLE_ROWS - unseated + bands * BOX_ROWS > rows:
        return False, ([], seats, [])
    beside = min((MIDDLE_ROWS - unseated) // BOX_ROWS, len(seats) // 3)  # on each side
    if columns - 2 * SIDE_WIDTH < SIDE_CENTRE or not beside:
        return True, ([], seats, [])
    last = len(seats) - beside
    return True, (seats[beside - 1::-1], seats[beside:last], seats[last:])


def side(view: TableView, state: UiState, right: bool) -> StyleAndTextTuples:
    """A side column: its players' boxes stacked, the gap on the middle's side."""
    rnd = view.round
    left_seats, _, right_seats = placement(view)
    if rnd is None:
        return []
    out: StyleAndTextTuples = []
    gap = ("", " " * BOX_GAP)
    for seat in right_seats if right else left_seats:
        for line in box(view, rnd, state, seat):
            if out:
                out.append(("", "\n"))
            out += [gap, *line] if right else [*line, gap]
    return out


# ------------------------------------------------------------------ compact rows
def rows(view: TableView, state: UiState) -> StyleAndTextTuples:
    """One row per other player: Nerts cards left and top, waste, stock, cards up,
    stuck, connection health."""
    rnd = view.round
    if rnd is None:
        return []
    out: StyleAndTextTuples = []
    seats = others(rnd)
    # Long names are cut to leave the row's piles and health on screen.
    room = max(4, get_app().output.get_size().columns - _ROW_BESIDES_NAME)
    names = {seat: _name(rnd, seat)[:room] for seat in seats}
    width = max((len(n) for n in names.values()), default=0)
    now, log, stuck = view.now, rnd.foundations, rnd.stuck
    for seat in seats:
        if out:
            out.append(("", "\n"))
        out.append(("class:label", f"  {names[seat]:<{width}}  "))
        shown = rnd.views.get(seat)
        if shown is None:
            out.append(("class:dim", "Nerts 13 · waiting for their first view "))
        else:
            out.append(("", f"Nerts {shown.nerts:>2} "))
            out += [card_or_gap(shown.top), mark_cell(state.mark(seat, NERTS, now)),
                    ("", "  waste "), card_or_gap(shown.waste),
                    mark_cell(state.mark(seat, WASTE, now)), ("", f"  stock {shown.stock:>2}")]
        out.append(("", f"   up {log.cards_of(seat):>2}"))
        out.append(mark_cell(_work_mark(state, seat, now)))
        out.append(("", "  "))
        if seat < len(stuck) and stuck[seat]:
            out.append(("class:warn", "stuck  "))
        out.append(health(view, rnd, seat))
    return out


def _work_mark(state: UiState, seat: int, now: float) -> Mark | None:
    """The newest mark on any of a seat's work piles (compact rows do not draw them)."""
    marks = [m for pile in range(WORK_PILES)
             if (m := state.mark(seat, WORK0 + pile, now)) is not None]
    return max(marks, key=lambda m: m.until) if marks else None


# ------------------------------------------------------------------ around the table
def bands(view: TableView, state: UiState) -> StyleAndTextTuples:
    """The boxes of the players across the table, as many side by side as the width
    holds."""
    rnd = view.round
    if rnd is None:
        return []
    size = get_app().output.get_size()
    seats = placement(view)[1]
    across = per_band(size.columns)
    out: StyleAndTextTuples = []
    for first in range(0, len(seats), across):
        boxes = [box(view, rnd, state, seat) for seat in seats[first:first + across]]
        # A band is centred, as the players sit across the middle of the table.
        used = len(boxes) * (BOX_WIDTH + BOX_GAP) - BOX_GAP
        indent = ("", " " * max(0, (size.columns - used) // 2))
        for row in range(BOX_ROWS):
            if out:
                out.append(("", "\n"))
            out.append(indent)
            for index, lines in enumerate(boxes):
                if index:
                    out.append(("", " " * BOX_GAP))
                out += lines[row]
    return out


Lines = tuple[StyleAndTextTuples, ...]  # a box's rows, shared: never changed once made
WORKS = tuple(WORK0 + pile for pile in range(WORK_PILES))
_LANDED, _BOUNCED = Mark(0.0, False), Mark(0.0, True)  # what a mark draws as, whenever it ends


def box(view: TableView, rnd: RoundView, state: UiState, seat: int) -> Lines:
    """One player's layout, :data:`BOX_ROWS` rows of :data:`BOX_WIDTH` columns each."""
    now = view.now
    stuck = rnd.stuck
    totals = view.totals
    shown = rnd.views.get(seat)
    marks = () if shown is None else tuple(
        _kind(state.mark(seat, pile, now)) for pile in (NERTS, WASTE, *WORKS))
    return _box(_name(rnd, seat), rnd.foundations.cards_of(seat),
                totals[seat] if totals is not None and seat < len(totals) else None,
                seat < len(stuck) and stuck[seat], health(view, rnd, seat), shown, marks)


def _kind(mark: Mark | None) -> Mark | None:
    return None if mark is None else _BOUNCED if mark.bounced else _LANDED


@lru_cache(maxsize=64)
def _box(name: str, up: int, total: int | None, stuck: bool, health: tuple[str, str],
         shown: View | None, marks: tuple[Mark | None, ...]) -> Lines:
    """A box from what it shows: the same on every frame until one of them changes (a
    VIEW, a card up, a mark), so most frames find all seven boxes already made."""
    title: StyleAndTextTuples = [("class:rule", "─ "), ("class:label", name[:BOX_WIDTH // 2]),
                                 ("class:dim", f" up {up}")]
    if total is not None:
        title.append(("class:dim", f" · total {total}"))
    title.append(("", " "))
    if stuck:
        title.append(("class:warn", "stuck "))
    title.append(health)
    title.append(("", " "))
    lines = [_fill(title, "class:rule", "─")]
    if shown is None:
        lines.append(_fill([("class:dim", " waiting for their first view")]))
        lines += [_fill([]) for _ in range(WORK_PILES)]
        return tuple(lines)
    lines.append(_fill(_top(shown, marks[0], marks[1])))
    for pile in range(WORK_PILES):
        lines.append(_fill(_fan(shown, pile, marks[2 + pile])))
    return tuple(lines)


def _top(shown: View, nerts: Mark | None, waste: Mark | None) -> StyleAndTextTuples:
    return [("class:dim", " Nerts "), card_or_gap(shown.top), mark_cell(nerts),
            ("class:dim", f"({shown.nerts:>2})  Waste "), card_or_gap(shown.waste),
            mark_cell(waste), ("class:dim", f"  Stock {shown.stock:>2}")]


def _fan(shown: View, pile: int, mark: Mark | None) -> StyleAndTextTuples:
    """A work pile from its bottom card; a long one from "…", its top cards readable."""
    cards = shown.work[pile]
    out: StyleAndTextTuples = [("class:dim", f" {pile + 1}")]
    if not cards:
        return [*out, ("class:empty", "   ·"), mark_cell(mark)]
    if len(cards) > _FAN:
        out.append(("class:dim", " …"))
        cards = cards[len(cards) - _FAN + 1:]
    for card in cards:
        # The gap drawn in the card's style: one run of cells with it, not two,
        # for the screen diff to step over (a band of boxes is most of a frame).
        style, face = card_fragment(card)
        out.append((style, f" {face}"))
    out.append(mark_cell(mark))
    return out


def _fill(line: StyleAndTextTuples, style: str = "", pad: str = " ") -> StyleAndTextTuples:
    """``line`` cut or padded to exactly :data:`BOX_WIDTH` columns (every character
    in a box takes one cell: card glyphs are chosen so)."""
    width = sum(len(fragment[1]) for fragment in line)
    if width > BOX_WIDTH:
        out: StyleAndTextTuples = []
        room = BOX_WIDTH
        for fragment in line:
            piece = fragment[1][:room]
            out.append((fragment[0], piece))
            room -= len(piece)
            if not room:
                break
        return out
    return [*line, (style, pad * (BOX_WIDTH - width))]


# ------------------------------------------------------------------ shared
def _name(rnd: RoundView, seat: int) -> str:
    me = rnd.me
    partner = me is not None and partners(seat, me, rnd.variants)
    return rnd.names[seat] + (" (partner)" if partner else "")


def mark_cell(mark: Mark | None, click: MouseHandler | None = None) -> OneStyleAndTextTuple:
    """One cell after a pile: ``*`` a card just went up (from this pile, or onto this
    foundation), ``!`` one just bounced (back to this pile, or off this foundation)."""
    style, cell = (("", " ") if mark is None else ("class:bounced", "!") if mark.bounced
                   else ("class:landed", "*"))
    return (style, cell) if click is None else (style, cell, click)


def held_up(view: TableView, rnd: RoundView) -> str | None:
    """What holds the round when two or more other seats have been silent past the
    table's drop time (None: nothing of the kind). A seat is dropped only with
    every other seat's vote, and a vote on one waits for the other's word: the
    round goes on when the silent are heard again (a split healed, or two
    players whose connections died together back). A seat that said goodbye
    counts among them (its drop waits as well) but is not named: it is not
    coming back. Said, where the boxes alone would only show seats silent for
    ever."""
    quiet = view.silent
    silent = [rnd.names[seat] for seat in sorted(quiet) if seat not in rnd.left]
    if len(quiet) < 2 or not silent:
        return None  # (seats that all said goodbye go without waiting for one another)
    if len(silent) == 1:
        return f"{silent[0]} silent: the round waits until {silent[0]} is back"
    names = ", ".join(silent[:-1]) + " and " + silent[-1]
    return f"{names} silent: the round waits until they are back"


def health(view: TableView, rnd: RoundView, seat: int) -> tuple[str, str]:
    """A seat's word in its box: out of the round (or on its way out), or in it and
    heard lately.
    A seat dropped for its silence that is heard again asks for its seat back
    (``peer/seatback.py``) and plays from the next round: "rejoining" says so,
    where "dropped" alone would go on saying a player who came back is gone.
    So does a seat back from a restart behind the table, which sits the rest
    of the round out: "sits out", not "left"."""
    if seat in rnd.flagged:
        return ("class:msg.error", "flagged")
    heard = view.heard_at(rnd.keys[seat])
    quiet = heard is None or view.now - heard > SILENT_AFTER
    if seat in rnd.sitting_out:  # back from a restart behind the table: plays the next
        return ("class:dim", "sits out")
    if seat not in rnd.live:
        return (("class:dim", "left") if seat in rnd.left
                else ("class:msg.error", "dropped") if quiet else ("class:warn", "rejoining"))
    if seat in rnd.left:  # said GOODBYE; its drop is on its way
        return ("class:dim", "leaving")
    return ("class:warn", "silent") if quiet else ("class:good", "ok")
