"""Small forms drawn over a screen: a few fields, each edited with single keys.

One model serves every form of the app: creating a table, a solo game, the
host's settings and partners between rounds, and joining by address. The keys are the
same everywhere (↑↓ field, ←→ or Space change a choice, typing edits a text
field, Enter submits, Esc cancels), and the model is plain data, so a test
can fill a form without a screen. :func:`variant_fields` and
:func:`form_variants` are the one place that turns the rules' variants into
fields and back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..game.variants import VariantError, Variants
from ..protocol.identity import fingerprint_of
from ..protocol.messages import Seat

_DIGITS = frozenset("0123456789")


@dataclass(slots=True)
class TextField:
    """A line of text; ``digits`` lets only 0-9 in (a number)."""

    key: str
    label: str
    text: str = ""
    limit: int = 32
    digits: bool = False

    def type(self, chars: str) -> None:
        for char in chars:
            ok = char in _DIGITS if self.digits else char.isprintable()
            if ok and len(self.text) < self.limit:
                self.text += char

    def erase(self) -> None:
        self.text = self.text[:-1]


@dataclass(slots=True)
class Choice:
    """One of a few values, each with the words shown for it."""

    key: str
    label: str
    options: tuple[tuple[object, str], ...]
    index: int = 0

    @property
    def value(self) -> object:
        return self.options[self.index][0]

    @property
    def shown(self) -> str:
        return self.options[self.index][1]

    def step(self, by: int) -> None:
        self.index = (self.index + by) % len(self.options)


def choice(key: str, label: str, current: object,
           options: Sequence[tuple[object, str]]) -> Choice:
    """A choice set to ``current``; a value the form does not offer (a command-line
    flag set it) stays as one more option, so opening the form never changes it."""
    offered = tuple(options)
    values = [value for value, _ in offered]
    if current not in values:
        offered += ((current, str(current)),)
        values.append(current)
    return Choice(key, label, offered, values.index(current))


Field = TextField | Choice


@dataclass(slots=True)
class Form:
    """A titled list of fields; ``on_submit`` gets the form when Enter is pressed.

    ``on_submit`` closes the form itself when it is done with it, or sets
    :attr:`error` and leaves it open for the player to correct.
    """

    title: str
    fields: list[Field]
    action: str  # what Enter does, for the key hints: "open the table"
    on_submit: Callable[[Form], None]
    row: int = 0
    error: str = ""
    #: The choices are one arrangement of the same values (players in seats):
    #: changing one swaps it with the field that held the new value, so every
    #: value stays used exactly once and no state of the form is wrong.
    swaps: bool = False

    @property
    def field(self) -> Field:
        return self.fields[self.row]

    def move(self, by: int) -> None:
        self.row = (self.row + by) % len(self.fields)

    def change(self, by: int) -> None:
        field = self.field
        if isinstance(field, Choice):
            before = field.value
            field.step(by)
            self.error = ""
            if self.swaps:
                for other in self.fields:
                    if other is not field and isinstance(other, Choice) \
                            and other.value == field.value:
                        other.index = [value for value, _ in other.options].index(before)

    def type(self, chars: str) -> None:
        """Typed text goes into a text field; Space also steps a choice."""
        field = self.field
        if isinstance(field, TextField):
            field.type(chars)
            self.error = ""
        elif chars == " ":
            self.change(1)

    def erase(self) -> None:
        if isinstance(self.field, TextField):
            self.field.erase()

    def submit(self) -> None:
        self.error = ""
        self.on_submit(self)

    def text(self, key: str) -> str:
        """A text field's text, edge spaces removed."""
        field = self._get(key)
        assert isinstance(field, TextField)
        return field.text.strip()

    def value(self, key: str) -> object:
        field = self._get(key)
        assert isinstance(field, Choice)
        return field.value

    def _get(self, key: str) -> Field:
        return next(f for f in self.fields if f.key == key)


_VARIANT_KEYS = frozenset(f.name for f in dataclasses.fields(Variants))


def variant_fields(v: Variants) -> list[Field]:
    """The rules' variants as fields, set to ``v`` (docs/RULES.md says what each one means)."""
    return [
        choice("stock_turn", "Stock turn", v.stock_turn,
               ((3, "3 cards at a time"), (1, "1 card at a time"))),
        choice("strict_ties", "Ties", v.strict_ties,
               ((False, "both cards stay"), (True, "strict: only the first stays"))),
        choice("penalty", "Penalty", v.penalty,
               ((True, "-2 per card left in the Nerts pile"), (False, "none"))),
        TextField("target", "Target score", str(v.target), limit=5, digits=True),
        choice("jokers", "Jokers", v.jokers, ((False, "none"), (True, "two per deck"))),
        choice("teams", "Teams", v.teams,
               (("none", "none"), ("pairs", "pairs: partners add their scores"),
                ("share", "share: two players at each tableau"))),
        choice("lone_rotate", "Stuck alone", v.lone_rotate,
               ((False, "wait for the others"), (True, "may rotate the stock"))),
    ]


COUNTDOWNS = (0.0, 3.0, 5.0, 10.0)
"""Countdowns worth offering (seconds); ``nerts host --countdown`` takes any a peer accepts."""
DROP_AFTERS = (6.0, 15.0, 30.0, 60.0)
"""Silent-seat timeouts worth offering (seconds); ``--drop-after`` takes any a peer accepts."""


def clock_fields(countdown: float, drop_after: float) -> list[Field]:
    """The table's clocks, which every seat plays by, set to the current ones."""
    return [
        choice("countdown", "Countdown", countdown,
               _seconds(COUNTDOWNS, countdown, "to get ready")),
        choice("drop_after", "Silent seat", drop_after,
               _seconds(DROP_AFTERS, drop_after, "without a word, then dropped")),
    ]


def _seconds(offered: Sequence[float], current: float, words: str) -> list[tuple[object, str]]:
    return [(value, f"{value:g} s {words}") for value in sorted({*offered, current})]


def form_clocks(form: Form) -> tuple[float, float]:
    """The (countdown, drop_after) the form's clock fields describe."""
    countdown, drop_after = form.value("countdown"), form.value("drop_after")
    assert isinstance(countdown, float) and isinstance(drop_after, float)
    return countdown, drop_after


def form_variants(form: Form) -> Variants:
    """The variants the form's fields describe; VariantError says what is wrong."""
    target = form.text("target")
    if not target:
        raise VariantError("the target score must be a number")
    chosen: dict[str, Any] = {f.key: f.value for f in form.fields
                              if isinstance(f, Choice) and f.key in _VARIANT_KEYS}
    return dataclasses.replace(Variants(), target=int(target), **chosen)


def seat_fields(seats: Sequence[Seat]) -> list[Field]:
    """One field per seat, set to who sits there (a form with ``swaps``): under
    "pairs" seats 2k and 2k+1 are partners, so each pair of rows is a team."""
    names = [s.name for s in seats]
    options = tuple((s.key, s.name if names.count(s.name) == 1
                     else f"{s.name} ({fingerprint_of(s.key)[:4]})") for s in seats)
    return [Choice(f"seat{i}", f"Team {i // 2 + 1}", options, i) for i in range(len(seats))]


def form_seats(form: Form) -> list[bytes]:
    """The players' keys in the order the seat fields describe."""
    return [cast(bytes, field.value) for field in form.fields if isinstance(field, Choice)]
