"""The screens around the rounds: the table before the first deal, and the score table.

Before the first deal the table lobby lists the seated players with their key
fingerprints (read aloud, they tell two players with one name apart) and
whether each is ready; the host also sees the table code, to read it out to
the players still to join (a guest knows it already). The score table is
drawn from the agreed round results and the match totals that the table's
view shows; nothing here computes a score.
"""

from __future__ import annotations

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import Container, HSplit

from ..game.scoring import partners, team_names
from ..game.variants import VariantError
from ..protocol.identity import fingerprint_of
from ..protocol.replica import Phase, TableView
from .control import Controller
from .keys import Action, KeyMap, label
from .table import MESSAGE_ROWS, header, messages
from .widgets import rule, text

_PRINT_WIDTH = len(fingerprint_of(bytes(32)))  # every fingerprint is as long


def lobby_screen(ctl: Controller, keys: KeyMap) -> Container:
    return HSplit([
        header(ctl),
        rule(lambda: [("class:rule.title", "Table")]),
        text(lambda: lobby(ctl.view, keys, ctl.code, networked=ctl.session.networked,
                           address=ctl.session.address), height=None),
        rule(lambda: [("class:rule.title", "News")]),
        text(lambda: messages(ctl.state), height=MESSAGE_ROWS, stretch=True),
        text(lambda: between_hints(ctl.view, keys)),
    ])


def lobby(r: TableView, keys: KeyMap, code: str | None, *, networked: bool = True,
          address: str | None = None) -> StyleAndTextTuples:
    """Each seat: name (you, partner, host), key fingerprint, ready; then the rules,
    the teams, the clocks, the host's address and table code, and what is next. (A
    seat in this process never falls silent: a solo table's clocks are only its
    countdown, and nobody joins it.)"""
    seats, my_key = r.seats, r.my_key
    seated = [s.key for s in seats]
    me = seated.index(my_key) if my_key in seated else None
    names = [_who(r, index, me) for index in range(len(seats))]
    width = max([len("Player"), *map(len, names)])
    out: StyleAndTextTuples = [
        ("class:label", f"\n  {'Player':<{width}}  {'Fingerprint':<{_PRINT_WIDTH}}  Ready\n")]
    for seat, name in zip(seats, names, strict=True):
        out += [("class:you" if seat.key == my_key else "", f"  {name:<{width}}  "),
                ("class:dim", f"{fingerprint_of(seat.key)}  "), _ready_mark(r, seat.key),
                ("", "\n")]
    if not r.seats:
        out.append(("class:dim", "  Asking the host for a seat…\n"))
    ready_count = sum(_is_ready(r, s.key) for s in r.seats)
    out.append(("", f"\n  Rules:   {r.variants.words()}\n"))
    if r.variants.teams == "pairs":
        teams = team_names([s.name for s in r.seats], r.variants)
        out.append(("", f"  Teams:   {' · '.join(teams)}\n"))
    elif r.variants.teams == "share":
        out.append(("", "  Teams:   share-a-deck: two players play each tableau together\n"))
    out.append(("", f"  Clocks:  {r.countdown:g} s to get ready" + (
        f"; a seat silent for {r.drop_after:g} s is dropped" if networked else "") + "\n"))
    if address is not None and networked and r.is_host:
        out += [("", "  Address: "), ("class:label", address),
                ("class:dim", "  (to join by it: a in the lobby, or nerts join)\n")]
    if code is not None and r.is_host:
        out += [("", "  Code:    "), ("class:label", code),
                ("class:dim", "  (players joining need it: read it out)\n")]
    out.append(("", f"  Players: {len(r.seats)} seated, {ready_count} ready"))
    if r.seats and (problem := _count_problem(r)) is not None:
        out.append(("class:warn", f" · cannot deal yet: {problem}"))
    out.append(("", "\n\n  "))
    if r.phase is Phase.SHUFFLE:
        out.append(("class:label", "Shuffling: every deck is being fixed by commit and reveal…"))
    elif r.is_host:
        out.append(("class:label", f"{label(keys, Action.NEXT)} deals the first round "
                                   "when you are all set."))
    else:
        host = next((s.name for s in r.seats if s.key == r.host_key), "the host")
        out.append(("class:label", f"Waiting for {host} to deal: the host starts each "
                                   "round…"))
    return out


def _is_ready(r: TableView, key: bytes) -> bool:
    """Whether a seat is ready for the next deal: the host is, since the host deals."""
    return key == r.host_key or r.ready(key)


def _ready_mark(r: TableView, key: bytes) -> tuple[str, str]:
    if r.ready(key):
        return ("class:good", "✓ ready")
    return ("class:good", "✓ deals") if key == r.host_key else ("class:dim", "· not yet")


def _count_problem(r: TableView) -> str | None:
    """Why the seated players cannot be dealt a round under the table's rules, if so."""
    try:
        r.variants.check_players(len(r.seats))
    except VariantError as exc:
        return str(exc)
    return None


