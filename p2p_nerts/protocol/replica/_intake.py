"""Intake: whether an author's next entry can be acted on now, and whether a PLAY
is well formed for its seat.

Pure functions over the round and the phase. The facade delivers in sequence,
holds what must wait, and rejects what these refuse (``EnvelopeError``: the
entry takes its sequence slot and changes nothing else).
"""

from __future__ import annotations

from ...game.cards import ACE, JOKER_RANK, KING, is_valid_card
from ...game.tableau import SOURCES
from ..envelope import Entry, EnvelopeError
from ..messages import MsgType
from ..messages import Play as PlayMsg
from ._base import NEEDS_DEAL, ROUND_TYPES, Phase
from ._state import RoundState

#: Phases in which a round is under way (shuffled, played or scored).
IN_ROUND = frozenset({Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING})


def deliverable(rs: RoundState | None, phase: Phase, entry: Entry) -> bool:
    """Whether an author's next entry can be acted on now, or must wait.

    Round entries wait for their round; play entries also wait for the
    deal (an honest PLAY can overtake a slow peer's REVEAL). Everything
    else goes on, so a bad entry is judged, not left blocking its author.
    """
    if entry.type in (MsgType.ROSTER, MsgType.SETTINGS):
        # The host sends these once it has closed a round; a peer still
        # closing it takes them after (they set up the next round).
        return phase not in IN_ROUND
    if entry.type not in ROUND_TYPES:
        return True
    if (entry.type == MsgType.RESULT and rs is not None and entry.round == rs.number
            and phase in IN_ROUND):
        return False  # signed as its author closed the game, which we are still closing
    if rs is None or entry.round > rs.number:
        return False
    if entry.round == rs.number and entry.type in NEEDS_DEAL:
        return rs.joint is not None
    return True


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
