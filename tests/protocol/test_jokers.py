"""Declared jokers across replicas: every replica applies a joker as the card its
owner declared, and the audit flags a declaration the owner's tableau could not make."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from p2p_nerts.game.cards import ACE, JOKER_RANK, SUIT_COLOR, face_name, make_face
from p2p_nerts.game.foundations import Play
from p2p_nerts.game.moves import covered_jokers, joker_targets, other_suit, work_target
from p2p_nerts.game.tableau import (
    NERTS,
    OP_FOUND,
    OP_SLIDE,
    OP_WORK,
    WASTE,
    WORK0,
    Tableau,
    Target,
    apply_move,
)
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.fairness import deal_for
from p2p_nerts.protocol.messages import Audit
from p2p_nerts.protocol.replica import (
    Command,
    Move,
    Outbound,
    Phase,
    Replica,
    RoundState,
    Turn,
)
from p2p_nerts.protocol.replica._closing import audit_of
from p2p_nerts.testing.memnet import MemNet, bot_table

from ..replica_harness import check_round, play_round

JOKERS = Variants(jokers=True)
DECLARER = 1
#: Tables (each its own seed) a test may play, three rounds each, to meet what it
#: looks for (:func:`_rounds`).
TABLES = 6


class Declarer(Replica):
    """Declares its jokers otherwise than the bots' first choice: going up, the
    highest face a pile wants (else the last ace); covered, the other suit.

    So that its jokers get covered, it keeps them on its work piles (where one
    takes a joker, and turning the stock rather than sending a free one up off
    a built pile) and covers a free one with its Nerts or waste card first.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.went_up: list[tuple[int, int]] = []  # (joker, face declared)
        self.covered: list[tuple[int, int]] = []

    def handle(self, command: Command, now: float) -> Outbound:
        rs = self.rs
        if isinstance(command, Move) and rs is not None and rs.tab is not None:
            command = self._declared(rs, rs.tab, command.target)
        return super().handle(command, now)

    def _declared(self, rs: RoundState, tab: Tableau, target: Target) -> Command:
        cover = next((Target(src, work=dst) for src in (NERTS, WASTE) for dst, pile
                      in enumerate(tab.work) if pile and _free_joker(tab, pile[-1])
                      and (card := tab.top(src)) is not None and tab.fits(card, pile)), None)
        if cover is not None:
            target = cover
        elif target.pile is not None:
            card = tab.top(target.src)
            if card is None or card & 15 != JOKER_RANK:
                return Move(target)
            keep = work_target(tab, target.src, allow_empty=False)
            if target.src < WORK0 and keep is not None:
                return Move(keep)
            if (target.src >= WORK0 and _free_joker(tab, card)
                    and len(tab.work[target.src - WORK0]) > 1 and (tab.stock or tab.waste)):
                return Turn()
            options = joker_targets(tab, target.src, card, rs.log)
            wanted = [t for t in options if t.declared & 15 != ACE]
            chosen = wanted[-1] if wanted else options[-1]
            self.went_up.append((card, chosen.declared))
            return Move(chosen)
        covered = covered_jokers(tab, target)
        self.covered += [(joker, other_suit(face)) for joker, face in covered]
        return Move(replace(target, covers=tuple(other_suit(face) for _j, face in covered)))


def _free_joker(tab: Tableau, card: int) -> bool:
    return card & 15 == JOKER_RANK and card not in tab.bound


def _joker_faces(net: MemNet) -> list[dict[tuple[int, int], int]]:
    """Each replica's foundation log: the face each joker play shows, by play key."""
    faces = []
    for r in net.replicas:
        assert r.rs is not None
        faces.append({p.key: p.face for p in r.rs.log.plays() if p.card & 15 == JOKER_RANK})
    return faces


def _rounds(declarer: Callable[..., Replica]) -> Iterator[tuple[MemNet, int]]:
    """Rounds of jokers with ``declarer`` in seat DECLARER, table after table (up to
    TABLES, three rounds each), for as long as the test asks for more.

    Which round first shows a covered joker going up, or a cheater's cover,
    depends on how the bots' moves interleave, and so on the replicas' timing
    (when each ACK goes, when a tick comes): a test plays on until it meets what
    it looks for, rather than naming the round where one schedule put it.
    """
    for seed in range(6, 6 + TABLES):
        net = bot_table(4, seed=seed, variants=JOKERS, classes={DECLARER: declarer})
        for _ in range(3):
            if net.replicas[0].phase is Phase.OVER:
                break
            yield net, play_round(net)


