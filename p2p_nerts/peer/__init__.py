"""The programs that run a seat: the network session and what it runs.

``node`` opens a seat (host, join, watch, resume) on ``shell``, the network
shell (bytes in, the replica, the journal, bytes out), with its ``config``;
the shell owns small policies it tells of links and events and asks:
``admission`` (who may keep a link), ``seatback`` (asking for a seat again),
``spectator`` (a spectator asking each peer to watch), ``keeping`` (the game
for the history), ``journaling`` (its held writes to the store), ``alarm``
(when it wakes by itself) and ``announce`` (the host's ad on mDNS);
``headless`` plays without a screen (bots, ``--headless``); ``loopback``
seats a player with bots over real sockets on 127.0.0.1; ``tables`` is the
lobby's view of the LAN (``lan.Network``); ``results`` serves and fetches
finished games' records; ``wall`` serves the projector's page of an
event's standings (``wall_page/``, over HTTP).
They build on ``net`` (transport and discovery), ``session``, ``records`` and
the store; nothing below imports them.
"""
