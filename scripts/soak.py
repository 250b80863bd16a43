#!/usr/bin/env python3
"""Soak and chaos: a table of bot processes plays many rounds through a hostile network.

Every peer is a real ``nerts`` process on 127.0.0.1 (``nerts host --headless
--bot hard`` and ``nerts bot``, each with its own data dir, fast bots, at a
table with no countdown and a short ``--drop-after``) behind its own
fault-injecting relay (``p2p_nerts.testing.peers.Relay``): every frame is
delayed at random (which reorders frames between connections), some entries
are sent twice or have a byte flipped, and now and then a connection is cut.
At a random moment one peer (the host, maybe) is killed with SIGKILL and
started again with ``--resume`` a little later; if the others dropped it from
the round, it asks for its seat back and plays again from a later round.

With ``--kills N`` a random peer is killed N times instead, each time at a
random moment (many land mid-write: every play is journaled), and each
``--resume`` must come back or say in one line why not.

With ``--adversary NAME`` peer p1 misbehaves instead of the random crash (see
ADVERSARIES). A liar runs a modified client (the adversary patched into its own
process): ``equivocate`` sends one PLAY to half the table and another under the
same number to the rest; ``silent-cheater`` plays cards it does not hold, calls
Nerts and goes silent before its audit (in odd rounds, for twice the drop time);
``false-call`` calls Nerts with cards left and audits as usual. ``stale-journal``
is an honest peer killed mid-round and resumed from a journal that lost its last
own entries. The checks then hold for the honest peers, and the liar's verdicts
and the flags on it are expected.

After ``--rounds`` rounds every peer is stopped and its ``--summary`` file is
checked, round by round:

* agreement - the same end, seats, scores, foundation hash and verdicts on
  every peer that wrote the round (a peer watching a round it has no seat in
  writes it too), and every peer saw it agreed;
* cards     - every peer's own deck is accounted for (``cards_ok``: each card
  in its tableau or on the agreed foundations), and the cards it holds plus
  its cards on the foundations (as every peer agreed) make a whole deck;
* audits    - no verdict but "" (clean), or "unaudited" when a peer crashed;
* comeback  - a crashed peer that was dropped from its round sits down again
  (checked when at least two rounds follow the crash);
* honest play - every honest seat's round scores as it played it (its cards up
  as agreed, less twice the Nerts cards its own tableau still held), whoever
  misbehaved; one that crashed scores the forfeit for that round; and its
  total after the last round is the sum of those (``honest_totals``: the
  total reported against the total played).

It prints a line per round (how many honest peers agree, the verdicts, who
the honest peers flagged and why), the faults injected by kind, the messages
the peers rejected (the sum of their counters, by reason), the honest peers
flagged (any is a bug), the rounds completed (agreed by every
peer), divergences (peers that computed another result: must be 0), rounds a
peer left without seeing them agreed, and each peer's resident memory (VmRSS)
at the first round and at the end, after rounds 1, 5 and every tenth (noted as
the host writes each round) with the size of its journal then, and the last
against round 5. Exit status 0 when every round was completed with no
divergence and no card, audit or comeback problem.

    scripts/soak.py --short                   # 8 peers, 2 rounds, well under a minute
    scripts/soak.py --rounds 30 --players 8   # the long run
    scripts/soak.py --rounds 30 --adversary silent-cheater
    scripts/soak.py --rounds 5 --players 4 --kills 100
    scripts/soak.py --rounds 100 --players 4 --pace 0.01 --crash-round 73
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from p2p_nerts.game.moves import foundation_target
from p2p_nerts.game.scoring import forfeit_score, round_score
from p2p_nerts.game.tableau import NERTS, OP_NERTS
from p2p_nerts.game.variants import TEAMS, Variants
from p2p_nerts.protocol.envelope import Entry, seal
from p2p_nerts.protocol.identity import load_or_create
from p2p_nerts.protocol.journal import Kind
from p2p_nerts.protocol.messages import Nerts, Payload, Play
from p2p_nerts.protocol.replica import Command, Move, Outbound, Replica, Send
from p2p_nerts.store import DB_FILE, Store
from p2p_nerts.testing.peers import Faults, PeerProcess, PeerTable, RelayStats

FAULTS = Faults(min_delay=0.0, max_delay=0.03, duplicate=0.03, tamper=0.005, cut=0.001)
DECK = 52  # no jokers at a soak table
_SHARED = ("end", "players", "foundation_hash", "verdicts")
"""What every peer must agree on for a round (a resumed peer counts the
collisions and bounces of the round it crashed in only from its return on)."""


# -- adversaries: the peer at ADVERSARY_PEER misbehaves ------------------------
# A liar runs a modified client: the soak starts it as ``soak.py --inside NAME --
# PYTHON -m p2p_nerts.cli ...``, which patches the Replica class of its own process
# (``Adversary.inside``) and then is ``nerts``. An adversary may also act on the
# peer from outside while the game runs (``Adversary.during``).
ADVERSARY_PEER = 1  # a guest: the host's seat is the table itself


def equivocate() -> None:
    """Its third PLAY of the game goes to half the other seats; a twin (same number,
    same predecessor, one tick later) to the rest."""
    honest_sign = Replica._sign
    plays = 0

    def sign(self: Replica, payload: Payload, **options: Any) -> tuple[Entry, Payload] | None:
        nonlocal plays
        signed = honest_sign(self, payload, **options)
        rs = self.rs
        if signed is None or not isinstance(payload, Play) or rs is None:
            return signed
        plays += 1
        if plays != 3:
            return signed
        play = signed[0]
        twin = seal(self.me, table_id=play.table_id, round=play.round, seq=play.seq,
                    lamport=play.lamport + 1, type=play.type, payload=play.payload,
                    prev=play.prev)
        others = [k for k in rs.keys if k != self.me.public_key]
        half = len(others) // 2
        self._out.sends.pop()  # the PLAY to everyone, just queued
        self._out.sends += [Send(play.raw, k) for k in others[:half]]
        self._out.sends += [Send(twin.raw, k) for k in others[half:]]
        return signed

    Replica._sign = sign  # type: ignore[method-assign]


def _false_call(r: Replica) -> bool:
    """Call Nerts with cards still in the Nerts pile (once a round); False if not now."""
    rs = r.rs
    if rs is None or rs.tab is None or r.blocked() is not None or not rs.tab.nerts:
        return False
    lamport = r.clock.time + 1
    rs.tab.log.append((OP_NERTS, lamport))  # what its log would have to show
    rs.called_nerts()
    r._send(Nerts(), expect_lamport=lamport)
    return True


def _steal(r: Replica) -> Move | None:
    """Put a stock card on the Nerts pile where a foundation takes it: the move that
    plays it as if it were the Nerts top; None if none fits."""
    rs = r.rs
    if rs is None or rs.tab is None or r.blocked() is not None:
        return None
    tab = rs.tab
    for card in list(tab.stock):
        tab.stock.remove(card)
        tab.nerts.append(card)
        target = foundation_target(tab, NERTS, rs.log)
        if target is not None:
            return Move(target)
        tab.nerts.pop()
        tab.stock.append(card)
    return None


def _cheat_on_moves(cheat: Callable[[Replica, Move], Move | None]) -> None:
    """``cheat`` has each of the peer's moves first, where ``Replica.handle`` makes it
    (the time set, my last play applied to myself): it cheats or not, and says which
    move the honest ``handle`` makes then (None: none; what it signed goes out)."""
    honest_handle = Replica.handle

    def handle(self: Replica, command: Command, now: float) -> Outbound:
        if not isinstance(command, Move):
            return honest_handle(self, command, now)
        self.now = now
        self._apply_own()
        move = cheat(self, command)
        return self._flush() if move is None else honest_handle(self, move, now)

    Replica.handle = handle  # type: ignore[method-assign]


def silent_cheater() -> None:
    """In odd rounds: plays up to three cards it does not hold, calls Nerts, then says
    nothing more for twice the table's drop time (no audit, no acknowledgement): it
    counts on the others scoring it as a seat that crashed. It then speaks again, as a
    peer back from a crash would, and asks back in; even rounds it plays honestly.
    The silence ends by its own clock, not by anything it hears: a mute seat cannot
    ask for a frame the network lost (the one saying it was dropped, say), and would
    otherwise stay out for the rest of the game."""
    honest_flush = Replica._flush
    stolen: Counter[int] = Counter()
    called_at: dict[int, float] = {}

    def cheat(self: Replica, move: Move) -> Move | None:
        number = self.rs.number if self.rs else 0
        if number % 2 == 0:
            return move
        if stolen[number] < 3 and (steal := _steal(self)) is not None:
            stolen[number] += 1
            return steal
        if stolen[number] and _false_call(self):
            called_at[number] = self.now
            return None
        return move

    def flush(self: Replica) -> Outbound:
        out = honest_flush(self)
        rs = self.rs
        if (rs is not None and rs.number in called_at and rs.end is not None
                and self.now < called_at[rs.number] + 2 * self.seating.drop_after):
            out.sends.clear()  # the call is out; from the round's end on, nothing
        return out

    _cheat_on_moves(cheat)
    Replica._flush = flush  # type: ignore[method-assign]


def false_call() -> None:
    """Calls Nerts with ten cards or fewer left in its Nerts pile, then audits as usual."""

    def cheat(self: Replica, move: Move) -> Move | None:
        rs = self.rs
        if (rs is not None and rs.tab is not None and len(rs.tab.nerts) <= 10
                and _false_call(self)):
            return None
        return move

    _cheat_on_moves(cheat)


async def stale_journal(table: PeerTable, rng: random.Random, report: Report) -> None:
    """Kill the peer mid-round, cut the last few of its own entries off its journal
    and resume it: an honest seat whose disk lost what it had already sent."""
    host, k = table.peers[0], ADVERSARY_PEER
    round_no = 2 if report.rounds_asked > 2 else 1
    await wait_until(lambda: f"round {round_no} starts" in host.log.read_text(),
                     60.0 * round_no, table, f"round {round_no}")
    await asyncio.sleep(rng.uniform(0.5, 2.0))
    await table.crash(k)
    under_way = round_under_way(host)
    lost = rng.randint(1, 4)
    report.adversary |= {"round": under_way, "lost": lost,
                         "records_cut": cut_journal(table.peers[k], lost)}
    await table.resume(k)
    report.crash = {"peer": table.peers[k].name, "round": under_way, "down_s": 0.0,
                    "dropped": False, "back_in_round": under_way}


def cut_journal(peer: PeerProcess, lost: int) -> int:
    """Drop a dead peer's journal from its ``lost``-th last own entry on; return how
    many records went (the table still holds those entries: they were sent)."""
    data = data_dir(peer)
    me = load_or_create(data / "identity.key").public_key
    with Store(data / DB_FILE) as store:
        table = store.unfinished()
        assert table is not None, f"{peer.name} has no journal to cut"
        records = store.records(table.table_id)
        own = [i for i, r in enumerate(records) if r.kind is Kind.ENTRY and r.data[2:34] == me]
        keep = records[:own[-min(lost, len(own))]]
        journal = data / f"{DB_FILE}.journal" / f"{table.table_id.hex()}.log"
        journal.unlink()
        store.append(table.table_id, keep)
    return len(records) - len(keep)


def data_dir(peer: PeerProcess) -> Path:
    """The peer's own data dir: its home for the host, bots/1 for a ``nerts bot``."""
    return peer.home if (peer.home / DB_FILE).exists() else peer.home / "bots" / "1"


