"""The lobby: who may sit, who waits for the next round, the roster as a round
closes; what a host may ask between rounds, and when it deals by itself; and
what a ROSTER or SETTINGS from the host sets.

Pure functions of the table as it stands (:class:`Table`): they return the
effects to apply (``_effects``) or a decision (:class:`Seated`,
:class:`Ruled`, :class:`Reseated`, :data:`Lobbied`...), or refuse (``CommandError`` for a local
command, ``EnvelopeError`` for an entry); the facade signs the ROSTER,
SETTINGS or REFUSE, and ``Steps`` has ``Seating`` keep the seats, rules,
waiting list, line and who is ready as decided, begins the round a ROSTER begins and takes a
GOODBYE to the round.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import assert_never

from ...game.variants import VariantError, Variants
from .. import events as ev
from ..envelope import Entry, EnvelopeError
from ..messages import Goodbye, Join, Leave, Payload, Ready, Resend, Roster, Seat, Settings
from ..messages import Refuse as Refusal
from ._base import (
    BETWEEN_ROUNDS,
    DEAL_WITH,
    SIT_DOWN_WAIT,
    CommandError,
    Phase,
    clocks_problem,
    rules_of,
    settings_of,
)
from ._commands import (
    ArrangeSeats,
    AskToWatch,
    ChangeSettings,
    LeaveTable,
    SeatLost,
    SetReady,
    StartRound,
    TurnAway,
)
from ._effects import Effect, Emit, Sign, roster_told
from ._state import RoundState

#: Phases in which leaving the table gives a seat up (in a round, the drop vote does).
LEAVES = BETWEEN_ROUNDS | {Phase.OVER}

EQUIVOCATOR = "this seat signed two different entries under one number"
FULL = "the table is full"
OVER = "the game is over"
NOT_LISTED = "this table is seated by an event, and you are not on its list"


@dataclass(frozen=True, slots=True)
class Refuse:
    """Tell the newcomer no, and why."""

    reason: str


@dataclass(frozen=True, slots=True)
class Wait:
    """Mid-round: the player sits down as this round closes (the waiting list)."""


@dataclass(frozen=True, slots=True)
class SeatIt:
    """Between rounds: a newcomer sits after everyone else."""


@dataclass(frozen=True, slots=True)
class Retell:
    """A seated player asked again: tell it the roster again."""


Answer = Refuse | Wait | SeatIt | Retell


@dataclass(frozen=True, slots=True)
class Seated:
    """The host's ROSTER delivered: the seats it sets, whether it begins its round
    (``Steps.lobby_entry`` begins it), then the seats told."""

    seats: tuple[Seat, ...]
    begins: bool
    told: Emit


@dataclass(frozen=True, slots=True)
class Ruled:
    """The host's SETTINGS delivered: the rules and clocks the table plays by now
    (``Seating.set_rules``), then told."""

    variants: Variants
    settings: Settings
    told: Emit


@dataclass(frozen=True, slots=True)
class Reseated:
    """Host, as a round closes: the seats of the next round (None: as they are),
    which a ROSTER says, and the newcomers among them (``Seating.reseated``)."""

    seats: tuple[Seat, ...] | None
    newcomers: frozenset[bytes]


@dataclass(frozen=True, slots=True)
class Joined:
    """Host: a JOIN answered. ``key`` is put in line for a seat under ``name``
    (``in_line``), or is in line no more (False; None: as it was); it waits to
    sit down as this round closes (``waits``) (``Seating.joined``); then what
    is signed or told (``then``)."""

    key: bytes
    name: str
    in_line: bool | None
    waits: bool
    then: list[Effect]


@dataclass(frozen=True, slots=True)
class Left:
    """``key`` left, or its link was lost: off the waiting list, and out of the line
    for a seat too (``unqueue``) (``Seating.left``); then what is signed
    (``then``: a ROSTER that gives its seat up)."""

    key: bytes
    unqueue: bool
    then: list[Effect]


@dataclass(frozen=True, slots=True)
class ReadySaid:
    """``key`` says it is ready for the next deal (``on``), or no longer
    (``Seating.readied``); then told."""

    key: bytes
    on: bool
    told: Emit


@dataclass(frozen=True, slots=True)
class Gone:
    """A GOODBYE delivered: what the lobby does (``left``), and the reason said,
    for what it does to the round (``drops.goodbye``)."""

    left: Left
    reason: str


#: A lobby decision about the seating's lists (``Steps.lobbied``).
Lobbied = Joined | Left | ReadySaid


@dataclass(frozen=True, slots=True)
class Table:
    """What the lobby reads of the table, as it stands when asked (read only)."""

    me: bytes
    host_key: bytes
    phase: Phase
    seats: tuple[Seat, ...]
    number: int  # the current round's, 0 before the first
    variants: Variants
    countdown: float
    drop_after: float
    max_seats: int  # the host's own limit
    waiting: Mapping[bytes, str]  # host: who sits down as this round closes
    proven: Collection[bytes]  # proven equivocators: never seated again
    ready: Mapping[bytes, bool] = field(default_factory=dict)  # who said it is ready to deal
    queue: Mapping[bytes, str] = field(default_factory=dict)  # host: in line for a seat
    only: Collection[bytes] | None = None  # host: the only keys it seats (None: anyone)

    @property
    def is_host(self) -> bool:
        return self.me == self.host_key

    @property
    def seated(self) -> frozenset[bytes]:
        return frozenset(s.key for s in self.seats)

    @property
    def settings(self) -> Settings:
        return settings_of(self.variants, self.countdown, self.drop_after)

    @property
    def room(self) -> int:
        """Seats the host offers: its own limit, and no more tableaux than the rules play."""
        return min(self.max_seats, self.variants.most_seats)


def seat_host(t: Table, name: str) -> list[Effect]:
    """The host opens its table: its SETTINGS, then a seat for itself."""
    return [Sign(t.settings), sit(t, t.me, name)]


def sit(t: Table, key: bytes, name: str) -> Sign:
    """Host: a newcomer sits after everyone else, so the partners chosen stay together."""
    return Sign(Roster((*t.seats, Seat(key, name))))


def unseat(t: Table, key: bytes) -> list[Effect]:
    """Host: give a guest's seat up (the host's own seat is the table itself)."""
    if key != t.host_key and key in t.seated:
        return [Sign(Roster(tuple(s for s in t.seats if s.key != key)))]
    return []


def seat_lost(t: Table, key: bytes) -> Left | None:
    """Host: a guest is gone (its link lost, or its goodbye): off the waiting list
    and out of the line at once, so that a latecomer gone before the deal is
    never seated (the deal would wait for it); between rounds its seat is given
    up too. In a round, a seat leaves by the table's drop vote instead
    (``_drops``). None: not the host, nothing to do."""
    if not t.is_host:
        return None
    return Left(key, True, unseat(t, key) if t.phase in BETWEEN_ROUNDS else [])


def goodbye(t: Table, key: bytes) -> Left:
    """``key`` says goodbye: it sits down no more as a round closes, and between
    rounds the host gives its seat up (:func:`seat_lost`)."""
    return seat_lost(t, key) or Left(key, False, [])


def in_round(phase: Phase) -> bool:
    """Whether a round is being shuffled, played or scored."""
    return phase not in BETWEEN_ROUNDS and phase is not Phase.OVER


def taken(t: Table, rs: RoundState | None) -> int:
    """Seats taken, as the lobby counts them and a newcomer finds them: in a round,
    those the next deal goes to as things stand (:func:`reseat`: the seats still
    in the round, the dropped who asked back, the latecomers waiting), so a seat
    the table dropped is free at once and one a latecomer waits for is not;
    between rounds, the seats."""
    if rs is None or not in_round(t.phase):
        return len(t.seats)
    return len(reseat(rs, t.seats, t.waiting, set(t.proven), t.host_key, t.max_seats))


def ahead_of(t: Table, key: bytes) -> int:
    """Host: how many wait in line for a seat before ``key`` (all of them, for a key
    not in line)."""
    line = list(t.queue)
    return line.index(key) if key in t.queue else len(line)


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``11th``, ``23rd``."""
    last = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{last}"


