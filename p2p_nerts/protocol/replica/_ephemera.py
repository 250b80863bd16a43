"""The ephemeral side: what an entry that takes no number does here (an ACK, a
VIEW, a RESEND, a SNAPSHOT, a HELLO), and my marks going out.

Such an entry is acted on as it comes, not in its author's sequence. Each
names how far its author has signed and its head there: a gap to fill, or,
when the head is not the entry we hold under that number, a lead to a fork,
asked about before anything the entry says is acted on. An ACK tells how far
its author holds every chain, which my clock, a resume under way, pruning,
finality and a newcomer sitting down each wait for; a RESEND asks for entries,
answered within the asker's budget; the host's SNAPSHOT may bring back a peer
that missed forgotten rounds; a HELLO asks where the sender's own chain ends
here. My own ACKs say how far I hold: straight to a peer, or as the heartbeat.

``Ephemera`` keeps no state of its own, only the owners it reads and changes
(the chains and their resends, the seating, the proofs, the recovery, the
pruning, the heartbeats and my clock), as ``Steps`` does. What it decides
comes back as effects (``_effects``), or, for my ACK straight after a batch
received (a received play's path), as the ACK itself; the facade signs: my
ACKs, the RESENDs a lead to a fork asks, and the host's snapshot that an
answer below what we hold begins with, handed back here to be charged to the
asker's budget. A host's snapshot taken up goes on at once, through
``Steps.take_up``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...game.variants import Variants
from ..authors import AuthorLog
from ..clock import LamportClock
from ..envelope import Entry, EnvelopeError
from ..journal import Kind, Record
from ..messages import Ack, AckMark, Hello, Payload, Resend, Snapshot, View
from . import _liveness as liveness
from . import _recovery as recovery
from ._base import Lead
from ._catchup import Pruning
from ._effects import Counted, Effect, Resent, SignAck
from ._forks import Forks
from ._heartbeats import Heartbeats
from ._intake import Places
from ._recovery import Recovery
from ._seating import Seating
from ._state import RoundState
from ._steps import Steps


class Ephemera:
    """Where one table's replica decides what an ephemeral entry does and what my
    ACKs say: the parts of the table that never change (my key, the host's) and
    the owners it reads and changes."""

    def __init__(self, me: bytes, host_key: bytes, *, is_host: bool, clock: LamportClock,
                 places: Places, seating: Seating, forks: Forks, recovery: Recovery,
                 pruning: Pruning, beats: Heartbeats, steps: Steps,
                 signed: Callable[[Payload | None, bytes], bytes | None]) -> None:
        self.me = me
        self.host_key = host_key
        self.is_host = is_host
        self.clock = clock
        self.places = places
        self.seating = seating
        self.forks = forks
        self.recovery = recovery
        self.pruning = pruning
        self.beats = beats
        self.steps = steps
        self.signed = signed

    # ------------------------------------------------------------- arriving
    def take(self, entry: Entry, payload: Payload, log: AuthorLog | None,
             rs: RoundState | None, now: float) -> Sequence[Effect]:
        """An ephemeral ``entry`` (``payload``) from a key that may be heard, ``log``
        its chain (None: no room for one), the table's round being ``rs``, at ``now``.

        Its author is heard; how far it has signed is noted; a seated author
        that names as its head another entry than ours is asked about first
        (``Forks.follow``, carried out at once), and what the entry says comes
        after (:meth:`says`).
        """
        if log is None:
            raise EnvelopeError("too_many_authors")
        author = entry.author
        self.places.hear(author, now)
        if liveness.claimed(log, entry, self.seating.seated):  # its head is not ours
            # (My asks are ephemeral: signing them changes nothing of the round.)
            self.steps.apply(self.forks.follow(rs, (Lead(author, entry.seq, author),), now))
        return self.says(entry, payload, log, rs, now)

    def says(self, entry: Entry, payload: Payload, log: AuthorLog,
             rs: RoundState | None, now: float) -> Sequence[Effect]:
        """What an ephemeral entry says, acted on (``log``: its author's chain)."""
        author = entry.author
        match payload:
            case Ack(upto=upto):
                return self.heard_ack(entry, upto, log, rs, now)
            case View():
                seat = rs.seat_of(author) if rs is not None else None
                if rs is not None and seat is not None:
                    liveness.take_view(rs, seat, entry, payload)
            case Resend(author=about, from_seq=lo, to_seq=hi):
                return self.asked(author, about, lo, hi, rs, now)
            case Snapshot():
                offered = self.pruning.offered(entry, payload, host_key=self.host_key,
                                               is_host=self.is_host, authors=self.places.authors,
                                               number=rs.number if rs is not None else 0)
                if not isinstance(offered, Variants):
                    return offered
                steps = self.steps
                steps.apply([Record(Kind.ENTRY, entry.raw)])
                steps.take_up(payload, offered)
            case Hello():
                return (liveness.answer_hello(author, self.places.authors, self.forks.proven),)
        return ()

    def heard_ack(self, entry: Entry, upto: tuple[AckMark, ...], log: AuthorLog,
                  rs: RoundState | None, now: float) -> Sequence[Effect]:
        """A peer's ACK, in this order: my clock goes past it; a resume under way
        hears how far it holds my chain; a seated peer's marks tell pruning what
        it holds and each chain how far its author has sent (a seated author we
        keep no chain of is claimed); then its marks are counted
        (:meth:`count_marks`), after the claims, carried out at once (a mark naming
        a chain just claimed then waits for its entry; claims change nothing of
        the round)."""
        author = entry.author
        seated = self.seating.seated
        # Only what the journal holds moves my clock (the ACKs among ephemeral
        # entries): a restart replays it, and must come back at least as late as
        # every ACK I sent. And only a seated player's time, as every entry's.
        liveness.observe(self.clock, entry, seated)
        resume, steps = self.recovery.resume, self.steps
        if resume is not None and not self.recovery.restoring:
            mine = recovery.heard(resume, author, upto, self.me,
                                  author in seated or author == self.host_key, now)
            if mine is not None:
                steps.claim(self.me, mine)
        if author in seated:
            self.pruning.heard(author, upto)
            for key, seq in liveness.note_claims(upto, seated, self.places.authors):
                steps.claim(key, seq)
        return self.count_marks(entry, upto, log, rs, now)

    def count_marks(self, entry: Entry, upto: tuple[AckMark, ...], log: AuthorLog,
                    rs: RoundState | None, now: float) -> Sequence[Effect]:
        """An ACK's marks counted (``liveness.acked``: the leads to a fork they give
        are followed), then a newcomer that now holds the ROSTER that seated it
        is sitting down no more (``Seating.acked``)."""
        author = entry.author
        seat = rs.seat_of(author) if rs is not None else None
        leads = liveness.acked(entry, upto, log, rs, seat, authors=self.places.authors)
        self.seating.acked(author, upto)
        return self.forks.follow(rs, leads, now) if leads else ()  # (the common case: none)

    def asked(self, asker: bytes, author: bytes, lo: int, hi: int,
              rs: RoundState | None, now: float) -> Sequence[Effect]:
        """``asker``'s RESEND of ``author``'s entries ``lo`` to ``hi``: answered from the
        chain we keep (nothing, if we keep none). An ask from below what we still
        hold gets the host's snapshot first (``Resends.below_floor``), signed for
        it by the facade (``signed``) and handed back here. An asker that never
        held a place watches the table (``Places.watch``), and is answered on the
        budget all such askers share."""
        places = self.places
        seatless = not places.player(asker, self.seating.holds_place(asker, rs))
        if seatless:
            places.watch(asker)
        log = places.authors.get(author)
        if log is None:
            return ()
        floor = self.pruning.floor
        if not self.is_host or floor is None or not places.resends.below_floor(log, lo):
            floor = None
        return self.answer(asker, log, lo, hi, self.signed(floor, asker), seatless=seatless,
                           now=now)

    def answer(self, asker: bytes, log: AuthorLog, lo: int, hi: int, snapshot: bytes | None,
               *, seatless: bool, now: float) -> Sequence[Effect]:
        """The frames of ``log`` from ``lo`` to ``hi`` that answer ``asker`` within its
        budget (``Resends.answer``; ``seatless``: the one all askers that never held
        a place share); ``snapshot``: the host's, signed for it, goes first or
        nothing does. What the budget held back is counted, not told: the asker
        asks again."""
        budget = None if seatless else asker
        frames, held_back = self.places.resends.answer(budget, log, lo, hi, now, snapshot)
        resent = Resent(asker, frames)
        return (resent, Counted("resend_budget")) if held_back else (resent,)

    # ------------------------------------------------------------- my marks
    def ack(self, rs: RoundState | None, prev_rs: RoundState | None, to: bytes,
            now: float) -> Ack:
        """My ACK straight to ``to`` (an author right after its play,
        ``Heartbeats.owe``): how far I hold every chain (``liveness.my_ack``; this
        round's and the last round's seats too). It does the heartbeat's work
        for that peer (``Heartbeats.acked``; not while the journal is replayed).
        The facade signs it: on a received play's path, so no effect."""
        if not self.recovery.restoring:
            self.beats.acked(to, now)
        return self.my_ack(rs, prev_rs)

    def my_ack(self, rs: RoundState | None, prev_rs: RoundState | None) -> Ack:
        """How far I hold every chain (``liveness.my_ack``): the seated's, and this
        round's (``rs``) and the last round's (``prev_rs``) seats'."""
        return liveness.my_ack(self.seating.seated, rs, prev_rs, self.places.authors,
                               self.forks.proven)

    def beat(self, rs: RoundState | None, prev_rs: RoundState | None, now: float,
             interval: float) -> Sequence[Effect]:
        """My ACKs due by the clock (``Heartbeats.due``, the heartbeat going every
        ``interval``): the heartbeat, to every peer but those acked straight within
        the last one, or one of its own to each of those that had none for as long."""
        besides, singles = self.beats.due(now, interval)
        if besides is None and not singles:
            return ()
        ack = self.my_ack(rs, prev_rs)
        if besides is not None:
            return (SignAck(ack, besides=besides),)
        return [SignAck(ack, to=key) for key in singles]
