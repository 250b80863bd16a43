"""The terminal UI: a full-screen prompt_toolkit app over one :class:`~p2p_nerts.session.Session`.

Modules, from the outside in:

- ``app``: the Application, its screens and overlays, key modes, the run loop
  (app and session in one asyncio loop) and the frame cap.
- ``table``, ``scores``, ``overlays``: what each screen draws, as fragment
  functions reading the table's read-only view (``TableView``) and the UI
  state afresh every frame.
- ``control``: what keys, the cursor and clicks do (select, send, move, turn...).
- ``state``: the player's side of the glass: selection, cursor, event lines.
- ``keys``: actions, default keys, remaps, bindings. ``config``: the settings
  file and the first-run name. ``theme``: colours and card glyphs.
- ``widgets``: small layout pieces. (The screen as text, for tests and
  ``scripts/bench_tui.py``, is ``testing.screen``.)

The UI imports the game and protocol layers, never ``net`` or ``peer``: ``cli``
hands it a session, whether a solo table or a network node, and the LAN as
``lan.Network``.
"""

from .app import NertsApp, run_app

__all__ = ["NertsApp", "run_app"]