def _who(r: TableView, index: int, me: int | None) -> str:
    """The name of the seat at ``index`` of the next round, marked when it is you
    (at ``me``), your partner (pairs: seats are partnered by their order) or the host."""
    seat = r.seats[index]
    tags = [tag for tag, on in (
        ("you", index == me),
        ("partner", me is not None and partners(index, me, r.variants)),
        ("host", seat.key == r.host_key)) if on]
    return seat.name + (f" ({', '.join(tags)})" if tags else "")


def scores_screen(ctl: Controller, keys: KeyMap) -> Container:
    return HSplit([
        header(ctl),
        rule(lambda: round_title(ctl.view)),
        text(lambda: score_table(ctl), height=None),
        rule(lambda: [("class:rule.title", "News")]),
        text(lambda: messages(ctl.state), height=MESSAGE_ROWS, stretch=True),
        text(lambda: between_hints(ctl.view, keys)),
    ])


def round_title(r: TableView) -> StyleAndTextTuples:
    rnd = r.round
    if rnd is None:
        return []
    if rnd.end == "deadlock":
        how = ": everyone was stuck twice"
    elif rnd.call is not None:
        how = f": {rnd.names[rnd.call[1]]} called Nerts!"
    else:
        how = ""
    return [("class:rule.title", f"Round {rnd.number} is over{how}")]


def score_table(ctl: Controller) -> StyleAndTextTuples:
    """Each seat's round: own cards up, Nerts cards left, round score, total, audit."""
    r = ctl.view
    rnd, totals = r.round, r.totals
    if rnd is None or totals is None:
        return []
    if not rnd.results:
        return [("class:label", "\n  Checking everyone's moves (audit)…")]
    names, me, verdicts = rnd.names, rnd.me, rnd.verdicts
    width = max(10, *(len(n) + 6 for n in names))
    out: StyleAndTextTuples = [
        ("class:label", f"\n  {'Player':<{width}} {'up':>4} {'Nerts left':>11} "
                        f"{'round':>6} {'total':>6}   audit\n")]
    for res in rnd.results:
        name = names[res.seat] + (" (you)" if res.seat == me else "")
        verdict = verdicts[res.seat] if res.seat < len(verdicts) else ""
        style = "class:you" if res.seat == me else ""
        out.append((style, f"  {name:<{width}} {res.foundation_cards:>4} {res.nerts_left:>11} "
                           f"{res.score:>6} {totals[res.seat]:>6}   "))
        out.append(("class:good", "ok") if not verdict else ("class:msg.error", verdict))
        if res.called:
            out.append(("class:good", "  called Nerts"))
        out.append(("", "\n"))
    if rnd.variants.teams == "pairs":
        for members, total in r.team_totals:
            out.append(("", f"  team {members}: {total}\n"))
    out.append(("class:dim", f"\n  Target {rnd.variants.target}. "
                             + ("Every table agrees on these scores." if ctl.state.agreed
                                else "")))
    if r.phase is Phase.BETWEEN:
        out += next_round(r)
    if ctl.state.winner is not None:
        out.append(("class:title", f"\n\n  Game over: {ctl.state.winner} wins! "))
    return out


def next_round(r: TableView) -> StyleAndTextTuples:
    """Between rounds: who is ready for the next deal (the host deals, so is not
    asked), or that nobody else is seated now (everyone else left: the table waits
    for a player to join); and why no round can be dealt yet, as the lobby says."""
    others = [s for s in r.seats if s.key != r.host_key]
    if others:
        ready = [s.name for s in others if r.ready(s.key)]
        out: StyleAndTextTuples = [
            ("", f"\n  Ready for the next round: {', '.join(ready) or 'nobody yet'}"
                 f" ({len(ready)} of {len(others)})")]
    else:
        out = [("", "\n  Nobody else is seated now: the next round waits for a player "
                    "to join.")]
    if (problem := _count_problem(r)) is not None:
        out.append(("class:warn", f"\n  Cannot deal yet: {problem}."))
    return out


def between_hints(r: TableView, keys: KeyMap) -> StyleAndTextTuples:
    parts: list[tuple[Action, str]] = []
    if r.is_host and r.phase in (Phase.LOBBY, Phase.BETWEEN):
        parts += [(Action.NEXT, "deal the next round" if r.round else "deal"),
                  (Action.SETTINGS, "settings")]
        if r.variants.teams == "pairs":
            parts.append((Action.PARTNERS, "partners"))
    if r.is_host and r.phase is Phase.OVER:
        parts.append((Action.AGAIN, "play again"))
    # The host deals; a spectator has no seat to be ready in.
    if r.phase in (Phase.LOBBY, Phase.BETWEEN) and not r.is_host and not r.watching:
        parts.append((Action.READY, "not ready" if r.ready(r.my_key) else "ready"))
    out: StyleAndTextTuples = [("", " ")]
    if r.phase is Phase.BETWEEN and not r.is_host:
        out.append(("class:dim", "waiting for the host to deal  "))
    for action, what in [*parts, (Action.HELP, "help"), (Action.QUIT, "quit")]:
        out += [("class:key", label(keys, action)), ("class:dim", f" {what}  ")]
    return out
