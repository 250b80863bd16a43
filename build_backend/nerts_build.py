"""The package's PEP 517 build backend: setuptools', plus what a compiled build needs.

``pip install .`` and ``pip wheel .`` build the pure-Python package. The switch
``NERTS_COMPILE=1`` in the environment, or the config setting ``compile=1``
(``pip wheel . --config-settings compile=1``; it wins over the environment),
asks ``setup.py`` to compile the engine and a received play's path with mypyc.
Only then does this backend add to the build requirements what that needs:
mypy (which brings mypyc), at the version the tests' type check asks for, and
the project's own dependencies with msgpack's stubs, because mypyc type-checks
the modules it compiles against them. So a build in a clean environment (pip's
build isolation) has everything, and a pure build needs setuptools alone.

``setup.py`` runs in every hook, but compiles in ``build_wheel`` only: the
requirements and the metadata are the same either way, and mypyc's work
(a type check and C for some forty modules) would be done and thrown away.
An editable install stays pure whatever the switch says: its compiled modules
would sit beside the sources being edited and shadow them until rebuilt.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # noqa: F401  (hooks taken over as they are)
    build_sdist,
    get_requires_for_build_sdist,
)

#: The environment variable ``setup.py`` reads: ``1`` compiles, ``0`` does not.
SWITCH = "NERTS_COMPILE"
#: The config setting that sets the switch for one build.
SETTING = "compile"
#: From the tests' own requirements: mypyc, and the stubs the type check reads.
TYPE_CHECK = ("mypy", "msgpack-types")

ConfigSettings = dict[str, str | list[str]] | None


def _asked(config_settings: ConfigSettings) -> bool:
    """Whether this build is to compile: the config setting, else the environment."""
    setting = (config_settings or {}).get(SETTING, os.environ.get(SWITCH, "0"))
    if setting not in ("0", "1"):
        raise SystemExit(f"p2p-nerts: {SWITCH} (or the config setting {SETTING}) must be "
                         f"1 (compile) or 0 (pure), not {setting!r}")
    return setting == "1"


def _for_setup(config_settings: ConfigSettings, compiled: bool) -> ConfigSettings:
    """Sets the switch that ``setup.py`` reads in this process; the settings less this one."""
    os.environ[SWITCH] = "1" if compiled else "0"
    if config_settings is None:
        return None
    return {key: value for key, value in config_settings.items() if key != SETTING}


def _compile_requirements() -> list[str]:
    """What mypyc needs in the build environment, as ``pyproject.toml`` states it."""
    with open(Path("pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    test = project["optional-dependencies"]["test"]
    named = [r for r in test if re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0] in TYPE_CHECK]
    return [*named, *project["dependencies"]]


def get_requires_for_build_wheel(config_settings: ConfigSettings = None) -> list[str]:
    compiled = _asked(config_settings)
    requires: list[str] = _setuptools.get_requires_for_build_wheel(
        _for_setup(config_settings, compiled=False))
    return [*requires, *(_compile_requirements() if compiled else [])]


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: ConfigSettings = None) -> str:
    _asked(config_settings)
    name: str = _setuptools.prepare_metadata_for_build_wheel(
        metadata_directory, _for_setup(config_settings, compiled=False))
    return name


def build_wheel(wheel_directory: str, config_settings: ConfigSettings = None,
                metadata_directory: str | None = None) -> str:
    settings = _for_setup(config_settings, compiled=_asked(config_settings))
    name: str = _setuptools.build_wheel(wheel_directory, settings, metadata_directory)
    return name


def _editable(config_settings: ConfigSettings) -> ConfigSettings:
    """An editable build's settings, the switch turned off."""
    _asked(config_settings)
    return _for_setup(config_settings, compiled=False)


def get_requires_for_build_editable(config_settings: ConfigSettings = None) -> list[str]:
    requires: list[str] = _setuptools.get_requires_for_build_editable(_editable(config_settings))
    return requires


def prepare_metadata_for_build_editable(metadata_directory: str,
                                        config_settings: ConfigSettings = None) -> str:
    name: str = _setuptools.prepare_metadata_for_build_editable(
        metadata_directory, _editable(config_settings))
    return name


def build_editable(wheel_directory: str, config_settings: ConfigSettings = None,
                   metadata_directory: str | None = None) -> str:
    if _asked(config_settings):
        print(f"p2p-nerts: an editable install stays pure ({SWITCH} ignored): compiled "
              "modules beside the sources would shadow your edits")
    name: str = _setuptools.build_editable(wheel_directory, _editable(config_settings),
                                           metadata_directory)
    return name
