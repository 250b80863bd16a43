"""Drops: when a seat counts as silent and my vote on it is due, how DROP votes
are tallied, whether an agreed drop stands, and what a drop takes back out.

Functions over one round's state, which change it through its own methods
(``RoundState``): the tally's part (the queue of votes, the votes counted,
the agreed cuts), my votes, the seats leaving. An agreed drop joins the
total order there, and takes effect at its turn. What else a vote, a GOODBYE
or a drop's effect asks for comes back as effects (``_effects``): my DROP
votes to sign, the user told; the entries a vote waits for come back as
(key, seq) pairs to fetch (``Steps.count_votes``); what a seat gone may make
due in the shuffle and the round's close is taken by ``Steps.leave``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from ...game.foundations import PlayKey
from .. import events as ev
from ..authors import AuthorLog
from ..messages import Drop, MsgType
from ._base import IN_ROUND, SIT_OUT, Phase
from ._effects import Effect, Emit, Sign
from ._state import Ordered, RoundState


@dataclass(frozen=True, slots=True)
class Left:
    """What a seat leaving makes due, read as it leaves: the host's GO looked at
    again (``go_again``: it waits, and play has not started), and the stuck rule
    (``all_stuck``: the lowest live seat, every one left being stuck; else None)."""

    go_again: bool
    all_stuck: int | None


@dataclass(frozen=True, slots=True)
class Fetch:
    """The vote that completes a drop waits until we hold ``victim``'s entries up
    to ``cut``: whether the drop stands is judged from the same entries everywhere."""

    victim: int
    cut: int


@dataclass(frozen=True, slots=True)
class Agreed:
    """``victim``'s drop is agreed, cut at ``cut``; it takes effect at the deciding
    vote's place in the total order (its Lamport time, voter and seq)."""

    victim: int
    cut: int
    lamport: int
    voter: int
    seq: int


def tally(rs: RoundState, host: int | None, known: Callable[[int], int],
          delivered: Callable[[int], int | None],
          before: PlayKey | None = None) -> list[Fetch | Agreed]:
    """Count DROP votes and withdrawals in (Lamport, voter) order, as they become due.

    Counted as they arrived, a vote and its withdrawal (a split healed) from
    one voter, and the others' votes, could meet in a different order on
    each peer: some would see every vote in at once and drop the seat, some
    never. In this order every peer sees the same. A vote is due once every
    seat still voting but its voter and victim has been heard past it
    (``known``: nothing earlier can still come); the victim's word is not
    needed, it is the silent one; nor another silent seat's, where the vote
    can complete no drop whatever that seat said (:func:`inert`). The vote
    that completes a drop waits until we hold the victim's entries up to the
    cut (``delivered``, None when we keep no log of it); then the drop is
    agreed, and takes effect at this vote's place in the total order
    (``host``, the host's seat, decides whether it stands: :func:`drop_stands`).

    ``before``: count only the votes ordered before this place, that of an
    entry being delivered. Its author's time has moved on to it, and past it
    as far as its author's acks say, while the entry itself is not counted
    yet: a vote ordered after it must wait for it, or a DROP it is would be
    counted after later votes here and before them everywhere else.
    """
    decisions: list[Fetch | Agreed] = []
    queue = rs.drop_queue
    while queue:
        lamport, voter, victim, upto, seq = queue[0]
        if before is not None and (lamport, voter) >= before:
            break
        if seq > rs.dropping.get(voter, seq) or victim in rs.dropping:
            rs.drop_vote_done()  # past its voter's cut, or about a seat gone already
            continue
        voting = rs.live - rs.dropping.keys()
        gone = gone_before(rs, voting, lamport, voter)
        if voter in gone:  # a vote after its voter's own GOODBYE
            rs.drop_vote_done()
            continue
        unheard = {q for q in voting - gone if q != voter and known(q) < lamport}
        if unheard - {victim} and not inert(rs, voting - gone, voter, victim, unheard):
            break
        votes = rs.drop_votes.get(victim, {})
        cut = None if upto == 0 else drop_cut(rs, victim, votes | {voter: upto}, gone)
        if cut is not None:
            held = delivered(victim)
            if held is not None and held < cut:
                decisions.append(Fetch(victim, cut))  # ask for the rest; look again as it comes
                break
        rs.drop_vote_done()
        rs.drop_vote_counted(victim, voter, upto)  # upto 0: withdrawn, the seat heard again
        if upto == 0:
            continue
        if cut is not None and drop_stands(rs, victim, cut, host):
            rs.drop_agreed(victim, cut)
            decisions.append(Agreed(victim, cut, lamport, voter, seq))
    return decisions


