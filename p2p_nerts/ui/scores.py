"""The screens around the rounds: the table before the first deal, and the score table.

The score table is drawn from the replica's agreed round results and the
match totals; nothing here computes a score.
"""

from __future__ import annotations

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import Container, HSplit

from ..game.scoring import team_of
from ..protocol.replica import Phase, Replica
from .control import Controller
from .keys import Action, KeyMap, label
from .table import MESSAGE_ROWS, header, messages
from .widgets import rule, text


def lobby_screen(ctl: Controller, keys: KeyMap) -> Container:
    return HSplit([
        header(ctl),
        rule(lambda: [("class:rule.title", "Table")]),
        text(lambda: lobby(ctl.replica, keys), height=None),
        rule(lambda: [("class:rule.title", "News")]),
        text(lambda: messages(ctl), height=MESSAGE_ROWS, stretch=True),
        text(lambda: between_hints(ctl.replica, keys)),
    ])


def lobby(r: Replica, keys: KeyMap) -> StyleAndTextTuples:
    out: StyleAndTextTuples = [("", "\n  Seated:  ")]
    for i, seat in enumerate(r.seats):
        you = seat.key == r.me.public_key
        out += [("", ", " if i else ""), ("class:you" if you else "", seat.name),
                ("class:dim", " (host)" if seat.key == r.host_key else "")]
    out.append(("", f"\n  Rules:   {r.variants.summary()}\n\n  "))
    if r.phase is Phase.SHUFFLE:
        out.append(("class:label", "Shuffling: every deck is being fixed by commit and reveal…"))
    elif r.is_host:
        out.append(("class:label", f"{label(keys, Action.NEXT)} deals the first round."))
    else:
        out.append(("class:label", "Waiting for the host to deal…"))
    return out


def scores_screen(ctl: Controller, keys: KeyMap) -> Container:
    return HSplit([
        header(ctl),
        rule(lambda: round_title(ctl.replica)),
        text(lambda: score_table(ctl), height=None),
        rule(lambda: [("class:rule.title", "News")]),
        text(lambda: messages(ctl), height=MESSAGE_ROWS, stretch=True),
        text(lambda: between_hints(ctl.replica, keys)),
    ])


def round_title(r: Replica) -> StyleAndTextTuples:
    rs = r.rs
    if rs is None:
        return []
    if rs.end == "deadlock":
        how = ": everyone was stuck twice"
    elif rs.call is not None:
        how = f": {rs.names[rs.call[1]]} called Nerts!"
    else:
        how = ""
    return [("class:rule.title", f"Round {rs.number} is over{how}")]


def score_table(ctl: Controller) -> StyleAndTextTuples:
    """Each seat's round: own cards up, Nerts cards left, round score, total, audit."""
    r = ctl.replica
    rs, match = r.rs, r.match
    if rs is None or match is None:
        return []
    if not rs.results:
        return [("class:label", "\n  Checking everyone's moves (audit)…")]
    width = max(10, *(len(n) + 6 for n in rs.names))
    out: StyleAndTextTuples = [
        ("class:label", f"\n  {'Player':<{width}} {'up':>4} {'Nerts left':>11} "
                        f"{'round':>6} {'total':>6}   audit\n")]
    for res in rs.results:
        name = rs.names[res.seat] + (" (you)" if res.seat == rs.me else "")
        verdict = rs.verdicts[res.seat] if res.seat < len(rs.verdicts) else ""
        style = "class:you" if res.seat == rs.me else ""
        out.append((style, f"  {name:<{width}} {res.foundation_cards:>4} {res.nerts_left:>11} "
                           f"{res.score:>6} {match.totals[res.seat]:>6}   "))
        out.append(("class:good", "ok") if not verdict else ("class:msg.error", verdict))
        if res.called:
            out.append(("class:good", "  called Nerts"))
        out.append(("", "\n"))
    if rs.variants.teams == "pairs":
        for team, total in sorted(match.team_totals().items()):
            members = " + ".join(n for s, n in enumerate(rs.names)
                                 if team_of(s, rs.variants) == team)
            out.append(("", f"  team {members}: {total}\n"))
    out.append(("class:dim", f"\n  Target {rs.variants.target}. "
                             + ("Every table agrees on these scores." if ctl.state.agreed
                                else "")))
    if ctl.state.winner is not None:
        out.append(("class:title", f"\n\n  Game over: {ctl.state.winner} wins! "))
    return out


def between_hints(r: Replica, keys: KeyMap) -> StyleAndTextTuples:
    out: StyleAndTextTuples = [("", " ")]
    if r.is_host and r.phase in (Phase.LOBBY, Phase.BETWEEN):
        out += [("class:key", label(keys, Action.NEXT)),
                ("class:dim", " deal the next round  " if r.rs else " deal  ")]
    elif r.phase is Phase.BETWEEN:
        out.append(("class:dim", "waiting for the host to deal  "))
    out += [("class:key", label(keys, Action.HELP)), ("class:dim", " help  "),
            ("class:key", label(keys, Action.QUIT)), ("class:dim", " quit")]
    return out
