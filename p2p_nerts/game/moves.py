"""Where a card can go, and whether a player is stuck.

Shared by the bots, the stuck vote and the UI's one-key "send", so that all
three agree on what a useful move is. A *productive* move is one that makes
irreversible progress (a card leaves the Nerts pile, the waste cycle or goes up
to a foundation) or a work-pile move that immediately enables one. Moving runs
back and forth is never productive, which is what makes "stuck" decidable.
"""

from __future__ import annotations

from functools import cache

from .cards import ACE, JOKER_RANK, STACK_BASES, make_face, stacks_on
from .foundations import FoundationLog
from .tableau import NERTS, WASTE, WORK0, WORK_PILES, Tableau, Target


def foundation_target(tab: Tableau, src: int, fnd: FoundationLog) -> Target | None:
    """A foundation move for the playable card of ``src``, or None."""
    card = tab.top(src)
    return None if card is None else card_target(tab, src, card, fnd)


def card_target(tab: Tableau, src: int, card: int, fnd: FoundationLog) -> Target | None:
    """A foundation move for ``card``, the playable card of ``src``, or None."""
    rank = card & 15
    if rank == ACE:
        return _up(src, card)
    if rank == JOKER_RANK:
        return _joker_target(tab, src, card, fnd)
    pile = fnd.pile_for(card & 63)
    return None if pile is None else _up(src, pile)


@cache
def _up(src: int, pile: int) -> Target:
    """Targets are immutable and there are few foundation moves: share them."""
    return Target(src, pile=pile)


def _joker_target(tab: Tableau, src: int, card: int, fnd: FoundationLog) -> Target | None:
    """Declare a joker as the lowest face a pile wants (a fixed joker: only its own face)."""
    fixed = tab.bound.get(card)
    options = sorted((face & 15, face) for face in fnd.wanted_faces()
                     if fixed is None or face == fixed)
    for _rank, face in options:
        pile = fnd.pile_for(face)
        if pile is not None:
            return Target(src, pile=pile, declared=face)
    if src == NERTS and fixed is None:
        return Target(src, pile=card, declared=make_face(0, ACE))
    return None


def work_target(tab: Tableau, src: int, *, allow_empty: bool = True) -> Target | None:
    """A work pile that takes the playable card of ``src`` (a built pile before an empty one)."""
    card = tab.top(src)
    if card is None:
        return None
    empty = None
    plain = not tab.jokers
    bases = STACK_BASES[card & 63]  # without jokers, _fits is stacks_on: a look-up here
    for dst, pile in enumerate(tab.work):
        if WORK0 + dst == src:
            continue
        if not pile:
            if empty is None:
                empty = dst
        elif pile[-1] & 63 in bases if plain else _fits(tab, card, pile):
            return _onto(src, dst)
    if allow_empty and empty is not None and src < WORK0:
        return _onto(src, empty)
    return None


@cache
def _onto(src: int, dst: int) -> Target:
    return Target(src, work=dst)


def best_target(tab: Tableau, src: int, fnd: FoundationLog) -> Target | None:
    """Where "send" puts the card of ``src``: a foundation first, else a work pile."""
    return foundation_target(tab, src, fnd) or work_target(tab, src)


def _fits(tab: Tableau, card: int, pile: list[int]) -> bool:
    if not tab.jokers:
        return stacks_on(card, pile[-1])
    below = tab.effective(pile[-1])
    above = tab.effective(card)
    if below is None or above is None:
        return tab.fits(card, pile)
    return above[0] == below[0] - 1 and above[1] != below[1]


def run_moves(tab: Tableau, fnd: FoundationLog) -> Target | None:
    """A work-pile run move that enables progress at once, or None.

    Moving the run from index ``i`` of pile A onto pile B is productive when it
    empties A while the Nerts pile or waste could use the space, or exposes a
    card that can go up to a foundation or take the Nerts top or waste top.
    """
    nerts_top, waste_top = tab.top(NERTS), tab.top(WASTE)
    plain = not tab.jokers
    work = tab.work
    for a in range(WORK_PILES):
        pile_a = work[a]
        if not pile_a:
            continue
        base, size = pile_a[0] & 15, len(pile_a)
        for b in range(WORK_PILES):
            onto = work[b]
            if a == b or not onto:
                continue
            if plain:  # pile A is a run: only its card one rank below B's top can lead
                top = onto[-1]
                i = base - (top & 15) + 1
                if not (0 <= i < size and stacks_on(pile_a[i], top)):
                    continue
            else:
                found = _joker_run_index(tab, pile_a, onto)
                if found is None:
                    continue
                i = found
            if i == 0:
                useful = nerts_top is not None or waste_top is not None
            else:
                exposed = pile_a[i - 1]
                useful = (
                    (exposed & 15 != JOKER_RANK and fnd.pile_for(exposed & 63) is not None)
                    or (nerts_top is not None and _fits(tab, nerts_top, pile_a[:i]))
                    or (waste_top is not None and _fits(tab, waste_top, pile_a[:i]))
                )
            if useful:
                return Target(WORK0 + a, work=b, index=i)
    return None


