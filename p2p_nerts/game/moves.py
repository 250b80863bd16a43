"""Where a card can go, and whether a player is stuck.

Shared by the bots, the stuck vote and the UI's one-key "send", so that all
three agree on what a useful move is. A *productive* move is one that makes
irreversible progress (a card leaves the Nerts pile, the waste cycle or goes up
to a foundation) or a work-pile move that immediately enables one. Moving runs
back and forth is never productive, which is what makes "stuck" decidable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Final

from .cards import ACE, JOKER_RANK, STACK_BASES, SUIT_COLOR, make_face, stacks_on
from .foundations import FoundationLog
from .tableau import NERTS, WASTE, WORK0, WORK_PILES, IllegalMove, Tableau, Target


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
    """A joker goes up, unless its owner chose otherwise, as the first of its options."""
    options = joker_targets(tab, src, card, fnd)
    return options[0] if options else None


def joker_targets(tab: Tableau, src: int, card: int, fnd: FoundationLog) -> list[Target]:
    """Every card the joker ``card``, playable from ``src``, may go up as now.

    Each face some pile wants, lowest rank first, then an ace of each suit to
    start a pile of its own (from any source); a fixed joker only as its own face.
    """
    fixed = tab.bound.get(card)
    faces = sorted((face & 15, face) for face in fnd.wanted_faces()
                   if fixed is None or face == fixed)
    targets = [Target(src, pile=pile, declared=face) for _rank, face in faces
               if (pile := fnd.pile_for(face)) is not None]
    if fixed is None:
        targets += [Target(src, pile=card, declared=make_face(suit, ACE)) for suit in range(4)]
    return targets


def covered_jokers(tab: Tableau, target: Target) -> list[tuple[int, int]]:
    """The jokers a work-pile move would fix, each with the face it takes unless its
    owner declares the other suit of that colour (``Target.covers``); [] for a move
    that fixes none or cannot be made."""
    if target.work is None or not tab.jokers:
        return []
    pile = tab.work[target.work]
    if target.src >= WORK0 and not target.slide:
        run = tab.work[target.src - WORK0][target.index:]
    else:
        card = tab.top(target.src)
        run = [] if card is None else [card]
    if not run or not pile:
        return []
    try:
        return tab.fixes(run + pile if target.slide else pile + run)
    except IllegalMove:
        return []


def other_suit(face: int) -> int:
    """The same rank in the other suit of its colour (♠ and ♣, ♥ and ♦)."""
    return make_face(3 - (face >> 4), face & 15)


def work_target(tab: Tableau, src: int, *, allow_empty: bool = True) -> Target | None:
    """A work pile that takes the playable card of ``src`` (a built pile before an empty one)."""
    card = tab.top(src)
    return None if card is None else card_work_target(tab, src, card, allow_empty)


def card_work_target(tab: Tableau, src: int, card: int, allow_empty: bool) -> Target | None:
    """:func:`work_target` for ``card``, the playable card of ``src`` (a bot has it at hand)."""
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


def hand_to_work(tab: Tableau) -> Target | None:
    """The Nerts top onto a work pile, else the waste top (onto an empty pile only
    while the Nerts pile is empty: its top has the first claim on a space).

    That is ``work_target(tab, NERTS) or work_target(tab, WASTE, allow_empty=not
    tab.nerts)``: :func:`first_move` without the foundations and the run moves.
    """
    return first_move(tab, None, runs=False)


def first_move(tab: Tableau, fnd: FoundationLog | None, notice: Callable[[], float] | None = None,
               attention: float = 1.0, runs: bool = True) -> Target | None:
    """The first productive move in the order a player looks (no stock turn), or None.

    With ``fnd``: the Nerts top up to a foundation, each work-pile top, the waste
    top. Then :func:`hand_to_work`, then (``runs``) :func:`run_moves`.
    ``notice``: a bot's inattention, a draw in [0, 1) for each work pile with
    cards; it sees that pile's top go up only when the draw is below ``attention``.

    A bot looks on every step: one pass over the work piles answers for their
    tops going up, for the Nerts and waste tops going onto them and (without
    jokers) for the tops the run moves need, not one pass each; and without
    jokers, when no top takes a card of any pile's run, as on most steps, it
    rules out every run move at once (``_RUN_TAKERS``, by base and length).
    """
    nerts, waste = tab.nerts, tab.waste
    # card_target only for a card that might go up: an ace or a joker (rank ACE
    # or JOKER_RANK, 0) or a face some pile wants. Most cards a bot looks at go
    # nowhere, and this tells with one look-up, not two calls.
    wanting = _NO_WANTING if fnd is None else fnd.wanting
    if nerts and fnd is not None:
        card = nerts[-1]
        if ((card & 15 <= ACE or card & 63 in wanting)
                and (target := card_target(tab, NERTS, card, fnd))):
            return target
    plain = not tab.jokers
    nerts_bases = STACK_BASES[nerts[-1] & 63] if nerts and plain else _NO_BASES
    waste_bases = STACK_BASES[waste[-1] & 63] if waste and plain else _NO_BASES
    empty = onto_nerts = onto_waste = -1
    tops = takers = 0  # (for the run moves: see _plain_run_move)
    for dst, pile in enumerate(tab.work):
        if pile:
            card = pile[-1]
            if (fnd is not None and (notice is None or notice() < attention)
                    and (card & 15 <= ACE or card & 63 in wanting)
                    and (target := card_target(tab, WORK0 + dst, card, fnd))):
                return target
            if plain:
                face = card & 63
                if onto_nerts < 0 and face in nerts_bases:
                    onto_nerts = dst
                if onto_waste < 0 and face in waste_bases:
                    onto_waste = dst
                tops |= _TOP_BIT[face]
                takers |= _RUN_TAKERS[(pile[0] & 63) << 4 | len(pile)]
        elif empty < 0:
            empty = dst
    if waste and fnd is not None:
        card = waste[-1]
        if ((card & 15 <= ACE or card & 63 in wanting)
                and (target := card_target(tab, WASTE, card, fnd))):
            return target
    if not plain:
        target = card_work_target(tab, NERTS, nerts[-1], True) if nerts else None
        if target is None and waste:
            target = card_work_target(tab, WASTE, waste[-1], not nerts)
        return target if target is not None or fnd is None or not runs else run_moves(tab, fnd)
    if nerts and (onto_nerts >= 0 or empty >= 0):
        return _onto(NERTS, onto_nerts if onto_nerts >= 0 else empty)
    if onto_waste >= 0:
        return _onto(WASTE, onto_waste)
    if empty >= 0 and waste:
        return _onto(WASTE, empty)
    # (no top takes a card of any pile's run, most of the time: no run move then)
    if fnd is None or not runs or not tops & takers:
        return None
    return _plain_run_move(tab, fnd, tops)


_NO_BASES: Final[frozenset[int]] = frozenset()
_NO_WANTING: Final[Mapping[int, list[int]]] = {}


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
    work = tab.work
    if tab.jokers:
        nerts_top = tab.nerts[-1] if tab.nerts else None
        waste_top = tab.waste[-1] if tab.waste else None
        filled = [(n, pile) for n, pile in enumerate(work) if pile]
        for a, pile_a in filled:
            for b, onto in filled:
                if a != b:
                    i = _joker_run_index(tab, pile_a, onto)
                    if i is not None and _run_useful(tab, fnd, pile_a, i, nerts_top, waste_top):
                        return Target(WORK0 + a, work=b, index=i)
        return None
    # Without jokers pile A is a run, holding every rank from its base's down
    # to its top's: only its card one rank below B's top can go there, and that
    # rank is in A when B's top ranks above A's top and at most one above its
    # base. A bot asks on about half its actions and most of the time no pair
    # fits: the tops as bits (_TOP_BIT) against the tops that would take a card
    # of A (_RUN_TAKERS) rule out each A at once.
    tops = 0
    for pile in work:
        if pile:
            tops |= _TOP_BIT[pile[-1] & 63]
    return _plain_run_move(tab, fnd, tops)


def _plain_run_move(tab: Tableau, fnd: FoundationLog, tops: int) -> Target | None:
    """:func:`run_moves` without jokers, given the work-pile tops as ``_TOP_BIT`` bits."""
    work = tab.work
    nerts_top = tab.nerts[-1] if tab.nerts else None
    waste_top = tab.waste[-1] if tab.waste else None
    for a in range(WORK_PILES):
        pile_a = work[a]
        if not pile_a:
            continue
        over = (pile_a[0] & 15) + 1  # the rank a card must have to take A's base
        under = over - len(pile_a)  # the rank that takes A's top
        if not tops & _RUN_TAKERS[(pile_a[0] & 63) << 4 | len(pile_a)]:
            continue
        for b in range(WORK_PILES):
            onto = work[b]
            if a != b and onto and under < (rank := onto[-1] & 15) <= over:
                i = over - rank
                # (stacks_on(pile_a[i], onto[-1]), looked up here)
                if onto[-1] & 63 in STACK_BASES[pile_a[i] & 63] and _run_useful(
                        tab, fnd, pile_a, i, nerts_top, waste_top):
                    return Target(WORK0 + a, work=b, index=i)
    return None


def _top_bit(face: int) -> int:
    """A plain face as a bit: two a rank, its colour's bit above its rank's."""
    return 1 << (2 * (face & 15) + SUIT_COLOR[(face >> 4) & 3])


def _takers(face: int) -> int:
    """The tops (as :func:`_top_bit` bits) that take a card of a plain run whose
    base is ``face``: for each rank k below it, one rank above, other colour."""
    rank, color = face & 15, SUIT_COLOR[(face >> 4) & 3]
    bits = 0
    for k in range(1, rank + 1):  # the run's card of rank k has its colour every other rank
        bits |= 1 << (2 * (k + 1) + (1 ^ color ^ ((rank - k) & 1)))
    return bits


def _run_takers(base: int, cards: int) -> int:
    """The tops (as :func:`_top_bit` bits) that take a card of the plain run of
    ``cards`` cards from ``base``: :func:`_takers` without the ranks at or below
    its top's, those that take no card of it."""
    under = (base & 15) + 1 - cards  # the rank that takes the run's top
    return _takers(base) & -(1 << (2 * under + 2 if under >= 0 else 0))


_TOP_BIT: Final = tuple(_top_bit(face) for face in range(64))
_TAKERS: Final = tuple(_takers(face) for face in range(64))
#: _run_takers(base, cards) at ``(base & 63) << 4 | cards`` (a plain run holds 13 at most).
_RUN_TAKERS: Final = tuple(_run_takers(key >> 4, key & 15) for key in range(64 << 4))


def _run_useful(tab: Tableau, fnd: FoundationLog, pile: list[int], i: int,
                nerts_top: int | None, waste_top: int | None) -> bool:
    """Whether moving the run from index ``i`` of ``pile`` makes progress (see run_moves)."""
    if i == 0:
        return nerts_top is not None or waste_top is not None
    exposed = pile[i - 1]
    return ((exposed & 15 != JOKER_RANK and fnd.pile_for(exposed & 63) is not None)
            or (nerts_top is not None and _fits(tab, nerts_top, pile[:i]))
            or (waste_top is not None and _fits(tab, waste_top, pile[:i])))


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
    return first_move(tab, fnd)


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
        tab.slide_under(target.src, target.work, target.covers)
    else:
        tab.move_to_work(target.src, target.work, target.index, target.covers)
    return None
