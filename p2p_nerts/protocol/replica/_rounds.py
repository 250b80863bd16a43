"""A round's entries as they are delivered: what each records in the round, and
what the facade must look at next (a reveal, the deal, the GO, the drop tally,
scoring, closing); whether a PLAY is well formed for its seat; and a new
round's state.

Functions over one round's state, which they change through its own methods
(``RoundState``). A step comes back as a value, which
``Steps.after`` takes; the facade signs, tells the user and changes the
phase. An entry that no
honest author signs raises ``EnvelopeError`` (it takes its sequence slot and
changes nothing else).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ...game.cards import ACE, JOKER_RANK, KING, is_valid_card
from ...game.deadlock import AllStuck
from ...game.foundations import FoundationLog, Play, PlayKey
from ...game.scoring import Match
from ...game.tableau import SOURCES
from ...game.variants import Variants
from .. import events as ev
from ..envelope import Entry, EnvelopeError
from ..fairness import SECRET_LEN, commitment
from ..journal import secrets_record
from ..messages import (
    Audit,
    Commit,
    Drop,
    Fork,
    Go,
    Nerts,
    Payload,
    Result,
    Reveal,
    Seat,
    Stuck,
    Summary,
    Verdict,
)
from ..messages import Play as PlayMsg
from ..proof import ForkProof, check_fork
from ._effects import Effect, Emit, Sign
from ._state import Ordered, RoundState, index_of


class Look(Enum):
    """What may be due now that an entry is in."""

    NOTHING = "nothing"
    REVEAL = "reveal"  # every commitment may be in
    DEAL = "deal"  # every share may be revealed
    GO = "go"  # the host's GO may start play
    TALLY = "tally"  # a DROP vote may be due


#: A PLAY entered the foundation log (pending its turn in the total order). The
#: step is the very event the facade tells the user: one object per received
#: play, not two alike.
Added = ev.PlayAdded


@dataclass(frozen=True, slots=True)
class Proven:
    """A FORK's proof checked out: hold it (it is told already, by this entry)."""

    proof: ForkProof


@dataclass(frozen=True, slots=True)
class Tell:
    """Something for the user to read."""

    text: str


@dataclass(frozen=True, slots=True)
class Cheat:
    """An entry that proves its author (``seat``) cheated: flag it for ``reason``, and
    refuse the entry (``EnvelopeError(error)``)."""

    seat: int
    reason: str
    error: str


Step = Look | Added | Proven | Tell | Cheat


def check_play(rs: RoundState, seat: int, msg: PlayMsg) -> None:
    """Refuse a PLAY that no honest ``seat`` signs: a card not its own or not in the
    game, an unknown source, a joker's declared face out of range (or one
    declared for a plain card), or a pile that an ace does not start."""
    v = rs.variants
    card, pile, decl = msg.card, msg.pile, msg.decl
    if card >> 6 != seat or not is_valid_card(card, seats=len(rs.keys), jokers=v.jokers):
        raise EnvelopeError("bad_field:card")
    if msg.src not in SOURCES:
        raise EnvelopeError("bad_field:src")
    is_joker = card & 15 == JOKER_RANK
    if is_joker:
        if not ACE <= decl & 15 <= KING:
            raise EnvelopeError("bad_field:decl")
    elif decl != 0:
        raise EnvelopeError("bad_field:decl")
    face = decl if is_joker else card & 63
    starts = face & 15 == ACE
    if starts != (pile == card) or not is_valid_card(pile, seats=len(rs.keys),
                                                     jokers=v.jokers):
        raise EnvelopeError("bad_field:pile")


def new_round(number: int, seats: tuple[Seat, ...], me: bytes, variants: Variants,
              now: float) -> RoundState:
    """The state of round ``number`` as it begins, with these seats and rules."""
    keys = tuple(s.key for s in seats)
    return RoundState(
        number=number, keys=keys, names=tuple(s.name for s in seats),
        variants=variants, me=index_of(seats, me), live=set(range(len(keys))),
        log=FoundationLog(strict_ties=variants.strict_ties),
        stuck=[False] * len(keys), begun=now,
    )


def standing(keys: tuple[bytes, ...], variants: Variants, totals: dict[bytes, int],
             match: Match | None, *, over: bool) -> tuple[dict[bytes, int], Match]:
    """The game's totals as a round with these seats begins (none after a game
    over: a new game), and its match: each seat's total so far, the rounds
    played."""
    if over:
        totals = {}
    played = match.rounds if match is not None and totals else 0
    begun = Match.new(variants, len(keys))
    begun.totals = [totals.get(k, 0) for k in keys]
    begun.rounds = played
    return totals, begun


def begin(number: int, seats: tuple[Seat, ...], me: bytes, variants: Variants, now: float, *,
          totals: dict[bytes, int], match: Match | None,
          over: bool) -> tuple[RoundState, dict[bytes, int], Match]:
    """Round ``number`` begins with these seats and rules (``over``: after a game
    over, a new game): the round, and the game's totals and match as it begins
    (``Game.begin_round``; my COMMIT, if I sit in it, and the round's entries
    that arrived early follow: ``Steps.begin``)."""
    rs = new_round(number, seats, me, variants, now)
    kept, begun = standing(rs.keys, variants, totals, match, over=over)
    return rs, kept, begun