def join(t: Table, key: bytes, name: str, rs: RoundState | None) -> Joined:
    """Host: what ``key``'s JOIN gets (:func:`answer_join`). Refused at a full table,
    it waits in line, told its place; a seat that frees goes to the first in line
    (the others asking for it are told their place again)."""
    if t.only is not None and key not in t.only:
        return Joined(key, name, None, False, [Sign(Refusal(key, NOT_LISTED))])
    ahead = ahead_of(t, key)
    answer = answer_join(
        key, rs=rs, in_round=in_round(t.phase), over=t.phase is Phase.OVER, seated=t.seated,
        taken=taken(t, rs) + ahead, waiting=t.waiting, proven=key in t.proven, room=t.room)
    match answer:
        case Refuse(reason=reason) if reason == FULL:
            return Joined(key, name, True, False, [Sign(Refusal(
                key, f"{FULL}: you are {ordinal(ahead + 1)} in line for a seat"))])
        case Refuse(reason=reason):
            return Joined(key, name, False, False, [Sign(Refusal(key, reason))])
        case Wait():
            return Joined(key, name, False, True,
                          [Emit(ev.Notice(f"{name} sits down when this round ends"))])
        case Retell():
            return Joined(key, name, False, False, [Sign(Roster(t.seats))])
        case SeatIt():
            return Joined(key, name, False, False, [sit(t, key, name)])
    return Joined(key, name, False, False, [])


