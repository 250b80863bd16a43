"""Steps: what one decision makes due next, done by direct calls.

A sub-machine often cannot finish a decision in one go: a round's close is
scored only once the VERDICTs before it are signed (and, being mine,
delivered to myself), a seat leaving makes the GO, a reveal, the deal or the
stuck rule due again, a FORK's turn in the total order convicts its author.
Each such next step is a method here, called where the step before it has
been carried out, so it reads the table as that left it. The sub-machines
stay pure deciders (a list of what to sign, journal, emit...); a method here
carries out what one decided (``apply``, the facade's) and calls the next
step itself. Nothing here signs, emits or changes the phase but through
``apply``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final, Protocol

from ...game.foundations import PlayKey
from ...game.variants import Variants
from .. import events as ev
from ..audit import AuditResult
from ..authors import AuthorLog
from ..envelope import Entry, EnvelopeError
from ..journal import snapshot_record
from ..messages import (
    Audit,
    Drop,
    Fork,
    MsgType,
    Nerts,
    Payload,
    Roster,
    Snapshot,
    Stuck,
    Summary,
)
from ..proof import ForkProof
from . import _catchup as catchup
from . import _closing as closing
from . import _drops as drops
from . import _forks as forks
from . import _lobby as lobby
from . import _rounds as rounds
from . import _shuffle as shuffle
from ._base import Lead, Phase
from ._catchup import Pruning
from ._effects import Effect, Emit, Reject, Sign, roster_told
from ._forks import Forks
from ._game import Game
from ._intake import TOO_LATE, Places, Stop
from ._order import Finality
from ._outbox import Outbox
from ._recovery import Recovery
from ._seating import Seating
from ._state import Ordered, RoundState, void

_FORK: Final = MsgType.FORK


class Live(Protocol):
    """The time of the call under way (the facade's)."""

    @property
    def now(self) -> float: ...


class Steps:
    """Where each next step of one table's replica is taken: the parts of the table
    that never change (its id, my key, whether I host), the owners whose state a
    step reads or keeps (``Seating``, ``Forks``, ``Recovery``, ``Pruning``,
    ``Places``, ``Outbox``, ``Finality``), the game as it stands and
    changes (``Game``: the phase, round, match and totals), the time (``live``),
    and the facade's ``apply``, which carries out what a sub-machine decided, and
    ``drain``, which delivers what every author has held back."""

    def __init__(self, table_id: bytes, me: bytes, *, is_host: bool, rng: Callable[[int], bytes],
                 seating: Seating, forks: Forks, recovery: Recovery, pruning: Pruning,
                 places: Places, outbox: Outbox, order: Finality,
                 game: Game, live: Live, apply: Callable[[Iterable[Effect]], None],
                 drain: Callable[[], None]) -> None:
        self.table_id = table_id
        self.me = me
        self.is_host = is_host
        self.rng = rng
        self.seating = seating
        self.forks = forks
        self.recovery = recovery
        self.pruning = pruning
        self.places = places
        self.outbox = outbox
        self.order = order
        self.game = game
        self.live = live
        self.apply = apply
        self.drain = drain

    def table(self, current: RoundState | None, phase: Phase) -> lobby.Table:
        """The table as the lobby reads it, its round being ``current`` in ``phase``
        (``Seating.table``; the keys proven to fork are never seated again)."""
        return self.seating.table(phase, current.number if current is not None else 0,
                                  self.forks.proven.keys())

    # ------------------------------------------------------------ beginning
    def begin(self, number: int, note: bool = True) -> None:
        """Round ``number`` begins with the seats as they are (``rounds.begin``);
        ``note``: first journal the table as it stands, where a compacted journal
        will start, and forget what every seat holds of older rounds
        (``Pruning.begin``; not when the round begins from a snapshot, which is
        that note). Then my COMMIT, if I sit in it, and the round's entries that
        arrived early."""
        game, seating, me, now = self.game, self.seating, self.me, self.live.now
        current, match, totals = game.rs, game.match, game.totals
        over = game.phase is Phase.OVER
        if note:
            snapshot = catchup.capture(
                number, over=over, seats=seating.seats, settings=seating.settings,
                totals=totals, rounds=match.rounds if match is not None else 0,
                authors=self.places.authors,
                player=lambda key: self.places.player(key, seating.holds_place(key, current)))
            self.apply([snapshot_record(snapshot)])
            self.places.forget_before(self.pruning.begin(snapshot, me))
        rs, totals, match = rounds.begin(number, seating.seats, me, seating.variants, now,
                                         totals=totals, match=match, over=over)
        # Nobody is ready for a next deal yet, no lead was asked about in it, and
        # its seats are heard from now on.
        seating.new_round()
        self.forks.new_round()
        game.begin_round(rs, totals, match)
        self.places.heard_all(rs.keys, now)
        if rs.me is not None:
            self.apply(rounds.commit(rs, self.recovery.take_secrets(rs.number), self.rng))
        self.drain()  # what arrived early may be delivered now

    def take_up(self, snapshot: Snapshot, variants: Variants) -> None:
        """Go on from the host's snapshot, or my own note that a compacted journal
        starts with: every chain held as far as its heads, while the seats are
        still the old ones, and my clock past the seated authors' (what I sign
        next comes after); the rules, seats and game as it gives them
        (``Pruning.take_up``), and its players heard. Then act on nothing of a
        round before every live peer was heard and every gap filled
        (``Recovery.heard_out``); its round begins as it did for everyone, and
        the seats are told."""
        places, me = self.places, self.me
        seated = frozenset(seat.key for seat in snapshot.seats)
        places.take_heads(snapshot.heads, self.holds_place)
        self.outbox.caught_up(places.authors.get(me), snapshot.heads, seated | {me})
        self.seating.set_rules(variants, snapshot.settings)
        self.seating.seats = snapshot.seats
        self.game.take_standing(*self.pruning.take_up(snapshot, variants))
        places.admit(seated | {head.author for head in snapshot.heads})
        self.recovery.catch_up()
        self.begin(snapshot.round, note=False)
        self.apply([roster_told(snapshot.seats, me)])

    def lobby_entry(self, entry: Entry, payload: Payload) -> None:
        """A lobby entry (or a GOODBYE), delivered in its author's sequence: what it
        does to the table as it stands (``lobby.delivered``); a ROSTER may begin a
        round, a GOODBYE leave one (``drops.goodbye``, once the lobby has given
        its place up)."""
        game = self.game
        rs, phase = game.rs, game.phase
        done = lobby.delivered(self.table(rs, phase), entry, payload, rs)
        if isinstance(done, lobby.Seated):
            self.seating.seats = done.seats
            if done.begins:
                self.begin(entry.round)
            self.apply([done.told])
        elif isinstance(done, lobby.Ruled):
            self.seating.set_rules(done.variants, done.settings)
            self.apply([done.told])
        elif isinstance(done, lobby.Gone):
            self.lobbied(done.left)
            self.apply(drops.goodbye(rs, entry.author, done.reason, entry.seq,
                                     entry.lamport, signed_in=entry.round,
                                     phase=game.phase, authors=self.places.authors))
        elif isinstance(done, list):
            self.apply(done)
        else:
            self.lobbied(done)

    def lobbied(self, done: lobby.Lobbied) -> None:
        """Carry out a lobby decision about the seating's lists (``Seating``'s), then
        sign or tell what follows it."""
        seating = self.seating
        if isinstance(done, lobby.Joined):
            seating.joined(done.key, done.name, in_line=done.in_line, waits=done.waits)
            self.apply(done.then)
        elif isinstance(done, lobby.Left):
            seating.left(done.key, unqueue=done.unqueue)
            self.apply(done.then)
        else:
            seating.readied(done.key, done.on)
            self.apply([done.told])

    # -------------------------------------------------------- the shuffle
    def go(self, rs: RoundState) -> None:
        """The host's GO looked at again (``shuffle.go``): the deal just changed. One
        that names another deal is told, then refused (raised up to the entry
        being delivered)."""
        started = shuffle.go(self.table_id, rs, catching_up=self.recovery.catching_up,
                             now=self.live.now, countdown=self.seating.countdown)
        if started is None:
            self.apply([Emit(ev.Notice(shuffle.VOID_HERE))])
            raise EnvelopeError("go_mismatch")
        self.apply(started)

    def reveal(self, rs: RoundState) -> None:
        """My REVEAL for ``rs``, if it is due now (``shuffle.reveal``)."""
        self.apply(shuffle.reveal(rs))

    def deal(self, rs: RoundState) -> None:
        """Deal ``rs`` if every live share is in now (``shuffle.deal_now``): the host
        signs its GO, which is looked at, then what waited for the deal."""
        dealt = shuffle.deal_now(self.table_id, rs, is_host=self.is_host)
        if dealt is None:
            return
        self.apply(dealt)
        self.go(rs)
        # Plays that overtook the last REVEAL wait for the deal; if nothing else
        # comes from their authors (a peer catching up, whose resends are all
        # in), only this wakes them.
        self.drain()

    # ------------------------------------------------------- a round entry
    def after(self, rs: RoundState, step: rounds.Look | rounds.Proven | rounds.Tell
              | rounds.Cheat) -> None:
        """What follows a round entry taken in (a step of ``rounds.take`` other than a
        play added, which the facade tells at once); a cheat is flagged, then
        refused (raised at the point that delivered it)."""
        if step is rounds.Look.REVEAL:
            self.reveal(rs)
        elif step is rounds.Look.DEAL:
            self.deal(rs)
        elif step is rounds.Look.GO:
            self.go(rs)
        elif step is rounds.Look.TALLY:
            self.count_votes(rs)
        elif isinstance(step, rounds.Proven):
            self.prove(self.game.rs, step.proof, publish=False)
        elif isinstance(step, rounds.Tell):
            self.apply([Emit(ev.Notice(step.text))])
        elif isinstance(step, rounds.Cheat):
            self.apply(closing.flag(rs, step.seat, step.reason))
            raise EnvelopeError(step.error)

    def count_votes(self, rs: RoundState, before: PlayKey | None = None) -> None:
        """Count the DROP votes of ``rs`` now due (``drops.count``; ``before``: only
        those ordered before it), and fetch the victims' entries a deciding vote
        waits for."""
        order = self.order
        for key, cut in drops.count(rs, rs.seat_of(self.seating.host_key),
                                    lambda seat: order.known(rs, seat), self.chain, before):
            self.claim(key, cut)

    def claim(self, key: bytes, seq: int) -> None:
        """Someone holds ``key``'s entries up to ``seq``: fetch those we lack
        (``Places.claim``, its chain begun if new)."""
        self.places.claim(key, seq, self.holds_place)

    def chain(self, key: bytes) -> AuthorLog | None:
        """``key``'s chain, begun if new (``Places.chain``); None: no room."""
        return self.places.chain(key, self.holds_place)

    def holds_place(self, key: bytes) -> bool:
        """Whether ``key`` has a place at the table now (``Seating.holds_place``)."""
        return self.seating.holds_place(key, self.game.rs)

    def flag_key(self, key: bytes, reason: str) -> None:
        """Flag ``key``'s seat in the round, if it has one (``closing.flag_key``): it
        signed what no honest peer signs."""
        self.apply(closing.flag_key(self.game.rs, key, reason))

    def follow(self, leads: Iterable[Lead]) -> None:
        """Ask for the entries these leads name, as often as ``Forks`` allows: the
        answer, a second entry under one number, proves a fork."""
        self.apply(self.forks.follow(self.game.rs, leads, self.live.now))

    # --------------------------------------------------------------- forks
    def conflicted(self, known: bytes, entry: Entry, via: bytes | None) -> None:
        """Two entries of one author under one number (``forks.conflict``): hold the
        proof, or follow the lead to one."""
        found = forks.conflict(known, entry, via)
        if isinstance(found, ForkProof):
            self.prove(self.game.rs, found)
        elif found is not None:
            self.follow((found,))

    def prove(self, rs: RoundState | None, proof: ForkProof, *, publish: bool = True) -> None:
        """Hold a checked proof (``Forks.hold``): take out the author's disputed
        entries, and tell everyone, once, while a round is under way (not for a
        proof told already, by a FORK entry: ``publish`` False)."""
        held = self.forks.hold(rs, proof)
        if rs is None or held is None:
            return
        publishes = (publish and held.first and held.seat != rs.me and rs.me in rs.live
                     and self.game.phase in (Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING))
        self.cut_after(rs, held.seat, proof.cut)
        if publishes:
            self.apply([Sign(Fork(proof.first, proof.second))])

    def convict(self, rs: RoundState, item: Ordered) -> None:
        """A FORK's turn in ``rs``'s total order (``forks.convict``): its accused, flagged
        with the proof, leaves the round there."""
        assert isinstance(item.payload, Fork)
        convicted = forks.convict(rs, item.payload)
        if convicted is None:
            return
        self.apply([forks.flagged(rs, item.payload, convicted)])
        self.leave(rs, convicted.seat, convicted.cut, (item.lamport, item.seat))

    # ------------------------------------------------------- the total order
    def turn(self, rs: RoundState, item: Ordered) -> None:
        """What ``item``, a round entry other than a play (``order.play_turn``), does
        at its turn in ``rs``'s total order.

        Past its author's agreed cut it never counts. An AUDIT or SUMMARY counts
        here, where the drops that may take it back out are ordered too: the
        round is scored and closed at one point of the order. A stuck vote or
        Nerts call after the round's end does nothing.
        """
        if void(rs, item):
            return
        payload, at = item.payload, (item.lamport, item.seat)
        if isinstance(payload, Drop):
            victim = rs.seat_of(payload.who)
            assert victim is not None
            self.leave(rs, victim, payload.upto, at)
        elif item.kind == _FORK:
            self.convict(rs, item)
        elif isinstance(payload, Audit):
            rs.audit_counted(item.seat, payload)
            self.score(rs)
        elif isinstance(payload, Summary):
            rs.summary_counted(item.seat, payload)
            self.close(rs)
        elif rs.end is not None:
            pass
        elif isinstance(payload, Stuck):
            self.stuck_final(rs, item.seat, payload.on, at)
        elif isinstance(payload, Nerts):
            rs.nerts_at(at)
            self.apply([Emit(ev.NertsCalled(item.seat, rs.names[item.seat]))])
            self.end_round(rs, "nerts", at)

    # ----------------------------------------------------- a seat leaving
    def leave(self, rs: RoundState, victim: int, cut: int, at: PlayKey) -> None:
        """``victim`` leaves ``rs``'s live seats at ``at`` in the total order, counting
        up to ``cut`` (``drops.leave``). What waited for the seat may be due now:
        the host's GO, my REVEAL or the deal, scoring, the close, and the stuck
        rule, if every seat left is stuck (all read as the seat leaves)."""
        left = drops.leave(rs, victim, self.live.now)
        if left.go_again and shuffle.joint_of_live(self.table_id, rs):
            self.go(rs)  # the GO may name the deal of the seats left now
        self.cut_after(rs, victim, cut)
        self.apply([Emit(ev.PeerDropped(victim, rs.names[victim]))])
        self.reveal(rs)
        self.deal(rs)
        self.score(rs)
        self.close(rs)
        # (Nothing before it ends the round or changes a vote: those happen at turns.)
        if left.all_stuck is not None:
            self.stuck_final(rs, left.all_stuck, True, at)

    def cut_after(self, rs: RoundState, seat: int, cut: int) -> None:
        """Take back out what ``seat`` sent past ``cut`` in ``rs`` (``drops.cut_after``),
        and, while the round is scoring, a result reckoned with it: it scores again
        (``closing.unscore``)."""
        game = self.game
        scoring = rs is game.rs and game.phase is Phase.SCORING
        if drops.cut_after(rs, seat, cut, scoring=scoring):
            closing.unscore(rs, game)

    def stuck_final(self, rs: RoundState, seat: int, on: bool, key: PlayKey | None) -> None:
        """``seat``'s stuck vote (``on``) takes effect at ``key`` in the total order
        (``rounds.stuck_final``): every live seat stuck rotates, or ends the round."""
        told, deadlock = rounds.stuck_final(rs, seat, on, key)
        self.apply(told)
        if deadlock:
            self.end_round(rs, "deadlock", key)

    # ------------------------------------------------------ a round's close
    def end_round(self, rs: RoundState, how: str, cutoff: PlayKey | None) -> None:
        """``rs`` ends (``how``: a Nerts call, a deadlock), its foundations cut off at
        ``cutoff`` in the total order (``closing.end_round``); then it is scored, if
        every audit is in."""
        self.apply(closing.end_round(rs, how, cutoff, self.live.now))
        self.score(rs)

    def score(self, rs: RoundState) -> None:
        """Score ``rs`` if it is due now (``closing.verdicts``): the VERDICTs on the
        failed audits signed first, then the round reckoned with them."""
        if not closing.score_due(rs):
            return
        gone = closing.forked(rs)
        outcomes = closing.audits(rs, gone)
        self.apply(closing.verdicts(rs, outcomes))
        self.reckon(rs, outcomes, frozenset(gone))

    def reckon(self, rs: RoundState, outcomes: dict[int, AuditResult],
               gone: frozenset[int]) -> None:
        """Score ``rs`` from its audits replayed (``outcomes``; ``gone``: seats out for a
        proven fork), added to the game (``closing.scored``); then it may close."""
        self.apply(closing.scored(rs, self.game, outcomes, gone))
        self.close(rs)

    def close(self, rs: RoundState) -> None:
        """Close ``rs`` if it is due now (``closing.close``); the host then seats the
        table for the next round (``lobby.closing_roster``: the waiting list
        cleared, the ROSTER signed, then the newcomers it seats noted against it)
        and, as the game goes on,
        says when it deals that round by itself."""
        game, seating = self.game, self.seating
        closed = closing.close(rs, game.match, game.phase)
        if not closed:
            return
        self.apply(closed)
        if self.is_host and game.phase is Phase.BETWEEN:
            seating.round_closed(self.live.now)
        # The host's SETTINGS and ROSTER for the next round may have waited for
        # this close: deliver whatever was held back.
        self.drain()
        if self.is_host:
            reseated = lobby.closing_roster(self.table(game.rs, game.phase), rs)
            seating.waiting_seated()
            if reseated.seats is not None:
                self.apply([Sign(Roster(reseated.seats))])
                seating.sitting_down_since(reseated.newcomers, self.outbox.seq)

    # ------------------------------------------------------------ intake
    def stopped(self, log: AuthorLog, stop: Stop) -> None:
        """An author's next entry was taken out undelivered (``intake.next_held``):
        refuse it, and flag its author; or, for a broken chain, ask everyone for
        the entry before, and whoever holds the other branch answers with a second
        entry under that number (:meth:`conflicted`)."""
        lead = Lead(log.key, log.delivered, None)
        self.apply([Reject(stop.reason)])
        if stop.flag is not None:
            self.flag_key(log.key, stop.flag)
        else:
            self.follow((lead,))

    def refused(self, author: bytes, reason: str) -> None:
        """A signed entry delivered that breaks the rules (``reason``): it takes its
        sequence slot, so that the author's later entries are not blocked, and
        changes nothing else. Its author is flagged, as honest peers never sign
        one, unless an honest one did, only too late (``intake.TOO_LATE``)."""
        self.apply([Reject(reason)])
        if reason not in TOO_LATE:
            self.flag_key(author, f"sent an invalid entry ({reason})")