def commit(rs: RoundState, known: tuple[bytes, bytes] | None,
           rng: Callable[[int], bytes]) -> list[Effect]:
    """My deck secret and joint share for the round, and my COMMIT to them: the
    journal's (``known``: a round replayed deals again from the very same), or
    fresh ones, journaled before anything is signed with them."""
    effects: list[Effect] = []
    if known is None:
        known = (rng(SECRET_LEN), rng(SECRET_LEN))
        effects.append(secrets_record(rs.number, *known))
    rs.keep_secrets(*known)
    return [*effects, Sign(Commit(commitment(rs.deck_secret), commitment(rs.share)))]


def seat_for(rs: RoundState | None, entry: Entry) -> int:
    """The seat of a round entry's author, if the entry is for this round."""
    if rs is not None and entry.round < rs.number:
        # A vote or verdict sent while its author still waited on the round
        # we have closed (or a dropped seat's): honest, only too late.
        raise EnvelopeError("late")
    if rs is None or entry.round != rs.number:
        raise EnvelopeError("wrong_round")
    seat = rs.seat_of(entry.author)
    if seat is None:
        raise EnvelopeError("not_seated")
    return seat


def take(rs: RoundState, seat: int, entry: Entry, payload: Payload, *, table_id: bytes,
         host_key: bytes) -> Step:
    """Record ``seat``'s round entry; what to look at next."""
    if seat in rs.dropping and entry.seq > rs.dropping[seat]:
        raise EnvelopeError("dropped")
    if seat in rs.forks and entry.seq > rs.forks[seat].cut:
        raise EnvelopeError("void")  # past its proven fork: counts for nobody
    match payload:
        case PlayMsg():
            check_play(rs, seat, payload)
            play = Play(entry.lamport, seat, payload.card, payload.pile, payload.src,
                        payload.decl)
            rs.took_play(seat, play, Ordered(entry.lamport, seat, entry.type, payload,
                                             entry.seq))
            # (Added, called by its class's own name: compiled, that is a native call.)
            return ev.PlayAdded(play, seat == rs.me)
        case Commit():
            if seat in rs.commits:
                raise EnvelopeError("second_commit")
            rs.committed(seat, payload)
            return Look.REVEAL
        case Reveal(share=share):
            commit = rs.commits.get(seat)
            if commit is None or commitment(share) != commit.share:
                return Cheat(seat, "revealed a share it had not committed to", "bad_reveal")
            rs.revealed(seat, share)
            return Look.DEAL
        case Go():
            if entry.author != host_key:
                raise EnvelopeError("not_host")
            rs.go_given(payload, entry.seq)
            return Look.GO
        case Nerts() | Stuck():
            item = Ordered(entry.lamport, seat, entry.type, payload, entry.seq)
            if isinstance(payload, Nerts):
                rs.nerts_said(seat, item)
            else:
                rs.stuck_said(seat, payload.on, item)
            return Look.NOTHING
        case Drop(who=who, upto=upto):
            victim = rs.seat_of(who)
            if victim is None or victim == seat:
                raise EnvelopeError("bad_field:who")
            rs.drop_said(entry.lamport, seat, victim, upto, entry.seq)
            return Look.TALLY
        case Fork(first=first, second=second):
            proof = check_fork(first, second, table_id)
            accused = rs.seat_of(proof.author)
            if accused is None or accused == seat:
                raise EnvelopeError("bad_proof")
            rs.await_turn(Ordered(entry.lamport, seat, entry.type, payload, entry.seq))
            return Proven(proof)
        case Audit() | Summary():
            # Counted at their turn in the total order, like the drops that may
            # take them back out: the round is scored and closed at one point
            # of that order, the same on every peer.
            rs.closing_said(seat, Ordered(entry.lamport, seat, entry.type, payload, entry.seq),
                            audit=isinstance(payload, Audit))
            return Look.NOTHING
        case Result():
            if seat in rs.signed_results:
                raise EnvelopeError("second_result")
            rs.result_signed(seat, payload)
            return Look.NOTHING
        case Verdict(seat=accused, ok=ok, reason=reason):
            if not ok and accused < len(rs.keys) and rs.verdicts and not rs.verdicts[accused]:
                return Tell(f"{rs.names[seat]} flags {rs.names[accused]} ({reason}); we did not")
            return Look.NOTHING
        case _:
            raise EnvelopeError("unexpected_type")


def stuck_final(rs: RoundState, seat: int, on: bool,
                key: PlayKey | None) -> tuple[list[Effect], bool]:
    """A stuck vote takes effect; all live seats stuck means rotate, or a deadlock:
    what to tell, and whether the round ends in a deadlock (``Steps.stuck_final``
    ends it at ``key``, the deciding entry's place in the total order: the vote,
    or the DROP whose effect left every live seat stuck)."""
    rs.stuck_changed(seat, on)
    told = Emit(ev.StuckChanged(tuple(rs.stuck)))
    if not all(rs.stuck[s] for s in rs.live):
        return [told], False
    if rs.all_stuck() is AllStuck.DEADLOCK:
        return [told], True
    rs.rotated(key)
    return [told, Emit(ev.Rotated(rs.rotations))], False
