"""The table lobby (seated players before a round): fingerprints, ready marks, settings."""

from __future__ import annotations

import asyncio
import random

import pytest

from p2p_nerts.game.tableau import OP_TURN
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol.identity import Identity, fingerprint_of
from p2p_nerts.protocol.messages import Seat
from p2p_nerts.protocol.replica import Command, Phase, Replica, StartRound
from p2p_nerts.session import BOT_NAMES, SOLO_DELAY, Listener, LocalTable
from p2p_nerts.testing.memnet import bot_table
from p2p_nerts.ui.control import Controller
from p2p_nerts.ui.form import (
    COUNTDOWNS,
    Choice,
    Form,
    TextField,
    choice,
    form_seats,
    form_variants,
    seat_fields,
    variant_fields,
)
from p2p_nerts.ui.keys import resolve_keys
from p2p_nerts.ui.scores import between_hints, lobby

from ..replica_harness import vote_anywhere
from ..uikit import ENTER, ESC, Harness

RIGHT, DOWN = "\x1b[C", "\x1b[B"


def test_every_seat_shows_its_fingerprint_and_whether_it_is_ready() -> None:
    async def main() -> None:
        async with Harness(bots=2) as h:
            for seat in h.replica.view().seats:
                assert fingerprint_of(seat.key) in h.row(seat.name)
            assert "Tess (you, host)" in h.screen()
            # The bots are always ready, and say so; the host deals, so is never "not yet".
            assert "✓ deals" in h.row("Tess") and "✓ ready" in h.row("Ada")
            assert "not yet" not in h.screen() and "3 seated, 3 ready" in h.screen()
            assert " r ready" not in h.lines()[-1]  # the host is not asked
    asyncio.run(main())


def test_a_guest_is_asked_to_be_ready_before_the_first_deal_and_again_between_rounds() -> None:
    net = bot_table(3, seed=8)
    host, guest = net.replicas[0], net.replicas[1]
    keys = resolve_keys({})[0]

    def hints() -> str:
        return "".join(text for _style, text, *_ in between_hints(guest.view(), keys))

    def lobby_text() -> str:
        return "".join(text for _style, text, *_ in lobby(guest.view(), keys, None))

    assert "Waiting for p0 to deal: the host starts each round" in lobby_text()
    assert net.run(lambda: all(guest.seating.ready.get(s.key) for s in guest.view().seats
                               if s.key != host.me.public_key), limit=net.now + 30)
    assert "r not ready" in hints() and "3 seated, 3 ready" in lobby_text()
    net.output(0, host.handle(StartRound(), net.now))
    assert net.run(lambda: guest.phase is Phase.PLAYING, limit=net.now + 60)
    assert not any(guest.seating.ready.values())  # said afresh for each deal
    assert net.run(lambda: guest.phase is Phase.BETWEEN, limit=net.now + 1800)
    assert net.run(lambda: guest.seating.ready.get(guest.me.public_key, False), limit=net.now + 30)
    assert "r not ready" in hints()


def test_a_table_opened_with_a_code_shows_it_to_the_host() -> None:
    """As ``nerts host --code`` opens it: the same line as a table opened from the lobby."""
    async def main() -> None:
        async with Harness(code="pink otter") as h:
            assert "Code:    pink otter  (players joining need it: read it out)" in h.screen()
        async with Harness() as h:
            assert "Rules:" in h.screen() and "Code:" not in h.screen()
            # The host's clocks, which every seat plays by: shown before anyone is ready.
            # At a solo table no seat falls silent: only the countdown (a networked
            # table's line, with the silent-seat time, is test_ui_lan's).
            r = h.replica
            assert h.row("Clocks:").strip() == f"Clocks:  {r.seating.countdown:g} s to get ready"
    asyncio.run(main())


def test_the_host_sets_the_tables_clocks_with_the_settings_form() -> None:
    """The countdown and the silent-seat time are the table's: the host picks them
    in the same form, and every seat (the bot's too) plays by them."""
    async def main() -> None:
        async with Harness(bots=1) as h:
            before = h.replica.seating.countdown
            offered = sorted({*COUNTDOWNS, before})
            await h.press("o", *[DOWN] * 7, RIGHT, ENTER)  # the countdown: the next one
            chosen = offered[(offered.index(before) + 1) % len(offered)]
            assert h.replica.seating.countdown == chosen != before
            assert h.table._replicas[1].seating.countdown == chosen
            assert f"{chosen:g} s to get ready" in h.row("Clocks:")
    asyncio.run(main())


def test_the_host_changes_the_rules_with_the_settings_form() -> None:
    async def main() -> None:
        async with Harness(bots=1) as h:
            await h.press("o")
            assert "Table settings" in h.screen()
            await h.press(RIGHT, DOWN, DOWN, DOWN, DOWN, RIGHT, ENTER)
            assert "Table settings" not in h.screen()
            assert h.replica.seating.variants == Variants(stock_turn=1, jokers=True)
            assert "turn 1 · both stay on ties · −2 per Nerts card · to 100 · jokers" in h.row(
                "Rules:")
            bot = h.table._replicas[1]
            assert bot.seating.variants == h.replica.seating.variants  # the bot heard it
            await h.press("o", ESC)
            assert h.replica.seating.variants.stock_turn == 1  # Esc changes nothing
            await h.deal()
            rs = h.replica.rs
            assert rs is not None and rs.variants.stock_turn == 1
    asyncio.run(main())


