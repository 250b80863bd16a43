"""The command line: `nerts simulate` output, and clear errors for bad arguments."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from p2p_nerts import __version__
from p2p_nerts.cli import build_parser, main
from p2p_nerts.lines import fail

from ..gamekit import ENGINE_COMPILED


def test_simulate_json_is_deterministic_and_adds_up(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--players", "3", "--seed", "7", "--rounds", "3", "--json"]) == 0
    first = capsys.readouterr().out
    assert main(["simulate", "--players", "3", "--seed", "7", "--rounds", "3", "--json"]) == 0
    assert capsys.readouterr().out == first
    lines = [json.loads(line) for line in first.splitlines()]
    rounds, final = lines[:-1], lines[-1]
    assert [r["round"] for r in rounds] == [1, 2, 3] and final["final"] is True
    for r in rounds:
        assert r["end"] in ("nerts", "deadlock") and len(r["foundation_hash"]) == 64
        for p in r["players"]:
            assert p["score"] == p["foundation_cards"] - 2 * p["nerts_left"]
    for name, total in final["totals"].items():
        assert total == sum(p["score"] for r in rounds for p in r["players"] if p["name"] == name)


def test_a_simulated_game_of_one_round_says_round_not_rounds(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--players", "3", "--seed", "7", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "Game over after 1 round. " in out, out
    assert main(["simulate", "--players", "3", "--seed", "7", "--rounds", "2"]) == 0
    assert "Game over after 2 rounds. " in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["simulate", "--players", "9"], "nerts simulate: error: a table seats 2 to 8 players"),
        (["simulate", "--players", "1"], "nerts simulate: error: a table seats 2 to 8 players"),
        (["simulate", "--players", "10", "--teams", "share"],
         "nerts simulate: error: share-a-deck needs 6 or 8 players"),
        (["solo", "--bots", "4", "--teams", "share"],
         "nerts solo: error: share-a-deck needs 6 or 8 players (3 or 4 tableaux): use --bots "
         "2 or 3 (their tableaux, two computer players at each, and yours, one with you)"),
        (["solo", "--bots", "1", "--teams", "pairs"],
         "nerts solo: error: pairs need 4, 6 or 8 players (two teams or more): use --bots 3, "
         "5 or 7 (you and 3, 5 or 7 computer players)"),
        (["simulate", "--skill", "godlike"], "nerts simulate: error: argument --skill"),
        (["simulate", "--players", "3", "--teams", "pairs"], "nerts simulate: error: pairs need"),
        (["simulate", "--target", "0"], "nerts simulate: error: target"),
        (["simulate", "--rounds", "0"], "nerts simulate: error: --rounds"),
        (["solo", "--teams", "share", "--bots", "1"], "nerts solo: error: share-a-deck needs"),
        (["solo", "--teams", "pairs", "--bots", "2"], "nerts solo: error: pairs need"),
        (["solo", "--teams", "pairs", "--bots", "4"],
         "nerts solo: error: pairs need 4, 6 or 8 players (two teams or more): use --bots 3,"),
        (["solo", "--loopback", "--seed", "1"], "nerts solo: error: --seed fixes the deals"),
        (["solo", "--resume", "--seed", "1"],
         "nerts solo: error: --resume goes on with the game as it was dealt"),
        (["solo", "--pace", "0"], "nerts solo: error: --pace must be above 0"),
        (["host", "--port", "70000"], "nerts host: error: --port must be 0..65535"),
        (["host", "--auto-start", "1"], "nerts host: error: --auto-start must be 2..--seats"),
        (["bot", "--find-timeout", "0"], "nerts bot: error: --find-timeout"),
        (["bot", "tess:99999"], "nerts bot: error: 'tess:99999': a port must be 1..65535"),
        (["join", "[::1]:0"], "nerts join: error: '[::1]:0': a port must be 1..65535"),
        (["--interfaces", "nowhere"], "nerts: error: interfaces 'nowhere'"),
        (["--interfaces", "nowhere", "host"], "nerts host: error: interfaces 'nowhere'"),
        (["--interfaces", "nowhere", "event", "open", "Cup"],
         "nerts event open: error: interfaces 'nowhere'"),
    ],
)
def test_bad_arguments_exit_2_with_one_clear_line(argv: list[str], words: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    # The usage line is the command's own, as with argparse's own errors.
    assert err.startswith(f"usage: {words.split(':')[0]} ")


@pytest.mark.parametrize("command", [["host"], ["join"], ["bot"], ["watch"],
                                     ["event"], ["event", "open", "Cup"],
                                     ["event", "join", "Cup"]])
def test_interfaces_given_before_the_command_hold_for_it(command: list[str]) -> None:
    """``nerts --interfaces 127.0.0.1 host`` keeps the table on loopback, as the same flag
    after the command does, and the command's own wins where both are given: it was
    lost, and the table went on every interface."""
    parser = build_parser()
    assert parser.parse_args(["--interfaces", "127.0.0.1", *command]).interfaces == "127.0.0.1"
    assert parser.parse_args(command).interfaces is None  # then NERTS_INTERFACES, or all
    both = ["--interfaces", "127.0.0.1", *command, "--interfaces", "::1"]
    assert parser.parse_args(both).interfaces == "::1"


@pytest.mark.parametrize("command", [["open", "Cup"], ["join", "Cup"]])
def test_event_data_dir_given_before_the_command_holds_for_it(command: list[str]) -> None:
    parser = build_parser()
    assert parser.parse_args(["event", "--data-dir", "/d", *command]).data_dir == Path("/d")
    assert parser.parse_args(["event", *command]).data_dir is None
    assert parser.parse_args(["event", "--data-dir", "/d", *command,
                              "--data-dir", "/e"]).data_dir == Path("/e")


def test_watch_lists_no_option_it_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    """A spectator has no seat: the options of a seat are not in its help, and given
    anyway they are a usage error that says why."""
    with pytest.raises(SystemExit):
        main(["watch", "--help"])
    out = capsys.readouterr().out
    assert "--find-timeout" in out
    assert not any(o in out for o in ("--bot", "--resume", "--seed", "--pace")), out
    for option in (["--bot", "hard"], ["--resume"], ["--seed", "1"], ["--pace", "2"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["watch", *option])
        assert exit_info.value.code == 2
        assert capsys.readouterr().err.endswith(
            "nerts watch: error: a spectator has no seat: --bot, --resume, --seed and --pace "
            "are for join and bot\n")


def test_version_says_which_build_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The version and the build, compiled or pure, as the engine imported here is (CI runs
    the fast tier against the installed compiled build too)."""
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    build = "compiled build (mypyc)" if ENGINE_COMPILED else "pure Python build"
    assert capsys.readouterr().out == f"nerts {__version__}, {build}\n"


