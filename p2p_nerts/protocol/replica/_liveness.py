"""Liveness: who holds what, and what each seat shows. The marks a seat's ACK
names (how far it holds each author's chain), counted only once we hold what
that seat sent before saying so; the marks this replica states in its own
ACKs; and the public views of the tableaux, theirs and mine.

Functions over one round's state, which note what the seats say and show
through its own methods, and the authors' logs: the facade
signs the ACKs, and asks for the entries that a mark naming another entry
than ours leads to (a fork). What an ACK (or any ephemeral entry) tells of
its author's chain and of the others' is noted here too, on the logs.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from ..authors import AuthorLog
from ..clock import LamportClock
from ..envelope import GENESIS, Entry
from ..messages import Ack, AckMark, View
from ..proof import ForkProof
from ._base import VIEW_INTERVAL, Lead, view_of
from ._effects import Sign
from ._state import RoundState


def observe(clock: LamportClock, entry: Entry, seated: frozenset[bytes]) -> None:
    """My clock goes past ``entry``'s time if its author is seated: only seated
    players' times order the table, so a stranger cannot move my clock."""
    if entry.author in seated:
        clock.observe(entry.lamport)


def note_marks(rs: RoundState, seat: int, seq: int, log: AuthorLog,
               upto: tuple[AckMark, ...]) -> tuple[AckMark, ...]:
    """What ``seat`` says it holds (its ACK numbered ``seq``, ``log`` its chain),
    to check now: once we hold what it sent before saying so. Its DROP vote
    may be among what we miss, and the marks wait for it (``take_early_marks``).
    Only the marks of the round's seats; each is checked against the entry we
    hold under its number (:func:`take_marks`)."""
    marks = {author: mark for mark in upto
             if (author := rs.seat_of(mark.author)) is not None}
    if not received(rs, log, seq):
        rs.marks_wait(seat, seq, marks)
        return ()
    return tuple(marks.values())


def take_early_marks(rs: RoundState, seat: int, log: AuthorLog) -> tuple[AckMark, ...]:
    """The marks that waited for ``seat``'s earlier entries, if these are here now."""
    seq, marks = rs.early_marks[seat]
    if not received(rs, log, seq):
        return ()
    rs.marks_arrived(seat)
    return tuple(marks.values())


def received(rs: RoundState, log: AuthorLog, seq: int) -> bool:
    """Whether every entry this author sent in this round before its ``seq`` is here.

    Delivered, or held (waiting for the deal); an entry held for a later round
    means everything before it is here, however far ``seq`` goes on (a peer
    catching up hears ACKs from rounds it has not reached).
    """
    for s in range(log.delivered + 1, seq + 1):
        entry = log.held.get(s)
        if entry is None:
            return False
        if entry.round > rs.number:
            return True
    return True


def mark_of(key: bytes, log: AuthorLog, proof: ForkProof | None) -> AckMark:
    """How far I hold ``key``'s chain. For a proven equivocator (``proof``), only up
    to its fork: past that, peers hold different entries, and their marks would
    never count for one another (nor its entries before the fork be final)."""
    if proof is not None and log.delivered > proof.cut:
        return AckMark(key, proof.cut, log.id_at(proof.cut) or GENESIS)
    # (tuple.__new__ builds the same AckMark in C, as Ack.from_wire does: the
    # NamedTuple's own constructor is Python code, even compiled, and one mark
    # is built for every seat in every ACK I send.)
    return tuple.__new__(AckMark, (key, log.delivered, log.head))


def marks_for(keys: Iterable[bytes], authors: Mapping[bytes, AuthorLog],
              proven: Mapping[bytes, ForkProof]) -> tuple[AckMark, ...]:
    """My marks for these authors' chains, for an ACK (none for a chain I hold
    nothing of), in a canonical order."""
    return tuple(sorted(mark for k in keys if (log := authors.get(k)) is not None
                        and (mark := mark_of(k, log, proven.get(k))).seq))