def answer_join(key: bytes, *, rs: RoundState | None, in_round: bool, over: bool,
                seated: frozenset[bytes], taken: int, waiting: Mapping[bytes, str],
                proven: bool, room: int) -> Answer | None:
    """The host's answer to ``key``'s JOIN; None when there is nothing to say.

    ``in_round``: a round is being shuffled, played or scored; ``seated``: the
    keys of the seats; ``taken``: the seats counted taken (:func:`taken`, which
    in a round counts the latecomers waiting and not the seats dropped), and
    those in line for a seat before this key;
    ``proven``: the key is a proven equivocator; ``room``: the seats the host
    offers.
    A seat live in the round catches up through resends, and one already on
    the waiting list waits; one dropped from this round, or given up after an
    earlier one, never chose to leave: it sits down as this round closes, so
    it cannot miss the short break before the next deal, unless a latecomer
    took its free seat meanwhile.
    """
    if proven:
        return Refuse(EQUIVOCATOR)
    is_seated = key in seated
    if in_round:
        seat = rs.seat_of(key) if rs is not None else None
        if (seat is not None and rs is not None and seat in rs.live) or key in waiting:
            return None
        if taken >= room:  # the key is not counted: not live, not waiting
            return Refuse(FULL)
        return Wait()
    if is_seated:
        return Retell()
    if over:
        return Refuse(OVER)
    if taken >= room:
        return Refuse(FULL)
    return SeatIt()


def reseat(rs: RoundState, seats: tuple[Seat, ...], waiting: Mapping[bytes, str],
           proven: set[bytes], host_key: bytes, max_seats: int) -> tuple[Seat, ...]:
    """The roster as a round closes: the dropped leave, those waiting sit down.

    A seat dropped this round leaves the table, or every later round would
    wait for it again, unless it has asked back meanwhile (it keeps its total
    either way); a proven equivocator leaves for good. The host stays.
    """
    gone = {rs.keys[s] for s in range(len(rs.keys)) if s not in rs.live} - {host_key}
    gone -= waiting.keys()
    gone |= proven - {host_key}
    kept = {s.key: s for s in seats if s.key not in gone}
    for key, name in waiting.items():
        if key not in kept and key not in gone and len(kept) < max_seats:
            kept[key] = Seat(key, name)
    return tuple(kept.values())


def closing_roster(t: Table, rs: RoundState) -> Reseated:
    """Host, as ``rs`` closes: one ROSTER says who leaves and who sits down
    (:func:`reseat`); the break waits for the newcomers to catch up."""
    seats = reseat(rs, t.seats, t.waiting, set(t.proven), t.host_key, t.max_seats)
    keys = {seat.key for seat in seats}
    if keys == t.seated:
        return Reseated(None, frozenset())
    return Reseated(seats, frozenset(keys - set(rs.keys)))


def host_between_rounds(is_host: bool, phase: Phase, only: str, when: str) -> None:
    """Refuse a host's command (``only``: what only the host does) from a guest, or
    while a round is under way (``when``: why not now)."""
    if not is_host:
        raise CommandError(f"only the host {only}")
    if phase not in BETWEEN_ROUNDS:
        raise CommandError(when)


def check_deal(seats: tuple[Seat, ...], variants: Variants) -> None:
    """Refuse to deal to nobody, or to more or fewer seats than the rules play."""
    if not seats:
        raise CommandError("nobody is seated")
    try:
        variants.check_players(len(seats))
    except VariantError as exc:
        raise CommandError(str(exc)) from None


