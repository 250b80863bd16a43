"""An evening's tournament: registrations, seatings and standings, from signed bytes.

Sans-I/O: the organiser's machine, every player's and a verifier that was not
there build the same :class:`~p2p_nerts.event.book.EventBook` from the same
entries (``entries.py``: signed by the organiser, or by each player for their
own registration) and the tables' signed game records (``records/``). The
seating of each game is a pure draw (``draw.py``) anyone can run again; the
organiser's journal (``journal.py``) and the export (``export.py``) are the
same bytes in a file. Imports only ``game``, ``protocol`` and ``records``.
"""
