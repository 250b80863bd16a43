"""The ephemeral side on its own: what my ACKs say and to whom (no network, no
replica)."""

from __future__ import annotations

import pytest

from p2p_nerts.game.foundations import FoundationLog
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.authors import AuthorLog
from p2p_nerts.protocol.envelope import GENESIS
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import Ack, AckMark, Ready, Seat, seal_message
from p2p_nerts.protocol.replica._base import HEARTBEAT
from p2p_nerts.protocol.replica._effects import SignAck
from p2p_nerts.protocol.replica._ephemera import Ephemera
from p2p_nerts.protocol.replica._forks import Forks
from p2p_nerts.protocol.replica._heartbeats import Heartbeats
from p2p_nerts.protocol.replica._intake import Places
from p2p_nerts.protocol.replica._recovery import Recovery
from p2p_nerts.protocol.replica._seating import Seating
from p2p_nerts.protocol.replica._state import RoundState

pytestmark = pytest.mark.fast

ME = Identity.from_seed(b"\x01" * 32, "me")
PEER = Identity.from_seed(b"\x02" * 32, "peer")
THIRD = b"\x04" * 32  # seated, but we keep no chain of it
TABLE = b"t" * 16


def _ephemera() -> Ephemera:
    me = ME.public_key
    seating = Seating(me, PEER.public_key, variants=Variants(), countdown=3.0, drop_after=10.0,
                      auto_start=None, auto_next=None, max_seats=8)
    seating.seats = (Seat(me, "me"), Seat(PEER.public_key, "peer"), Seat(THIRD, "third"))
    return Ephemera(places=Places(), seating=seating, forks=Forks(), recovery=Recovery(),
                    beats=Heartbeats())


def _round() -> RoundState:
    return RoundState(number=1, keys=(ME.public_key, PEER.public_key, THIRD),
                      names=("me", "peer", "third"), variants=Variants(), me=0, live={0, 1, 2},
                      log=FoundationLog(strict_ties=False))


def _chain(eph: Ephemera, who: Identity, n: int) -> AuthorLog:
    """``who``'s chain as we keep it, its first ``n`` entries delivered."""
    log = eph.places.authors[who.public_key] = AuthorLog(who.public_key)
    prev = GENESIS
    for seq in range(1, n + 1):
        entry = seal_message(who, Ready(True), table_id=TABLE, round=0, seq=seq, lamport=seq,
                             prev=prev)
        log.offer(entry)
        log.mark_delivered(entry)
        prev = entry.signature
    return log


def test_my_ack_straight_to_a_peer_stands_for_its_heartbeat() -> None:
    eph, rs = _ephemera(), _round()
    peer, mine = _chain(eph, PEER, 2), _chain(eph, ME, 3)
    marks = Ack(tuple(sorted((AckMark(ME.public_key, 3, mine.head),
                              AckMark(PEER.public_key, 2, peer.head)))))
    assert eph.beat(rs, None, 0.0) == (SignAck(marks, besides=frozenset()),)
    assert eph.beat(rs, None, 0.1) == ()  # not due yet
    assert eph.ack(rs, None, PEER.public_key, 0.25) == marks
    assert eph.beat(rs, None, HEARTBEAT) == (
        SignAck(marks, besides=frozenset({PEER.public_key})),)  # it had them lately
    assert eph.beat(rs, None, 0.25 + HEARTBEAT) == [SignAck(marks, to=PEER.public_key)]
    eph.recovery.restoring = True
    eph.ack(rs, None, PEER.public_key, 2 * HEARTBEAT)
    assert eph.beat(rs, None, 2 * HEARTBEAT) == (SignAck(marks, besides=frozenset()),)
