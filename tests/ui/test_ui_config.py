"""The settings file, key remaps, first-run name, colours, and the frame cap."""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path

import pytest

from p2p_nerts.protocol import events as ev
from p2p_nerts.protocol.identity import IDENTITY_FILE, IdentityError, load_or_create
from p2p_nerts.ui.config import Config, dump_config, load_config, prepare_player
from p2p_nerts.ui.keys import DEFAULT_KEYS, Action, resolve_keys
from p2p_nerts.ui.theme import build_style

from ..uikit import Harness


def test_settings_round_trip_through_toml(tmp_path: Path) -> None:
    config = Config('Ana "the \\ fast"', True, {"send": ("e",), "call": ("!", "N")}, "hard")
    path = tmp_path / "config.toml"
    path.write_text(dump_config(config), encoding="utf-8")
    assert load_config(path) == (config, [])


def test_missing_file_means_defaults(tmp_path: Path) -> None:
    assert load_config(tmp_path / "nope.toml") == (Config(), [])


def test_a_broken_file_gives_one_clear_line_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('name = "Ana\nfour_colour = yes\n', encoding="utf-8")
    config, notes = load_config(path)
    assert config == Config()
    assert notes == [f"{path} line 1: Illegal character '\\n'; defaults meanwhile"]


def test_a_broken_file_is_one_line_on_the_screen_naming_the_file_and_the_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the player's home the file is named from ``~``, so that at 80 columns the
    line shows the file, the line and what is wrong, whole."""
    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / ".local" / "share" / "p2p-nerts" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('name = "Ana"\nfour_colour = tru\n', encoding="utf-8")
    config, notes = load_config(path)
    assert config == Config()
    line = "~/.local/share/p2p-nerts/config.toml line 2: Invalid value; defaults meanwhile"
    assert notes == [line]

    async def main() -> None:
        async with Harness(columns=80, rows=24, notes=tuple(notes)) as h:
            assert sum(line in row for row in h.lines()) == 1
    asyncio.run(main())


def test_bad_entries_are_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('name = ""\nfour_colour = "yes"\ncolour = 3\npartner = "godlike"\n'
                    '[keys]\nsend = 5\nturn = "t"\n', encoding="utf-8")
    config, notes = load_config(path)
    assert config == Config(None, False, {"turn": ("t",)}, None)
    text = "\n".join(notes)
    for part in ("name ''", "four_colour must be true or false", "unknown setting 'colour'",
                 "keys.send must be a key or a list of keys",
                 "partner must be one of easy, medium, hard; playing without one"):
        assert part in text


def test_remaps_apply_and_bad_ones_are_explained() -> None:
    keys, notes = resolve_keys({"send": ("e",), "turn": ("t", "space")})
    assert keys[Action.SEND] == ("e",) and keys[Action.TURN] == ("t", "space") and not notes
    keys, notes = resolve_keys({"fly": ("x",), "stuck": ("ctrl+s",)})
    assert keys == DEFAULT_KEYS
    assert "no action called 'fly'" in notes[0] and "'ctrl+s' is not a key I know" in notes[1]


def test_a_clash_falls_back_to_the_default_keys() -> None:
    keys, notes = resolve_keys({"send": ("space",)})
    assert keys == DEFAULT_KEYS
    assert notes == ["keys: 'space' is bound to both send and turn; using the default keys"]
    # the same key on two screens is fine: Enter deals between rounds and clicks in play
    assert resolve_keys({"next": ("enter",), "activate": ("enter",)})[1] == []


def test_first_run_asks_the_name_once_and_keeps_it(tmp_path: Path) -> None:
    answers = iter(["", "Ana"])
    player = prepare_player(tmp_path, ask=lambda _prompt: next(answers))
    assert player.identity.name == "Ana" and player.notes == ()
    saved = tomllib.loads((tmp_path / "config.toml").read_text(encoding="utf-8"))
    assert saved["name"] == "Ana"
    again = prepare_player(tmp_path, ask=lambda _prompt: "never asked")
    assert again.identity.public_key == player.identity.public_key
    assert load_or_create(tmp_path / IDENTITY_FILE).name == "Ana"


def test_without_a_terminal_nobody_is_asked(tmp_path: Path) -> None:
    player = prepare_player(tmp_path, ask=None)
    assert player.identity.name.startswith("Player-")
    assert not (tmp_path / "config.toml").exists()


def test_four_colour_deck_tells_all_suits_apart() -> None:
    two = build_style(four_colour=False)
    four = build_style(four_colour=True)
    colours = [four.get_attrs_for_style_str(f"class:suit.{s}").color for s in range(4)]
    assert len(set(colours)) == 4
    assert two.get_attrs_for_style_str("class:suit.2").color == "ansired"
    assert two.get_attrs_for_style_str("class:suit.3").color in ("", None)


def test_session_events_are_drawn_at_a_capped_frame_rate() -> None:
    async def main() -> None:
        async with Harness() as h:
            await h.redrawn()
            before = h.app.render_counter
            for i in range(200):
                h.table.announce(ev.Notice(f"news {i}"))
            await asyncio.sleep(0.15)
            frames = h.app.render_counter - before
            assert 1 <= frames <= 8  # 200 events, 0.15 s at most 30 frames a second
            assert "news 199" in h.screen()
    asyncio.run(main())


def test_a_broken_settings_file_is_said_once_before_the_name_is_asked_only_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A syntax error: one clear line before the question, the file left as the player
    wrote it, and the name kept with the key, so the next start asks nothing."""
    broken = 'name = "Ana\nfour_colour = true\n'
    (tmp_path / "config.toml").write_text(broken, encoding="utf-8")
    player = prepare_player(tmp_path, ask=lambda _prompt: "Ana")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "config.toml line 1: " in err[0]
    assert player.identity.name == "Ana"
    assert player.notes == (err[0].removeprefix("nerts: "),  # on the screen too
                            f"your name 'Ana' is kept with your key in {tmp_path / IDENTITY_FILE}")
    assert (tmp_path / "config.toml").read_text(encoding="utf-8") == broken

    def never(_prompt: str) -> str:
        raise AssertionError("asked for the name again")

    again = prepare_player(tmp_path, ask=never)
    assert again.identity.name == "Ana" and capsys.readouterr().err == ""
    assert len(again.notes) == 1 and "config.toml line 1: " in again.notes[0]  # on the screen