def my_ack(seated: Iterable[bytes], rs: RoundState | None, prev_rs: RoundState | None,
           authors: Mapping[bytes, AuthorLog], proven: Mapping[bytes, ForkProof]) -> Ack:
    """My ACK: how far I hold the chain of every author seated now, in the
    round under way (``rs``) or in the round before (``prev_rs``).

    The last round's seats too: a peer still catching up on it (back from a
    crash) needs every live seat's word that it holds each entry, also from
    seats that have since left; this round's keys alone would never give it
    that, and it would wait forever.
    """
    keys = set(seated)
    if rs is not None:
        keys.update(rs.keys)
    if prev_rs is not None:
        keys.update(prev_rs.keys)
    return Ack(marks_for(keys, authors, proven))


def claimed(log: AuthorLog, entry: Entry, seated: Collection[bytes]) -> bool:
    """Note how far an ephemeral ``entry``'s author has signed (it names its head,
    ``prev``, and its number); True when a seated author names as its head under
    a number we hold another entry than ours: a lead to a fork."""
    if entry.prev == GENESIS:  # it has signed nothing yet (its seq is 1 all the same)
        return False
    log.note_claim(entry.seq)
    if entry.seq > log.delivered or entry.author not in seated:
        return False
    ours = log.id_at(entry.seq)
    return ours is not None and ours != entry.prev


def note_claims(upto: Iterable[AckMark], seated: Collection[bytes],
                authors: Mapping[bytes, AuthorLog]) -> Sequence[tuple[bytes, int]]:
    """A seated peer's marks: how far each author has sent, noted on the logs we
    hold, so that we ask others for what we lack (an author we have no link to).
    Seated authors we hold no log of come back, (key, seq), to be claimed
    (``Steps.claim``, which begins their chains). Only a seated peer's word
    counts: a stranger could otherwise send us asking for entries that never
    were."""
    unknown: list[tuple[bytes, int]] | None = None
    for mark in upto:
        log = authors.get(mark.author)
        if log is not None:
            log.note_claim(mark.seq)
        elif mark.author in seated:
            if unknown is None:
                unknown = []
            unknown.append((mark.author, mark.seq))
    return () if unknown is None else unknown


def heard_ack(rs: RoundState, seat: int, entry: Entry, log: AuthorLog,
              upto: tuple[AckMark, ...]) -> tuple[AckMark, ...]:
    """``seat``'s ACK (``log`` its chain): how far its author is, and the marks to
    count now (:func:`note_marks`). An ACK sent in a later round counts too: its
    author closed this round, and how far it is still counts here
    (``_order.none_of_round_held``). One overtaken by a later ACK of its seat says
    less than that one, and is not kept in its place: how far a seat is known to
    be (``Finality.known``) would go back, and what it held back would wait for
    the seat's next ACK to us, up to a heartbeat away."""
    if entry.round >= rs.number:
        rs.acked(seat, (entry.lamport, entry.seq))
    return note_marks(rs, seat, entry.seq, log, upto)


def acked(entry: Entry, upto: tuple[AckMark, ...], log: AuthorLog, rs: RoundState | None,
          seat: int | None, *, authors: Mapping[bytes, AuthorLog]) -> list[Lead] | None:
    """An ACK (``log`` its author's chain, ``seat`` its seat in ``rs``): how far its
    author has signed, and when; the marks to count (:func:`heard_ack`), and
    the leads to a fork they give (to follow: ``Forks.follow``)."""
    log.vouch(entry.seq, entry.lamport)
    return (take_marks(rs, seat, heard_ack(rs, seat, entry, log, upto), authors)
            if rs is not None and seat is not None else None)


def holds_from(upto: Iterable[AckMark], me: bytes, seq: int) -> bool:
    """Whether these marks hold my chain as far as ``seq`` (a newcomer holds the
    ROSTER that seated it: it may be dealt in)."""
    return any(m.author == me and m.seq >= seq for m in upto)


def answer_hello(key: bytes, authors: Mapping[bytes, AuthorLog],
                 proven: Mapping[bytes, ForkProof]) -> Sign:
    """A peer starting at this table may be back without its journal (``resume``):
    its own mark, if we hold entries of it, tells it where its chain ends here;
    no mark, that it has none."""
    return Sign(Ack(marks_for((key,), authors, proven)), to=key)


def take_view(rs: RoundState, seat: int, entry: Entry, view: View) -> None:
    """Keep ``seat``'s latest view of this round (views may come out of order)."""
    if entry.round == rs.number and entry.lamport >= rs.view_lamport.get(seat, 0):
        rs.view_taken(seat, view, entry.lamport)


