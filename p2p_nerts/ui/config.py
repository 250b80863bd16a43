"""The player's settings file: display name, key remaps, four-colour deck, partner.

It lives next to the identity key, in ``$NERTS_HOME/config.toml`` (else
``$XDG_DATA_HOME/p2p-nerts/config.toml``, else ``~/.local/share/p2p-nerts/``):
one directory holds everything that is the player's, so moving or wiping it
moves or wipes the player. Example::

    name = "Ana"
    four_colour = true
    partner = "medium"   # a computer partner at share-a-deck tables you join or open

    [keys]
    send = "f"
    turn = "space"
    call = ["!", "N"]

A file that cannot be read never stops the game: every problem becomes a
line of text for the screen, and the defaults stand in for what was wrong.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..game.bot import SKILLS
from ..protocol.identity import (
    IDENTITY_FILE,
    Identity,
    check_data_dir,
    clean_name,
    default_data_dir,
    load_or_create,
)

CONFIG_FILE = "config.toml"


@dataclass(frozen=True, slots=True)
class Config:
    """Settings as read; ``keys`` holds only the player's remaps (action → keys)."""

    name: str | None = None
    four_colour: bool = False
    keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: The skill of a computer player who plays the player's tableau with them at
    #: share-a-deck tables found in the lobby (None: nobody, or a person beside them).
    partner: str | None = None


def config_path(data_dir: Path | None = None) -> Path:
    return (data_dir or default_data_dir()) / CONFIG_FILE


def load_config(path: Path) -> tuple[Config, list[str]]:
    """Read the settings; return them with a list of problems fit to show the player."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Config(), []
    except tomllib.TOMLDecodeError as exc:
        return Config(), [toml_problem(path, exc)]
    except (OSError, UnicodeDecodeError) as exc:
        return Config(), [f"{path}: {exc}; using the default settings"]
    problems: list[str] = []
    name = _name(raw.pop("name", None), problems)
    four = raw.pop("four_colour", False)
    if not isinstance(four, bool):
        problems.append("four_colour must be true or false; using false")
        four = False
    keys = _keys(raw.pop("keys", {}), problems)
    partner = raw.pop("partner", None)
    if partner is not None and partner not in SKILLS:
        problems.append(f"partner must be one of {', '.join(SKILLS)}; playing without one")
        partner = None
    problems += [f"unknown setting {k!r} ignored" for k in raw]
    return Config(name, four, keys, partner), [f"{path}: {p}" for p in problems]


def toml_problem(path: Path, exc: tomllib.TOMLDecodeError) -> str:
    """A settings file that does not parse (TOML), in one line short enough for the
    screen: the file and the line first (tomllib says where at the end of its
    message), the default settings standing in meanwhile."""
    what, where = str(exc), ""
    if (at := re.search(r" \(at line (\d+), column \d+\)$", what)) is not None:
        what, where = what[:at.start()], f" line {at.group(1)}"
    elif (end := re.search(r" \(at end of document\)$", what)) is not None:
        what, where = what[:end.start()], " at its end"
    return f"{shown(path)}{where}: {what}; defaults meanwhile"


def shown(path: Path) -> str:
    """``path`` as the player writes it: under their home, from ``~``."""
    try:
        return f"~/{path.relative_to(Path.home())}"
    except (ValueError, RuntimeError):  # elsewhere, or no home to speak of
        return str(path)


def _name(value: object, problems: list[str]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        problems.append("name must be a string")
        return None
    try:
        return clean_name(value)
    except ValueError as exc:
        problems.append(f"name {value!r}: {exc}")
        return None


def _keys(value: object, problems: list[str]) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        problems.append("[keys] must be a table of action = \"key\" lines")
        return {}
    keys: dict[str, tuple[str, ...]] = {}
    for action, spec in value.items():
        if isinstance(spec, str):
            keys[action] = (spec,)
        elif isinstance(spec, list) and spec and all(isinstance(k, str) for k in spec):
            keys[action] = tuple(spec)
        else:
            problems.append(f"keys.{action} must be a key or a list of keys")
    return keys


def dump_config(config: Config) -> str:
    """The settings as TOML text (tomllib reads it back to the same Config)."""
    lines = ["# p2p-nerts settings (see `nerts --help`; ? in the game lists the keys)"]
    if config.name is not None:
        lines.append(f"name = {_quote(config.name)}")
    lines.append(f"four_colour = {'true' if config.four_colour else 'false'}")
    if config.partner is not None:
        lines.append(f"partner = {_quote(config.partner)}")
    if config.keys:
        lines += ["", "[keys]"]
        for action, keys in config.keys.items():
            value = _quote(keys[0]) if len(keys) == 1 else (
                "[" + ", ".join(_quote(k) for k in keys) + "]")
            lines.append(f"{_bare_or_quoted(action)} = {value}")
    return "\n".join(lines) + "\n"


def save_config(path: Path, config: Config) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(dump_config(config), encoding="utf-8")
    tmp.replace(path)


def _quote(text: str) -> str:
    """A TOML basic string; names are printable, so only \\ and " need escaping."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _bare_or_quoted(key: str) -> str:
    ok = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if ok else _quote(key)


Ask = Callable[[str], str]


def ask_name(ask: Ask = input) -> str:
    """Ask for a display name until a valid one is given (first run only)."""
    while True:
        try:
            return clean_name(ask("Your name at the table: "))
        except ValueError as exc:
            print(f"  {exc}", file=sys.stderr)


@dataclass(frozen=True, slots=True)
class Player:
    identity: Identity
    config: Config
    notes: tuple[str, ...]  # problems with the settings, for the screen


def prepare_player(data_dir: Path | None = None, *, ask: Ask | None = None) -> Player:
    """Load settings and identity; on the first run ask for a name and keep it.

    ``ask`` is None when nobody can answer (stdin is not a terminal): the
    identity then keeps its stored name, or gets a "Player-xxxx" one. The
    data dir is checked before anything is asked. A settings file that cannot
    be read is never overwritten: the name asked is kept with the key, which
    is why it is asked only once. May raise IdentityError (with a message fit
    for the player).
    """
    directory = data_dir or default_data_dir()
    check_data_dir(directory)
    path = config_path(directory)
    config, notes = load_config(path)
    key_file = directory / IDENTITY_FILE
    name = config.name
    if name is None and not key_file.exists() and ask is not None:
        for note in notes:  # before the question, which it explains; the screen says it too
            print(f"nerts: {note}", file=sys.stderr)
        name = ask_name(ask)
        if not path.exists():
            config = Config(name, config.four_colour, config.keys)
            try:
                save_config(path, config)
            except OSError as exc:
                notes.append(f"could not save {path}: {exc.strerror}")
        else:  # the file is there but could not be read: the key file keeps the name
            notes.append(f"your name {name!r} is kept with your key in {key_file}")
    identity = load_or_create(key_file, name)
    return Player(identity, config, tuple(notes))