def journal_bytes(peer: PeerProcess) -> int:
    """The size of the peer's journals (what a ``--resume`` replays; not the entries
    compaction moved out for the game's record)."""
    try:
        return sum(f.stat().st_size
                   for f in (data_dir(peer) / f"{DB_FILE}.journal").glob("*.log"))
    except OSError:  # a file compacted away as we looked
        return 0


@dataclass(frozen=True)
class Adversary:
    """``inside`` patches the peer's own process (it is a liar then: its verdicts and
    the flags on it are expected, its view of the game is its own business);
    ``during`` acts on it from outside while the game runs (no random crash then)."""

    inside: Callable[[], None] | None = None
    during: Callable[[PeerTable, random.Random, Report], Awaitable[None]] | None = None

    @property
    def lies(self) -> bool:
        return self.inside is not None


ADVERSARIES = {
    "equivocate": Adversary(inside=equivocate),
    "silent-cheater": Adversary(inside=silent_cheater),
    "false-call": Adversary(inside=false_call),
    "stale-journal": Adversary(during=stale_journal),
}


def run_inside(argv: list[str]) -> int:
    """``--inside NAME -- PYTHON -m p2p_nerts.cli ARGS``: be that peer, as adversary NAME."""
    name, rest = argv[0], argv[argv.index("p2p_nerts.cli") + 1:]
    inside = ADVERSARIES[name].inside
    assert inside is not None, f"{name} runs no modified client"
    inside()
    from p2p_nerts.cli import main as nerts_main
    return nerts_main(rest)


