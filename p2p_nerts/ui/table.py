"""The table during a round: foundations, the other players, your tableau.

Each part is a small function that reads the table's view and the UI state and
returns fragments; the layout asks for them afresh on every frame, so there
is no second copy of the game to keep in sync. Every card is a fragment with
a click handler, which is how the mouse finds cards without any geometry
bookkeeping.

Rows, top to bottom, on a screen with room for every player's layout
(about 120×36 and up: :func:`.others.roomy`; the others sit across the
table, the foundations in the middle, your own layout nearest you)::

    header                      1
    the others' boxes           6 a band (a band: as many as fit side by side)
    ── Foundations ──           1 + 4 (one row per suit)
    ── You ──                   1 + 1 (Nerts, stock, waste) + 4 work piles
    status                      1 (selection, cards in the air, hints)
    event lines                 the rest (2 at least)
    key hints                   1

On a smaller screen the others' boxes give way to one row each under the
foundations (24 rows hold a full table of eight), and there the news gives
way before any player does. Resizing picks the layout again at the next frame.
"""

from __future__ import annotations

from functools import partial

from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import OneStyleAndTextTuple, StyleAndTextTuples
from prompt_toolkit.layout import ConditionalContainer, Container

from ..game.cards import SUITS, card_name, face_name
from ..game.foundations import Pile
from ..game.moves import is_stuck
from ..game.scoring import team_of
from ..game.tableau import NERTS, WASTE, WORK0, WORK_PILES, Tableau
from ..lines import counted
from ..protocol.replica import Phase, RoundView, TableView
from . import others
from .control import Controller, pile_of
from .keys import PILES, Action, KeyMap, label
from .state import UiState
from .theme import card_fragment, suit_class
from .widgets import (
    Columns,
    MouseHandler,
    Rows,
    on_click,
    rule,
    screen_width,
    spread,
    text,
    width_of,
)

WASTE_SHOWN = 3  # waste cards drawn fanned (the top one playable)
MESSAGE_ROWS = 2  # event lines shown at least
MESSAGE_ROWS_MAX = 12  # and at most, when the terminal is tall


def table_screen(ctl: Controller, keys: KeyMap) -> Container:
    # The rows of fixed height are grouped: a split hands its spare rows out
    # one at a time round all its children, so the fewer the cheaper.
    roomy = Condition(lambda: others.roomy(ctl.view))
    sides = Condition(lambda: bool(others.placement(ctl.view)[0]))
    playing = Condition(lambda: not ctl.view.watching)

    def side(right: bool) -> Container:
        return ConditionalContainer(
            text(lambda: others.side(ctl.view, ctl.state, right), height=None,
                 width=others.SIDE_WIDTH), filter=sides)

    return Rows([
        header(ctl),
        ConditionalContainer(text(lambda: others.bands(ctl.view, ctl.state), height=None,
                                  keep=True), filter=roomy),
        Columns([side(False), Rows([
            rule(lambda: foundations_title(ctl)),
            *(text(partial(foundation_row, ctl, suit)) for suit in range(len(SUITS))),
            ConditionalContainer(Rows([
                rule(lambda: [("class:rule.title", "Players")]),
                text(lambda: others.rows(ctl.view, ctl.state), height=None, keep=True),
            ]), filter=~roomy),
            rule(lambda: you_title(ctl)),
            ConditionalContainer(Rows([
                text(lambda: top_row(ctl, keys)),
                *(text(partial(work_row, ctl, keys, pile)) for pile in range(WORK_PILES)),
                text(lambda: status_line(ctl, keys)),
            ]), filter=playing),
        ]), side(True)]),
        text(lambda: messages(ctl.state), height=MESSAGE_ROWS, stretch=True),
        text(lambda: hints(ctl, keys)),
    ])


# --------------------------------------------------------------------- header
def header(ctl: Controller) -> Container:
    """The round on the left, the running totals on the right."""
    return text(lambda: header_line(ctl.view, screen_width()))


#: The header's ways of saying the same thing, roomiest first: separator between
#: scores, how the target reads, whether the title is short, the shortest name.
_HEADER_STYLES = ((" · ", "  → ", False, 3), ("  ", " →", False, 3), (" ", " →", True, 3),
                  (" ", " →", True, 1))