def next_view(rs: RoundState, *, drawn: bool = True) -> float:
    """When :func:`view_due` next has a view to send: a changed tableau, once
    VIEW_INTERVAL has run since the last (inf: none until the tableau changes)."""
    tab = rs.tab
    if not drawn or tab is None or rs.end is not None:
        return float("inf")
    if (len(tab.log), len(tab.in_flight)) == rs.view_mark:
        return float("inf")
    return rs.view_sent_at + VIEW_INTERVAL


def view_due(rs: RoundState, now: float, *, drawn: bool = True) -> View | None:
    """My tableau's public view, to send now: at most every VIEW_INTERVAL, only
    once it changed, and not after the round's end.

    While no peer draws the tableaux (``drawn`` false: bots, headless seats)
    none is built or signed, and the last one sent is forgotten: the first
    peer to start drawing gets the tableau as it stands at the next tick,
    changed or not.
    """
    if not drawn:
        rs.views_unsent()
        return None
    tab = rs.tab
    if tab is None or rs.end is not None or now - rs.view_sent_at < VIEW_INTERVAL:
        return None
    mark = (len(tab.log), len(tab.in_flight))
    if mark == rs.view_mark:
        return None
    rs.view_sent(mark, now)
    return view_of(tab)


def take_marks(rs: RoundState, seat: int, upto: Iterable[AckMark],
               authors: Mapping[bytes, AuthorLog]) -> list[Lead]:
    """Count what ``seat`` says it holds, where it holds the very entries we hold.

    A mark counts towards finality only once it names the id of our own
    entry under that number: peers holding different entries of one
    author (it equivocated) then never count each other's, and the entry
    is never final anywhere. A mark for an entry we do not hold yet waits
    for it (:func:`recheck_marks`); one naming another entry than ours is a
    lead to a fork, returned.
    """
    leads: list[Lead] = []
    # What ``seat`` holds, once it holds anything: counting a mark keeps the same
    # dict (``RoundState.mark_counted``), so it is looked up again only until then.
    held = rs.marks.get(seat)
    for mark in upto:
        author = rs.seat_of(mark.author)
        if held is None:
            held = rs.marks.get(seat)
        if author is None or (held is not None and mark.seq <= held.get(author, 0)):
            continue
        log = authors.get(mark.author)
        if log is not None and not _check_mark(rs, seat, author, log, mark, leads):
            rs.mark_waits(author, seat, mark)
    return leads


def _check_mark(rs: RoundState, seat: int, author: int, log: AuthorLog, mark: AckMark,
                leads: list[Lead]) -> bool:
    """Count a mark if it names our own entry; False while we do not hold that one."""
    ours = log.chain_id(mark.seq)
    if ours is None:
        return False
    if ours == mark.head:
        rs.mark_counted(seat, author, mark.seq)
    else:
        leads.append(Lead(mark.author, mark.seq, rs.keys[seat]))
    return True


def recheck_marks(rs: RoundState, log: AuthorLog) -> list[Lead]:
    """Marks that waited for this author's entries: check those now held."""
    leads: list[Lead] = []
    author = rs.seat_of(log.key)
    waiting = rs.pending_marks.get(author) if author is not None else None
    if not waiting or author is None:
        return leads
    for seat, mark in list(waiting.items()):
        if _check_mark(rs, seat, author, log, mark, leads):
            rs.mark_checked(author, seat)
    return leads


def drained(rs: RoundState, log: AuthorLog,
            authors: Mapping[bytes, AuthorLog]) -> list[Lead] | None:
    """An author's entries were just delivered: count the marks that waited for
    them (its own ACK's, waiting for what it sent before; others', naming its
    entries); the leads to a fork they give, or None when no mark waited."""
    leads: list[Lead] | None = None
    if rs.early_marks:
        seat = rs.seat_of(log.key)
        if seat is not None and seat in rs.early_marks:
            leads = take_marks(rs, seat, take_early_marks(rs, seat, log), authors)
    if rs.pending_marks:
        more = recheck_marks(rs, log)
        leads = more if leads is None else leads + more
    return leads
