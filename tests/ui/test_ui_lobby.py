"""The network lobby over a LAN in memory: the live list, joining, opening a table, solo."""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from p2p_nerts.game.variants import Variants
from p2p_nerts.net.discovery import matching
from p2p_nerts.session import SOLO_DELAY, LocalTable

from ..uikit import DOWN, ENTER, ESC, LEFT, RIGHT, UP, FakeNetwork, Listing, LobbyHarness

BACKSPACE = "\x7f"


def test_the_list_follows_the_network_live_and_keeps_the_choice() -> None:
    async def main() -> None:
        net = FakeNetwork()
        async with LobbyHarness(net) as h:
            await h.shows("Looking for tables on your network")
            assert "none found yet" in h.screen()
            net.put(Listing("Ana's table", seats_taken=2),
                    Listing("Cy's table", variant="turn1 ties:strict nopen tgt50"))
            await h.shows("Cy's table")
            ana = h.row("▸ Ana's table")
            assert "2/8" in ana and "turn3 ties:both pen tgt100" in ana and "v1" in ana
            assert "2 tables" in h.screen()
            await h.press(DOWN)
            assert "▸ Cy's table" in h.screen()
            net.put(Listing("Bo's table"))  # sorts between the two: the choice stays on Cy
            await h.shows("Bo's table")
            assert "▸ Cy's table" in h.screen()
            net.drop("Ana's table #0001")
            await h.until(lambda: "Ana's table" not in h.screen(), "Ana's table to go")
            assert "▸ Cy's table" in h.screen() and "2 tables" in h.screen()
            await h.press(UP)
            assert "▸ Bo's table" in h.screen()
    asyncio.run(main())


def test_a_long_list_scrolls_with_the_choice() -> None:
    async def main() -> None:
        net = FakeNetwork()
        net.put(*(Listing(f"Table {n:02}") for n in range(40)))
        async with LobbyHarness(net, columns=80, rows=24) as h:
            await h.shows("Table 00")
            assert "14 of 40 shown: ↑ ↓ scroll" in h.screen() and "Table 39" not in h.screen()
            for _ in range(39):
                await h.press(DOWN)
            assert "▸ Table 39" in h.screen() and "Table 00" not in h.screen()
            assert len(h.lines()) == 24
    asyncio.run(main())


def test_marks_say_full_code_and_another_version() -> None:
    async def main() -> None:
        net = FakeNetwork()
        net.put(Listing("Full", seats_taken=4, seats_total=4),
                Listing("Locked", needs_code=True), Listing("Newer", protocol_version=2))
        async with LobbyHarness(net) as h:
            await h.shows("Newer")
            assert h.row("▸ Full").endswith("v1 full")
            assert h.row("Locked").endswith("v1 code")
            assert h.row("Newer").endswith("v2")
            await h.press(ENTER)
            assert "Full is full" in h.screen()  # what to do instead: see below
            await h.press(ESC, DOWN, ENTER)
            assert "Join Locked" in h.screen() and "Table code" in h.screen()
            await h.press(ESC, DOWN, ENTER)
            assert "Newer speaks protocol v2; this nerts speaks v1" in h.screen()
            assert net.joined == []  # none of them was dialled
    asyncio.run(main())


def test_failures_to_join_are_lines_on_screen() -> None:
    async def main() -> None:
        net = FakeNetwork()
        ana = Listing("Ana's table")
        net.put(ana)
        async with LobbyHarness(net) as h:
            await h.shows("Ana's table")

            for why in ("table Ana's table: a round is under way: wait for it to end",
                        "Ana's table is gone from the network",
                        "cannot reach 10.0.0.5:40123: Connection refused"):
                def fail(why: str = why) -> LocalTable:
                    raise ConnectionError(why)
                net.outcome = fail
                await h.press(ENTER)
                await h.shows(why[:1].upper() + why[1:])
            assert net.joined == [ana.instance] * 3
            assert "Traceback" not in h.screen()
    asyncio.run(main())


def test_a_table_appearing_above_the_one_shown_chosen_does_not_take_enter() -> None:
    """Nobody has moved yet: the first table listed shows as chosen. Another that
    sorts before it comes up on the network just before Enter; Enter still joins
    the one that showed as chosen."""
    async def main() -> None:
        net = FakeNetwork()
        net.put(Listing("Bea's table"))
        async with LobbyHarness(net) as h:
            await h.shows("▸ Bea's table")
            net.put(Listing("Ana's table", instance="Ana's table #0002"))
            await h.shows("Ana's table")
            assert "▸ Bea's table" in h.screen()
            await h.press(ENTER)
            await h.shows("Fingerprint")
            assert net.joined == [Listing("Bea's table").instance]
    asyncio.run(main())


