"""``nerts host/join/bot``: one clear line and the right exit status for every failure.

Usage errors exit 2 (argparse's convention); a table that cannot be found,
reached or joined exits 1. mDNS stays on 127.0.0.1, TCP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import msgpack
import pytest
from zeroconf import InterfaceChoice

import p2p_nerts.cli
import p2p_nerts.ui.app
from p2p_nerts.cli import main
from p2p_nerts.commands.play import where_the_game_is
from p2p_nerts.game.bot import SKILLS, Bot
from p2p_nerts.game.tableau import OP_FOUND, OP_SLIDE, OP_TURN, OP_WORK
from p2p_nerts.net.framing import encode_frame
from p2p_nerts.net.interfaces import listen_addresses
from p2p_nerts.net.wire import NET_VERSION
from p2p_nerts.peer.headless import paced, run_headless
from p2p_nerts.peer.node import Endpoint, NetSession, TableConfig
from p2p_nerts.protocol.identity import Identity, load_or_create
from p2p_nerts.protocol.journal import Kind, Record
from p2p_nerts.protocol.replica import Phase, Replica
from p2p_nerts.session import Session
from p2p_nerts.store import DB_FILE, Store

pytestmark = pytest.mark.timeout(30)

#: What a player (or a partner) does on a tableau; the replica settles and
#: rotates by itself.
PLAYERS_MOVES = frozenset({OP_TURN, OP_FOUND, OP_WORK, OP_SLIDE})


@pytest.fixture(autouse=True)
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each run gets its own identity; the root logger main() sets up is put back."""
    monkeypatch.setenv("NERTS_HOME", str(tmp_path))
    monkeypatch.setenv("NERTS_INTERFACES", "127.0.0.1")
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.parametrize("argv", [
    ["host", "--seats", "9", "--headless"],
    ["host", "--auto-start", "5", "--seats", "4", "--headless"],
    ["host", "--table-name", "x" * 40, "--headless"],
    ["host", "--port", "70000", "--headless"],
    ["join", "--pace", "0", "--headless"],
    ["bot", "--linger", "0.5"],
    ["host", "--linger", "nan", "--headless"],
    ["join", "--linger", "86401", "--headless"],
    ["host", "--drop-after", "0.1", "--headless"],
    ["host", "--countdown", "61", "--headless"],
    ["host", "--countdown", "nan", "--headless"],
    ["bot", "--skill", "godlike"],
    ["join", "--interfaces", "not-an-address", "--headless"],
    ["host", "--code", "  ", "--headless"],
    ["bot", "--code", "x" * 65],
    ["host", "--name", " ", "--headless"],
    ["bot", "--name", "Tess\x1b[2J"],
    ["bot", "--find-timeout", "nan"],
    ["host", "--partner", "hard", "--headless"],
    ["join", "--partner", "godlike"],
    ["bot", "--partner", "hard"],
    ["join", "--find-timeout", "inf", "--headless"],
    ["bot", "--summary", "/nonexistent-nerts-dir/rounds.json"],
    ["host", "--summary", ".", "--headless"],
])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str],
                             tmp_path: Path) -> None:
    err = _refused(argv, capsys, tmp_path)
    assert "error:" in err and "Traceback" not in err


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    """Run ``nerts argv``: a usage error (exit 2) that made nothing; what it said."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert list(tmp_path.iterdir()) == []  # no key, no table store: nothing was made
    return capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["bot", "--countdown", "0"],
    ["join", "--drop-after", "2", "--headless"],
    ["bot", "--resume", "--countdown", "5"],
])
def test_a_guest_cannot_set_the_tables_clocks(argv: list[str], capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    """The host's countdown and drop timeout are every seat's: a guest's is refused, not ignored."""
    err = _refused(argv, capsys, tmp_path)
    option = next(a for a in argv if a in ("--countdown", "--drop-after"))
    assert (f"{argv[0]}: error: {option} is the table's, set by its host (nerts host {option})"
            in err)


def test_no_table_found_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bot", "t-nobody-hosts-this", "--find-timeout", "0.3",
                 "--bind", "127.0.0.1"]) == 1
    assert "nerts: found no table named 't-nobody-hosts-this'" in capsys.readouterr().err