def start_round(t: Table) -> list[Effect]:
    """Host: fix the roster and start the next round, under the rules it announces.

    After a game over, the first round of a new game at this table (every
    replica begins it with no totals): under the rules in force, which nobody
    changes after a game (a SETTINGS then is refused as mid-round).
    """
    over = t.phase is Phase.OVER
    host_between_rounds(t.is_host, Phase.BETWEEN if over else t.phase, "starts a round",
                        "a round is already under way")
    check_deal(t.seats, t.variants)
    return [*([] if over else [Sign(t.settings)]), Sign(Roster(t.seats), round_no=t.number + 1)]


def change_settings(t: Table, variants: Variants, countdown: float | None,
                    drop_after: float | None) -> list[Effect]:
    """Host: new rules, and clocks (None: as they are), between rounds."""
    host_between_rounds(t.is_host, t.phase, "changes the settings",
                        "settings change between rounds")
    countdown = t.countdown if countdown is None else countdown
    drop_after = t.drop_after if drop_after is None else drop_after
    problem = clocks_problem(countdown, drop_after)
    if problem is not None:
        raise CommandError(problem)
    return [Sign(settings_of(variants, countdown, drop_after))]


def arrange(t: Table, order: tuple[bytes, ...]) -> list[Effect]:
    """Host: the seats in ``order`` (:func:`arranged`), between rounds."""
    host_between_rounds(t.is_host, t.phase, "arranges the seats",
                        "seats are arranged between rounds")
    seats = arranged(t.seats, order)
    return [] if seats is None else [Sign(Roster(seats))]


#: The commands about the table rather than my play in a round (:func:`command`).
TableCommand = (StartRound | ChangeSettings | ArrangeSeats | SetReady | LeaveTable | SeatLost
                | TurnAway | AskToWatch)


def command(t: Table, c: TableCommand, *, watching: bool) -> list[Effect] | Left:
    """What a command about the table signs (a spectator's replica, ``watching``,
    says it is ready for nothing: it has no seat)."""
    match c:
        case StartRound():
            return start_round(t)
        case ChangeSettings(variants=variants, countdown=countdown, drop_after=drop_after):
            return change_settings(t, variants, countdown, drop_after)
        case ArrangeSeats(order=order):
            return arrange(t, order)
        case SeatLost(key=key):
            return seat_lost(t, key) or []
        case SetReady(on=on):
            if watching:
                raise CommandError("you are watching this table: a spectator has no seat")
            return [Sign(Ready(on))]
        case LeaveTable(reason=reason):  # a LEAVE too where it gives a seat up
            leave: list[Effect] = [Sign(Leave())] if t.phase in LEAVES else []
            return [*leave, Sign(Goodbye(reason[:200]))]
        case TurnAway(key=key, reason=reason):
            return [Sign(Refusal(key, reason[:200]))] if t.is_host and key not in t.seated else []
        case AskToWatch(key=key):
            return [Sign(Resend(key, 1, 1024), to=key)]
        case _:
            assert_never(c)


def arranged(seats: tuple[Seat, ...], order: tuple[bytes, ...]) -> tuple[Seat, ...] | None:
    """The seats in ``order`` (every seated key once), or None if that is the order
    already."""
    by_key = {s.key: s for s in seats}
    if len(order) != len(by_key) or set(order) != by_key.keys():
        raise CommandError("every seated player needs exactly one seat")
    return None if order == tuple(by_key) else tuple(by_key[key] for key in order)


def auto_deal_due(phase: Phase, seats: int, auto_start: int | None,
                  next_round_at: float | None, now: float, sitting_down: Collection[bytes],
                  seated: frozenset[bytes], deal_with: int = DEAL_WITH) -> bool:
    """Whether a host dealing by itself deals now: in the lobby once enough are
    seated, or once its turn-up time (``next_round_at`` there) is over with
    ``deal_with`` seated at least (two, or more: an event's stand-in host deals
    only a game that can count); between rounds once the break is over and the
    newcomers seated as the round closed have caught up (or were waited for
    long enough)."""
    if phase is Phase.LOBBY:
        return (bool(auto_start) and seats >= (auto_start or 0)) or (
            next_round_at is not None and now >= next_round_at and seats >= deal_with)
    return (phase is Phase.BETWEEN and next_round_at is not None and now >= next_round_at
            and (not seated.intersection(sitting_down) or now >= next_round_at + SIT_DOWN_WAIT))


