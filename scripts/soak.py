#!/usr/bin/env python3
"""Soak and chaos: a table of bot processes plays many rounds through a hostile network.

Every peer is a real ``nerts`` process on 127.0.0.1 (``nerts host --headless
--bot hard`` and ``nerts bot``, each with its own data dir, fast bots, at a
table with no countdown and a short ``--drop-after``) behind its own
fault-injecting relay (``p2p_nerts.net.testing.Relay``): every frame is
delayed at random (which reorders frames between connections), some entries
are sent twice or have a byte flipped, and now and then a connection is cut.
At a random moment one peer (the host, maybe) is killed with SIGKILL and
started again with ``--resume`` a little later; if the others dropped it from
the round, it asks for its seat back and plays again from a later round.

With ``--adversary NAME`` one seated peer misbehaves instead of the random
crash (see ADVERSARIES): ``equivocate`` runs a modified client that sends one
PLAY to half the table and another under the same number to the rest;
``stale-journal`` kills a guest mid-round, cuts the tail off its journal and
resumes it. The checks then hold for the honest peers, and a line per round
says how many of them agree and who was flagged, and why.

After ``--rounds`` rounds every peer is stopped and its ``--summary`` file is
checked, round by round:

* agreement - the same end, seats, scores, foundation hash and verdicts on
  every peer that wrote the round (a peer watching a round it has no seat in
  writes it too), and every peer saw it agreed;
* cards     - every peer's own deck is accounted for (``cards_ok``: each card
  in its tableau or on the agreed foundations), and the cards it holds plus
  its cards on the foundations (as every peer agreed) make a whole deck;
* audits    - no verdict but "" (clean) or "dropped";
* comeback  - a crashed peer that was dropped from its round sits down again
  (checked when at least two rounds follow the crash).

It prints the faults injected by kind, the messages the peers rejected (the
sum of their counters, by reason), the peers flagged for misbehaving (all of
them are honest, so any flag is a bug), the rounds completed (agreed by every
peer), divergences (peers that computed another result: must be 0), rounds a
peer left without seeing them agreed, and each peer's resident memory (VmRSS)
at the first round and at the end. Exit status 0 when every round was
completed with no divergence and no card, audit or comeback problem.

    scripts/soak.py --short                   # 8 peers, 2 rounds, well under a minute
    scripts/soak.py --rounds 30 --players 8   # the long run
    scripts/soak.py --rounds 5 --adversary equivocate
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

from p2p_nerts.game.variants import TEAMS
from p2p_nerts.net.testing import Faults, PeerProcess, PeerTable, RelayStats
from p2p_nerts.protocol.identity import load_or_create
from p2p_nerts.protocol.journal import Kind
from p2p_nerts.store import DB_FILE, Store

FAULTS = Faults(min_delay=0.0, max_delay=0.03, duplicate=0.03, tamper=0.005, cut=0.001)
DECK = 52  # no jokers at a soak table
_SHARED = ("end", "players", "foundation_hash", "verdicts")
"""What every peer must agree on for a round (a resumed peer counts the
collisions and bounces of the round it crashed in only from its return on)."""


# -- adversaries: one seated peer misbehaves ------------------------------------
def equivocate(table: PeerTable, rng: random.Random, report: Report) -> Awaitable[None]:
    """The last guest runs a client that equivocates on its third play of the game."""
    peer = table.peers[-1]
    peer.prefix = (sys.executable, str(Path(__file__).resolve()), "--be", "equivocate")
    report.adversary = {"kind": "equivocate", "peer": peer.name}

    async def nothing_more() -> None:
        """The lie is the modified client's own doing (run_adversary_peer)."""

    return nothing_more()


def stale_journal(table: PeerTable, rng: random.Random, report: Report) -> Awaitable[None]:
    """A guest killed mid-round comes back from a journal that lost its last entries."""
    k = rng.randrange(1, table.players)
    lost = rng.randint(1, 4)
    report.adversary = {"kind": "stale-journal", "peer": table.peers[k].name, "lost": lost}

    async def act() -> None:
        host = table.peers[0]
        round_no = 2 if report.rounds_asked > 2 else 1
        await wait_until(lambda: f"round {round_no} starts" in host.log.read_text(),
                         60.0 * round_no, table, f"round {round_no}")
        await asyncio.sleep(rng.uniform(0.5, 2.0))
        await table.crash(k)
        report.adversary["round"] = round_under_way(host)
        report.adversary["cut"] = cut_journal(table.peers[k], lost)
        await table.resume(k)
        report.crash = {"peer": table.peers[k].name, "round": report.adversary["round"],
                        "down_s": 0.0, "dropped": False,
                        "back_in_round": report.adversary["round"]}

    return act()


def cut_journal(peer: PeerProcess, lost: int) -> int:
    """Drop a dead peer's journal from its ``lost``-th last own entry on; return how
    many records went (the table still holds those entries: they were sent)."""
    # The peer's own data dir: its home for the host, bots/1 for a ``nerts bot``.
    data = peer.home if (peer.home / DB_FILE).exists() else peer.home / "bots" / "1"
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


