"""Ordering and finality: when an entry of the round can be acted on in the total
order, what a play does at its turn, and when my own play's fate is fixed
before that.

The queries read the round, every author's log (what has arrived from whom)
and my Lamport clock. The turns are taken one at a time, in (Lamport, seat)
order, identically on every peer (``Steps.turn``), each done before the next
is looked at, as what one does (a drop, the round's end) changes whether the
next is ready. A play that just becomes final, nearly every turn, comes back
as the event that tells it, and nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ...game.foundations import Fate, Play, PlayKey, before
from .. import events as ev
from ..authors import AuthorLog
from ..clock import LamportClock
from ..envelope import author_of
from ..messages import Drop, Fork, MsgType
from ..messages import Play as PlayMsg
from . import _drops as drops
from ._base import ORDERED_TYPES
from ._state import Ordered, RoundState, past_cut, void

# Read for every play, as Final constants: on Python 3.11 a member read off its
# enum class goes through the metaclass.
_STAY: Final = Fate.STAY
_CUT: Final = Fate.CUT
_PLAY: Final = MsgType.PLAY


class Finality:
    """Finality over one replica's logs and clock (it reads them as they change)."""

    def __init__(self, authors: dict[bytes, AuthorLog], clock: LamportClock,
                 resuming: Callable[[], bool] = lambda: False) -> None:
        self._authors = authors
        self._clock = clock
        #: Whether I am still learning where my own chain ends (back at a table).
        self._resuming = resuming

    def known(self, rs: RoundState, seat: int) -> int:
        """The Lamport time up to which everything from ``seat`` is here.

        Mine is my clock, but not while I learn where my chain ends: a journal
        that was behind lacks entries I signed, which the table holds and
        orders, so nothing of mine past the last I hold is known yet.
        """
        if seat == rs.me:
            if self._resuming():
                mine = self._authors.get(rs.keys[seat])
                return mine.lamport if mine is not None else 0
            return self._clock.time
        log = self._authors.get(rs.keys[seat])
        known = log.lamport if log else 0
        ack = rs.acks.get(seat)
        if ack is not None and log is not None and (
                ack[1] <= log.delivered or none_of_round_held(log, ack[1], rs.number)):
            known = max(known, ack[0])
        return known

    def final(self, rs: RoundState, lamport: int, author: int, seq: int,
               skip: int | None = None) -> bool:
        """Nothing ordered before ``item`` can still arrive, and no drop can cut it.

        Every other live seat has been heard at a Lamport time at or past it
        (its entries come in order, so nothing earlier from it is missing) *and*
        holds the entry itself (its acks say so, counted only once we hold the
        entries it sent before them) *and* has no vote out to drop the author
        whose cut falls short of it: then any drop of the author cuts at or
        past the entry, and the entry counts for good. No DROP vote ordered
        before the entry may still wait to be counted, nor any agreed drop to
        take effect (those gate it in ``rs.ordered``).

        A seat whose drop is agreed is not asked: we hold its entries up to
        the cut (the tally waited for them) and nothing later of it counts.
        """
        queue, dropping = rs.drop_queue, rs.dropping
        if queue and (before((queue[0][0], queue[0][1]), (lamport, author))
                      or any(victim == author for _l, _v, victim, _u, _s in queue)):
            return False
        cut = dropping.get(author)
        if cut is not None:
            if seq > cut:
                return False  # past an agreed cut: it never counts
        elif rs.drop_votes and may_be_cut(rs, author, seq):  # (no vote: nothing can cut it)
            return False
        # Not asked: the seat a FORK accuses (``skip``), proven equivocators whose
        # entries up to the fork we hold (silenced), and seats agreed dropped.
        # (Each seat is tested in turn: this is asked of every play, and sets
        # built for it would be most of its cost.)
        silenced = self.silenced(rs) if rs.forks else None
        marks, me = rs.marks, rs.me
        for q in rs.live:
            if q in (author, skip) or q in dropping or (silenced is not None and q in silenced):
                continue
            if self.known(rs, q) < lamport:
                return False
            # Agreed dropped: its entries up to the cut count whoever holds them
            # (no second drop can cut them again), so no seat's marks are asked.
            if cut is None and q != me:
                held = marks.get(q)
                if held is None or held.get(author, 0) < seq:
                    return False
        return True

    def silenced(self, rs: RoundState) -> set[int]:
        """Proven equivocators whose entries up to their fork we hold: nothing they
        can still send counts (it is past the fork), so finality waits on them no
        more, though they are live until their FORK's turn. (They keep signing,
        asking for their seat back, on a branch of their chain some peers cannot
        follow: waiting for their clock there would stall the round.)"""
        return {seat for seat, proof in rs.forks.items()
                if (log := self._authors.get(rs.keys[seat])) is not None
                and log.delivered >= proof.cut}

    def ready(self, rs: RoundState, item: Ordered) -> bool:
        """Whether the next item in the total order may be acted on now.

        An agreed drop takes effect at its vote's place once everything
        ordered before it has been: every seat still asked has been heard
        past it, and no vote ordered before it waits to be counted. A FORK
        needs no word from the seat it accuses: that seat could otherwise keep
        its own conviction from ever becoming final.
        """
        if item.kind == _PLAY and not rs.dropping:
            # Nearly every item: a play, with no drop agreed that could void it.
            return self.final(rs, item.lamport, item.seat, item.seq)
        if void(rs, item):
            return True
        if isinstance(item.payload, Fork):
            return self.final(rs, item.lamport, item.seat, item.seq,
                               rs.seat_of(author_of(item.payload.first)))
        if not isinstance(item.payload, Drop):
            return self.final(rs, item.lamport, item.seat, item.seq)
        queue = rs.drop_queue
        if queue and before((queue[0][0], queue[0][1]), (item.lamport, item.seat)):
            return False
        silenced = self.silenced(rs) if rs.forks else set()
        return all(self.known(rs, q) >= item.lamport for q in rs.live
                   if q not in rs.dropping and q not in silenced)

    def next_turn(self, rs: RoundState) -> Ordered | None:
        """Take the next item of the total order, if it may be acted on now
        (:meth:`ready`: ``Steps.turn`` does what it does); None while none is ready."""
        ordered = rs.ordered
        if not ordered or not self.ready(rs, ordered[0]):
            return None
        return rs.take_turn()

    def settle_early(self, rs: RoundState) -> list[ev.PlayFinal]:
        """My plays whose fate is fixed already (:meth:`settled_early`), settled: each
        told as it ended up."""
        keys = self.settled_early(rs)
        return [settle(rs, key) for key in keys] if keys else []

    def settled_early(self, rs: RoundState) -> list[PlayKey]:
        """My plays whose fate is fixed, to settle without waiting for the total order.

        A play's fate depends only on plays ordered before it; once those are
        all here and every live seat holds the play, it is decided, unless a
        Nerts call or stuck vote ordered before it is still waiting (it might
        cut the play). Counting and events for others stay in total order.
        """
        tab = rs.tab
        if tab is None or not tab.in_flight or rs.end is not None:
            return []
        settled: list[PlayKey] = []
        barrier = min((o for o in rs.ordered if o.kind != _PLAY), default=None)
        for key in sorted(tab.in_flight):
            if barrier is not None and before((barrier.lamport, barrier.seat), key):
                break
            seq = rs.play_seq.get(key)
            if seq is not None and self.final(rs, key[0], key[1], seq):
                if unsure_before(rs, key):
                    break
                settled.append(key)
        return settled