def test_one_seat_is_won_at_a_time() -> None:
    async def main() -> None:
        net = FakeNetwork()
        net.gate = asyncio.Event()
        net.put(Listing("Ana's table"))
        async with LobbyHarness(net) as h:
            await h.shows("Ana's table")
            await h.press(ENTER)
            assert "Joining Ana's table…" in h.screen()
            await h.press("s", ENTER)
            assert "Wait: Joining Ana's table…" in h.screen()  # in the form, still open
            await h.press(ESC, ENTER)
            assert net.joined == [net.tables[0].instance]
            net.gate.set()
            await h.shows("Fingerprint")
    asyncio.run(main())


def test_joining_sits_down_at_the_table_and_leaving_comes_back() -> None:
    async def main() -> None:
        net = FakeNetwork()
        net.put(Listing("Ana's table"))
        async with LobbyHarness(net) as h:
            await h.shows("Ana's table")
            await h.click_text("Ana's table")  # a click on the chosen table joins it
            await h.shows("Fingerprint")
            assert net.joined == ["Ana's table #0001"]
            assert "Tess (you, host)" in h.screen()
            await h.press("q", "y")
            await h.shows("You left the table")
            assert "Ana's table" in h.screen()
            await h.press("q")
        assert net.closed
    asyncio.run(main())


def test_the_create_form_opens_a_table_with_the_chosen_rules() -> None:
    async def main() -> None:
        net = FakeNetwork()
        async with LobbyHarness(net) as h:
            await h.press("c")
            assert "Open a table" in h.screen() and "Tess's table_" in h.screen()
            await h.press(*[BACKSPACE] * len("Tess's table"))
            await h.type("Game night")
            await h.press(DOWN)                 # code: none
            await h.press(DOWN, RIGHT)          # stock turn: 1 card
            await h.press(DOWN, " ")            # ties: strict
            await h.press(DOWN, RIGHT)          # penalty: none
            await h.press(DOWN, BACKSPACE, BACKSPACE, BACKSPACE)
            await h.type("50x")                 # target: digits only
            await h.press(DOWN, RIGHT)          # jokers: two per deck
            await h.press(DOWN, RIGHT)          # teams: pairs
            assert "◂ pairs: partners add their scores ▸" in h.screen()
            await h.press(DOWN)                 # stuck alone: as it is
            await h.press(DOWN, RIGHT)          # countdown: 5 s
            await h.press(DOWN, RIGHT)          # a silent seat: dropped after 15 s
            assert "◂ 15 s without a word, then dropped ▸" in h.screen()
            await h.press(ENTER)
            await h.shows("Fingerprint")
        assert net.hosted == [("Game night", Variants(
            stock_turn=1, strict_ties=True, penalty=False, target=50, jokers=True,
            teams="pairs"), None, 5.0, 15.0)]
    asyncio.run(main())


def test_a_table_opened_with_a_code_shows_it_to_the_host() -> None:
    async def main() -> None:
        net = FakeNetwork()
        async with LobbyHarness(net) as h:
            await h.press("c", DOWN)
            await h.type("x" * 65)
            await h.press(ENTER)
            assert "A table code is 1 to 64 printable characters" in h.screen()
            assert "Open a table" in h.screen() and net.hosted == []
            await h.press(*[BACKSPACE] * 65)
            await h.type(" 4417 ")
            await h.press(ENTER)
            await h.shows("Fingerprint")
            assert "Code:    4417  (players joining need it: read it out)" in h.screen()
        assert net.hosted == [("Tess's table", Variants(), "4417", 3.0, 6.0)]
    asyncio.run(main())


def test_a_table_with_a_code_asks_for_it_until_it_is_right() -> None:
    async def main() -> None:
        net = FakeNetwork()
        locked = Listing("Locked", needs_code=True)
        net.put(locked)
        async with LobbyHarness(net) as h:
            await h.shows("Locked")
            await h.press(ENTER)
            assert "Join Locked" in h.screen()
            await h.press(ESC)  # Esc: no code, no join
            assert "Join Locked" not in h.screen() and net.joined == []
            await h.press(ENTER, ENTER)
            assert "Locked asks for its table code" in h.screen() and net.joined == []
            await h.type("blue fox")
            await h.press(ENTER)
            await h.shows("Wrong table code for table Locked")
            assert "Join Locked" in h.screen()  # back, with the code, to correct
            await h.press(*[BACKSPACE] * len("blue fox"))
            await h.type("pink otter")
            await h.press(ENTER)
            await h.shows("Fingerprint")
            assert net.joined == [locked.instance] * 2
            assert net.codes == ["blue fox", "pink otter"]
    asyncio.run(main())