def _joker_run_index(tab: Tableau, pile: list[int], onto: list[int]) -> int | None:
    """The index in (non-empty) ``pile`` whose run would fit on ``onto``'s exposed card."""
    base = tab.effective(pile[0])
    top = tab.effective(onto[-1])
    if base is None or top is None or any(c & 15 == JOKER_RANK for c in pile):
        for i in range(len(pile)):
            if _fits(tab, pile[i], onto):
                return i
        return None
    i = base[0] - top[0] + 1
    if 0 <= i < len(pile) and tab.effective(pile[i]) == (top[0] - 1, top[1] ^ 1):
        return i
    return None


def cycle_cards(tab: Tableau) -> list[int]:
    """Every card that will be the waste top while turning through stock and waste.

    That is the waste top now, the tops of the rest of this pass, then those of
    one whole pass after the waste is turned over (every later pass repeats it).
    """
    step = tab.stock_turn
    rest = tab.stock[::-1]  # in the order they will be turned
    seen = tab.waste[-1:]
    seen += _group_tops(rest, step)
    seen += _group_tops(tab.waste + rest, step)
    return seen


def _group_tops(cards: list[int], step: int) -> list[int]:
    """The last card of each group of ``step`` turned together (a short group at the end)."""
    tops = cards[step - 1::step]
    if len(cards) % step:
        tops.append(cards[-1])
    return tops


def productive_move(tab: Tableau, fnd: FoundationLog) -> Target | None:
    """The first productive move available right now (no stock turn), or None."""
    for src in (NERTS, *range(WORK0, WORK0 + WORK_PILES), WASTE):
        target = foundation_target(tab, src, fnd)
        if target is not None:
            return target
    return (work_target(tab, NERTS) or work_target(tab, WASTE, allow_empty=not tab.nerts)
            or run_moves(tab, fnd))


def is_stuck(tab: Tableau, fnd: FoundationLog) -> bool:
    """No productive move now, nor for any card the waste cycle will show."""
    return productive_move(tab, fnd) is None and not cycle_helps(tab, fnd)


def move_in_hand(tab: Tableau) -> bool:
    """Whether the tableau alone shows a productive move, whatever the foundations
    hold: an ace on top of a pile (and from the Nerts pile, a joker not fixed
    yet) starts a foundation; a Nerts or waste card fits a work pile; a card
    the waste cycle will show is an ace or a joker or fits a work pile.

    Every such move makes :func:`is_stuck` false for any foundations, so a seat
    whose move log shows one where it voted stuck or rotated alone did so with
    a move in hand (the audit's check; an honest client only votes stuck).
    """
    for src in (NERTS, *range(WORK0, WORK0 + WORK_PILES), WASTE):
        card = tab.top(src)
        if card is not None and (card & 15 == ACE or (
                src == NERTS and card & 15 == JOKER_RANK and card not in tab.bound)):
            return True
    if work_target(tab, NERTS) or work_target(tab, WASTE, allow_empty=not tab.nerts):
        return True
    return any(card & 15 in (ACE, JOKER_RANK) or any(not pile or _fits(tab, card, pile)
                                                     for pile in tab.work)
               for card in set(cycle_cards(tab)))


def cycle_helps(tab: Tableau, fnd: FoundationLog) -> bool:
    """Whether a card the waste cycle will show could go up or onto a work pile."""
    for card in set(cycle_cards(tab)):
        if card & 15 == JOKER_RANK or card & 15 == ACE or fnd.pile_for(card & 63) is not None:
            return True
        if any(not pile or _fits(tab, card, pile) for pile in tab.work):
            return True
    return False


def perform(tab: Tableau, target: Target, key: tuple[int, int] | None = None) -> int | None:
    """Carry out a move on the tableau; for a foundation move return the card sent.

    A foundation move needs the play's ``key`` (Lamport time, seat): the caller
    then adds the play to the foundation log.
    """
    if target.pile is not None:
        if key is None:
            raise ValueError("a foundation move needs its play key")
        return tab.launch(target.src, key, target.pile, target.declared)
    if target.work is None:
        raise ValueError("a target names a foundation or a work pile")
    if target.slide:
        tab.slide_under(target.src, target.work)
    else:
        tab.move_to_work(target.src, target.work, target.index)
    return None