def count(rs: RoundState, host: int | None, known: Callable[[int], int],
          log_of: Callable[[bytes], AuthorLog | None],
          before: PlayKey | None = None) -> list[tuple[bytes, int]]:
    """The votes now due counted (:func:`tally`, with how far ``log_of`` a seat's
    key has it delivered): an agreed drop joins the total order at its deciding
    vote's place (it takes effect at its turn: :func:`leave`). What comes back is
    the victims' entries the deciding vote waits for, to fetch: (key, up to
    which seq), for ``Places.claim``."""
    def delivered(seat: int) -> int | None:
        log = log_of(rs.keys[seat])
        return None if log is None else log.delivered

    fetches: list[tuple[bytes, int]] = []
    for decision in tally(rs, host, known, delivered, before):
        match decision:
            case Fetch(victim=victim, cut=cut):
                fetches.append((rs.keys[victim], cut))
            case Agreed(victim=victim, cut=cut, lamport=lamport, voter=voter, seq=seq):
                rs.await_turn(Ordered(lamport, voter, MsgType.DROP, Drop(rs.keys[victim], cut),
                                      seq))
    return fetches


def inert(rs: RoundState, voting: set[int], voter: int, victim: int,
          unheard: set[int]) -> bool:
    """Whether a vote (or withdrawal) can complete no drop, whatever the seats not
    heard past it yet (``unheard``) sent before it: then it is counted now.

    Waiting for every seat's word is what keeps the order the same everywhere,
    but a seat that fell silent gives it no more: a vote that waits on it
    would hold up the votes after it, those against that seat included, and
    the round would never end. The vote cannot complete ``victim``'s drop if
    a seat we have heard past it has no vote out against ``victim``, and that
    seat cannot leave the voting before it if some other seat we have heard
    has no vote out against it. Counted early or in its place, such a vote
    then changes nothing but its own line in the votes, and the vote that
    does complete a drop still waits for everyone's word.
    """
    heard = voting - unheard

    def voted_out(by: int, seat: int) -> bool:
        return rs.drop_votes.get(seat, {}).get(by, 0) > 0

    return any(not voted_out(w, victim) and any(not voted_out(s, w) for s in heard - {w})
               for w in heard - {voter, victim})


def gone_before(rs: RoundState, voting: set[int], lamport: int, voter: int) -> set[int]:
    """The seats still voting whose GOODBYE is ordered before a vote at (``lamport``,
    ``voter``): they have no say in it, nor in anything after it.

    Known alike wherever the vote is counted: a seat heard past the vote has
    all its entries before it here, and one not heard past it is known gone
    only from its GOODBYE itself (else the count waits for its word, as for
    any seat's). What such a seat signs after its GOODBYE, a vote or its
    withdrawal, counts for nothing, so its word ends there."""
    return {q for q, at in rs.left_at.items() if q in voting and (at, q) < (lamport, voter)}


def drop_cut(rs: RoundState, victim: int, votes: dict[int, int],
             gone: AbstractSet[int] = frozenset()) -> int | None:
    """The cut if every other seat still voting, but those ``gone`` by their
    GOODBYE (:func:`gone_before`), has voted ``victim`` out, else None."""
    voting = rs.live - rs.dropping.keys()
    voters = voting - {victim} - gone
    if victim not in voting or not voters or not voters <= votes.keys():
        return None  # (a seat alone has nobody to drop it)
    return max(votes[v] for v in voters)


