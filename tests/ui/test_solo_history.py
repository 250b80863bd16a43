"""A solo game (the player against computer players, in process) is kept in the player's
history like a networked one, and served to no one's event standings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p2p_nerts import cli
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.session import LocalTable
from p2p_nerts.store import DB_FILE, SOLO, Store

from ..uikit import PLAYER


def _play(store: Store, target: int, until: Phase) -> tuple[LocalTable, list[ev.Event]]:
    """A seeded solo table on a fake clock, played until ``until``: under share-a-deck a
    computer partner plays the player's tableau too, so every round ends by itself."""
    t = [0.0]
    table = LocalTable(PLAYER, bots=2, skill="hard", seed=1, countdown=0.0,
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


def test_a_solo_game_left_between_rounds_is_kept_as_abandoned(tmp_path: Path) -> None:
    with Store(tmp_path / DB_FILE) as store:
        table, _heard = _play(store, 500, Phase.BETWEEN)
        assert store.games() == []  # nothing kept while the game goes on
        table.close()
        [(_number, game)] = store.games()
        assert game["flags"] == ["abandoned", SOLO] and game["winner"] is None
        assert len(game["rounds"]) == 1

