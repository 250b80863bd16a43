"""Recovery: what a replica back from a crash knows from its journal, while it
replays it and after, until it has caught up with the table.

A small class owns that knowledge (my journaled entries, the round secrets,
whether the replay runs, whom I heard since, and the resume under way: what
a seat back at a table waits to hear before it signs again); it says what
a journal starts from and what each of its records replays as, whom a seat
back from its journal asks where its chain ends, and when it goes on. Pure
functions redo a journaled move, learn from the table where my chain ends,
and judge what a resumed seat still has to sign (as effects, ``_effects``).
The facade replays the journal through its own paths and signs; nothing here
does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ...game.tableau import OP_FOUND, OP_NERTS, OP_ROTATE, ROTATE_ALL, Tableau, apply_move
from .. import events as ev
from ..authors import AuthorLog
from ..envelope import Entry, author_of, open_entry
from ..identity import PUBLIC_KEY_LEN
from ..journal import Kind, Record, boot_record, move_record, snapshot_of, unpack
from ..messages import AckMark, Audit, Commit, Goodbye, Payload, Reveal, Snapshot, Summary
from ..resume import Deferred, Resume
from ._base import BETWEEN_ROUND_TYPES, DECISIONS, ROUND_TYPES, SIT_OUT, Phase
from ._effects import Effect, Emit, Sign
from ._state import RoundState

REBOOTED = ("this machine restarted since our journal was written: our seat signs "
            "nothing until the players at the table have said where our entries end")
#: My moves that sign an entry as they are made (a play, a Nerts call), with the
#: number of fields each has after its op.
SIGNING_MOVES = {OP_FOUND: 5, OP_NERTS: 1}


class Recovery:
    """A journal being replayed (``restoring``), and then caught up with."""

    def __init__(self) -> None:
        self.restoring = False
        #: My deck secret and joint share, by round: a round replayed deals again
        #: from the very same ones.
        self.secrets: dict[int, tuple[bytes, bytes]] = {}
        #: While restoring: my journaled entries by seq (not ``_signed``: compiled, it
        #: would be named ``__signed`` in C, a keyword of GCC).
        self._mine: dict[int, Entry] = {}
        #: Restored: hear every live peer, fill every gap, before moving again.
        self.catching_up = False
        self.heard: set[bytes] = set()
        #: Back at a table (restored, or a fresh start with a key that may have sat
        #: here): what it must hear before it signs again (see resume.py).
        self.resume: Resume | None = None

    def ask_first(self, host_key: bytes, now: float) -> None:
        """A fresh start with a key that may have sat here: learn from the host where
        my chain ends before signing (``Moves.open``)."""
        self.resume = Resume({host_key}, now, 0)

    def catch_up(self) -> None:
        """A snapshot taken up: act on nothing of a round before every live peer was
        heard and every gap filled (:meth:`heard_out`)."""
        self.catching_up = True

    def hear(self, author: bytes) -> None:
        """``author``, a key with a place at the table, was heard: while catching up
        (not while the journal replays), one fewer to wait for."""
        if self.catching_up and not self.restoring:
            self.heard.add(author)

    def take_secrets(self, number: int) -> tuple[bytes, bytes] | None:
        """My journaled deck secret and joint share for round ``number``, once: a round
        replayed deals again from the very same ones."""
        return self.secrets.pop(number, None)

    def load(self, records: Sequence[Record], me: bytes) -> Snapshot | None:
        """Start replaying ``records``, my journal: my own entries and secrets in it
        first. A compacted journal begins with the snapshot of the table as a round
        began, which is taken up before anything else replays (what is returned);
        its later snapshots replay again, from the entries they follow."""
        self.restoring = True
        for rec in records:
            if rec.kind is Kind.SECRETS:
                round_no, deck, share = unpack(rec)
                assert isinstance(round_no, int)
                assert isinstance(deck, bytes) and isinstance(share, bytes)
                self.secrets[round_no] = (deck, share)
            elif rec.kind is Kind.ENTRY and author_of(rec.data) == me:
                entry = open_entry(rec.data)
                self._mine[entry.seq] = entry
        if not records or records[0].kind is not Kind.SNAPSHOT:
            return None
        return snapshot_of(records[0])

    def signed(self, seq: int) -> Entry | None:
        """My journaled entry numbered ``seq``, while restoring."""
        return self._mine.get(seq)

    def replay(self, rec: Record, rs: RoundState | None, me: bytes,
               seq: int) -> Entry | tuple[bytes, bytes | None] | None:
        """What one journal record replays as, ``seq`` being the last number of
        mine delivered: an entry of mine to deliver to myself, a frame to take
        in as it arrived then (``(raw, via)``), or nothing more (a move of mine,
        made again here on ``rs``'s tableau)."""
        if rec.kind is Kind.ENTRY:
            if author_of(rec.data) != me:
                return rec.data, None
            # My entries are journaled in sequence: this one is either the next,
            # or was delivered already where live play signed it (Outbox.sign).
            signed = self._mine.get(seq + 1)
            return signed if signed is not None and signed.raw == rec.data else None
        if rec.kind is Kind.LINK:
            return rec.data[PUBLIC_KEY_LEN:], rec.data[:PUBLIC_KEY_LEN]
        if rec.kind is Kind.MOVE:
            redo(rs, unpack(rec))
        return None

    def replayed(self, rs: RoundState | None, phase: Phase, *, table: Iterable[bytes],
                 me: bytes, now: float, seq: int, rebooted: bytes | None) -> list[Effect]:
        """The journal is replayed: catch up with the table from here. My moves so
        far are journaled already, and a round whose countdown had run is on.
        Before I sign again I learn where my chain ends (my journal ends at
        ``seq``) from everyone at the table (``table``: the seated and the host)
        and in its round (:func:`rejoin`); longer if the journal was written
        before the machine last started (``rebooted``: this boot, which the
        journal names from then on; ``resume.py``). What to say or journal
        about it."""
        self.restoring = False
        self._mine = {}
        self.catching_up = True
        if rs is not None:
            if rs.tab is not None:
                rs.journaled_to(len(rs.tab.log))
            if phase is Phase.PLAYING and rs.play_from is not None:
                rs.play_started()
        self.resume = rejoin({*table, *(rs.keys if rs is not None else ())}, me, now, seq)
        if rebooted is None:
            return []
        if self.resume is None:
            return [boot_record(rebooted)]  # nobody to ask: nobody holds more of mine
        self.resume.rebooted = rebooted
        return [Emit(ev.Notice(REBOOTED))]

    def going_on(self, now: float, mine: AuthorLog | None, rs: RoundState | None,
                 phase: Phase) -> Resumed | None:
        """Whether the seat may sign again now, holding its own chain as far as
        ``mine`` (my log) goes: how it goes on (:func:`resumed`), the resume over;
        None while it still learns where that chain ends (or replays its journal)."""
        res = self.resume
        if res is None or self.restoring:
            return None
        delivered = mine.delivered if mine is not None else 0
        if not res.complete(now, delivered):
            return None
        self.resume = None
        return resumed(res, delivered, rs, phase)

    def heard_out(self, rs: RoundState, authors: Mapping[bytes, AuthorLog]) -> None:
        """After a restart, catching up ends once every live peer has been heard
        from and no entry of theirs is missing (settled as frames and time come
        in, never by a read: what a front end asks must not change the table)."""
        if not self.catching_up:
            return
        peers = {rs.keys[s] for s in rs.live if s != rs.me}
        if peers <= self.heard and all(
                authors[k].missing() is None for k in peers if k in authors):
            self.catching_up = False


def new_moves(rs: RoundState, tab: Tableau) -> list[Effect]:
    """My new decisions on the tableau, to journal; what follows from them (settles,
    agreed rotations) replays by itself."""
    effects: list[Effect] = [move_record(rs.number, move)
                             for move in tab.log[rs.journaled:]
                             if move[0] in DECISIONS and move != (OP_ROTATE, ROTATE_ALL)]
    rs.journaled_to(len(tab.log))
    return effects


def unsent_cut(records: list[Record], me: bytes) -> list[Record]:
    """The journal without the moves of mine whose entry it lost.

    A play or a Nerts call is journaled with the entry it signs, that entry
    next, in one write, before anything goes out; a crash that tears that
    write can keep the move and lose the entry, which then never went out.
    Nobody saw the move, and it is not made again (made again, it would stay
    in the air and show in my audit as a play the wire does not hold), also
    by a later restore of the journal that went on after it. Had the entry
    gone out and the journal lost it later, the table gives it back, and the
    seat, behind, sits the round out (``resumed``).
    """
    def signed_next(i: int) -> bool:
        return (i + 1 < len(records) and records[i + 1].kind is Kind.ENTRY
                and author_of(records[i + 1].data) == me)

    def signing(record: Record) -> bool:  # (a malformed one is replayed: a journal error)
        fields = unpack(record)
        op = fields[1] if len(fields) > 1 else None
        return isinstance(op, int) and SIGNING_MOVES.get(op) == len(fields) - 2

    return [r for i, r in enumerate(records)
            if r.kind is not Kind.MOVE or signed_next(i) or not signing(r)]


def redo(rs: RoundState | None, fields: list[object]) -> None:
    """Make a journaled move of mine again on my tableau."""
    round_no, *move = fields
    if rs is None or rs.tab is None or rs.number != round_no:
        raise ValueError("journal move for a round that is not being played")
    ints = [int(x) for x in move]  # type: ignore[call-overload]
    apply_move(rs.tab, ints)
    if ints[0] == OP_NERTS:
        rs.called_nerts()


def redundant(rs: RoundState | None, payload: Payload) -> bool:
    """A deferred round entry that something signed meanwhile made redundant."""
    if rs is None or rs.me is None:
        return False
    match payload:
        case Commit():
            return rs.me in rs.commits
        case Reveal():
            return rs.me in rs.reveals
        case Audit():
            return rs.me in rs.audit_seq
        case Summary():
            return rs.me in rs.summary_seq
    return False


def rejoin(peers: Iterable[bytes], me: bytes, now: float, seq: int) -> Resume | None:
    """Back at a table with ``peers`` (seated, host, this round's), my journal
    ending at ``seq``: learn where my chain ends there before signing (None:
    nobody to ask)."""
    others = set(peers) - {me}
    return Resume(others, now, seq) if others else None


def heard(res: Resume, peer: bytes, upto: Iterable[AckMark], me: bytes,
          at_table: bool, now: float) -> int | None:
    """An ACK from ``peer`` at ``now`` while learning: how far it holds my chain (the
    word of a seat or the host only: ``at_table``), which the caller claims, to
    fetch those of mine we lack (None: nothing to claim)."""
    mine = next((m.seq for m in upto if m.author == me), None)
    if mine is not None and at_table:
        res.heard(peer, mine, now)
        return mine
    res.heard(peer, None, now)
    return None


def due(d: Deferred, began: RoundState | None, rs: RoundState | None,
        done: set[tuple[int, Payload]]) -> bool:
    """Whether an entry held back while learning is still to be signed now (and
    note it as signed in ``done``): not twice, not when signed meanwhile, not a
    round entry for another round than the one under way when learning ended
    (``began``; its round closed: it counts for nobody now), not a host's entry
    between rounds once a round began since (a held-back ROSTER began it)."""
    key = (d.payload.TYPE, d.payload)
    if key in done or redundant(rs, d.payload):
        return False
    if d.payload.TYPE in ROUND_TYPES and (began is None or d.round_no != began.number):
        return False
    if (d.payload.TYPE in BETWEEN_ROUND_TYPES and d.round_no is not None
            and rs is not None and d.round_no < rs.number):
        return False
    done.add(key)
    return True


@dataclass(frozen=True, slots=True)
class Resumed:
    """What a seat back at a table does once it has learned where its chain ends:
    say ``notice`` (its journal was behind the table), sit the round out
    (``sit_out``: a GOODBYE signed after the table's head), and sign what it
    held back meanwhile (``deferred``, each unless redundant by then). Back
    after a restart of the machine (``rebooted``), its journal names this boot
    from then on."""

    notice: str | None
    sit_out: bool
    deferred: tuple[Deferred, ...]
    rebooted: bytes | None = None

    def said(self) -> list[Effect]:
        """What the seat says before it signs what it held back (:func:`due`)."""
        return [*([boot_record(self.rebooted)] if self.rebooted is not None else []),
                *([Emit(ev.Notice(self.notice))] if self.notice is not None else []),
                *([Sign(Goodbye(SIT_OUT))] if self.sit_out else [])]


def resumed(res: Resume, delivered: int, rs: RoundState | None, phase: Phase) -> Resumed:
    """How a seat goes on, holding its own chain up to ``delivered``.

    If the table held entries of ours the journal did not (it was truncated,
    stale or lost), say so in one line; a seat of a round under way then
    sits the round out (it cannot replay moves it no longer has), and plays
    again from the next: its held-back round entries go unsigned.
    """
    behind = res.behind(delivered)
    if not behind:
        return Resumed(None, False, tuple(res.deferred), res.rebooted)
    out = (rs is not None and rs.me in rs.live
           and phase in (Phase.SHUFFLE, Phase.PLAYING, Phase.SCORING))
    notice = (f"the table held {behind} entries of ours that our journal did not; "
              f"going on after entry {delivered}" + ("; sitting this round out" if out else ""))
    deferred = [d for d in res.deferred if not out or d.payload.TYPE not in ROUND_TYPES]
    return Resumed(notice, out, tuple(deferred), res.rebooted)