@pytest.mark.parametrize("command", [[], ["host"], ["join"], ["bot"], ["solo"], ["simulate"]])
def test_help_says_what_each_command_takes(command: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal
    if not command:
        assert "With no COMMAND: the network lobby" in out
        assert "The rules, every variant and the scoring: docs/RULES.md" in out
    if command in (["host"], ["solo"], ["simulate"]):
        assert "variants (each one explained in docs/RULES.md)" in out
    seeds = {"solo": "--seed SEED seeds the deals and the computer players' choices",
             "simulate": "--seed SEED seeds the whole game: the deals, the bots' choices and "
                         "the simulated delays",
             "host": "--seed SEED seeds the computer player's choices (--bot, --partner), "
                     "not the deal"}
    seeds["join"] = seeds["host"]
    seeds["bot"] = "--seed SEED seeds the bot's choices, not the deal"
    if command:
        assert seeds[command[0]] in out
    if command == ["bot"]:  # a bot is headless and a bot already
        assert "--headless" not in out and "--bot" not in out
        assert "--skill {easy,medium,hard} how well it plays" in out
    if command in (["host"], ["join"]):
        assert "--headless" in out and "--bot SKILL" in out
    if command in (["host"], ["solo"]):
        assert "share: two players at each tableau, 3 or 4 tableaux" in out
    if command == ["simulate"]:
        assert "--players N 2..8 (default 4; share-a-deck: 6 or 8)" in out
        assert main(["simulate", "--players", "2", "--rounds", "1"]) == 0  # as the help says


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_long_line_is_wrapped_at_its_spaces(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One line in a pipe (the tests above); on an 80-column terminal, wrapped at the
    spaces, continuations indented, no word or number cut in two."""
    monkeypatch.setenv("COLUMNS", "80")
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with pytest.raises(SystemExit):
        main(["solo", "--bots", "1", "--teams", "pairs"])
    printed = err.getvalue().splitlines()
    assert printed[0].startswith("usage: nerts solo")
    lines = printed[next(i for i, line in enumerate(printed) if "error:" in line):]
    assert len(lines) > 1
    assert all(len(line) <= 80 for line in lines)
    assert all(line.startswith("  ") for line in lines[1:])
    assert " ".join(line.strip() for line in lines) == (
        "nerts solo: error: pairs need 4, 6 or 8 players (two teams or more): use --bots 3, "
        "5 or 7 (you and 3, 5 or 7 computer players)")
    assert fail("x " * 60) == 1
    assert max(map(len, err.getvalue().splitlines())) <= 80


def test_event_listen_given_before_join_holds_for_it() -> None:
    """``nerts event --listen 10 join Cup`` looks for the event 10 s, as ``--listen``
    after ``join`` does: join's own default overwrote it. Given nowhere, each
    command keeps its own default (resolved as it runs: None here)."""
    parser = build_parser()
    assert parser.parse_args(["event", "--listen", "10", "join", "Cup"]).listen == 10
    assert parser.parse_args(["event", "join", "Cup", "--listen", "7"]).listen == 7
    assert parser.parse_args(["event", "--listen", "10", "join", "Cup",
                              "--listen", "7"]).listen == 7
    assert parser.parse_args(["event", "join", "Cup"]).listen is None
    assert parser.parse_args(["event"]).listen is None