@dataclass
class Report:
    players: int
    rounds_asked: int
    rounds_played: int = 0  # fewer than asked when --seconds ran out
    seconds: float = 0.0
    rounds_completed: int = 0
    divergences: int = 0
    divergent_rounds: list[int] = field(default_factory=list)
    unconfirmed_rounds: list[int] = field(default_factory=list)
    flags: dict[str, int] = field(default_factory=dict)
    honest_flagged: dict[str, int] = field(default_factory=dict)
    card_problems: list[str] = field(default_factory=list)
    audit_problems: list[str] = field(default_factory=list)
    comeback_problem: str = ""
    missing_lines: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)
    crash: dict[str, Any] = field(default_factory=dict)
    rss_start_kb: dict[str, int] = field(default_factory=dict)
    rss_end_kb: dict[str, int] = field(default_factory=dict)
    #: Each peer's VmRSS as the host wrote each round's summary line.
    rss_by_round_kb: dict[int, dict[str, int]] = field(default_factory=dict)
    #: ...and the size of its journal then.
    journal_by_round_b: dict[int, dict[str, int]] = field(default_factory=dict)
    adversary: dict[str, Any] = field(default_factory=dict)
    #: --kills: each kill (peer, round, how long down) and how its --resume went:
    #: "back", or the one line the peer said when it would not come back.
    kills: list[dict[str, Any]] = field(default_factory=list)
    #: Tracebacks in any peer's log (none may ever reach a user).
    tracebacks: int = 0
    #: Per round: how many honest peers agree, what the audits said, who was flagged and why.
    round_lines: list[str] = field(default_factory=list)
    #: Each honest peer's total after the last round: as reported, and as it played.
    honest_totals: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Honest seats whose round or total is not what they played.
    score_problems: list[str] = field(default_factory=list)

    @property
    def liar(self) -> str | None:
        """The peer whose lies are expected (a stale journal's is honest)."""
        kind = self.adversary.get("kind")
        return self.adversary["peer"] if kind and ADVERSARIES[kind].lies else None

    @property
    def ok(self) -> bool:
        return (self.divergences == 0 and self.rounds_completed >= self.rounds_asked
                and not self.card_problems and not self.audit_problems
                and not self.comeback_problem and not self.honest_flagged
                and not self.score_problems
                and not self.tracebacks and all(k["resume"] == "back" or "\n" not in k["resume"]
                                                for k in self.kills))