def next_auto_deal(phase: Phase, seats: int, auto_start: int | None,
                   next_round_at: float | None, now: float, sitting_down: Collection[bytes],
                   seated: frozenset[bytes], deal_with: int = DEAL_WITH) -> float:
    """When :func:`auto_deal_due` next says yes by time alone: ``now`` if it does now
    (inf: only a call can make it: a seat taken, a newcomer caught up)."""
    if auto_deal_due(phase, seats, auto_start, next_round_at, now, sitting_down, seated,
                     deal_with):
        return now
    if phase is Phase.LOBBY and next_round_at is not None:
        return next_round_at if next_round_at > now else float("inf")
    if phase is not Phase.BETWEEN or next_round_at is None:
        return float("inf")
    at = next_round_at if not seated.intersection(sitting_down) else next_round_at + SIT_DOWN_WAIT
    return at if at > now else float("inf")


def auto_deal(t: Table, *, auto_start: int | None, next_round_at: float | None, now: float,
              sitting_down: Collection[bytes],
              deal_with: int = DEAL_WITH) -> list[Effect] | str | None:
    """Host: the deal it makes by itself now (:func:`start_round`), if due
    (:func:`auto_deal_due`; None: not due), or why it cannot make it."""
    if not auto_deal_due(t.phase, len(t.seats), auto_start, next_round_at, now, sitting_down,
                         t.seated, deal_with):
        return None
    try:
        return start_round(t)
    except CommandError as exc:
        return str(exc)


def delivered(t: Table, entry: Entry, payload: Payload,
              rs: RoundState | None) -> list[Effect] | Lobbied | Seated | Ruled | Gone:
    """A lobby entry (or a GOODBYE) delivered (``rs``: the round under way, if any):
    what it does (a ROSTER's, a SETTINGS' and a GOODBYE's are taken on by
    ``Steps``). Any
    other type between rounds is one no honest peer signs."""
    author = entry.author
    match payload:
        case Join(name=name):
            return join(t, author, name, rs) if t.is_host else []
        case Leave():
            unseats = t.is_host and t.phase in BETWEEN_ROUNDS
            return Left(author, False, unseat(t, author) if unseats else [])
        case Roster(seats=seats):
            return roster(t, entry, seats)
        case Settings():
            return settings(t, entry, payload)
        case Ready(on=on):
            return ReadySaid(author, on, Emit(ev.ReadyChanged(tuple(
                on if s.key == author else t.ready.get(s.key, False) for s in t.seats))))
        case Refusal(who=who, reason=reason):
            if author == t.host_key and who == t.me:
                return [Emit(ev.Refused(reason))]
            return []
        case Goodbye(reason=reason):
            return Gone(goodbye(t, author), reason)
    raise EnvelopeError("unexpected_type")


def roster(t: Table, entry: Entry, seats: tuple[Seat, ...]) -> Seated:
    """The host's ROSTER: the seats it sets, and the round it may begin."""
    if entry.author != t.host_key:
        raise EnvelopeError("not_host")
    begins = roster_begins(entry.round, t.number, t.phase, t.variants, seats)
    return Seated(seats, begins, roster_told(seats, t.me))


def settings(t: Table, entry: Entry, payload: Settings) -> Ruled:
    """The host's SETTINGS: the rules, and the host's clocks whatever this peer was
    started with (nobody may start early, and every peer counts a seat silent
    after the same time)."""
    if entry.author != t.host_key:
        raise EnvelopeError("not_host")
    variants = variants_of(payload, t.phase)
    countdown, drop_after = payload.countdown_ms / 1000, payload.drop_after_ms / 1000
    return Ruled(variants, payload, Emit(ev.SettingsChanged(
        f"{variants.words()}; {countdown:g} s countdown, "
        f"silent seats dropped after {drop_after:g} s")))


def roster_begins(entry_round: int, number: int, phase: Phase, variants: Variants,
                  seats: tuple[Seat, ...]) -> bool:
    """Whether a host's ROSTER (for ``entry_round``; ``number``: the round we are in)
    begins the next round (True) or only rearranges the seats between rounds."""
    if entry_round == number + 1:
        try:
            variants.check_players(len(seats))  # what the host checks to deal
        except VariantError:
            raise EnvelopeError("bad_field:roster") from None
        return True
    if entry_round == number and phase in (Phase.LOBBY, Phase.BETWEEN, Phase.OVER):
        return False
    raise EnvelopeError("wrong_round")


def variants_of(settings: Settings, phase: Phase) -> Variants:
    """The rules a host's SETTINGS set, between rounds only."""
    if phase not in BETWEEN_ROUNDS:
        raise EnvelopeError("settings_mid_round")
    try:
        return rules_of(settings)
    except VariantError:
        raise EnvelopeError("bad_field:settings") from None