def test_a_form_with_a_bad_field_stays_open_and_esc_cancels_it() -> None:
    async def main() -> None:
        net = FakeNetwork()
        async with LobbyHarness(net) as h:
            await h.press("c", *[BACKSPACE] * 12, ENTER)
            assert "The table needs a name" in h.screen()
            await h.type("T")
            for _ in range(5):
                await h.press(DOWN)
            await h.press(BACKSPACE, BACKSPACE, BACKSPACE, "0", ENTER)
            assert "Target score must be 1..10000, not 0" in h.screen()
            await h.press(ESC)
            assert "Open a table" not in h.screen() and "Tables on your network" in h.screen()
            assert net.hosted == []
    asyncio.run(main())


def test_join_by_address_checks_the_text_then_dials() -> None:
    async def main() -> None:
        net = FakeNetwork()
        async with LobbyHarness(net) as h:
            await h.press("a")
            await h.type("nowhere")
            await h.press(ENTER)
            assert "'nowhere' is not HOST:PORT" in h.screen()
            assert "Join by address" in h.screen()  # still open, to correct
            await h.press(*[BACKSPACE] * 7)
            await h.type("10.1.2.3:4000")
            await h.press(DOWN)
            await h.type("4417")  # a table reached by address may need its code
            await h.press(ENTER)
            await h.shows("Fingerprint")
            assert net.joined == ["10.1.2.3:4000"] and net.codes == ["4417"]
    asyncio.run(main())


def test_solo_from_the_lobby_deals_against_bots_with_a_lan_delay() -> None:
    async def main() -> None:
        async with LobbyHarness(FakeNetwork()) as h:
            await h.press("s")
            assert "Play solo" in h.screen() and "◂ 2 ▸" in h.screen()
            await h.press(RIGHT, ENTER)
            await h.shows("Fingerprint")
            assert h.ui is not None
            table = h.ui.ctl.session
            assert isinstance(table, LocalTable) and table._delay == SOLO_DELAY
            assert len(h.ui.ctl.view.seats) == 4  # you and three bots
            await h.press("?")
            assert "host: change the rules" in h.screen()
    asyncio.run(main())


def test_solo_share_a_deck_asks_for_three_tableaux() -> None:
    async def main() -> None:
        async with LobbyHarness(FakeNetwork()) as h:
            await h.press("s", LEFT)                # bots: 1
            await h.press(*[DOWN] * 7, RIGHT, RIGHT)  # teams: share
            assert "◂ share: two players at each tableau ▸" in h.screen()
            await h.press(ENTER)
            assert "Share-a-deck needs 6 or 8 players (3 or 4 tableaux)" in h.screen()
            assert "Play solo" in h.screen()        # the form stays, to fix
            await h.press(*[UP] * 7, RIGHT)          # bots: 2
            await h.press(ENTER)
            await h.shows("Fingerprint")
            assert "two players play each tableau together" in h.screen()
            assert h.ui is not None and len(h.ui.ctl.view.seats) == 3
    asyncio.run(main())


def test_the_lobby_help_lists_its_keys() -> None:
    async def main() -> None:
        async with LobbyHarness(FakeNetwork(), columns=80, rows=24) as h:
            await h.press("?")
            assert "join by address (HOST:PORT)" in h.screen()
            assert "open a table of your own" in h.screen()
            assert all(len(line) <= 80 for line in h.lines())
            await h.press(ESC)
            assert "Keys in the lobby" not in h.screen()
    asyncio.run(main())


@pytest.mark.parametrize("columns", [80, 90, 100])
def test_the_key_line_fits_the_screen_and_always_offers_help_and_quit(columns: int) -> None:
    async def main() -> None:
        async with LobbyHarness(FakeNetwork(), columns=columns, rows=24) as h:
            keys = h.lines()[-1].rstrip()
            assert len(keys) <= columns and re.sub(" +", " ", keys).endswith("? help q quit")
            # Joining by address stays (the way in where multicast is blocked); the
            # standings go first (the help lists them all).
            assert "Enter join" in keys and "c new" in keys and "a address" in keys
            assert ("standings" in keys) == (columns > 80)
    asyncio.run(main())


def test_rows_say_who_hosts_and_what_the_table_is_doing() -> None:
    """Two tables of one name differ by their host's fingerprint (NAME@FP) and
    name; the state column says playing, between rounds, or when the next round
    is dealt."""
    async def main() -> None:
        net = FakeNetwork()
        start = time.time()
        soon = int(start) + 30
        net.put(Listing("Red", instance="Red #1", host="Ana", fingerprint="aaaa1111bbbb2222",
                        state="playing"),
                Listing("Red", instance="Red #2", host="Bo", fingerprint="cccc3333dddd4444",
                        state="break", next_deal=soon),
                Listing("Blue", state="break"), Listing("Gold"))
        async with LobbyHarness(net) as h:
            await h.shows("Gold")
            rows = h.lines()
            drawn = time.time()
            assert any(re.search(r"Red@aaaa +Ana .* playing ", r) for r in rows)
            # However long a busy machine took to draw it: the seconds left then.
            left = [int(m[1]) for r in rows
                    if (m := re.search(r"Red@cccc +Bo .* next round in (\d+) s ", r))]
            assert left and round(soon - drawn) - 1 <= left[0] <= round(soon - start), left
            assert "between rounds" in h.row("▸ Blue")
            assert "seating players" in h.row("Gold")
    asyncio.run(main())


