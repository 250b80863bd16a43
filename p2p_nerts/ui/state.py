"""What the screen remembers between frames, beyond the replica's own state.

The replica is the truth about the game; this is the player's side of the
glass: which card is selected, where the cursor is, which overlays and form
are open, the event line (what just happened, in words) and the marks (where
it just happened, for a moment). Session events arrive here through
:meth:`UiState.on_event`, which turns them into lines of text and marks.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ..game.cards import ACE, JOKER_RANK, card_name, face_name
from ..game.foundations import Fate, Play, PlayKey
from ..game.tableau import NERTS, WASTE, WORK0, Tableau
from ..protocol import events as ev
from .form import Form

HISTORY = 50  # event lines kept (the screen shows the newest few)
MARK_SECONDS = 1.5  # how long a card that landed or bounced stays marked where it did
REPEATS_SEEN = 4  # a line said again among the newest few is counted, not repeated
UPS_SHOWN = 8  # cards gone up named on the news line that gathers them
_MARKS_KEPT = 64  # marks past this are swept of the expired ones


@dataclass(frozen=True, slots=True)
class Pick:
    """A selected card: its source and the card itself, so it survives piles changing."""

    src: int
    card: int

    def index(self, tab: Tableau) -> int | None:
        """Where the card is in its pile now, or None if it is no longer playable there."""
        if self.src in (NERTS, WASTE):
            pile = tab.nerts if self.src == NERTS else tab.waste
            return len(pile) - 1 if pile and pile[-1] == self.card else None
        pile = tab.work[self.src - WORK0]
        return pile.index(self.card) if self.card in pile else None


@dataclass(frozen=True, slots=True)
class Line:
    """One line of news; ``count``: how many times it was said in a row (shown
    "×8"); ``ups``: on the line that gathers the cards gone up, who played which."""

    text: str
    error: bool = False
    count: int = 1
    ups: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Mark:
    """Something just happened here, until ``until`` (the replica's clock): a card
    landed (or left this pile for a foundation), or it ``bounced``."""

    until: float
    bounced: bool


@dataclass(slots=True)
class UiState:
    selection: Pick | None = None
    #: Cursor: row 0 is Nerts / stock / waste (columns 0..2); rows 1..4 the work
    #: piles, with the column as the card index.
    cursor: tuple[int, int] = (0, 0)
    lines: deque[Line] = field(default_factory=lambda: deque(maxlen=HISTORY))
    pending: set[PlayKey] = field(default_factory=set)  # plays added, not yet final
    show_help: bool = False
    rules_page: bool = False  # the help's second page: the rules in short
    confirm_quit: bool = False
    form: Form | None = None
    winner: str | None = None
    agreed: bool = False  # every peer reported the same round result
    stuck: tuple[bool, ...] = ()
    #: What the player declared each free joker of theirs to be (``Controller.declare``).
    declared: dict[int, int] = field(default_factory=dict)
    #: Foundation pile (named by the card that started it) → what just happened on it.
    pile_marks: dict[int, Mark] = field(default_factory=dict)
    #: (seat, source pile) → a card just left it for a foundation, or came back to it.
    marks: dict[tuple[int, int], Mark] = field(default_factory=dict)

    def say(self, text: str) -> None:
        self._add(Line(text))

    def error(self, text: str) -> None:
        self._add(Line(text, error=True))

    def _add(self, line: Line) -> None:
        """A new line; one said again lately moves up as the newest, counted, so
        that "Your waste is empty" pressed eight times takes one row, not eight."""
        lines = self.lines
        for back in range(1, min(REPEATS_SEEN, len(lines)) + 1):
            seen = lines[-back]
            if seen.text == line.text and seen.error == line.error and not seen.ups:
                del lines[-back]
                line = Line(line.text, line.error, seen.count + 1)
                break
        lines.append(line)

    def _went_up(self, who: str, card: str) -> None:
        """Name a card gone up on one line that gathers the latest, newest first (a
        narrow screen cuts the oldest): a table of eight puts several up a second.
        The line moves up as the newest while it is among the newest few."""
        lines = self.lines
        ups: tuple[str, ...] = (f"{who} {card}",)
        for back in range(1, min(REPEATS_SEEN, len(lines)) + 1):
            if lines[-back].ups:
                ups = (*ups, *lines[-back].ups)[:UPS_SHOWN]
                del lines[-back]
                break
        lines.append(Line("Up: " + " · ".join(ups), ups=ups))

    def pile_mark(self, pile: int, now: float) -> Mark | None:
        """What just happened on a foundation pile, if it is still to be shown at ``now``."""
        mark = self.pile_marks.get(pile)
        return mark if mark is not None and now < mark.until else None

    def mark(self, seat: int, src: int, now: float) -> Mark | None:
        """What just happened at a seat's pile, if it is still to be shown at ``now``."""
        mark = self.marks.get((seat, src))
        return mark if mark is not None and now < mark.until else None

    def on_event(self, event: ev.Event, names: tuple[str, ...], me: int | None,
                 now: float = 0.0) -> None:
        """Record one session event: pending plays, marks, votes, and a line of text
        (``now``: the replica's clock, which the marks expire by)."""
        match event:
            case ev.PlayAdded(play=play):
                self.pending.add(play.key)
                if play.card & 15 == JOKER_RANK:
                    self._joker_up(play, "Your" if event.mine
                                   else _possessive(_name(names, play.author)))
            case ev.PlayFinal(play=play, fate=fate, mine=mine):
                self.pending.discard(play.key)
                if fate is not Fate.CUT:
                    self._mark(play, fate is Fate.BOUNCE, now)
                if fate is Fate.STAY:
                    self._went_up("you" if mine else _name(names, play.author),
                                  played_name(play))
                else:
                    self._bounced(event, played_name(play),
                                  "Your" if mine else _possessive(_name(names, play.author)))
            case ev.StuckChanged(stuck=stuck):
                self._stuck(stuck, names, me)
            case ev.Rotated(count=count):
                self.stuck = ()
                self.say(f"Everyone was stuck: every stock was rotated ({_nth(count)} time)")
            case ev.RoundStarting(round=number, countdown=countdown):
                self._new_round()
                self.say(f"Round {number} is dealt" + (
                    f": play starts in {countdown:.0f} s" if countdown > 0 else ""))
            case ev.RoundStarted(round=number):
                self.say(f"Round {number}: go!")
            case ev.NertsCalled(seat=seat, name=name):
                self.say("You called Nerts!" if seat == me else f"Nerts! {name} called it")
            case ev.RoundOver(round=number, end=end):
                self.selection = None
                self.say(f"Round {number} is over" + (
                    ": everyone was stuck twice" if end == "deadlock" else ""))
            case ev.RoundAgreed():
                self.agreed = True
            case ev.Divergence(seats=seats):
                self.error(", ".join(_name(names, s) for s in seats)
                           + " reported other results for this round (a fault or a cheat);"
                           " the scores here are your own count")
            case ev.GameOver(winner=winner):
                self.winner = winner
                self.say(f"Game over: {winner} wins")
            case ev.Flagged(name=name, reason=reason):
                self.error(f"{name} is flagged: {reason}")
            case ev.PeerDropped(name=name):
                self.error(f"{name} dropped out of the round")
            case ev.Refused(reason=reason):
                self.error(f"The table refused us: {reason}")
            case ev.Notice(text=text):
                self.say(text)
            case _:
                pass  # roster, settings, ready, rejected: the screen shows their state

    def _joker_up(self, play: Play, whose: str) -> None:
        """A joker's play names the card its owner declared it (what the pile shows)."""
        start = ", starting a pile" if play.face & 15 == ACE else ""
        self.say(f"{whose} {card_name(play.card)} goes up as the {face_name(play.face)}{start}")

    def _mark(self, play: Play, bounced: bool, now: float) -> None:
        """Mark the foundation pile and the owner's pile a play landed on or bounced
        off (an old mark is dropped as a new one comes: the dicts stay small)."""
        mark = Mark(now + MARK_SECONDS, bounced)
        if len(self.marks) > _MARKS_KEPT:
            self.pile_marks = {k: m for k, m in self.pile_marks.items() if m.until > now}
            self.marks = {k: m for k, m in self.marks.items() if m.until > now}
        self.pile_marks[play.pile] = mark
        self.marks[(play.author, play.src)] = mark

    def _bounced(self, event: ev.PlayFinal, card: str, whose: str) -> None:
        first = event.first or "someone"
        if event.fate is Fate.CUT:
            stuck = event.ended == "deadlock"
            if event.tie:
                end = "the last stuck vote" if stuck else "the Nerts call"
                when = f"at the same moment as {end} and lost the draw"
            else:
                when = "after everyone was stuck" if stuck else "after the Nerts call"
            self.say(f"{whose} {card} came {when}: it does not count")
        elif event.tie:
            self.say(f"{whose} {card} bounced: {first} played one at the same moment and "
                     "won the draw")
        else:
            self.say(f"{whose} {card} bounced: {first} was first")

    def _stuck(self, stuck: tuple[bool, ...], names: tuple[str, ...], me: int | None) -> None:
        before = self.stuck or (False,) * len(stuck)
        self.stuck = stuck
        count = f"({sum(stuck)}/{len(stuck)} stuck)"
        for seat, (was, now) in enumerate(zip(before, stuck, strict=False)):
            if was != now:
                who = "You" if seat == me else _name(names, seat)
                self.say(f"{who} {'voted stuck' if now else 'withdrew the stuck vote'} {count}")

    def _new_round(self) -> None:
        self.selection = None
        self.pending.clear()
        self.pile_marks.clear()
        self.marks.clear()
        self.agreed = False
        self.stuck = ()
        self.declared.clear()


def played_name(play: Play) -> str:
    """A card played up, a joker with the card it was declared: "¤1 (as 4♦)"."""
    name = card_name(play.card)
    return f"{name} (as {face_name(play.face)})" if play.card & 15 == JOKER_RANK else name


def _name(names: tuple[str, ...], seat: int) -> str:
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"


def _possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _nth(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")