def test_every_replica_applies_a_declared_joker_as_the_card_declared() -> None:
    for net, number in _rounds(Declarer):
        declarer = net.replicas[DECLARER]
        assert isinstance(declarer, Declarer)
        seat = declarer.view().my_seat
        check_round(net, number, honest={0, 1, 2, 3})  # its declarations pass the audit
        faces = _joker_faces(net)
        assert all(f == faces[0] for f in faces), "the replicas disagree on a joker"
        mine = {key: face for key, face in faces[0].items() if key[1] == seat}
        assert set(mine.values()) <= {face for _joker, face in declarer.went_up}
        # Covered, its jokers were declared ♦ or ♣ (never the default ♥ or ♠)...
        assert all(face >> 4 in (2, 3) for _j, face in declarer.covered)
        if set(declarer.covered) & set(declarer.went_up):
            break  # ...and a joker covered as, say, 4♣ went up as the 4♣ on every replica
    else:
        raise AssertionError("no covered joker went up")


class FalseCover(Declarer):
    """Writes, into the move that covers its first joker, a face of the wrong colour,
    as a player would who claimed a red 4 was the 4♠."""

    lied: str | None = None

    def handle(self, command: Command, now: float) -> Outbound:
        before = len(self.covered)
        out = super().handle(command, now)
        rs = self.rs
        if self.lied is None and len(self.covered) > before and rs is not None and rs.tab:
            last = rs.tab.log[-1]
            assert last[0] in (OP_WORK, OP_SLIDE)
            face = last[-1]
            false = make_face(0 if SUIT_COLOR[face >> 4] else 1, face & 15)
            rs.tab.log[-1] = (*last[:-1], false)
            self.lied = face_name(false)
        return out


def test_an_impossible_cover_declaration_is_flagged_by_every_honest_replica() -> None:
    for net, number in _rounds(FalseCover):
        cheater = net.replicas[DECLARER]
        assert isinstance(cheater, FalseCover)
        if cheater.lied is None:
            continue
        bad = cheater.view().my_seat
        assert bad is not None
        for i in range(len(net.replicas)):
            if i == DECLARER:
                continue
            over = [e for e in net.events[i]
                    if isinstance(e, ev.RoundOver) and e.round == number][-1]
            verdict = over.verdicts[bad]
            assert verdict.startswith("impossible move: move "), verdict
            assert f"no joker covered by this move can be {cheater.lied}" in verdict
            assert over.results[bad].void
            assert [e.seat for e in net.events[i] if isinstance(e, ev.Flagged)] == [bad]
        break
    else:
        raise AssertionError("the cheater never covered a joker")


def _fixed_joker_launch() -> tuple[RoundState, int, list[tuple[int, ...]], int]:
    """A round of jokers played honestly (the declarer keeping its jokers to be
    covered), a seat, its move log and the index in it of a launch of a fixed
    joker (one a card had lain on)."""
    for net, _number in _rounds(Declarer):
        rs = net.replicas[0].rs
        assert rs is not None and rs.joint is not None
        for seat, audit in sorted(rs.audits.items()):
            deck = deal_for(seat, audit.deck_secret, rs.joint, jokers=True)
            tab = Tableau(seat, deck, jokers=True)
            for n, move in enumerate(audit.moves):
                if move[0] == OP_FOUND and move[2] in tab.bound:
                    return rs, seat, [tuple(m) for m in audit.moves], n
                apply_move(tab, move)
    raise AssertionError("no fixed joker went up")


def test_a_record_with_a_false_joker_declaration_fails_the_audit() -> None:
    """A joker fixed as 4♥ on a work pile, declared 4♦ as it goes up (in the move log
    and the PLAY alike): the replay refuses the launch, and the seat is flagged."""
    rs, seat, moves, n = _fixed_joker_launch()
    secret = rs.audits[seat].deck_secret
    assert audit_of(rs, seat, Audit(secret, tuple(moves))).ok
    launch = moves[n]
    false = other_suit(launch[5])
    lying = [*moves[:n], (*launch[:5], false), *moves[n + 1:]]
    plays = rs.plays_by_seat[seat]
    rs.plays_by_seat[seat] = [p if p.lamport != launch[3] else
                              Play(p.lamport, p.author, p.card, p.pile, p.src, false)
                              for p in plays]
    result = audit_of(rs, seat, Audit(secret, tuple(lying)))
    assert not result.ok
    assert result.reason.startswith(f"impossible move: move {n + 1} "), result.reason
    assert (f"this joker is fixed as {face_name(launch[5])}; it cannot be {face_name(false)}"
            in result.reason)