def test_the_host_chooses_partners_and_every_seat_plays_by_them() -> None:
    async def main() -> None:
        async with Harness(bots=3, variants=Variants(teams="pairs")) as h:
            names = [s.name for s in h.replica.view().seats]
            assert names[0] == "Tess"  # players sit in the order they joined
            assert h.row("Teams:").strip() == f"Teams:   {names[0]} + {names[1]} · " \
                                              f"{names[2]} + {names[3]}"
            assert "p partners" in h.screen()
            await h.press("p")
            assert "Partners" in h.screen() and f"Team 2  ◂ {names[2]}" not in h.screen()
            await h.press(DOWN, RIGHT)  # Tess's partner: the next player instead
            assert "Team 1  ◂ " + names[2] in h.screen()
            await h.press(ENTER)
            assert "Partners" not in h.screen()
            assert h.row("Teams:").strip() == f"Teams:   {names[0]} + {names[2]} · " \
                                              f"{names[1]} + {names[3]}"
            assert f"{names[2]} (partner)" in h.screen()
            assert f"Your partner: {names[2]}" in h.screen()  # news, also between rounds
            order = [s.key for s in h.replica.view().seats]
            assert all([s.key for s in r.view().seats] == order for r in h.table._replicas)
            await h.press("p", ESC)  # Esc changes nothing
            assert [s.key for s in h.replica.view().seats] == order
            await h.deal()
            rs = h.replica.rs
            assert rs is not None and list(rs.keys) == order
    asyncio.run(main())


def test_a_solo_tables_bots_sit_down_in_the_order_of_their_names() -> None:
    """As the solo screen's frames are held back like a LAN's: seats are in
    the order players join, and that must not be the order delays chose."""
    for seed in range(5):
        table = LocalTable(Identity.from_seed(b"\x07" * 32, "Tess"), bots=5, seed=seed,
                           delay=SOLO_DELAY)
        assert [s.name for s in table.replica.view().seats] == ["Tess", *BOT_NAMES[:5]]


def test_no_computer_player_is_named_like_the_player() -> None:
    table = LocalTable(Identity.from_seed(b"\x07" * 32, "ada"), bots=7, seed=1)
    names = [s.name.casefold() for s in table.replica.view().seats]
    assert sorted(names) == sorted(set(names)) and len(names) == 8 and "ada" in names


def test_a_partners_form_overtaken_by_a_newcomer_says_so_and_changes_nothing() -> None:
    async def main() -> None:
        async with Harness(bots=3, variants=Variants(teams="pairs")) as h:
            order = [s.key for s in h.replica.view().seats]
            await h.press("p", DOWN, RIGHT)
            seating = h.replica.seating
            seating.seats = seating.seats[:3]  # as a Roster without the last would
            await h.press(ENTER)
            assert "Someone sat down or left meanwhile" in h.screen()
            assert "Team 1" not in h.screen()
            assert [s.key for s in h.replica.view().seats] == order[:3]
    asyncio.run(main())


def test_partners_need_pairs_and_a_host() -> None:
    async def main() -> None:
        async with Harness(bots=3) as h:
            await h.press("p")
            assert "Team 1" not in h.screen()  # no form
            assert "Partners count when the teams are pairs" in h.screen()
            assert "p partners" not in h.screen()
    asyncio.run(main())
    ctl = Controller(GuestSeat())
    ctl.open_partners()
    assert ctl.state.form is None
    assert ctl.state.lines[-1].text == "Only the host chooses partners"


def test_the_partners_form_keeps_every_player_in_exactly_one_seat() -> None:
    keys = [bytes([i]) * 32 for i in range(4)]
    seats = [Seat(keys[0], "Ana"), Seat(keys[1], "Bo"), Seat(keys[2], "Ana"), Seat(keys[3], "Cy")]
    form = Form("Partners", seat_fields(seats), "go", lambda _form: None, swaps=True)
    assert [f.label for f in form.fields] == ["Team 1", "Team 1", "Team 2", "Team 2"]
    shown = [f.shown for f in form.fields if isinstance(f, Choice)]
    assert shown[1] == "Bo" and shown[0].startswith("Ana (") and shown[0] != shown[2]
    rng = random.Random(5)
    for _ in range(200):
        form.row = rng.randrange(4)
        form.change(rng.choice((-1, 1)))
        assert sorted(form_seats(form)) == keys
    form.row = 0
    while form_seats(form)[0] != keys[3]:
        form.change(1)
    assert form_seats(form)[0] == keys[3] and keys[0] in form_seats(form)[1:]