def rss_kb(peer: PeerProcess) -> int:
    """Resident memory of the peer's process, from /proc (0 once it is gone)."""
    if peer.proc is None:
        return 0
    try:
        status = Path(f"/proc/{peer.proc.pid}/status").read_text()
    except OSError:
        return 0
    line = next((x for x in status.splitlines() if x.startswith("VmRSS:")), "VmRSS: 0 kB")
    return int(line.split()[1])


async def sample_rss(table: PeerTable, report: Report) -> None:
    """Note every peer's VmRSS as the host writes each round's line (until cancelled)."""
    number = 1
    while True:
        while round_line(table.peers[0], number) is not None:
            report.rss_by_round_kb[number] = {p.name: rss_kb(p) for p in table.peers}
            report.journal_by_round_b[number] = {p.name: journal_bytes(p) for p in table.peers}
            number += 1
        await asyncio.sleep(0.5)


def summary_lines(peer: PeerProcess) -> list[dict[str, Any]]:
    """The complete lines of a summary file that may be being written right now."""
    if not peer.summary.exists():
        return []
    text = peer.summary.read_text()
    return [json.loads(line) for line in text.splitlines(keepends=True) if line.endswith("\n")]


def round_under_way(host: PeerProcess) -> int:
    """The last round the host's log says has started."""
    starts = [int(line.split("round ")[1].split()[0]) for line in
              host.log.read_text().splitlines() if " starts in " in line]
    return max(starts, default=0)


def round_line(peer: PeerProcess, number: int) -> dict[str, Any] | None:
    return next((x for x in summary_lines(peer) if x.get("round") == number), None)


def all_wrote(table: PeerTable, number: int, liar: str | None) -> bool:
    """The host wrote round ``number``, and so did every honest player seated in it."""
    line = round_line(table.peers[0], number)
    if line is None:
        return False
    players = {p["name"] for p in line["players"]} - {liar}
    return all(round_line(peer, number) is not None
               for peer in table.peers if peer.name in players)


async def wait_until(test: Any, timeout: float, table: PeerTable, what: str,
                     liar: str | None = None) -> None:
    """Poll ``test()``; fail early if an honest peer exits, late if time runs out."""
    deadline = time.monotonic() + timeout
    while not test():
        for peer in table.peers:
            if peer.name != liar and peer.proc is not None and peer.proc.returncode is not None:
                raise RuntimeError(f"{peer.name} exited {peer.proc.returncode} while waiting "
                                   f"for {what}:\n{peer.tail()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {timeout:g} s")
        await asyncio.sleep(0.1)