def drop_stands(rs: RoundState, victim: int, cut: int, host: int | None) -> bool:
    """Whether an agreed cut drops the seat, judged from its entries up to the cut.

    Two seats that lose each other cannot tell a crash from a split: were
    each to drop the other, the table would play on as two. The senior
    seat (the host's, else the lower) plays on unless its GOODBYE is
    within the cut; the other waits for it to come back.

    Only the host (seat ``host``) says GO, so a round whose host is dropped
    before its GO counts could never start: the live seats would wait for a
    GO that can never come. Such a round waits for its host instead, as a
    table does.
    """
    voting = rs.live - rs.dropping.keys()
    if (len(voting) == 2 and victim == senior(host, voting)
            and not rs.left.get(victim, cut + 1) <= cut):
        return False
    if victim == host:
        return rs.go_seq is not None and rs.go_seq <= cut
    return True


def senior(host: int | None, seats: set[int]) -> int:
    """The seat that stays when the last two lose each other: the host's, else the lower."""
    return host if host is not None and host in seats else min(seats)


def silent(rs: RoundState, heard: float | None, now: float, drop_after: float) -> bool:
    """Not heard from for ``drop_after`` (``heard``: when it last was, if ever).

    Silence counts from the round's start: a seat out of touch during the
    last round (a split, a crash) gets the whole timeout in this one,
    rather than votes the moment it begins that are taken back as soon as
    it is heard.
    """
    return now - max(now if heard is None else heard, rs.begun) > drop_after


def withholding(rs: RoundState, seat: int, now: float, drop_after: float,
                others_silent: bool) -> bool:
    """A seat heard from but holding the round's end up: no AUDIT (or no SUMMARY)
    a whole ``drop_after`` after the round ended here. It is voted out as if
    silent, so a seat cannot keep its audit back and the round open forever.

    Not while another live seat is silent to me (``others_silent``): the seat
    may be waiting for that one's word to see the round end (its drop comes
    first, and the wait starts again when it takes effect); voted out
    together, each would need the other's vote and neither could go.
    """
    if rs.ended_at is None or now - rs.ended_at <= drop_after:
        return False
    if others_silent:
        return False
    # Sent is enough (``audit_seq``, ``summary_seq``): an AUDIT waiting for its turn
    # may wait on the very seat that holds the round up.
    return seat not in rs.audit_seq or (bool(rs.results) and seat not in rs.summary_seq)


def quiet(rs: RoundState, last_heard: Mapping[bytes, float], now: float,
          drop_after: float) -> set[int]:
    """The live seats but mine that are :func:`silent` to me."""
    return {seat for seat in rs.live if seat != rs.me and silent(
        rs, last_heard.get(rs.keys[seat]), now, drop_after)}


def my_vote(rs: RoundState, seat: int, quiet: set[int], now: float,
            drop_after: float) -> bool | None:
    """My vote on ``seat`` now: True to vote it out (silent, or withholding the
    round's end), False to take my vote back, None to leave things be.

    A seat back (a split healed) before the others agreed gets my vote back,
    or it would help drop the seat in some later split; not one agreed
    dropped already, nor one that said GOODBYE.
    """
    out = seat in quiet or withholding(rs, seat, now, drop_after,
                                       others_silent=bool(quiet - {seat}))
    if out and seat not in rs.my_drop_votes:
        return True
    if (not out and seat in rs.my_drop_votes and seat not in rs.dropping
            and seat not in rs.left):
        return False
    return None


def vote_out(rs: RoundState, seat: int, authors: Mapping[bytes, AuthorLog], *,
         again: bool = False) -> list[Effect]:
    """My DROP vote on ``seat``, cut where I hold its entries (``authors``); once,
    unless ``again`` (its GOODBYE came: a later cut that holds it)."""
    if rs.me is None or (seat in rs.my_drop_votes and not again):
        return []
    rs.i_vote_out(seat)
    log = authors.get(rs.keys[seat])
    # At least 1 (the host held its JOIN to seat it): 0 withdraws a vote.
    return [Sign(Drop(rs.keys[seat], max(1, log.delivered if log else 0)))]


