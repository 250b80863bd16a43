"""What the player's keys and clicks do: turn intentions into replica commands.

One controller serves the keyboard, the cursor and the mouse, so the three
agree: a pile key, Enter on the cursor and a click all end in the same
select / send / move logic. Rule checks stay in the tableau and the replica:
when a move is not allowed, the tableau's own reason (or the replica's, from
``TableView.blocked``) goes to the event line. The controller reads the table
only through its read-only view (:attr:`Controller.view`) and changes it only
with commands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..game.cards import ACE, JOKER_RANK, card_name, face_name
from ..game.moves import (
    best_target,
    covered_jokers,
    foundation_target,
    joker_targets,
    other_suit,
)
from ..game.scoring import partners
from ..game.tableau import (
    NERTS,
    WASTE,
    WORK0,
    WORK_PILES,
    IllegalMove,
    Tableau,
    Target,
    source_name,
)
from ..game.variants import VariantError
from ..protocol.events import Event, RosterChanged
from ..protocol.replica import (
    ArrangeSeats,
    CallNerts,
    ChangeSettings,
    Command,
    CommandError,
    Move,
    Phase,
    RotateAlone,
    SetReady,
    StartRound,
    TableView,
    Turn,
    VoteStuck,
)
from ..session import Session
from .form import (
    Form,
    clock_fields,
    form_clocks,
    form_seats,
    form_variants,
    seat_fields,
    variant_fields,
)
from .hands import Hands, player_input, sentence
from .state import Pick, UiState

#: Cursor columns of row 0, left to right as drawn.
TOP_ROW = (NERTS, None, WASTE)  # None: the stock


class Controller(Hands):
    """The player's hands at the table."""

    def __init__(self, session: Session, state: UiState | None = None, *,
                 code: str | None = None) -> None:
        super().__init__(state)
        self.session = session
        #: The table code this seat was won with: the session does not say, and
        #: the host reads it out to the players who join.
        self.code = code
        self.on_quit: Callable[[], None] = lambda: None
        self._partner: str | None = None  # under pairs, as last said

    @property
    def view(self) -> TableView:
        """The table, read-only, as it is now."""
        return self.session.view

    def on_event(self, event: Event) -> None:
        view = self.view
        rnd = view.round
        self.state.on_event(event, rnd.names if rnd else (), view.my_seat, view.now)
        if isinstance(event, RosterChanged):
            self._say_partner(event)

    def _say_partner(self, event: RosterChanged) -> None:
        """Under pairs, a new partner is news: the host chose partners, or someone sat down."""
        me, variants = event.me, self.view.variants
        partner = next((name for seat, name in enumerate(event.names)
                        if me is not None and partners(seat, me, variants)), None)
        if partner is not None and partner != self._partner:
            self.state.say(f"Your partner: {partner}")
        self._partner = partner

    # ------------------------------------------------------------ reading
    def tableau(self) -> Tableau | None:
        """My tableau while a round is dealt (during the countdown too: it is on screen)."""
        view = self.view
        rnd = view.round
        return rnd.tableau if rnd is not None and view.phase is Phase.PLAYING else None

    def _hands_on(self) -> Tableau | None:
        """My tableau if I may touch it now; else None, with the replica's reason on screen."""
        reason = self.view.blocked()
        if reason is not None:
            self.state.error(sentence(reason))
            return None
        return self.tableau()

    def selected(self) -> tuple[int, int] | None:
        """The selection as (source, index in its pile), if it is still there."""
        tab, pick = self.tableau(), self.state.selection
        if tab is None or pick is None:
            return None
        index = pick.index(tab)
        return None if index is None else (pick.src, index)

    def at_cursor(self) -> tuple[int, int] | None:
        """The card under the cursor as (source, index), or None (stock, empty pile)."""
        tab = self.tableau()
        row, col = self.state.cursor
        if tab is None:
            return None
        if row == 0:
            src = TOP_ROW[col]
            if src is None or tab.top(src) is None:
                return None
            return src, len(pile_of(tab, src)) - 1
        pile = tab.work[row - 1]
        return (WORK0 + row - 1, min(col, len(pile) - 1)) if pile else None

    # ------------------------------------------------------------ piles
    @player_input
    def pile_key(self, src: int) -> None:
        """A pile's key: select its card; again walks up a work pile's run; else move here."""
        tab = self._hands_on()
        if tab is None:
            return
        sel = self.selected()
        if src < WORK0:
            if sel is not None and sel[0] == src:
                self.state.selection = None
            else:
                self._select(tab, src, -1)
        elif sel is None:
            self._select(tab, src, -1)
        elif sel[0] == src:
            self._select(tab, src, sel[1] - 1 if sel[1] > 0 else -1)
        else:
            self._move_to(tab, sel, src - WORK0)

    @player_input
    def click_card(self, src: int, index: int) -> None:
        """A click on a card (or Enter on it): select, send if selected, or move onto it."""
        tab = self._hands_on()
        if tab is None:
            return
        sel = self.selected()
        if sel is None:
            self._select(tab, src, index)
        elif sel == (src, index):
            self._send(tab, sel)
        elif src >= WORK0 and sel[0] != src:
            self._move_to(tab, sel, src - WORK0)
        else:
            self._select(tab, src, index)

    @player_input
    def click_pile(self, dst: int) -> None:
        """A click on a work pile's label or empty slot: move the selection there."""
        tab = self._hands_on()
        if tab is None:
            return
        sel = self.selected()
        if sel is not None and sel[0] != WORK0 + dst:
            self._move_to(tab, sel, dst)
        elif tab.work[dst]:
            self._select(tab, WORK0 + dst, -1)

    @player_input
    def click_foundations(self) -> None:
        """A click on the foundations: the selected card goes up, if it can."""
        tab, sel = self._hands_on(), self.selected()
        rnd = self.view.round
        if tab is None or rnd is None or sel is None:
            return
        target = foundation_target(tab, sel[0], rnd.foundations) if _is_top(tab, sel) else None
        if target is None:
            self.state.error(f"{_card(tab, sel)} cannot go up to a foundation now")
            self.state.selection = None
        else:
            self._move(target)

    @player_input
    def send(self) -> None:
        """Play the selected card (or the one under the cursor) where it fits best."""
        tab = self._hands_on()
        if tab is None:
            return
        sel = self.selected() or self.at_cursor()
        if sel is None:
            self.state.error("Select a card first")
            return
        self._send(tab, sel)

    @player_input
    def declare(self) -> None:
        """Choose what the selected joker (or the one under the cursor) stands for;
        again, the next choice. Sending it up, or covering it on a work pile, then
        declares it so."""
        tab = self._hands_on()
        rnd = self.view.round
        if tab is None or rnd is None:
            return
        spot = self.selected() or self.at_cursor()
        card = None if spot is None else _card_at(tab, spot)
        if spot is None or card is None or card & 15 != JOKER_RANK:
            self.state.error("Select a joker (¤1 or ¤2) first: this key chooses the card "
                             "it stands for")
            return
        name = card_name(card)
        fixed = tab.bound.get(card)
        if fixed is not None:
            self.state.say(f"{name} is the {face_name(fixed)} for good: a card lay on it")
            return
        going_up = joker_targets(tab, spot[0], card, rnd.foundations) if _is_top(tab, spot) else []
        options = _declarations(tab, spot, card, going_up)
        if not options:
            self.state.say(f"{name} can stand for any card: nothing says which yet")
            return
        chosen = self.state.declared.get(card)
        face = options[(options.index(chosen) + 1) % len(options) if chosen in options else 0]
        self.state.declared[card] = face
        start = " (it starts a pile)" if face & 15 == ACE else ""
        self.state.say(f"{name} stands for the {face_name(face)}{start}: "
                       f"choice {options.index(face) + 1} of {len(options)}")

    # ------------------------------------------------------------ other actions
    @player_input
    def turn(self) -> None:
        sel = self.selected()
        if self._act(Turn()) and sel is not None and sel[0] == WASTE:
            self.state.selection = None

    @player_input
    def toggle_stuck(self) -> None:
        on = not self.view.voted
        self._act(VoteStuck(on))

    @player_input
    def call_nerts(self) -> None:
        self._act(CallNerts())

    @player_input
    def rotate(self) -> None:
        if self._act(RotateAlone()):
            self.state.selection = None

    @player_input
    def move_cursor(self, drow: int, dcol: int) -> None:
        tab = self.tableau()
        row, col = self.state.cursor
        row = (row + drow) % (1 + WORK_PILES)
        width = len(TOP_ROW) if row == 0 else max(1, len(tab.work[row - 1]) if tab else 1)
        col = min(col, width - 1) if drow else (col + dcol) % width
        self.state.cursor = (row, col)

    @player_input
    def activate(self) -> None:
        """Enter: what a click does, at the cursor."""
        row, col = self.state.cursor
        if row == 0 and TOP_ROW[col] is None:
            self.turn()
            return
        spot = self.at_cursor()
        if spot is not None:
            self.click_card(*spot)
        elif row > 0:
            self.click_pile(row - 1)
        else:
            self.state.error("That pile is empty")

    @player_input
    def cancel(self) -> None:
        self.state.selection = None

    @player_input
    def next_round(self) -> None:
        """Host: deal the next round."""
        if self.view.phase is Phase.OVER:
            self.state.error("The game is over: n plays again at this table, q leaves")
        elif self._act(StartRound()):
            self.state.winner = None

    @player_input
    def play_again(self) -> None:
        """Host, the game over: a new game at this table, the same seats (its first deal)."""
        if self.view.phase is not Phase.OVER:
            self.state.error("n plays again once the game is over")
        elif self._act(StartRound()):
            self.state.winner = None

    @player_input
    def toggle_ready(self) -> None:
        view = self.view
        self._act(SetReady(not view.ready(view.my_key)))

    @player_input
    def open_settings(self) -> None:
        """Host: the variants and the clocks as a form; Enter sends them to the table."""
        r = self.view
        if not r.is_host:
            self.state.error("Only the host changes the settings")
            return
        self.state.form = Form("Table settings", [*variant_fields(r.variants),
                                                  *clock_fields(r.countdown, r.drop_after)],
                               "change the settings", self._change_settings)

    @player_input
    def open_partners(self) -> None:
        """Host: who partners whom, as a form of seats; Enter seats everyone so."""
        r = self.view
        if not r.is_host:
            self.state.error("Only the host chooses partners")
        elif r.variants.teams != "pairs":
            self.state.error("Partners count when the teams are pairs: change the rules first")
        elif len(r.seats) < 3:
            self.state.error("Partners are chosen once three or more are seated")
        else:
            self.state.form = Form("Partners", seat_fields(r.seats), "seat everyone so",
                                   self._arrange, swaps=True)

    @player_input
    def ask_quit(self) -> None:
        """Ask before leaving, unless the game is over: then nothing is lost."""
        if self.view.phase is Phase.OVER:
            self.on_quit()
        else:
            self.state.confirm_quit = True

    @player_input
    def answer_quit(self, yes: bool) -> None:
        """Yes: leave. The session says goodbye to the table as it closes."""
        self.state.confirm_quit = False
        if yes:
            self.on_quit()

    # ------------------------------------------------------------ internals
    def _select(self, tab: Tableau, src: int, index: int) -> None:
        pile = pile_of(tab, src)
        if not pile:
            self.state.error(f"Your {source_name(src)} is empty")
            return
        index = index % len(pile) if src >= WORK0 else len(pile) - 1
        self.state.selection = Pick(src, pile[index])
        self.state.cursor = (0, TOP_ROW.index(src)) if src < WORK0 else (src - WORK0 + 1, index)

    def _send(self, tab: Tableau, sel: tuple[int, int]) -> None:
        rnd = self.view.round
        assert rnd is not None
        target = (best_target(tab, sel[0], rnd.foundations) if _is_top(tab, sel)
                  else _run_target(tab, sel))
        if target is None:
            self.state.error(f"{_card(tab, sel)} has nowhere to go")
            self.state.selection = None
        else:
            self._move(target)

    def _move_to(self, tab: Tableau, sel: tuple[int, int], dst: int) -> None:
        """Move the selection onto work pile ``dst``: on top, or slid under its bottom."""
        src, index = sel
        card, pile = _card_at(tab, sel), tab.work[dst]
        slide = (pile and not tab.fits(card, pile) and _is_top(tab, sel)
                 and not all(tab.work) and tab.fits(pile[0], [card]))
        if slide:
            self._move(Target(src, work=dst, slide=True))
        else:
            self._move(Target(src, work=dst, index=index if src >= WORK0 else -1))

    def _move(self, target: Target) -> None:
        """Carry out a move; either way the selection is used up, so keys stay predictable.

        A joker goes up, or is covered, as the player declared it (``declare``),
        where that is still a card it may be; else as the game would choose.
        """
        tab = self.tableau()
        fixed = {} if tab is None else dict(tab.bound)
        if tab is not None:
            target = self._as_declared(tab, target)
        moved = self._act(Move(target))
        self.state.selection = None
        if moved and tab is not None:
            for joker, face in tab.bound.items():
                if fixed.get(joker) != face:
                    self.state.say(f"Your {card_name(joker)} is now the {face_name(face)}: "
                                   "a card lies on it")
                    self.state.declared.pop(joker, None)
        if moved and self.view.voted:  # a card moved: not stuck after all
            self._act(VoteStuck(False))

    def _as_declared(self, tab: Tableau, target: Target) -> Target:
        """``target`` with the player's declarations of the jokers it sends up or covers."""
        declared = self.state.declared
        if not declared:
            return target
        rnd = self.view.round
        card = tab.top(target.src)
        if target.pile is not None and rnd is not None and card is not None:
            face = declared.get(card)
            return next((t for t in joker_targets(tab, target.src, card, rnd.foundations)
                         if t.declared == face), target) if face is not None else target
        covers = tuple(declared[joker] for joker, face in covered_jokers(tab, target)
                       if declared.get(joker) in (face, other_suit(face)))
        return replace(target, covers=covers) if covers else target

    def _change_settings(self, form: Form) -> None:
        try:
            variants = form_variants(form)
        except VariantError as exc:
            form.error = sentence(str(exc))
            return
        countdown, drop_after = form_clocks(form)
        self._submit(form, ChangeSettings(variants, countdown, drop_after))

    def _arrange(self, form: Form) -> None:
        order = form_seats(form)
        if set(order) != {s.key for s in self.view.seats}:
            self.state.form = None
            self.state.error("Someone sat down or left meanwhile: choose the partners again")
            return
        self._submit(form, ArrangeSeats(tuple(order)))

    def _submit(self, form: Form, command: Command) -> None:
        """A form's command: done, the form closes; refused, it stays open saying why."""
        refused = self._try(command)
        if refused is None:
            self.state.form = None
        else:
            form.error = refused

    def _act(self, command: Command) -> bool:
        """Run a command; a refusal becomes a line on screen, never a traceback."""
        refused = self._try(command)
        if refused is not None:
            self.state.error(refused)
        return refused is None

    def _try(self, command: Command) -> str | None:
        """Run a command; None if it was done, else why not (as a sentence)."""
        try:
            self.session.act(command)
        except IllegalMove as exc:
            return sentence(exc.reason)
        except (CommandError, VariantError) as exc:
            return sentence(str(exc))
        return None


