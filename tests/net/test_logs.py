"""Log lines: one line each, a caught bug included (no traceback reaches a log), each
saying what happened once, in the words of whoever reads it."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from p2p_nerts.game.variants import Variants
from p2p_nerts.net.logs import setup_logging
from p2p_nerts.peer.admission import Admission
from p2p_nerts.peer.headless import run_headless
from p2p_nerts.peer.node import LATECOMER, Endpoint, NetSession, TableConfig
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase, Replica
from p2p_nerts.testing.memnet import TABLE_ID, bot_table

from ..netkit import until

LOCAL = Endpoint("127.0.0.1")


def test_an_error_logged_with_its_exception_is_one_line_naming_what_and_where(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logging.getLogger(), "level", logging.getLogger().level)
    root = logging.getLogger().handlers
    pytests, root[:] = root[:], []  # in place: pytest takes its own handlers off later
    log = tmp_path / "nerts.log"
    try:
        setup_logging("Tess", False, log)

        def deep() -> None:
            raise ValueError("no such pile\nsecond line")

        try:
            deep()
        except ValueError:
            logging.getLogger("nerts.test").exception("handling frames failed")
        logging.getLogger("nerts.test").info("still playing")
    finally:
        for handler in root:
            handler.close()
        root[:] = pytests
    lines = log.read_text().splitlines()
    assert len(lines) == 2, lines
    head, at = lines[0].split(" (in ")
    assert head.endswith("Tess: handling frames failed: ValueError: no such pile second line")
    assert at.startswith("test_logs.py:") and at.endswith(", deep)"), lines[0]
    assert "Traceback" not in lines[0]
    assert lines[1].endswith("Tess: still playing")


def test_a_latecomer_logs_the_round_under_way_not_the_start_it_catches_up_on(
        caplog: pytest.LogCaptureFixture) -> None:
    """A latecomer is told a round is under way, then catches up on it: its start
    (``round 1 starts in 0 s``) is not its news, nor logged as if it were."""
    async def scenario() -> None:
        config = TableConfig(variants=Variants(target=1000), countdown=0.0, auto_start=2,
                             views=False)
        host = await NetSession.host(Identity.generate("Tess"), config, LOCAL,
                                     table_name="Lab", interfaces=None)
        guest = await NetSession.join(Identity.generate("Bo"), ("127.0.0.1", host.port),
                                      TableConfig(views=False), LOCAL)
        runners = [asyncio.create_task(s.run()) for s in (host, guest)]
        await until(lambda: host.replica.phase is Phase.PLAYING, "the round is dealt")
        late = await NetSession.join(Identity.generate("Lu"), ("127.0.0.1", host.port),
                                     TableConfig(views=False), LOCAL)
        headless = asyncio.create_task(run_headless(late, bot=None, summary=None))
        await until(lambda: late.replica.phase is Phase.PLAYING, "Lu catches up on the round")
        for session in (host, guest, late):
            session.close()
        await asyncio.gather(headless, *runners)

    with caplog.at_level(logging.INFO, logger="nerts"):
        asyncio.run(scenario())
    said = [r.getMessage() for r in caplog.records if r.name == "nerts"]
    assert LATECOMER in said
    assert not [line for line in said if "starts in" in line], said


def test_a_host_back_from_its_journal_names_its_seats_in_the_log_before_any_roster() -> None:
    """Resumed, a host's seats link back before a roster changes: the log names each
    player (it sat down before the crash), not "a stranger"."""
    net = bot_table(3, seed=1)
    host = net.replicas[0]
    back = Replica.restore(host.me, TABLE_ID, host.me.public_key, net.written(0), net.now)
    door = Admission(dict, lambda _command: None, lambda: False, lambda: net.now)
    door.use(back, back.view())
    assert [door.name_of(r.me.public_key, "Lab") for r in net.replicas[1:]] == ["p1", "p2"]