def check(rs: RoundState, seat: int, quiet: set[int], now: float, drop_after: float,
          authors: Mapping[bytes, AuthorLog]) -> list[Effect]:
    """My vote on one live seat as things stand (:func:`my_vote`; ``quiet``: the
    seats silent to me, :func:`quiet`): signed, or taken back.

    One seat at a time: each vote I sign is counted at once, and may agree a
    drop that changes my vote on the next seat."""
    out = None if seat == rs.me else my_vote(rs, seat, quiet, now, drop_after)
    if out:
        return vote_out(rs, seat, authors)
    if out is False:
        rs.i_take_vote_back(seat)
        return [Sign(Drop(rs.keys[seat], 0))]
    return []


def silent_votes(rs: RoundState, last_heard: Mapping[bytes, float], now: float,
                 drop_after: float, authors: Mapping[bytes, AuthorLog]) -> Iterator[Effect]:
    """My votes on the live seats (:func:`check`), in seat order, on the seats
    :func:`quiet` to me as the call begins.

    Lazy, one seat at a time: the facade carries out each seat's vote (which
    may agree a drop) before the next seat is looked at. Nothing at all while
    no seat is silent, no vote of mine is out and no seat can be withholding
    the round's end (:func:`settled`): every tick of a round's play, mostly."""
    silent_now = quiet(rs, last_heard, now, drop_after)
    if settled(rs, silent_now, now, drop_after):
        return
    for seat in sorted(rs.live):
        yield from check(rs, seat, silent_now, now, drop_after, authors)


def settled(rs: RoundState, silent_now: set[int], now: float, drop_after: float) -> bool:
    """Whether :func:`my_vote` leaves every seat be (``silent_now``: the seats
    :func:`quiet` to me): no seat silent, none of my votes out to take back,
    and the round not ended for ``drop_after`` (:func:`withholding`)."""
    return not silent_now and not rs.my_drop_votes and (
        rs.ended_at is None or now - rs.ended_at <= drop_after)


def next_vote(rs: RoundState, last_heard: Mapping[bytes, float], now: float,
              drop_after: float) -> float:
    """When :func:`silent_votes` next has a vote to change: ``now`` if one would change
    now, else when the first live seat falls silent or withholds the round's
    end (inf: none can by time alone). A bound already passed is no deadline:
    the vote it allows waits on something else (another seat silent), which
    only a call changes.

    Asked after every call into the replica, so the common case goes in one
    walk over the seats: no vote of mine out, the round not ended, and the
    seat heard from longest ago (the first to fall silent) not silent yet, so
    none is (:func:`settled`): its silence's end is the deadline. Else every
    seat's vote is looked at (:func:`vote_deadline`)."""
    if not rs.my_drop_votes and rs.ended_at is None:
        oldest = float("inf")
        me, keys = rs.me, rs.keys
        for seat in rs.live:
            if seat != me:
                heard = last_heard.get(keys[seat])
                if heard is not None and heard < oldest:
                    oldest = heard
        if oldest == float("inf"):
            return oldest  # never heard: silence counts from a frame (silent())
        bound = silence_ends(rs, oldest, drop_after)
        if now < bound:
            return bound
    return vote_deadline(rs, quiet(rs, last_heard, now, drop_after), now, drop_after,
                         last_heard)


def vote_deadline(rs: RoundState, silent_now: set[int], now: float, drop_after: float,
                  last_heard: Mapping[bytes, float]) -> float:
    """:func:`next_vote` from every seat's vote (``silent_now``: the seats :func:`quiet`
    to me): ``now`` if :func:`my_vote` would change one, else the first bound
    still to come of a seat falling silent or withholding the round's end."""
    bounds: list[float] = []
    for seat in rs.live:
        if seat == rs.me:
            continue
        if my_vote(rs, seat, silent_now, now, drop_after) is not None:
            return now
        if seat in rs.my_drop_votes:
            continue  # already out by my vote: only a frame heard brings it back
        heard = last_heard.get(rs.keys[seat])
        if heard is not None:  # never heard: silence counts from a frame (silent())
            bounds.append(silence_ends(rs, heard, drop_after))
        if rs.ended_at is not None and (seat not in rs.audit_seq or (
                bool(rs.results) and seat not in rs.summary_seq)):
            bounds.append(rs.ended_at + drop_after)
    return min((b for b in bounds if b > now), default=float("inf"))