def header_line(r: TableView, width: int) -> StyleAndTextTuples:
    """The header in the roomiest style that fits ``width``: every total and the
    target stay on screen, even with eight players at 80 columns."""
    for sep, arrow, short, least in _HEADER_STYLES:
        left = title(r, short=short)
        room = width - width_of(left) - 1
        right = scores_line(r, room, sep=sep, arrow=arrow, least=least)
        if width_of(right) <= room:
            break
    return spread(left, right)


def title(r: TableView, *, short: bool = False) -> StyleAndTextTuples:
    rnd = r.round
    if short:
        return [("class:title", f" NERTS r{rnd.number} " if rnd else " NERTS ")]
    round_no = f" · round {rnd.number}" if rnd else ""
    return [("class:title", f" NERTS{round_no} ")]


def scores_line(r: TableView, room: int, *, sep: str = " · ", arrow: str = "  → ",
                least: int = 3) -> StyleAndTextTuples:
    """Running totals (each team's under "pairs", which is what wins), mine in bold,
    then the target; names shortened (to ``least`` characters at most) to fit ``room``."""
    rnd, teams = r.round, r.team_totals
    if rnd is None or not teams:
        return []
    target = f"{arrow}{r.variants.target} "
    mine = team_of(rnd.me, rnd.variants) if rnd.me is not None else None
    cut = max(len(n) for n, _ in teams)

    def width(cut: int) -> int:
        return (sum(len(f"{n[:cut]} {t}") for n, t in teams) + len(sep) * (len(teams) - 1)
                + len(target))

    while cut > least and width(cut) > room:
        cut -= 1
    out: StyleAndTextTuples = []
    for team, (name, total) in enumerate(teams):
        if out:
            out.append(("", sep))
        out.append(("class:you" if team == mine else "", f"{name[:cut]} {total}"))
    out.append(("class:dim", target))
    return out


# ----------------------------------------------------------------- foundations
def _piles(rnd: RoundView, suit: int) -> list[Pile]:
    """A suit's started piles in the order they were started, so none ever jumps."""
    piles = [p for p in rnd.foundations.piles.values() if p.stays and p.suit == suit]
    return sorted(piles, key=lambda p: p.stays[0].key)


def foundations_title(ctl: Controller) -> StyleAndTextTuples:
    rnd = ctl.view.round
    if rnd is None:
        return [("class:rule.title", "Foundations")]
    log = rnd.foundations
    started = sum(1 for p in log.piles.values() if p.stays)
    return [("class:rule.title", "Foundations"),
            ("class:dim", f" · {counted(started, 'pile')} · {log.completed()} complete"
                          " · … may bounce  * up  ! bounced")]


def foundation_row(ctl: Controller, suit: int) -> StyleAndTextTuples:
    """One suit: the top card of each of its piles, each in its own brackets (two
    piles never read as one run); completed piles counted at the end."""
    view = ctl.view
    rnd = view.round
    click = on_click(ctl.click_foundations)
    out: StyleAndTextTuples = [(f"class:suit.{suit}", f"  {SUITS[suit]} "), ("", "│", click)]
    if rnd is None:
        return out
    done = 0
    state, now = ctl.state, view.now
    for pile in _piles(rnd, suit):
        if pile.complete:
            done += 1
            continue
        top = pile.stays[-1]
        pending = top.key in state.pending
        mark = state.pile_mark(pile.pile_id, now)
        edge = ("class:dim" if mark is None else "class:bounced" if mark.bounced
                else "class:landed")
        out += [(edge, " [", click),
                (suit_class(top.face) + (" class:pending" if pending else ""),
                 face_name(top.face), click),
                (edge, "]", click),
                ("class:pending", "…", click) if pending else others.mark_cell(mark, click)]
    if done:
        out.append(("class:good", f"  {done} complete ({SUITS[suit]}A–K)"))
    return out


# ------------------------------------------------------------------------- you
def you_title(ctl: Controller) -> StyleAndTextTuples:
    view = ctl.view
    rnd = view.round
    if view.watching:
        return [("class:rule.title", "Watching"),
                ("class:dim", " · read-only: you follow the table and check every play")]
    if rnd is None or rnd.me is None:
        return [("class:rule.title", "You")]
    me, tab = rnd.me, rnd.tableau
    left = len(tab.nerts) if tab else 13
    shared = " · two of you play it" if rnd.variants.teams == "share" else ""
    title: StyleAndTextTuples = [("class:rule.title", f"You: {rnd.names[me]}")]
    # Why my keys do nothing while the round is played (back at a round I left,
    # dropped from it, catching up, my Nerts called): said before a key is
    # tried, not only after (the countdown and the round's end say so already);
    # first, so that an 80-column rule, which cuts the rest, shows all of it.
    playing = ctl.tableau() is not None and rnd.started and rnd.end is None
    reason = view.blocked() if playing else None
    if reason is not None:
        title.append(("class:warn", f" · {reason}"))
    title.append(("class:dim", f" · up {rnd.foundations.cards_of(me)} · {left} in your "
                               f"Nerts pile{shared}"))
    return title


