"""The command line's functions, beside ``cli`` which parses and dispatches to them:
``play`` (host, join, bot, watch, solo over loopback) and ``records`` (history,
verify, replay, event standings)."""