async def chaos(table: PeerTable, rng: random.Random, rounds: int, report: Report,
                down: float | None = None, round_no: int | None = None) -> None:
    """Kill one peer at a random moment of a random round; bring it back with --resume.

    ``down`` fixes how long it stays dead (else 0.2-1.5 s); longer than
    --drop-after, the others drop it from its round, and it must sit down
    again (a guest then: without its host no table plays on).
    """
    victim = rng.randrange(1 if down is not None else 0, table.players)
    # A long outage outlasts a few rounds: leave rounds to come back to.
    drawn = rng.randint(1, max(1, rounds // 2 if down is not None else rounds - 1))
    round_no = round_no or drawn
    host = table.peers[0]
    await wait_until(lambda: f"round {round_no} starts" in host.log.read_text(),
                     60.0 * round_no, table, f"round {round_no}")
    await asyncio.sleep(rng.uniform(0.0, 2.0))
    under_way = round_under_way(host)
    await table.crash(victim)
    if down is None:
        down = rng.uniform(0.2, 1.5)
    await asyncio.sleep(down)
    await table.resume(victim, *(("--auto-next", "0.3") if victim == 0 else ()))
    report.crash = {"peer": table.peers[victim].name, "round": under_way,
                    "down_s": round(down, 2), "dropped": False, "back_in_round": under_way}


async def kills(table: PeerTable, rng: random.Random, count: int, report: Report) -> None:
    """SIGKILL a random peer ``count`` times at random moments (a play is journaled
    every few milliseconds, so many land mid-write) and ``--resume`` it each time.

    Each resume must come back or say in one line why not; a peer that will not
    come back ends the kills (the table may not go on without it).
    """
    for _ in range(count):
        await asyncio.sleep(rng.uniform(0.0, 1.5))
        victim = rng.randrange(table.players)
        under_way = round_under_way(table.peers[0])
        await table.crash(victim)
        down = rng.uniform(0.1, 1.0)
        await asyncio.sleep(down)
        peer = table.peers[victim]
        kill = {"peer": peer.name, "round": under_way, "down_s": round(down, 2)}
        report.kills.append(kill)
        try:
            await table.resume(victim, *(("--auto-next", "0.3") if victim == 0 else ()))
        except RuntimeError:  # it exited: what it said is its last line
            kill["resume"] = "\n".join(peer.tail(3).splitlines()[-1:]) or "(nothing)"
            return
        kill["resume"] = "back"


def flags_by_round(peer: PeerProcess) -> Counter[tuple[int, str, str]]:
    """(round, who, why) of every flag in the peer's log, in the round it last saw start."""
    flags: Counter[tuple[int, str, str]] = Counter()
    number = 0
    for logged in peer.log.read_text(errors="replace").splitlines():
        if " starts in " in logged:
            number = int(logged.split("round ")[1].split()[0])
        elif " flagged: " in logged:
            before, reason = logged.split(" flagged: ", 1)
            flags[number, before.split()[-1] if before.split() else "?", reason] += 1
    return flags


def check(table: PeerTable, rounds: int, report: Report) -> None:
    """Compare the honest peers' summaries round by round (see the module docstring)."""
    liar = report.liar
    honest = [peer for peer in table.peers if peer.name != liar]
    by_peer = {peer.name: summary_lines(peer) for peer in honest}
    # Who the honest peers flagged, and why: the liar's own view is its own business.
    flags: Counter[tuple[int, str, str]] = sum((flags_by_round(p) for p in honest), Counter())
    # No seat is unaudited but one that crashed (under chaos or a stale journal).
    allowed = ("", "unaudited") if report.crash or report.kills else ("",)
    for number in range(1, rounds + 1):
        lines = {name: next((x for x in ls if x.get("round") == number), None)
                 for name, ls in by_peer.items()}
        present = {name: line for name, line in lines.items() if line is not None}
        report.missing_lines += len(lines) - len(present)
        if not present:
            report.divergences += 1
            report.divergent_rounds.append(number)
            report.round_lines.append(f"round {number}: no honest peer wrote it")
            continue
        shared = {json.dumps([line[k] for k in _SHARED]) for line in present.values()}
        if len(shared) > 1 or any(line["agreed"] is False for line in present.values()):
            report.divergences += 1
            report.divergent_rounds.append(number)
        elif not all(line["agreed"] for line in present.values()):
            report.unconfirmed_rounds.append(number)  # someone moved on before agreeing
        else:
            report.rounds_completed += 1
        agreed = next(iter(present.values()))
        for name, line in present.items():
            check_cards(name, number, line, agreed, report)
        note_comeback(report, number, agreed)
        names = {p["seat"]: p["name"] for p in agreed["players"]}
        for seat, verdict in enumerate(agreed["verdicts"]):
            if verdict not in allowed and names.get(seat) != liar:
                report.audit_problems.append(f"round {number} seat {seat}: {verdict}")
        in_round = {(who, why): n for (r, who, why), n in flags.items() if r == number}
        report.round_lines.append(round_line_of(number, present, agreed, in_round))
    for name, written in by_peer.items():
        check_honest_play(name, written, rounds, allowed, report)
    crash = report.crash
    if crash.get("dropped") and crash["back_in_round"] is None and crash["round"] + 2 <= rounds:
        report.comeback_problem = (f"{crash['peer']}, dropped from round {crash['round']}, "
                                   "never sat down again")
    rejected: Counter[str] = Counter()
    for written in by_peer.values():
        final = next((x for x in reversed(written) if x.get("final")), None)
        if final is not None:
            rejected.update(final["local"].get("rejected", {}))
    report.rejected = dict(sorted(rejected.items()))
    by_why = Counter({f"{who}: {why}": n for (_, who, why), n in flags.items()})
    report.flags = dict(sorted(by_why.items()))
    report.honest_flagged = {k: n for k, n in report.flags.items()
                             if k.split(":")[0] != liar}


def check_honest_play(name: str, written: list[dict[str, Any]], rounds: int,
                      allowed: tuple[str, ...], report: Report) -> None:
    """An honest peer's rounds score as it played them, and add up to its total.

    Its own summary lines say what it played: its cards up (agreed by all) and
    the Nerts cards its own tableau still held (``local``). A clean round scores
    exactly that, whoever misbehaved at the table; a round it was dropped from
    after a crash, the forfeit. The total it reports after the last round must
    be the sum (the soak's tables play the default rules, penalty on)."""
    rules = Variants()
    played, reported = 0, None
    for number in range(1, rounds + 1):
        line = next((x for x in written if x.get("round") == number), None)
        if line is None:
            return  # a round it did not write (it was down): nothing to add up
        me = next((p for p in line["players"] if p["name"] == name), None)
        if me is None:
            continue  # watching that round without a seat
        verdict = line["verdicts"][me["seat"]]
        if verdict == "":
            left = line.get("local", {}).get("nerts_left", me["nerts_left"])
            honest = round_score(me["foundation_cards"], left, rules)
        elif verdict in allowed:
            honest = forfeit_score(rules)  # an honest crash looks like leaving
        else:
            return  # an audit problem, reported as such
        if me["score"] != honest or me["void"] != (verdict != ""):
            report.score_problems.append(f"round {number}: {name} scored {me['score']}, "
                                         f"played {honest}")
        played += honest
        reported = me["total"]
    if reported is not None:
        report.honest_totals[name] = (reported, played)
        if reported != played:
            report.score_problems.append(f"{name}'s total {reported} is not the {played} "
                                         "it played")


def round_line_of(number: int, present: dict[str, dict[str, Any]], agreed: dict[str, Any],
                  flags: dict[tuple[str, str], int]) -> str:
    """One round as the report shows it: how many honest peers agree (same result, and
    they saw it agreed), what the audits said, who was flagged by how many, and why."""
    key = {name: json.dumps([line[k] for k in _SHARED]) for name, line in present.items()}
    most = Counter(key.values()).most_common(1)[0][0]
    agree = sum(1 for name, line in present.items() if key[name] == most and line["agreed"])
    names = {p["seat"]: p["name"] for p in agreed["players"]}
    verdicts = {str(names.get(seat, seat)): verdict
                for seat, verdict in enumerate(agreed["verdicts"]) if verdict}
    failed = [f"{who} ({verdict})" for who, verdict in verdicts.items()]
    flagged = [f"{who} ({'its verdict' if verdicts.get(who) == why else why}) by {n}"
               for (who, why), n in sorted(flags.items())]
    forfeits = [f"{names.get(p['seat'], p['seat'])} {p['score']}" for p in agreed["players"]
                 if p["void"]]
    return (f"round {number}: {agree}/{len(present)} honest peers agree; verdicts: "
            f"{', '.join(failed) or 'none'}; flagged: {', '.join(flagged) or 'nobody'}; "
            f"forfeits: {', '.join(forfeits) or 'none'}")


def note_comeback(report: Report, number: int, agreed: dict[str, Any]) -> None:
    """Was the crashed peer dropped from its round, and when did it play again?"""
    crash = report.crash
    if not crash or number < crash["round"]:
        return
    seat = next((p["seat"] for p in agreed["players"] if p["name"] == crash["peer"]), None)
    if number == crash["round"]:
        crash["dropped"] = seat is not None and agreed["verdicts"][seat] == "unaudited"
        crash["back_in_round"] = None if crash["dropped"] else number
    elif crash["back_in_round"] is None and seat is not None:
        crash["back_in_round"] = number


def check_cards(name: str, number: int, line: dict[str, Any], agreed: dict[str, Any],
                report: Report) -> None:
    local = line.get("local", {})
    me = next((p for p in agreed["players"] if p["name"] == name), None)
    if me is None:
        return  # watching a round without a seat: nothing of its own to account for
    if "cards_ok" not in local:
        report.card_problems.append(f"round {number}: {name} has no card accounting")
    elif not local["cards_ok"]:
        report.card_problems.append(f"round {number}: {name} lost or doubled cards")
    elif local["held"] + me["foundation_cards"] != DECK:
        report.card_problems.append(
            f"round {number}: {name} holds {local['held']} with {me['foundation_cards']} "
            f"on the foundations")


def fault_counts(table: PeerTable, killed: int) -> dict[str, int]:
    total = RelayStats()
    for relay in table.relays:
        for key, value in asdict(relay.stats).items():
            setattr(total, key, getattr(total, key) + value)
    counts = asdict(total)
    counts["killed"] = killed
    return counts


async def soak(args: argparse.Namespace, home: Path) -> Report:
    rng = random.Random(args.seed)
    report = Report(args.players, args.rounds)
    common = ["--headless", "--bot", "hard", "--pace", str(args.pace), "--bind", "127.0.0.1"]
    if args.code:
        common += ["--code", args.code]
    table = PeerTable(home, args.players, common=common, faults=FAULTS, by_address=True,
                      seed=args.seed, host=["--auto-next", "0.3", "--target", "10000",
                                            "--countdown", "0", "--drop-after",
                                            str(args.drop_after), "--teams", args.teams])
    for i in range(args.players):
        table.own[i] = ["--seed", str(args.seed * 100 + i)]
    adversary = ADVERSARIES[args.adversary] if args.adversary else None
    if adversary is not None:
        report.adversary = {"kind": args.adversary, "peer": table.peers[ADVERSARY_PEER].name}
        if adversary.inside is not None:
            if not (sys.modules[Replica.__module__].__file__ or "").endswith(".py"):
                raise SystemExit("soak: the adversary patches the replica, which compiled code "
                                 "would not call (run the soak on the pure package)")
            table.peers[ADVERSARY_PEER].prefix = (sys.executable, str(Path(__file__).resolve()),
                                                  "--inside", args.adversary, "--")
    liar = report.liar
    began = time.monotonic()
    sampler: asyncio.Task[None] | None = None
    try:
        await table.start()
        sampler = asyncio.get_running_loop().create_task(sample_rss(table, report))
        await wait_until(lambda: all("round 1 starts" in p.log.read_text() for p in table.peers),
                         60, table, "round 1", liar)
        report.rss_start_kb = {p.name: rss_kb(p) for p in table.peers}
        if args.kills:
            await kills(table, rng, args.kills, report)
            # Every round the kills fell in is checked, and one after them.
            args.rounds = report.rounds_asked = max(args.rounds,
                                                    round_under_way(table.peers[0]) + 1)
        elif adversary is None:
            await chaos(table, rng, args.rounds, report, args.down, args.crash_round)
        elif adversary.during is not None:  # one misbehaving peer at a time: no chaos then
            await adversary.during(table, rng, report)
        budget = 60.0 + 30.0 * args.rounds
        try:
            await wait_until(lambda: all_wrote(table, args.rounds, liar),
                             min(budget, args.seconds or budget), table,
                             f"{args.rounds} rounds", liar)
        except TimeoutError:
            if args.seconds is None:
                raise
        report.rounds_played = max((n for n in range(1, args.rounds + 1)
                                    if all_wrote(table, n, liar)), default=0)
        report.rss_end_kb = {p.name: rss_kb(p) for p in table.peers}
        for peer in table.peers:
            peer.terminate()
        for peer in table.peers:
            await peer.wait(90)  # closing after a long game takes a while on a busy machine
    finally:
        report.seconds = round(time.monotonic() - began, 1)
        if sampler is not None:
            sampler.cancel()
        await table.close()
    report.faults = fault_counts(table, killed=len(report.kills) or (1 if report.crash else 0))
    report.tracebacks = sum(p.log.read_text(errors="replace").count("Traceback")
                            for p in table.peers if p.log.exists())
    check(table, report.rounds_played, report)
    return report


def show(report: Report) -> None:
    print(f"peers {report.players}, rounds {report.rounds_completed}/{report.rounds_asked} "
          f"completed in {report.seconds:g} s"
          + (f" (time ran out after {report.rounds_played})"
             if report.rounds_played < report.rounds_asked else ""))
    if report.adversary:
        print(f"adversary: {report.adversary}")
    for line in report.round_lines:
        print(f"  {line}")
    print(f"divergences {report.divergences}"
          + (f" (rounds {report.divergent_rounds})" if report.divergent_rounds else ""))
    print(f"rounds a peer left before seeing them agreed: {report.unconfirmed_rounds or 'none'}")
    print("flags (times logged by honest peers): "
          + (", ".join(f"{k} x{v}" for k, v in report.flags.items()) or "none"))
    print("honest peers flagged: "
          + (", ".join(f"{k} x{v}" for k, v in report.honest_flagged.items()) or "none"))
    print("faults injected: " + ", ".join(f"{k} {v}" for k, v in report.faults.items()))
    print(f"crash: {report.crash}")
    if report.kills:
        back = sum(k["resume"] == "back" for k in report.kills)
        print(f"kills: {len(report.kills)}, back with --resume {back}, would not: "
              + ("; ".join(f"{k['peer']}: {k['resume']}" for k in report.kills
                           if k["resume"] != "back") or "none"))
    print(f"tracebacks in the peers' logs: {report.tracebacks}")
    print("messages rejected: " + (", ".join(f"{k} {v}" for k, v in report.rejected.items())
                                   or "none"))
    print(f"round lines missing (a crashed peer's): {report.missing_lines}")
    print(f"card problems: {report.card_problems or 'none'}")
    print(f"audit problems: {report.audit_problems or 'none'}")
    print(f"comeback problem: {report.comeback_problem or 'none'}")
    print("honest totals, reported = as played: " + (", ".join(
        f"{name} {got} {'=' if got == played else '!='} {played}"
        for name, (got, played) in sorted(report.honest_totals.items())) or "none"))
    print(f"score problems: {report.score_problems or 'none'}")
    print("VmRSS MB, first round -> end: " + ", ".join(
        f"{name} {report.rss_start_kb.get(name, 0) / 1024:.0f}->{kb / 1024:.0f}"
        for name, kb in report.rss_end_kb.items()))
    by_round = report.rss_by_round_kb
    shown = sorted({n for n in by_round if n in (1, 5) or n % 10 == 0} | {max(by_round, default=0)}
                   - {0})
    for number in shown:
        print(f"VmRSS MB after round {number}: " + ", ".join(
            f"{name} {kb / 1024:.1f}" for name, kb in by_round[number].items()))
        print(f"journal KB after round {number}: " + ", ".join(
            f"{name} {b / 1024:.0f}"
            for name, b in report.journal_by_round_b.get(number, {}).items()))
    fifth = by_round.get(5)
    if fifth and by_round and max(by_round) > 5:
        last = by_round[max(by_round)]
        print(f"VmRSS after round {max(by_round)} against round 5: " + ", ".join(
            f"{name} {last[name] / kb - 1:+.1%}" for name, kb in fifth.items()
            if kb and last.get(name)))


def main() -> int:
    if sys.argv[1:2] == ["--inside"]:  # a peer process of the soak, running a modified client
        return run_inside(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--short", action="store_true",
                        help="2 rounds: a quick check (the test suite runs this)")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--pace", type=float, default=0.05, help="bot think-time factor")
    parser.add_argument("--drop-after", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--down", type=float, metavar="SECONDS",
                        help="keep the killed peer (a guest) down this long; past --drop-after "
                             "it is dropped from its round and must sit down again")
    parser.add_argument("--crash-round", type=int, metavar="N",
                        help="the random crash falls in round N (else a random round)")
    parser.add_argument("--kills", type=int, default=0, metavar="N",
                        help="kill a random peer N times at random moments (instead of the "
                             "one crash) and resume it each time")
    parser.add_argument("--code", help="play at a table with this code (all traffic sealed)")
    parser.add_argument("--teams", choices=TEAMS, default="none",
                        help="the table's teams (share: two bots at each peer's tableau)")
    parser.add_argument("--keep", type=Path,
                        help="keep the peers' data dirs and logs here (kept anyway on failure)")
    parser.add_argument("--adversary", choices=sorted(ADVERSARIES),
                        help=f"peer p{ADVERSARY_PEER} misbehaves so (instead of the random crash)")
    parser.add_argument("--seconds", type=float,
                        help="stop after this long and check the rounds played by then")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    if args.short:
        args.rounds = 2
    if not 2 <= args.players <= 8 or args.rounds < 1:
        parser.error("--players must be 2..8 and --rounds at least 1")
    if args.kills < 0 or (args.kills and args.adversary):
        parser.error("--kills must be 0 or more, and no --adversary beside it")
    home = args.keep or Path(tempfile.mkdtemp(prefix="nerts-soak-"))
    kept = f"the peers' data dirs and logs are in {home}"
    try:
        report = asyncio.run(soak(args, home))
    except (TimeoutError, RuntimeError) as exc:  # the table got stuck, or a peer died
        print(f"soak: {exc}\n{kept}", file=sys.stderr)
        return 2
    except BaseException:
        print(kept, file=sys.stderr)
        raise
    if args.keep is None and report.ok:
        shutil.rmtree(home, ignore_errors=True)
    else:
        print(kept, file=sys.stderr)
    if args.json:
        print(json.dumps(asdict(report) | {"ok": report.ok}))
    else:
        show(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