def _key(keys: KeyMap, action: Action) -> tuple[str, str]:
    return ("class:key", label(keys, action))


def top_row(ctl: Controller, keys: KeyMap) -> StyleAndTextTuples:
    """Nerts pile (top card and count), stock (count), waste (last cards, top playable)."""
    tab = ctl.tableau()
    out: StyleAndTextTuples = []
    if tab is None:
        return out
    sel = ctl.selected()
    cur = ctl.state.cursor
    nerts_click = on_click(lambda: _click_top(ctl, tab, NERTS))
    out += [("", "  "), _key(keys, Action.NERTS), ("class:label", " Nerts ", nerts_click)]
    out += [_top_card(tab, NERTS, sel, cur == (0, 0), nerts_click), _my_mark(ctl, NERTS),
            ("class:dim", f"({len(tab.nerts)})", nerts_click)]
    turn = on_click(ctl.turn)
    stock_style = "class:label class:cursor" if cur == (0, 1) else "class:label"
    stock = (counted(len(tab.stock), "card") if tab.stock
             else "turn over" if tab.waste else "empty")
    out += [("", "     "), _key(keys, Action.TURN), (stock_style, f" Stock {stock}", turn)]
    waste_click = on_click(lambda: _click_top(ctl, tab, WASTE))
    out += [("", "     "), _key(keys, Action.WASTE), ("class:label", " Waste ", waste_click)]
    for card in tab.waste[-WASTE_SHOWN:-1]:
        out += [card_fragment(card, "class:dim"), ("", " ")]
    out += [_top_card(tab, WASTE, sel, cur == (0, 2), waste_click), _my_mark(ctl, WASTE)]
    return out


def _my_mark(ctl: Controller, src: int) -> OneStyleAndTextTuple:
    """The cell after one of my piles: a card of it just went up, or bounced back."""
    view = ctl.view
    seat = view.my_seat
    return others.mark_cell(None if seat is None else ctl.state.mark(seat, src, view.now))


def _top_card(tab: Tableau, src: int, sel: tuple[int, int] | None, cursor: bool,
              click: MouseHandler) -> OneStyleAndTextTuple:
    pile = pile_of(tab, src)
    if not pile:
        return ("class:empty" + (" class:cursor" if cursor else ""), "  ·", click)
    style, card = card_fragment(pile[-1], _marks(sel is not None and sel[0] == src, cursor))
    return (style, card, click)


def _click_top(ctl: Controller, tab: Tableau, src: int) -> None:
    pile = pile_of(tab, src)
    if pile:
        ctl.click_card(src, len(pile) - 1)


def _marks(selected: bool, cursor: bool) -> str:
    return ("class:selected " if selected else "") + ("class:cursor" if cursor else "")


def work_row(ctl: Controller, keys: KeyMap, pile_no: int) -> StyleAndTextTuples:
    """One work pile, fanned left to right from its bottom card: every card readable."""
    tab = ctl.tableau()
    if tab is None:
        return []
    src = WORK0 + pile_no
    sel = ctl.selected()
    row, col = ctl.state.cursor
    here = on_click(lambda: ctl.click_pile(pile_no))
    out: StyleAndTextTuples = [("", "  "), ("class:key", label(keys, PILES[pile_no]), here),
                               ("class:rule", " │", here)]
    pile = tab.work[pile_no]
    if not pile:
        out += [("class:empty" + (" class:cursor" if row == pile_no + 1 else ""),
                 "  ·", here), _my_mark(ctl, src), ("class:empty", " (empty)", here)]
        return out
    for index, card in enumerate(pile):
        chosen = sel is not None and sel[0] == src and index >= sel[1]
        cursor = row == pile_no + 1 and index == min(col, len(pile) - 1)
        style, face = card_fragment(card, _marks(chosen, cursor))
        click = on_click(partial(ctl.click_card, src, index))
        out += [("", " ", click), (style, face, click)]
    out.append(_my_mark(ctl, src))
    return out