def play_turn(rs: RoundState, item: Ordered) -> ev.PlayFinal | None:
    """A play's turn in the total order (nearly every turn): past its author's
    agreed cut it leaves the round (``drops.void_play``); else how it ended up
    (:func:`play_final`). Every other entry's turn is ``Steps.turn``'s."""
    if past_cut(rs, item.seat, item.seq):  # (void, for a play)
        drops.void_play(rs, (item.lamport, item.seat))
        return None
    return play_final(rs, item)


def play_final(rs: RoundState, item: Ordered) -> ev.PlayFinal | None:
    """A play's turn: it counts for the stuck rule if it stayed; another seat's is
    told as it ended up, mine still in the air settles so. Mine the table gave
    back (my journal had lost it) leaves my tableau if it stayed."""
    key = (item.lamport, item.seat)
    fate, play = rs.log.outcome(key)
    if fate is _STAY:
        rs.card_stayed()
    if item.seat != rs.me:
        return final_event(rs, play, fate, mine=False)
    tab = rs.tab
    if tab is not None and key in tab.in_flight:
        return settle(rs, key)
    if tab is not None and fate is _STAY:
        assert isinstance(item.payload, PlayMsg)
        tab.forfeit(key, item.payload.card)
    return None


def settle(rs: RoundState, key: PlayKey) -> ev.PlayFinal:
    """My play in the air settles as the log says: how it ended up."""
    assert rs.tab is not None
    fate, play = rs.log.outcome(key)
    event = final_event(rs, play, fate, mine=True)
    rs.tab.settle(key, stayed=event.fate is _STAY)
    return event