def run_adversary_peer(kind: str, command: list[str]) -> int:
    """The modified client: ``nerts`` itself, with a replica that lies as ``kind`` says."""
    from p2p_nerts import cli
    from p2p_nerts.net import node
    from p2p_nerts.protocol.envelope import Entry, seal
    from p2p_nerts.protocol.messages import Payload
    from p2p_nerts.protocol.messages import Play as PlayMsg
    from p2p_nerts.protocol.replica import Replica, Send

    assert kind == "equivocate"

    class Equivocating(Replica):
        """Its third PLAY goes to half the other seats; a twin (same number, same
        predecessor, one tick later) to the rest."""

        plays = 0

        def _sign(self, payload: Payload, **options: Any) -> tuple[Entry, Payload] | None:
            signed = super()._sign(payload, **options)
            rs = self.rs
            if signed is None or not isinstance(payload, PlayMsg) or rs is None:
                return signed
            self.plays += 1
            if self.plays != 3:
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

    vars(node)["Replica"] = Equivocating  # the class NetSession builds its replica from
    args = command[command.index("p2p_nerts.cli") + 1:]
    return cli.main(args)


#: name -> set-up of the adversary (before the table starts); it returns the part
#: that runs during the game.
ADVERSARIES: dict[str, Callable[[PeerTable, random.Random, Report], Awaitable[None]]] = {
    "equivocate": equivocate,
    "stale-journal": stale_journal,
}


@dataclass
class Report:
    players: int
    rounds_asked: int
    seconds: float = 0.0
    rounds_completed: int = 0
    divergences: int = 0
    divergent_rounds: list[int] = field(default_factory=list)
    unconfirmed_rounds: list[int] = field(default_factory=list)
    flags: dict[str, int] = field(default_factory=dict)
    card_problems: list[str] = field(default_factory=list)
    audit_problems: list[str] = field(default_factory=list)
    comeback_problem: str = ""
    missing_lines: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)
    crash: dict[str, Any] = field(default_factory=dict)
    rss_start_kb: dict[str, int] = field(default_factory=dict)
    rss_end_kb: dict[str, int] = field(default_factory=dict)
    adversary: dict[str, Any] = field(default_factory=dict)
    honest_flagged: dict[str, int] = field(default_factory=dict)
    per_round: list[str] = field(default_factory=list)

    @property
    def liar(self) -> str | None:
        """The peer whose lies are expected (not the stale journal's: it is honest)."""
        return self.adversary.get("peer") if self.adversary.get("kind") == "equivocate" else None

    @property
    def ok(self) -> bool:
        return (self.divergences == 0 and self.rounds_completed >= self.rounds_asked
                and not self.card_problems and not self.audit_problems
                and not self.comeback_problem and not self.honest_flagged)


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


