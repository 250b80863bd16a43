"""The shuffle: commit, reveal, the joint value, the deal and the host's GO.

Functions over one round's state. The deal fixes the round's joint value
and my tableau (``RoundState.dealt``); everything else is a
question the facade asks before it signs a REVEAL or a GO, or the effects
(``_effects``) of the host's GO: play starts, or the round is void here.
"""

from __future__ import annotations

from enum import Enum
from itertools import combinations

from ...game.tableau import Tableau
from .. import events as ev
from ..fairness import deal_for, joint_value
from ..messages import Go, Reveal
from ._base import Phase
from ._effects import Effect, Emit, SetPhase, Sign
from ._state import RoundState


class GoCheck(Enum):
    """What the host's GO says about our deal."""

    START = "start"  # it names our joint value: play starts after the countdown
    WAIT = "wait"  # it may name a deal from fewer seats: wait for the drop votes
    MISMATCH = "mismatch"  # it names another joint value: the round is void here


def reveal_due(rs: RoundState) -> bool:
    """Every live seat has committed and I have not revealed my share yet."""
    return rs.me is not None and rs.live <= rs.commits.keys() and rs.me not in rs.reveals


def reveal(rs: RoundState) -> list[Effect]:
    """My REVEAL, once due (:func:`reveal_due`)."""
    return [Sign(Reveal(rs.share))] if reveal_due(rs) else []


def deal_due(rs: RoundState) -> bool:
    """Every live seat's share is in and nothing is dealt yet.

    Not while a live seat's agreed drop waits to take effect: then the shares
    that count are the others'.
    """
    return (rs.joint is None and rs.live <= rs.reveals.keys()
            and not rs.live & rs.dropping.keys())


def live_joint(table_id: bytes, rs: RoundState) -> bytes:
    """The joint value of the live seats' revealed shares (all must be in)."""
    return joint_value(table_id, rs.number, [rs.reveals[s] for s in sorted(rs.live)])


def deal(rs: RoundState, joint: bytes) -> None:
    """Fix the round's joint value and deal my tableau from it."""
    tab = None
    if rs.me is not None:
        deck = deal_for(rs.me, rs.deck_secret, joint, jokers=rs.variants.jokers)
        tab = Tableau(rs.me, deck, stock_turn=rs.variants.stock_turn, jokers=rs.variants.jokers)
    rs.dealt(joint, tab)


def deal_now(table_id: bytes, rs: RoundState, *, is_host: bool) -> list[Effect] | None:
    """Deal, once due (:func:`deal_due`; None while not): the host signs its GO for
    the deal (then the GO is looked at, and play may start: ``Steps.deal``)."""
    if not deal_due(rs):
        return None
    joint = live_joint(table_id, rs)
    deal(rs, joint)
    return [Sign(Go(joint))] if is_host else []


def joint_of_live(table_id: bytes, rs: RoundState) -> bool:
    """Deal again from the shares the host's GO names, if they are the live seats'
    (and maybe some of the seats that left this round): True once the joint matches.

    A peer back from a crash can hold every REVEAL, its own included,
    before the votes that dropped it, and deal from all of them; the host
    dealt from the live seats' shares only. The other way round, a drop can
    take effect here before the deal and at the host after it: the host
    dealt from the left seat's share too, which we hold. Only seats gone
    from the round (by the table's votes, at their turn) may be added: a
    host cannot leave out a live seat's share, nor pick among many deals.
    """
    go = rs.go_pending
    if go is None or rs.joint is None or not rs.live <= rs.reveals.keys():
        return False
    if go.joint == rs.joint:
        return True
    if not _names_shares(table_id, rs, go.joint):
        return False
    if rs.me in rs.live:
        deal(rs, go.joint)
    else:
        rs.dealt(go.joint, None)
    return True


def _names_shares(table_id: bytes, rs: RoundState, joint: bytes) -> bool:
    """Whether ``joint`` is the joint value of the live seats' shares with those of
    some seats that left the round (whose shares we hold)."""
    gone = sorted(s for s in rs.reveals if s not in rs.live)
    for size in range(len(gone) + 1):
        for extra in combinations(gone, size):
            seats = sorted([*rs.live, *extra])
            if joint_value(table_id, rs.number, [rs.reveals[s] for s in seats]) == joint:
                return True
    return False


def go_check(table_id: bytes, rs: RoundState, *, catching_up: bool) -> GoCheck | None:
    """Whether the host's GO starts play; None while there is no GO (or no deal,
    or play has started already).

    Back from a crash or a split (``catching_up``), or with drop votes still
    out, a seat (maybe ours) may have been dropped in this shuffle and the
    host dealt from the others' shares, while we have not heard every vote
    yet (the host's came before its GO, the others' may come after): wait,
    and look again as the drop takes effect.
    """
    if rs.go_pending is None or rs.joint is None or rs.play_from is not None:
        return None
    if rs.go_pending.joint != rs.joint and not joint_of_live(table_id, rs):
        if catching_up or rs.drop_queue or any(
                votes for seat, votes in rs.drop_votes.items() if seat in rs.live):
            return GoCheck.WAIT
        return GoCheck.MISMATCH
    return GoCheck.START


#: Told when the host's GO names another joint value than ours.
VOID_HERE = "the host dealt from another joint value; round void"


def go(table_id: bytes, rs: RoundState, *, catching_up: bool, now: float,
       countdown: float) -> list[Effect] | None:
    """The host's GO, once we have dealt (:func:`go_check`): play starts after the
    countdown; nothing yet on a wait (the drop's effect looks again); on
    another joint value, the round is void here: None (``Steps.go`` says so,
    :data:`VOID_HERE`, and refuses the GO)."""
    check = go_check(table_id, rs, catching_up=catching_up)
    if check is None or check is GoCheck.WAIT:
        return []
    if check is GoCheck.MISMATCH:
        return None
    rs.counting_down(now + countdown)
    return [SetPhase(Phase.PLAYING), Emit(ev.RoundStarting(rs.number, countdown)),
            *start_due(rs, now)]


def start_due(rs: RoundState, now: float) -> list[Effect]:
    """Play starts once the GO's countdown has run (at once, with none): said once."""
    if rs.play_from is None or rs.started or now < rs.play_from:
        return []
    rs.play_started()
    return [Emit(ev.RoundStarted(rs.number))]