def pile_of(tab: Tableau, src: int) -> list[int]:
    """The cards of a source, playable end last (read only)."""
    return tab.nerts if src == NERTS else tab.waste if src == WASTE else tab.work[src - WORK0]


def _card_at(tab: Tableau, sel: tuple[int, int]) -> int:
    return pile_of(tab, sel[0])[sel[1]]


def _card(tab: Tableau, sel: tuple[int, int]) -> str:
    return card_name(_card_at(tab, sel))


def _is_top(tab: Tableau, sel: tuple[int, int]) -> bool:
    return sel[1] == len(pile_of(tab, sel[0])) - 1


def _declarations(tab: Tableau, spot: tuple[int, int], joker: int,
                  going_up: list[Target]) -> list[int]:
    """What a free joker at ``spot`` may be declared now: each card it may go up as,
    then, on a work pile whose run says its rank and colour, either suit of that
    (what it becomes once covered)."""
    faces = [t.declared for t in going_up]
    src, index = spot
    if src >= WORK0:
        pile = tab.work[src - WORK0]
        try:  # as if a card lay on it (a free joker on top stands for any)
            fixes = tab.fixes([*pile[:index + 1], joker])
        except IllegalMove:
            fixes = []
        for _joker, face in fixes[-1:]:
            faces += [f for f in (face, other_suit(face)) if f not in faces]
    return faces


def _run_target(tab: Tableau, sel: tuple[int, int]) -> Target | None:
    """Where the run headed by a buried work-pile card fits: a built pile, else an empty one.

    (``moves.work_target`` answers this for a pile's top card only.)
    """
    src, index = sel
    card = tab.work[src - WORK0][index]
    empty = None
    for dst, pile in enumerate(tab.work):
        if WORK0 + dst == src:
            continue
        if not pile:
            empty = dst if empty is None else empty
        elif tab.fits(card, pile):
            return Target(src, work=dst, index=index)
    return None if empty is None or index == 0 else Target(src, work=empty, index=index)
