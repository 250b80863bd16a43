"""Test harnesses in one place (as trio keeps its own): not used by the game.

``memnet`` is the in-memory network of replicas the protocol tests and
benchmarks drive; ``peers`` runs peer processes on loopback and a
fault-injecting relay; ``screen`` renders the app with no terminal; ``tables``
plays a table's game to its signed record (for events).
"""
