"""A solo game (the player against computer players, in process) is kept in the player's
history like a networked one, and served to no one's event standings."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from p2p_nerts import cli
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.records.history import history_text, statistics
from p2p_nerts.session import LocalTable
from p2p_nerts.store import ABANDONED, DB_FILE, SOLO, UNFINISHED, Store, StoreError
from p2p_nerts.ui.config import Config, Player

from ..uikit import PLAYER

#: The fake clock of the tables :func:`_play` opens.
Clock = list[float]


def _play(store: Store, target: int, until: Phase, t: Clock | None = None,
          seed: int = 1) -> tuple[LocalTable, list[ev.Event]]:
    """A seeded solo table on a fake clock (``t``), played until ``until``: under
    share-a-deck a computer partner plays the player's tableau too, so every round
    ends by itself."""
    t = [0.0] if t is None else t
    table = LocalTable(PLAYER, bots=2, skill="hard", seed=seed, countdown=0.0,
                       variants=Variants(target=target, teams="share"), clock=lambda: t[0],
                       store=store)
    heard: list[ev.Event] = []
    table.subscribe(heard.append)
    while table.replica.phase is not until:
        assert t[0] < 3600, "the solo game did not end"
        if table.replica.phase in (Phase.LOBBY, Phase.BETWEEN):
            table.act(StartRound())
        t[0] += 0.05
        table.step()
    return table, heard


def test_a_finished_solo_game_is_in_nerts_history_with_its_scores(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store(tmp_path / DB_FILE) as store:
        table, heard = _play(store, 20, Phase.OVER)
        [(number, at_the_end)] = store.games()  # kept as the game ended
        table.close()
        [(again, game)] = store.games()  # kept again on leaving: the same game
        assert again == number and game["rounds"] == at_the_end["rounds"]
        assert store.records_since(0.0) == []  # nobody's event standings count it
    assert cli.main(["history", "--json", "--data-dir", str(tmp_path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    [shown] = printed["games"]
    assert shown["number"] == number and shown["table"] == f"{PLAYER.name}'s solo table"
    assert shown["flags"] == [SOLO] and printed["me"] == PLAYER.fingerprint
    overs = [e for e in heard if isinstance(e, ev.RoundOver)]
    [over] = [e for e in heard if isinstance(e, ev.GameOver)]
    assert [r["round"] for r in shown["rounds"]] == [e.round for e in overs]
    for r, e in zip(shown["rounds"], overs, strict=True):
        assert sorted(r["scores"].values()) == sorted(x.score for x in e.results if not x.void)
    assert shown["winner"] == over.winner
    assert printed["statistics"]["games"] == 1


def test_a_solo_game_left_between_rounds_is_kept_unfinished_until_another_begins(
        tmp_path: Path) -> None:
    """Left before its end, a game is kept as "unfinished" while ``--resume`` goes on
    with it, and as "abandoned" once a newer game is the one it would go on with."""
    with Store(tmp_path / DB_FILE) as store:
        table, _heard = _play(store, 500, Phase.BETWEEN)
        [(number, game)] = store.games()  # kept as the round ended: a crash loses nothing
        assert game["flags"] == [UNFINISHED, SOLO] and len(game["rounds"]) == 1
        table.close()
        [(again, game)] = store.games()
        assert again == number == table.kept
        assert game["flags"] == [UNFINISHED, SOLO] and game["winner"] is None
        assert len(game["rounds"]) == 1
        assert store.unfinished() is not None  # left before its end: it can go on
        assert history_text(store.games(), game["me"])[0].endswith(
            "[unfinished: nerts solo --resume goes on; solo]")
        newer, _heard = _play(store, 500, Phase.BETWEEN, seed=2)
        newer.close()
        assert [g["flags"] for _n, g in store.games()] == [[UNFINISHED, SOLO],
                                                            [ABANDONED, SOLO]]
        assert statistics([g for _n, g in store.games()], game["me"])["finished"] == 0


def _resumed(store: Store, t: list[float]) -> LocalTable:
    table = store.unfinished()
    assert table is not None
    return LocalTable.resume(PLAYER, store, table, countdown=0.0, clock=lambda: t[0])


def _until(table: LocalTable, t: list[float], done: Callable[[], bool], *,
           deal: bool = False) -> None:
    """Play on (the partner bot plays the player's tableau) until ``done``; ``deal``:
    deal each round as the last ends."""
    limit = t[0] + 3600
    while not done():
        assert t[0] < limit, "the solo game did not get there"
        if deal and table.replica.phase is Phase.BETWEEN:
            table.act(StartRound())
        t[0] += 0.05
        table.step()


@pytest.mark.parametrize("where", ["between rounds", "in a round"])
def test_a_solo_game_killed_goes_on_from_its_journals(tmp_path: Path, where: str) -> None:
    """A solo game whose process dies (no close: the store is let go as a killed
    process's is) keeps its finished rounds in the history, and every seat comes
    back from its journal: the same seats and totals, the game going on."""
    with Store(tmp_path / DB_FILE) as store:
        t = [0.0]
        table, _heard = _play(store, 500, Phase.BETWEEN, t)
        seats, totals = table.replica.view().seats, dict(table.replica.totals)
        if where == "in a round":
            table.act(StartRound())
            _until(table, t, lambda: table.replica.phase is Phase.PLAYING)
            rs = table.replica.rs
            assert rs is not None and rs.tab is not None
            log, tab = rs.log, rs.tab
            _until(table, t, lambda: len(log) >= 10)  # round 2 under way, journaled
            played = len(tab.log)
        [(number, _game)] = store.games()
    with Store(tmp_path / DB_FILE) as store:
        t = [2000.0]
        table = _resumed(store, t)
        assert table.replica.view().seats == seats
        if where == "between rounds":
            assert table.replica.phase is Phase.BETWEEN
            assert dict(table.replica.totals) == totals
            table.act(StartRound())
        else:  # my moves of round 2 as they were
            rs = table.replica.rs
            assert rs is not None and rs.tab is not None and len(rs.tab.log) == played
        _until(table, t, lambda: len(store.games()[0][1]["rounds"]) == 2)
        [(again, game)] = store.games()
        assert again == number and [r["round"] for r in game["rounds"]] == [1, 2]
        mine = [r["scores"][PLAYER.fingerprint] for r in game["rounds"]]
        me = next(p for p in game["players"] if p["fingerprint"] == PLAYER.fingerprint)
        assert me["total"] == sum(mine) and mine[0] == totals[PLAYER.public_key]
        table.close()
        assert store.unfinished() is not None


def test_a_solo_game_over_left_is_finished_with(tmp_path: Path) -> None:
    with Store(tmp_path / DB_FILE) as store:
        table, _heard = _play(store, 20, Phase.OVER)
        table.close()
        assert store.unfinished() is None
        assert list((tmp_path / (DB_FILE + ".journal")).iterdir()) == []  # every seat's



def test_solo_resume_says_in_one_line_when_there_is_nothing_to_go_on_with(
        tmp_path: Path) -> None:
    with Store(tmp_path / DB_FILE) as store:
        with pytest.raises(StoreError, match=r"^there is no unfinished game to go back to"):
            cli._resumed_solo(PLAYER, store)
        store.join_table(bytes(16), b"\x01" * 32, "192.0.2.1:4000")  # a table on the network
        with pytest.raises(StoreError, match="someone else's: nerts join --resume"):
            cli._resumed_solo(PLAYER, store)
        store.join_table(bytes(range(16)), PLAYER.public_key, "192.0.2.1:4000")
        with pytest.raises(StoreError, match="on the network: nerts host --resume"):
            cli._resumed_solo(PLAYER, store)


def test_a_game_played_again_at_the_table_is_a_game_of_its_own(tmp_path: Path) -> None:
    """After a game over the host deals again at the same table: a new game, its own
    number and totals in the history, each kept as every seat signs its result."""
    with Store(tmp_path / DB_FILE) as store:
        t = [0.0]
        table, _heard = _play(store, 20, Phase.OVER, t)
        _until(table, t, lambda: bool(store.games()) and store.games()[0][1]["winner"])
        [(first, _game)] = store.games()
        table.act(StartRound())
        table.step()  # the deal's commit-reveal among the seats
        assert table.replica.phase is not Phase.OVER and table.kept is None
        _until(table, t, lambda: len(store.games()) == 2 and bool(store.games()[0][1]["winner"]),
               deal=True)
        (second, game), (again, _first) = store.games()
        assert again == first != second == table.kept
        assert game["winner"] is not None and game["flags"] == [SOLO]
        assert sum(r["scores"][PLAYER.fingerprint] for r in game["rounds"]) == next(
            p["total"] for p in game["players"] if p["fingerprint"] == PLAYER.fingerprint)
        table.close()
        assert store.unfinished() is None


def _damage(path: Path) -> None:
    """A database whose tables' root page is garbage: it opens, but cannot be read."""
    with Store(path) as store:
        for n in range(300):
            store.join_table(n.to_bytes(16, "big"), b"h" * 32, "127.0.0.1:4000")
        store.checkpoint()
    data = bytearray(path.read_bytes())
    data[4096:8192] = b"\xa5" * 4096
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["a garbage page", "not a database"])
def test_a_damaged_database_is_one_line_and_solo_plays_on_without_a_history(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        damage: str) -> None:
    path = tmp_path / DB_FILE
    if damage == "a garbage page":
        _damage(path)
    else:
        path.write_bytes(b"this is no database at all" * 100)
    before = path.read_bytes()
    monkeypatch.setenv("NERTS_HOME", str(tmp_path))
    monkeypatch.setattr(cli, "terminal_missing", lambda: None)
    monkeypatch.setattr(cli, "_player", lambda: Player(PLAYER, Config(), ()))
    played: list[tuple[LocalTable, list[str]]] = []

    def run_app(table: LocalTable, _config: Config, notes: list[str]) -> None:
        table.act(StartRound())  # play starts
        played.append((table, list(notes)))

    monkeypatch.setattr("p2p_nerts.ui.app.run_app", run_app)
    assert cli.main(["solo", "--bots", "1"]) == 0
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"nerts: the database {path} cannot be read (")
    assert f"move it aside for a fresh one (mv {path} {path}.damaged;" in err
    [(table, notes)] = played
    assert table.replica.rs is not None  # dealt
    assert notes == [f"No history this time: {path} is damaged"]  # once, on the screen
    assert out == "played without a history: nothing kept\n"
    assert path.read_bytes() == before  # left as it was, for the player to move aside