def test_a_data_dir_in_use_exits_1_and_changes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second ``nerts`` on one data dir (one key: no table would seat both) is
    told so before it makes a key or looks for a table; ``nerts bot`` needs no
    telling: it takes a data dir of its own."""
    with Store(tmp_path / DB_FILE):
        assert main(["join", "127.0.0.1:9", "--headless", "--bind", "127.0.0.1"]) == 1
        assert f"nerts: another nerts is using {tmp_path}" in capsys.readouterr().err
        assert not (tmp_path / "identity.key").exists()
        assert main(["bot", "t-nobody-hosts-this", "--find-timeout", "0.2",
                     "--bind", "127.0.0.1"]) == 1
        assert "found no table" in capsys.readouterr().err
        bot = load_or_create(tmp_path / "bots" / "1" / "identity.key")
        assert bot.name.startswith("Bot-")  # the table sees who is a computer
    assert main(["bot", "--resume", "--bind", "127.0.0.1"]) == 1
    assert ("nerts: no bot in " f"{tmp_path / 'bots'} has an unfinished table"
            in capsys.readouterr().err)


def test_solo_too_is_one_nerts_per_data_dir_and_asks_nothing_when_busy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(p2p_nerts.cli, "terminal_missing", lambda: None)

    def never() -> None:
        raise AssertionError("the player was asked")

    monkeypatch.setattr(p2p_nerts.cli, "_player", never)
    with Store(tmp_path / DB_FILE):
        assert main(["solo"]) == 1
    assert f"nerts: another nerts is using {tmp_path}" in capsys.readouterr().err
    assert not (tmp_path / "identity.key").exists()
    a_file = tmp_path / "file"
    a_file.write_text("", encoding="utf-8")
    monkeypatch.setenv("NERTS_HOME", str(a_file))
    assert main(["solo"]) == 1
    assert capsys.readouterr().err == f"nerts: the data dir {a_file} is not a directory\n"


def test_a_headless_seat_takes_the_name_in_the_settings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.toml").write_text('name = "Ana"\n', encoding="utf-8")
    assert main(["join", "127.0.0.1:9", "--headless", "--bind", "127.0.0.1"]) == 1
    assert "cannot reach 127.0.0.1:9" in capsys.readouterr().err
    assert load_or_create(tmp_path / "identity.key").name == "Ana"
    assert main(["join", "127.0.0.1:9", "--headless", "--bind", "127.0.0.1",
                 "--name", "Bo"]) == 1  # --name still wins
    assert load_or_create(tmp_path / "identity.key").name == "Bo"


def test_nothing_listening_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: refused
        assert main(["bot", f"127.0.0.1:{port}", "--bind", "127.0.0.1"]) == 1
    assert f"nerts: cannot reach 127.0.0.1:{port}" in capsys.readouterr().err


def test_a_port_in_use_names_the_options_to_change(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["host", "--headless", "--bind", "127.0.0.1", "--port", str(port),
                     "--interfaces", "127.0.0.1"]) == 1
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port} (--bind, --port)" in err
    assert "Traceback" not in err


@pytest.fixture
def future_host() -> Iterator[int]:
    """A host that speaks a newer protocol: it sends its info frame and hangs up."""
    server = socket.create_server(("127.0.0.1", 0))

    def greet() -> None:
        with contextlib.suppress(OSError):
            conn, _ = server.accept()
            with conn:
                info = {"v": NET_VERSION + 1, "name": "Zed's table"}
                conn.sendall(encode_frame(msgpack.packb(info)))
                conn.recv(100)

    thread = threading.Thread(target=greet, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    server.close()
    thread.join(5)


def test_another_protocol_version_exits_1(future_host: int,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["join", f"127.0.0.1:{future_host}", "--headless",
                 "--bind", "127.0.0.1"]) == 1
    assert (f"nerts: table Zed's table runs protocol v{NET_VERSION + 1}; "
            f"this nerts speaks v{NET_VERSION}") in capsys.readouterr().err


@pytest.mark.parametrize("from_env", [False, True])
def test_nerts_host_in_a_terminal_hands_its_code_to_the_screen(
        from_env: bool, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The host's table lobby shows the code (test_ui_seats): here, that it gets it."""
    opened: list[tuple[bool, str | None]] = []

    class App:
        """Stands in for the full-screen app: notes what it is opened with, then leaves."""

        def __init__(self, session: Session, *_args: object, code: str | None = None,
                     **_kwargs: object) -> None:
            self.session = session
            opened.append((session.view.is_host, code))

        async def run(self) -> None:
            self.session.close()
            await self.session.run()

    monkeypatch.setattr(p2p_nerts.ui.app, "NertsApp", App)
    monkeypatch.setattr(p2p_nerts.cli, "terminal_missing", lambda: None)  # pytest has none
    argv = ["host", "--name", "Tess", "--bind", "127.0.0.1"]
    if from_env:
        monkeypatch.setenv("NERTS_CODE", "pink otter")
    else:
        argv += ["--code", "pink otter"]
    assert main(argv) == 0
    assert opened == [(True, "pink otter")]
    assert capsys.readouterr().out.endswith("no round played: nothing kept\n")