def test_what_a_row_names_can_be_typed_back_to_nerts_join() -> None:
    """Each row names its table as ``nerts join`` takes it: NAME@FP, the start of
    the host's fingerprint, longer where two hosts of one table name share it;
    typed back (``matching``, the rule of ``nerts join``), it means that table
    alone."""
    async def main() -> None:
        net = FakeNetwork()
        tables = [Listing("Main table", instance="Main table #1", host="Ana",
                          fingerprint="22d7b07e00000000"),
                  Listing("Main table", instance="Main table #2", host="Bo",
                          fingerprint="22d7c0de00000000"),
                  Listing("Side", instance="Side #1", host="Ana",
                          fingerprint="22d7b07e00000000")]
        net.put(*tables)
        async with LobbyHarness(net) as h:
            await h.shows("Side@")
            typed = [m[1] for r in h.lines() if (m := re.search(r"^  [▸ ] (\S.*?@[0-9a-f]+) ", r))]
            assert typed == ["Main table@22d7b07e", "Main table@22d7c0de", "Side@22d7"]
            for label, table in zip(typed, net.tables, strict=True):
                assert matching(net.tables, label) == [table]
    asyncio.run(main())


def test_w_watches_the_chosen_table_full_or_coded() -> None:
    async def main() -> None:
        net = FakeNetwork()
        net.put(Listing("Full", seats_taken=4, seats_total=4), Listing("Locked", needs_code=True))
        async with LobbyHarness(net) as h:
            await h.shows("Locked")
            assert "w watch" in h.screen()
            await h.press("w")
            await h.until(lambda: net.watched == ["Full #0001"], "Full watched")
    asyncio.run(main())


def test_a_full_table_offers_to_wait_for_a_seat_or_to_watch() -> None:
    async def main() -> None:
        net = FakeNetwork()
        net.put(Listing("Full", seats_taken=4, seats_total=4))
        async with LobbyHarness(net) as h:
            await h.shows("Full")
            await h.press(ENTER)
            assert "Full is full" in h.screen()
            assert "◂ wait for a free seat, and sit down ▸" in h.screen()
            assert "Esc: cancel" in h.screen()
            await h.press(ESC)  # the way back: nothing dialled
            assert "Full is full" not in h.screen() and net.joined == net.watched == []
            await h.press(ENTER, ENTER)  # wait (the first choice)
            await h.shows("Fingerprint")
            assert net.joined == ["Full #0001"] and net.waits == [True]
            await h.press("q", "y")
            await h.shows("You left the table")
            await h.press(ENTER, RIGHT)
            assert "◂ watch, no seat ▸" in h.screen()
            await h.press(ENTER)
            await h.until(lambda: net.watched == ["Full #0001"], "Full watched")
            assert net.joined == ["Full #0001"]  # no second join
    asyncio.run(main())


def test_a_full_coded_table_asks_for_its_code_either_way() -> None:
    async def main() -> None:
        net = FakeNetwork()
        net.put(Listing("Full", seats_taken=2, seats_total=2, needs_code=True))
        async with LobbyHarness(net) as h:
            await h.shows("Full")
            await h.press(ENTER, ENTER)
            assert "Full asks for its table code" in h.screen()  # the form stays
            await h.press(DOWN)
            await h.type("wrong code")
            await h.press(ENTER)
            await h.shows("Wrong table code for table Full")
            assert "Full is full" in h.screen()  # back, to correct
            await h.press(*[BACKSPACE] * len("wrong code"))
            await h.type("pink otter")
            await h.press(ENTER)
            await h.shows("Fingerprint")
            assert net.waits == [True, True] and net.codes == ["wrong code", "pink otter"]
    asyncio.run(main())


def test_watching_a_coded_table_asks_for_its_code() -> None:
    async def main() -> None:
        net = FakeNetwork()
        net.put(Listing("Locked", needs_code=True))
        async with LobbyHarness(net) as h:
            await h.shows("Locked")
            await h.press("w")
            assert "Watch Locked" in h.screen() and "Table code" in h.screen()
            await h.type("pink otter")
            await h.press(ENTER)
            await h.until(lambda: net.watched == ["Locked #0001"], "Locked watched")
            assert net.codes == ["pink otter"]
    asyncio.run(main())