class GuestSeat:
    """A session whose replica is a guest's (the host is someone else); it never sends."""

    networked = True
    address = None  # a guest hosts nothing

    def __init__(self) -> None:
        host = Identity.from_seed(b"\x01" * 32, "Host")
        self.replica = Replica(Identity.from_seed(b"\x02" * 32, "Gil"), b"t" * 16,
                               host.public_key)
        self.view = self.replica.view()

    def act(self, command: Command) -> None:
        self.replica.handle(command, 0.0)

    def subscribe(self, listener: Listener) -> None:
        pass

    async def run(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_only_the_host_gets_the_settings_form() -> None:
    ctl = Controller(GuestSeat())
    ctl.open_settings()
    assert ctl.state.form is None
    assert ctl.state.lines[-1].text == "Only the host changes the settings"


def test_refusals_are_the_replicas_reasons() -> None:
    ctl = Controller(GuestSeat())
    ctl.pile_key(0)
    assert ctl.state.lines[-1].text == "No round is being played"
    assert ctl.view.blocked() == "no round is being played"


def test_variant_fields_read_back_to_the_same_variants() -> None:
    odd = Variants(stock_turn=1, strict_ties=True, lone_rotate=True, penalty=False,
                   target=250, teams="share", jokers=True)
    form = Form("t", variant_fields(odd), "go", lambda _form: None)
    assert form_variants(form) == odd
    teams = next(f for f in form.fields if f.key == "teams")
    assert isinstance(teams, Choice) and teams.shown == "share: two players at each tableau"
    # A value the form does not offer (a command-line flag set it) stays as it is.
    kept = choice("countdown", "Countdown", 7.0, ((3.0, "3 s"), (5.0, "5 s")))
    assert kept.value == 7.0 and kept.shown == "7.0" and len(kept.options) == 3


def test_text_fields_take_what_they_may_hold() -> None:
    target = TextField("target", "Target", limit=5, digits=True)
    target.type("1x2²3 456")
    assert target.text == "12345"
    name = TextField("name", "Name", limit=6)
    name.type("Ana\x1b[15~s table")
    assert name.text == "Ana[15"  # control characters never get in; the limit holds
    name.erase()
    assert name.text == "Ana[1"


def test_space_steps_a_choice_and_types_into_text() -> None:
    form = Form("t", [choice("c", "C", 1, [(1, "one"), (2, "two")]), TextField("n", "N")],
                "go", lambda _form: None)
    form.type(" ")
    assert form.value("c") == 2
    form.move(1)
    form.type("a b")
    assert form.text("n") == "a b"



def test_pairs_show_who_partners_whom_before_and_during_the_round() -> None:
    """Under "pairs" the seats' order partners them (seats 2k and 2k+1): the lobby
    names the teams and your partner, the round's header shows each team's total
    (what wins), and the other players' rows mark your partner."""
    async def main() -> None:
        async with Harness(bots=3, variants=Variants(teams="pairs")) as h:
            names = [s.name for s in h.replica.view().seats]
            me = names.index("Tess")
            partner = names[me ^ 1]
            teams = f"{names[0]} + {names[1]} · {names[2]} + {names[3]}"
            assert f"Teams:   {teams}" in h.screen()
            assert f"{partner} (partner" in h.row(partner)
            assert all("partner" not in h.row(n) for n in names if n not in (partner, "Tess"))
            await h.deal()
            assert f"{names[0]} + {names[1]} 0 · {names[2]} + {names[3]} 0" in h.screen()
            assert f"{partner} (partner)" in h.row(partner)
            assert all("partner" not in h.row(n) for n in names if n not in (partner, "Tess"))
        async with Harness(bots=2, variants=Variants(teams="pairs")) as h:
            assert "cannot deal yet: pairs need 4, 6 or 8 players (two teams" in h.row("Players:")
        async with Harness(bots=3) as h:  # no teams: none of it
            assert "Teams:" not in h.screen() and "partner" not in h.screen()
    asyncio.run(main())


def test_share_a_deck_in_solo_a_bot_plays_your_tableau_with_you(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Share-a-deck at a solo table: every seat is a tableau of two; a bot plays
    the player's with them, so cards move there with no key pressed."""
    vote_anywhere(monkeypatch)  # voted at the deal, where nobody is stuck yet
    async def main() -> None:
        async with Harness(bots=2, variants=Variants(teams="share"), skill="hard") as h:
            assert "two players play each tableau together" in h.row("Teams:")
            await h.deal()
            assert "in your Nerts pile · two of you play it" in h.row("── You:")
            await h.press("s")  # the seat's vote: the partner sees it, and may take it back
            assert "Your tableau is voted stuck (s withdraws)" in h.screen()
            h.advance(8.0)
            assert any(move[0] != OP_TURN for move in h.tab.log), "the partner moved cards"
            assert h.replica.rs is not None and h.replica.rs.log.cards_of(h.me) > 0
        async with Harness(bots=2, variants=Variants(teams="none"), skill="hard") as h:
            await h.deal()
            assert "two of you" not in h.screen()
            h.advance(8.0)
            assert not h.tab.log, "without share-a-deck nobody plays the player's tableau"
    asyncio.run(main())