def at_the_screen(monkeypatch: pytest.MonkeyPatch,
                  play: Callable[[NetSession], Awaitable[None]]) -> None:
    """``nerts host`` in a terminal with its full-screen app standing in: ``play``
    with the host's session, as the player at the keys would (pytest has no
    terminal)."""

    class App:
        def __init__(self, session: Session, *_args: object, **_kwargs: object) -> None:
            assert isinstance(session, NetSession)
            self.host = session

        async def run(self) -> None:
            await play(self.host)

    monkeypatch.setattr(p2p_nerts.ui.app, "NertsApp", App)
    monkeypatch.setattr(p2p_nerts.cli, "terminal_missing", lambda: None)


def test_where_the_game_is_never_names_a_game_before_this_one(tmp_path: Path) -> None:
    """Played again at the table, the game before is finished and kept under the same
    table id: leaving the new one before a round of it is scored keeps nothing."""
    me = Identity.generate("Tess")
    table_id = bytes(range(16))
    replica = Replica(me, table_id, me.public_key)  # the new game, not dealt yet
    with Store(tmp_path / DB_FILE) as store:
        before = {"table_id": table_id.hex(), "flags": []}
        store.keep_game(table_id, 1, 1.0, before, b"record")
        assert where_the_game_is(store, replica, "host") == "no round played: nothing kept"
        given_up = {"table_id": table_id.hex(), "flags": ["abandoned"]}
        number = store.keep_game(table_id, 9, 2.0, given_up, b"record")
        assert where_the_game_is(store, replica, "host") == (
            f"game #{number} kept: nerts history")


@pytest.mark.parametrize(("leave", "said"), [
    ("dealt", "no round finished: nerts host --resume goes on with the game"),
    ("scored", "game #1 kept: nerts history; nerts host --resume goes on with it"),
])
def test_a_host_leaving_at_its_screen_is_told_where_the_game_is(
        leave: str, said: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """As a solo player is: its table is what --resume goes back to, and a round scored
    is in the history. (A bot plays the host's seat, another a guest's.)"""

    async def play(host: NetSession) -> None:
        seat = asyncio.create_task(run_headless(
            host, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(1)), summary=None))
        guest = await NetSession.join(Identity.generate("Bo"), ("127.0.0.1", host.port),
                                      TableConfig(), Endpoint(bind="127.0.0.1"))
        bot = asyncio.create_task(run_headless(
            guest, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(2)), summary=None))
        r = host.replica

        def there() -> bool:
            rs = r.rs
            if leave == "dealt":
                return rs is not None and rs.started
            return r.phase is Phase.BETWEEN
        try:
            async with asyncio.timeout(25):
                while not there():
                    await asyncio.sleep(0.02)
        finally:
            host.close()
            await seat
            bot.cancel()
            guest.close()

    at_the_screen(monkeypatch, play)
    assert main(["host", "--name", "Tess", "--bind", "127.0.0.1", "--auto-start", "2",
                 "--countdown", "0", "--target", "1000"]) == 0
    assert capsys.readouterr().out.endswith(said + "\n")