def unsure_before(rs: RoundState, key: PlayKey) -> bool:
    """Whether another seat's play on my play's pile, ordered before it, may not
    be held alike by every live seat, or may yet be cut by its author's drop (so
    my play's fate is not settled yet)."""
    pile = rs.log.play(key).pile
    return any(o.kind == _PLAY and o.seat != rs.me and before((o.lamport, o.seat), key)
               and isinstance(o.payload, PlayMsg) and o.payload.pile == pile
               and (may_be_cut(rs, o.seat, o.seq)
                    or not all(q == rs.me or rs.marks.get(q, {}).get(o.seat, 0) >= o.seq
                               for q in rs.live if q != o.seat))
               for o in rs.ordered)


def may_be_cut(rs: RoundState, author: int, seq: int) -> bool:
    """Whether a drop of ``author`` could still cut its entry ``seq``: one agreed with
    a cut short of it (the entry goes out at its turn), a vote against it waiting
    to be counted, or a vote counted from a seat still voting that holds less of
    it. (A vote yet to come cannot: it is from a seat that holds the entry, by
    its acks, or it orders before the entry and is waited for.)"""
    if author in rs.dropping:
        return past_cut(rs, author, seq)
    # (Each is tested for being empty first: asked of every play, nearly always.)
    if rs.drop_queue and any(victim == author for _l, _v, victim, _u, _s in rs.drop_queue):
        return True
    votes = rs.drop_votes.get(author)
    if not votes:
        return False
    return any(0 < upto < seq for voter, upto in votes.items()
               if not rs.dropped(voter))


def final_event(rs: RoundState, play: Play, fate: Fate, *, mine: bool) -> ev.PlayFinal:
    """How ``play`` ended up (``fate``, as the log has it), for the seat that made it
    or anyone watching."""
    first, tie = None, False
    if fate is not _STAY:
        winner = rs.log.first_over(play.key)
        first = rs.names[winner.author] if winner else None
        if fate is _CUT:
            tie = rs.log.cutoff is not None and rs.log.cutoff[0] == play.lamport
        else:
            tie = (winner is not None and winner.lamport == play.lamport
                   and winner.face & 15 == play.face & 15)
    return ev.PlayFinal(rs.number, play, fate, mine, first, tie,
                        rs.end if fate is _CUT else None)


def none_of_round_held(log: AuthorLog, upto: int, number: int) -> bool:
    """Whether all of ``log``'s entries up to ``upto`` are here, none of those not
    delivered yet being one ordered in round ``number``.

    Some wait for this round's close (``intake.deliverable``): the host's
    ROSTER and SETTINGS for the next round, a RESULT signed as its author
    closed the game, and its author's entries after them. None is ordered in
    this round, so an ack sent after them still tells how far its author is:
    the close, which waits for every SUMMARY's turn, would otherwise wait for
    itself.
    """
    return all((entry := log.held.get(seq)) is not None
               and (entry.type not in ORDERED_TYPES or entry.round != number)
               for seq in range(log.delivered + 1, upto + 1))