def silence_ends(rs: RoundState, heard: float, drop_after: float) -> float:
    """When a seat last heard at ``heard`` falls :func:`silent` (just after it)."""
    return max(heard, rs.begun) + drop_after


def goodbye(rs: RoundState | None, key: bytes, reason: str, seq: int, lamport: int, *,
            signed_in: int, phase: Phase, authors: Mapping[bytes, AuthorLog]) -> list[Effect]:
    """``key`` said GOODBYE (its entry ``seq``, at ``lamport``, signed in round
    ``signed_in``): told, if it has a seat in the round, unless it has signed more
    since (a host that left and came back with ``--resume``: a newcomer catching
    up on the round must not read that goodbye as news); one that sits the round
    out signs on, and is told. One signed in this round
    marks its seat as leaving it, on every peer alike (it waited for the round
    to begin here: ``intake.deliverable``); while the round is on, I vote the
    seat out, and again every seat that left before it and is still live.

    Again if I voted already: this vote's cut holds the GOODBYE, which lets
    even the senior of the last two seats go. And the others again: a seat
    that left has no say after its GOODBYE (:func:`tally`), but my earlier
    vote on a seat that left first may have come before this GOODBYE, when
    this seat still had one; two leaving in one round would otherwise each
    wait for the other's vote for ever."""
    seat = rs.seat_of(key) if rs is not None else None
    if rs is None or seat is None:
        return []
    sits_out = reason == SIT_OUT
    log = authors.get(key)
    back = log is not None and log.claimed > seq and not sits_out
    effects: list[Effect] = []
    if not back:
        effects.append(Emit(ev.Notice(f"{rs.names[seat]} left: {reason}")))
    if signed_in != rs.number:
        return effects
    rs.said_goodbye(seat, seq, lamport, sits_out=sits_out)
    if (seat in rs.live and phase in IN_ROUND and seat != rs.me
            and rs.me not in rs.left):
        for leaver in sorted(rs.left):  # (mine is not among them: I have not left)
            if leaver in rs.live and leaver not in rs.dropping:
                effects += vote_out(rs, leaver, authors, again=True)
    return effects


def leave(rs: RoundState, victim: int, now: float) -> Left:
    """``victim`` leaves the live seats (an agreed drop, or a proven fork), at its
    place in the total order: everything ordered before it was acted on with the
    seat live, everything after without it, on every peer alike. What it sent
    past its cut is taken back out next (:func:`cut_after`); what waited for the
    seat may be due now (:class:`Left`)."""
    rs.left_live(victim, now)
    stuck = rs.live and rs.end is None and all(rs.stuck[s] for s in rs.live)
    return Left(rs.go_pending is not None and rs.play_from is None,
                min(rs.live) if stuck else None)


def cut_after(rs: RoundState, victim: int, cut: int, *, scoring: bool) -> bool:
    """Undo what a dropped seat sent past ``cut`` (``RoundState.forget_after``): peers
    that heard such entries before the agreement take them back out, the dropped
    seat itself gets those cards back, so every replica ends with the same log
    and no card is lost. Whether, the round ``scoring``, a result reckoned with
    it must be taken back (``closing.unscore``)."""
    return rs.forget_after(victim, cut) and bool(rs.results) and scoring


def void_play(rs: RoundState, key: PlayKey) -> None:
    """A dropped seat's play past the agreed cut, at its turn in the total order:
    out of the round now, so that the plays ordered after it are judged without
    it, on every peer alike (the drop's effect, ordered later, takes out the
    rest: :func:`cut_after`)."""
    if key in rs.play_seq:
        rs.take_out(key)