def test_the_data_dir_is_checked_before_the_name_is_asked(tmp_path: Path) -> None:
    def never(_prompt: str) -> str:
        raise AssertionError("asked for a name that could not be kept")

    a_file = tmp_path / "home"
    a_file.write_text("not a dir", encoding="utf-8")
    with pytest.raises(IdentityError, match=f"the data dir {a_file} is not a directory"):
        prepare_player(a_file, ask=never)
    with pytest.raises(IdentityError, match="part of its path is a file, not a directory"):
        prepare_player(a_file / "nerts", ask=never)


def test_an_identity_file_under_a_file_says_not_a_directory(tmp_path: Path) -> None:
    a_file = tmp_path / "home"
    a_file.write_text("not a dir", encoding="utf-8")
    with pytest.raises(IdentityError) as err:
        load_or_create(a_file / IDENTITY_FILE)
    assert str(err.value) == f"the data dir {a_file} is not a directory"


def test_the_guide_names_every_action_a_remap_can_take() -> None:
    guide = (Path(__file__).parents[2] / "docs" / "GUIDE.md").read_text(encoding="utf-8")
    keys = guide[guide.index("## Keys\n\n") + len("## Keys\n\n"):]
    keys = " ".join(keys[:keys.index("\n\n")].split())
    named = {a for a in Action if f"`{a.value}`" in keys}
    named |= {Action.PILE2, Action.PILE3} if "`pile1`–`pile4`" in keys else set()
    assert named == set(Action)
