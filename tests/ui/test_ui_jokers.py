"""Declaring jokers at the keyboard: the declare key, what the news says, the help."""

from __future__ import annotations

import asyncio

from p2p_nerts.game.cards import make_face
from p2p_nerts.game.foundations import Fate, Play
from p2p_nerts.game.tableau import OP_WORK, Tableau
from p2p_nerts.game.variants import Variants
from p2p_nerts.protocol import events as ev
from p2p_nerts.ui.config import Config

from ..gamekit import c, cs, tableau
from ..uikit import Harness

JOKERS = Variants(jokers=True)


def jokers_tableau(h: Harness, *, nerts: str = "", work: tuple[str, ...] = (),
                   waste: str = "") -> Tableau:
    """My tableau in a known position, jokers written J0 and J1 (shown ¤1 and ¤2)."""
    rs = h.replica.rs
    assert rs is not None
    me = h.me
    rs.tab = tableau(me, nerts=[c(t, me) for t in nerts.split()],
                     work=[[c(t, me) for t in p.split()] for p in work],
                     waste=[c(t, me) for t in waste.split()], jokers=True)
    return rs.tab


async def start_piles(h: Harness) -> None:
    """Foundations wanting the 2♣ and the 9♥ (my own aces and hearts sent up)."""
    h.set_tableau(nerts="8H 7H 6H 5H 4H 3H 2H AH AC")
    for _ in range(9):
        await h.press("n", "f")
    log = h.replica.view().round
    assert log is not None
    wanted = set(log.foundations.wanted_faces())
    assert wanted == {make_face(3, 2), make_face(1, 9)}, wanted


def test_the_declare_key_chooses_what_a_joker_goes_up_as() -> None:
    """With piles wanting 2♣ and 9♥, a joker on the waste may go up as either, or
    start a pile as any ace; the news names the card it went up as."""
    async def main() -> None:
        async with Harness(variants=JOKERS) as h:
            await h.deal()
            await start_piles(h)
            jokers_tableau(h, waste="J0", work=("KS", "KH", "KD", "KC"))
            await h.press("w", "d")
            assert "¤1 stands for the 2♣: choice 1 of 6" in h.screen()
            await h.press("d")
            assert "¤1 stands for the 9♥: choice 2 of 6" in h.screen()
            await h.press("f")
            assert "Your ¤1 goes up as the 9♥" in h.screen()
            assert h.tab.waste == []
            rnd = h.replica.view().round
            assert rnd is not None
            assert make_face(1, 10) in set(rnd.foundations.wanted_faces())  # it took the 9♥
    asyncio.run(main())


def test_a_joker_starts_a_pile_as_the_ace_declared_from_a_work_pile() -> None:
    async def main() -> None:
        async with Harness(variants=JOKERS) as h:
            await h.deal()
            jokers_tableau(h, work=("KS J1", "KH", "KD", "KC"))
            await h.press("1")
            for _ in range(3):  # nothing wanted: A♠, A♥, A♦ ...
                await h.press("d")
            assert "¤2 stands for the A♦ (it starts a pile): choice 3 of 6" in h.screen()
            await h.press("f")
            assert "Your ¤2 goes up as the A♦, starting a pile" in h.screen()
            assert h.tab.work[0] == [c("KS", h.me)]
    asyncio.run(main())


def test_a_covered_joker_keeps_the_suit_declared() -> None:
    """A joker on a black 5 is a red 4 once covered: d offers the 4♥ and the 4♦,
    and the card laid on it fixes it as the one chosen."""
    async def main() -> None:
        async with Harness(variants=JOKERS) as h:
            await h.deal()
            tab = jokers_tableau(h, nerts="3C", work=("5S J1", "KH", "KD", "KC"))
            j1 = c("J1", h.me)
            await h.press("1")
            for _ in range(6):  # its four aces, then what it becomes covered
                await h.press("d")
            assert "¤2 stands for the 4♦: choice 6 of 6" in h.screen()
            await h.press("n", "1")
            assert "Your ¤2 is now the 4♦: a card lies on it" in h.screen()
            assert tab.bound == {j1: make_face(2, 4)}
            assert tab.log[-1] == (OP_WORK, 0, 0, -1, make_face(2, 4))
            await h.press("1", "1", "d")  # the joker again: fixed for good
            assert "¤2 is the 4♦ for good: a card lay on it" in h.screen()
    asyncio.run(main())


def test_an_undeclared_covered_joker_is_named_too_and_the_key_wants_a_joker() -> None:
    async def main() -> None:
        async with Harness(variants=JOKERS) as h:
            await h.deal()
            tab = jokers_tableau(h, nerts="3C", work=("5S J1", "KH", "KD", "KC"))
            await h.press("n", "d")
            assert "Select a joker (¤1 or ¤2) first" in h.screen()
            await h.press("1")
            assert "Your ¤2 is now the 4♥: a card lies on it" in h.screen()
            assert list(tab.bound.values()) == [make_face(1, 4)]
            assert cs("5S", h.me) == tab.work[0][:1]
    asyncio.run(main())


def test_the_declare_key_is_remapped_and_explained_in_the_help() -> None:
    config = Config(keys={"declare": ("j",)})

    async def main() -> None:
        async with Harness(columns=80, rows=24, config=config, variants=JOKERS) as h:
            await h.press("?")
            assert "│  j          joker ¤1 ¤2: choose the card it stands for" in h.screen()
            await h.press("r")
            assert ("Jokers ¤1 ¤2 stand for any card: j on one chooses which (up, or covered)."
                    in h.screen())
            assert "(r or Tab: the keys" in h.screen()
            await h.press("?")
            await h.deal()
            jokers_tableau(h, waste="J0", work=("KS", "KH", "KD", "KC"))
            await h.press("w", "j")
            assert "¤1 stands for the A♠ (it starts a pile): choice 1 of 4" in h.screen()
    asyncio.run(main())


def test_the_news_names_the_card_an_opponents_joker_went_up_as_and_bounced_as() -> None:
    async def main() -> None:
        async with Harness(variants=JOKERS) as h:
            await h.deal()
            rs = h.replica.rs
            assert rs is not None
            bix = rs.names.index("Bix")
            joker = c("J1", bix)
            theirs = Play(41, bix, joker, c("AC", h.me), 0, make_face(3, 2))
            h.table.announce(ev.PlayAdded(theirs, False))
            assert "Bix's ¤2 goes up as the 2♣" in h.screen()
            h.table.announce(ev.PlayFinal(1, theirs, Fate.BOUNCE, False, "Tess"))
            assert "Bix's ¤2 (as 2♣) bounced: Tess was first" in h.screen()
    asyncio.run(main())
