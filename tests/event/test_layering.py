"""The event's core is sans-I/O: it loads no network, peer, screen or session code."""

from __future__ import annotations

import subprocess
import sys


def test_the_event_package_imports_only_game_protocol_and_records() -> None:
    code = ("import sys, p2p_nerts.event.export, p2p_nerts.event.journal\n"
            "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('p2p_nerts.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                            text=True).stdout.split()
    assert "p2p_nerts.event.book" in loaded
    allowed = ("p2p_nerts.event", "p2p_nerts.game", "p2p_nerts.protocol", "p2p_nerts.records",
               "p2p_nerts.store")  # (records' history reads games from a store)
    assert [m for m in loaded if not m.startswith(allowed)] == []