# ---------------------------------------------------------------- status, lines
def status_line(ctl: Controller, keys: KeyMap) -> StyleAndTextTuples:
    """What the player is doing: the selection, cards in the air, a vote, a Nerts chance;
    first, what holds the round, if silent seats do."""
    tab = ctl.tableau()
    view = ctl.view
    rnd = view.round
    if tab is None or rnd is None:
        return []
    out: StyleAndTextTuples = [("", "  ")]
    if view.phase is Phase.PLAYING and (holding := others.held_up(view, rnd)) is not None:
        out.append(("class:warn", holding + "   "))  # first: the line is cut at the edge
    sel = ctl.selected()
    if sel is not None:
        src, index = sel
        pile = pile_of(tab, src)
        run = len(pile) - index
        what = card_name(pile[index]) + (f" and {run - 1} above" if run > 1 else "")
        out += [("class:label", f"Selected {what}"),
                ("", f": {label(keys, Action.SEND)} sends it, "
                     f"{'/'.join(label(keys, a) for a in PILES)} moves it, "
                     f"{label(keys, Action.CANCEL)} drops it   ")]
    elif tab.can_call_nerts():
        out.append(("class:good", f"Your Nerts pile is empty: {label(keys, Action.CALL)} "
                                  "calls Nerts!   "))
    if view.voted:
        # At a shared tableau the vote is the seat's: the partner may have cast it.
        who = "Your tableau is" if rnd.variants.teams == "share" else "You"
        out.append(("class:warn",
                    f"{who} voted stuck ({label(keys, Action.STUCK)} withdraws)   "))
    elif (waiting := _waiting_on_me(rnd, tab)) and view.can_move():
        out.append(("class:warn", f"No move left: {label(keys, Action.STUCK)} votes stuck "
                                  f"({counted(waiting, 'player')} waiting on you)   "))
    if tab.in_flight:
        out.append(("class:dim", "In the air: "))
        for card, _src in tab.in_flight.values():
            out += [(suit_class(card) + " class:pending", card_name(card)),
                    ("class:pending", "… ")]
    return out


def _waiting_on_me(rnd: RoundView, tab: Tableau) -> int:
    """How many others voted stuck while the game sees no move for me either (0: none,
    or I have a move, or a card of mine is still in the air and may come back)."""
    stuck = rnd.stuck
    waiting = sum(1 for seat in rnd.live if seat != rnd.me and seat < len(stuck)
                  and stuck[seat])
    if not waiting or tab.in_flight or not is_stuck(tab, rnd.foundations):
        return 0
    return waiting


def messages(state: UiState) -> StyleAndTextTuples:
    """The event lines, newest first (right under your cards); refusals in the error colour."""
    out: StyleAndTextTuples = []
    for line in list(reversed(state.lines))[:MESSAGE_ROWS_MAX]:
        if out:
            out.append(("", "\n"))
        out.append(("class:msg.error" if line.error else "class:msg.event", f"  {line.text}"))
        if line.count > 1:
            out.append(("class:dim", f" ×{line.count}"))
    return out


def hints(ctl: Controller, keys: KeyMap) -> StyleAndTextTuples:
    view = ctl.view
    if view.watching:
        return [("", " "), ("class:dim", "watching  "), ("class:key", label(keys, Action.HELP)),
                ("class:dim", " help  "), ("class:key", label(keys, Action.QUIT)),
                ("class:dim", " leave")]
    piles = "".join(label(keys, a) for a in PILES)
    parts = [
        (f"{label(keys, Action.NERTS)} {label(keys, Action.WASTE)} {piles}", "select"),
        (label(keys, Action.SEND), "send"),
        (label(keys, Action.TURN), "turn"),
        (label(keys, Action.STUCK), "stuck"),
        (label(keys, Action.CALL), "Nerts!"),
    ]
    if view.variants.lone_rotate:
        parts.append((label(keys, Action.ROTATE), "rotate"))
    parts += [(label(keys, Action.HELP), "help"), (label(keys, Action.QUIT), "quit")]
    out: StyleAndTextTuples = [("", " ")]
    for key, what in parts:
        out += [("class:key", key), ("class:dim", f" {what}  ")]
    return out