def all_wrote(table: PeerTable, number: int, liar: str | None = None) -> bool:
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
                down: float | None = None) -> None:
    """Kill one peer at a random moment of a random round; bring it back with --resume.

    ``down`` fixes how long it stays dead (else 0.2-1.5 s); longer than
    --drop-after, the others drop it from its round, and it must sit down
    again (a guest then: without its host no table plays on).
    """
    victim = rng.randrange(1 if down is not None else 0, table.players)
    # A long outage outlasts a few rounds: leave rounds to come back to.
    round_no = rng.randint(1, max(1, rounds // 2 if down is not None else rounds - 1))
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


def check(table: PeerTable, rounds: int, report: Report) -> None:
    """Compare the honest peers' summaries round by round (see the module docstring)."""
    by_peer = {peer.name: summary_lines(peer) for peer in table.peers
               if peer.name != report.liar}
    for number in range(1, rounds + 1):
        lines = {name: next((x for x in ls if x.get("round") == number), None)
                 for name, ls in by_peer.items()}
        present = {name: line for name, line in lines.items() if line is not None}
        report.missing_lines += len(lines) - len(present)
        if not present:
            report.divergences += 1
            report.divergent_rounds.append(number)
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
            if verdict not in ("", "dropped") and names.get(seat) != report.liar:
                report.audit_problems.append(f"round {number} seat {seat}: {verdict}")
        report.per_round.append(round_report(number, present, agreed))
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
    flags: Counter[str] = Counter()
    honest: Counter[str] = Counter()
    for peer in table.peers:
        for logged in peer.log.read_text(errors="replace").splitlines():
            if " flagged: " in logged:
                before, reason = logged.split(" flagged: ", 1)
                who = before.split()[-1] if before.split() else "?"
                flags[f"{who}: {reason}"] += 1
                if who != report.liar:
                    honest[f"{who}: {reason}"] += 1
    report.flags = dict(sorted(flags.items()))
    report.honest_flagged = dict(sorted(honest.items()))


def round_report(number: int, present: dict[str, dict[str, Any]],
                 agreed: dict[str, Any]) -> str:
    """One line: how many honest peers agree on the round, and who was flagged, and why."""
    shared = Counter(json.dumps([line[k] for k in _SHARED]) for line in present.values())
    most = shared.most_common(1)[0][0]
    agree = sum(1 for line in present.values()
                if json.dumps([line[k] for k in _SHARED]) == most and line["agreed"])
    names = {p["seat"]: p["name"] for p in agreed["players"]}
    flagged = [f"{names.get(seat, seat)} ({verdict})"
               for seat, verdict in enumerate(agreed["verdicts"]) if verdict not in ("", "dropped")]
    dropped = [str(names.get(seat, seat)) for seat, verdict in enumerate(agreed["verdicts"])
               if verdict == "dropped"]
    return (f"round {number}: {agree}/{len(present)} honest peers agree; flagged: "
            f"{', '.join(flagged) or 'nobody'}; dropped: {', '.join(dropped) or 'nobody'}")


def note_comeback(report: Report, number: int, agreed: dict[str, Any]) -> None:
    """Was the crashed peer dropped from its round, and when did it play again?"""
    crash = report.crash
    if not crash or number < crash["round"]:
        return
    seat = next((p["seat"] for p in agreed["players"] if p["name"] == crash["peer"]), None)
    if number == crash["round"]:
        crash["dropped"] = seat is not None and agreed["verdicts"][seat] == "dropped"
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


def fault_counts(table: PeerTable) -> dict[str, int]:
    total = RelayStats()
    for relay in table.relays:
        for key, value in asdict(relay.stats).items():
            setattr(total, key, getattr(total, key) + value)
    counts = asdict(total)
    counts["killed"] = 1
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
    adversary = (ADVERSARIES[args.adversary](table, rng, report) if args.adversary
                 else None)
    liar = report.liar
    began = time.monotonic()
    try:
        await table.start()
        await wait_until(lambda: all("round 1 starts" in p.log.read_text() for p in table.peers),
                         60, table, "round 1")
        report.rss_start_kb = {p.name: rss_kb(p) for p in table.peers}
        if adversary is not None:
            await adversary
        else:
            await chaos(table, rng, args.rounds, report, args.down)
        await wait_until(lambda: all_wrote(table, args.rounds, liar),
                         60.0 + 30.0 * args.rounds, table, f"{args.rounds} rounds", liar)
        report.rss_end_kb = {p.name: rss_kb(p) for p in table.peers}
        for peer in table.peers:
            peer.terminate()
        for peer in table.peers:
            await peer.wait(15)
    finally:
        report.seconds = round(time.monotonic() - began, 1)
        await table.close()
    report.faults = fault_counts(table)
    if not report.crash:
        report.faults["killed"] = 0  # an equivocating peer is not killed
    check(table, args.rounds, report)
    return report


def show(report: Report) -> None:
    print(f"peers {report.players}, rounds {report.rounds_completed}/{report.rounds_asked} "
          f"completed in {report.seconds:g} s")
    print(f"divergences {report.divergences}"
          + (f" (rounds {report.divergent_rounds})" if report.divergent_rounds else ""))
    print(f"rounds a peer left before seeing them agreed: {report.unconfirmed_rounds or 'none'}")
    if report.adversary:
        print(f"adversary: {report.adversary}")
        for line in report.per_round:
            print("  " + line)
        print("flags (by every peer that logged one): "
              + (", ".join(f"{k} x{v}" for k, v in report.flags.items()) or "none"))
    print("honest peers flagged: " + (", ".join(f"{k} {v}"
                                                for k, v in report.honest_flagged.items())
                                      or "none"))
    print("faults injected: " + ", ".join(f"{k} {v}" for k, v in report.faults.items()))
    print(f"crash: {report.crash}")
    print("messages rejected: " + (", ".join(f"{k} {v}" for k, v in report.rejected.items())
                                   or "none"))
    print(f"round lines missing (a crashed peer's): {report.missing_lines}")
    print(f"card problems: {report.card_problems or 'none'}")
    print(f"audit problems: {report.audit_problems or 'none'}")
    print(f"comeback problem: {report.comeback_problem or 'none'}")
    print("VmRSS MB, first round -> end: " + ", ".join(
        f"{name} {report.rss_start_kb.get(name, 0) / 1024:.0f}->{kb / 1024:.0f}"
        for name, kb in report.rss_end_kb.items()))


def main() -> int:
    if sys.argv[1:2] == ["--be"]:  # a peer process of the soak, running a modified client
        return run_adversary_peer(sys.argv[2], sys.argv[3:])
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
    parser.add_argument("--code", help="play at a table with this code (all traffic sealed)")
    parser.add_argument("--teams", choices=TEAMS, default="none",
                        help="the table's teams (share: two bots at each peer's tableau)")
    parser.add_argument("--keep", type=Path,
                        help="keep the peers' data dirs and logs here (kept anyway on failure)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--adversary", choices=sorted(ADVERSARIES),
                        help="one seated peer misbehaves (instead of the random crash)")
    args = parser.parse_args()
    if args.short:
        args.rounds = 2
    if not 2 <= args.players <= 8 or args.rounds < 1:
        parser.error("--players must be 2..8 and --rounds at least 1")
    home = args.keep or Path(tempfile.mkdtemp(prefix="nerts-soak-"))
    kept = f"the peers' data dirs and logs are in {home}"
    try:
        report = asyncio.run(soak(args, home))
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