def test_a_partner_plays_the_players_tableau_at_a_share_table(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``nerts host --partner``: with nobody at the keys, the host's tableau is
    played once share-a-deck deals (two bot guests make the 3 tableaux)."""
    found: list[int] = []

    async def play(host: NetSession) -> None:
        runner = asyncio.create_task(host.run())
        guests = [await NetSession.join(Identity.generate(name), ("127.0.0.1", host.port),
                                        TableConfig(), Endpoint(bind="127.0.0.1"))
                  for name in ("Bo", "Cy")]
        bots = [asyncio.create_task(run_headless(
                    guest, bot=Bot(paced(SKILLS["hard"], 0.05), random.Random(i)),
                    summary=None)) for i, guest in enumerate(guests)]
        try:
            async with asyncio.timeout(20):
                while not found:
                    rs = host.replica.rs
                    log = rs.tab.log if rs is not None and rs.tab is not None else []
                    found.extend(1 for move in log if move[0] in PLAYERS_MOVES)
                    await asyncio.sleep(0.05)
        except TimeoutError:
            r = host.replica
            rs = r.rs
            raise AssertionError(
                f"no play: {r.phase} seats {len(r.view().seats)} blocked {r.blocked()!r} "
                f"log {rs.tab.log if rs is not None and rs.tab is not None else None}"
                ) from None
        finally:
            for task in bots:
                task.cancel()
            for guest in guests:
                guest.close()
            host.close()
            await runner

    at_the_screen(monkeypatch, play)
    assert main(["host", "--name", "Tess", "--bind", "127.0.0.1", "--partner", "hard",
                 "--pace", "0.05", "--teams", "share", "--auto-start", "3", "--auto-next", "0.3",
                 "--countdown", "0"]) == 0
    assert found


def test_a_journal_record_that_cannot_be_replayed_is_a_journal_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A record whose CRC checks but whose content makes no sense (a bug, or a
    file edited by hand) is not bad usage: one line naming the journal, exit 1."""
    me = load_or_create(tmp_path / "identity.key", "Ann")
    table_id = b"t" * 16
    with Store(tmp_path / DB_FILE) as store:
        store.join_table(table_id, me.public_key, "127.0.0.1:4000")
        store.append(table_id, [Record(Kind.MOVE, msgpack.packb([1, 2, 3]))])
        journal = store.journal_path(table_id)
    assert main(["host", "--resume", "--headless", "--bind", "127.0.0.1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"nerts: the journal {journal} holds a record that cannot be replayed" in err
    assert "move the file aside" in err


def test_a_network_resume_points_at_solo_resume_for_a_solo_game(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    me = load_or_create(tmp_path / "identity.key", "Ann")
    with Store(tmp_path / DB_FILE) as store:
        store.sit_solo(b"s" * 16, me.public_key, {"bots": []})
    for command in ("host", "join"):
        assert main([command, "--resume", "--headless", "--bind", "127.0.0.1"]) == 1
        assert capsys.readouterr().err == (
            "nerts: your unfinished game is a solo one: nerts solo --resume goes on with it\n")


def test_a_damaged_database_is_one_line(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / DB_FILE
    with Store(path) as store:
        for n in range(300):
            store.join_table(n.to_bytes(16, "big"), b"h" * 32, "127.0.0.1:4000")
    data = bytearray(path.read_bytes())
    data[4096:8192] = b"\xa5" * 4096  # the tables' root page
    path.write_bytes(bytes(data))
    assert main(["join", "--resume", "--headless", "--bind", "127.0.0.1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"nerts: the database {path} cannot be read" in err


def test_the_listener_binds_the_interfaces_given(capsys: pytest.CaptureFixture[str]) -> None:
    """``--interfaces 127.0.0.1`` means the table's port too, not only its mDNS."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["host", "--headless", "--port", str(port),
                     "--interfaces", "127.0.0.1"]) == 1
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port} (--bind, --port)" in err
    assert "every interface" not in err


def test_listen_addresses_follow_interfaces_unless_bind_says_otherwise() -> None:
    assert listen_addresses("", ["127.0.0.1"]) == "127.0.0.1"
    assert listen_addresses("", ["127.0.0.1", "::1"]) == "127.0.0.1,::1"
    assert listen_addresses("10.0.0.2", ["127.0.0.1"]) == "10.0.0.2"
    assert listen_addresses("", InterfaceChoice.All) == ""


def test_a_mesh_on_given_addresses_listens_there_only() -> None:
    async def scenario() -> None:
        session = await NetSession.host(Identity.generate("Ann"), TableConfig(),
                                        Endpoint(listen_addresses("", ["127.0.0.1"])),
                                        table_name="t", interfaces=None)
        try:
            names = [s.getsockname() for server in session._mesh._servers
                     for s in server.sockets]
            assert names and all(name[0] == "127.0.0.1" for name in names)
            assert {name[1] for name in names} == {session.port}
        finally:
            await session._mesh.close(flush=0)

    asyncio.run(scenario())
