"""The README's picture is the app's own screen: ``scripts/screens.py`` draws it into
docs/ and copies it between the README's marks, and the two must not drift."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_the_readme_shows_the_table_as_scripts_screens_drew_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start, end = "<!-- screen:table -->\n```\n", "\n```\n<!-- /screen -->"
    assert start in readme and end in readme
    shown = readme.split(start, 1)[1].split(end, 1)[0]
    drawn = (ROOT / "docs" / "screen-table.txt").read_text(encoding="utf-8").rstrip()
    assert shown == drawn
    assert "Foundations" in shown and "Nerts" in shown  # a table mid-round, not a stub
