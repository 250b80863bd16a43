"""Results that last: game records, their verification, history, replays, standings.

A game's signed entries already prove everything about it (who sat, the fair
shuffle, every play and every audit); this package keeps them once the game
is over, checks them again by running a fresh replica over them, and reads
history, statistics and replays from what that replica decided. Pure: bytes
in, values out; the store and the command line are the callers.
"""
