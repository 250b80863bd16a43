"""Log lines: one line each, a caught bug included (no traceback reaches a log)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from p2p_nerts.net.logs import setup_logging


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
