#!/usr/bin/env python3
"""Draw the real screens as plain text, for the README and docs/ to show.

Each picture is the app itself (``ui.app.NertsApp``) at a solo table of
seeded bots on a fake clock, rendered headless by the same code the tests
read screens with (``testing.screen``): no terminal, no network. The player
plays too, through the app's own controller as keys would: the first card
that can go up goes up, else the stock turns. The same seed draws the same
pictures, so a change that alters a screen shows in the diff of the files
this writes:

- ``screen-table.txt``: mid-round at 120×36, every opponent's layout drawn
  across the table from yours;
- ``screen-table-80x24.txt``: the same moment at 80×24, one row each;
- ``screen-table-200x60.txt``: and at 200×60, the nearest players beside the
  foundations and yours;
- ``screen-lobby.txt``: the table before the first deal, at 80×24;

and the README's picture is ``screen-table.txt`` again, between its
``<!-- screen:table -->`` marks (a test holds the two alike).

Usage: scripts/screens.py [--out docs] [--seed 7] [--bots 5] [--seconds 9]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import DummyInput

from p2p_nerts.game.moves import foundation_target
from p2p_nerts.game.tableau import NERTS, WASTE, WORK0, WORK_PILES
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.replica import Phase, StartRound
from p2p_nerts.session import LocalTable
from p2p_nerts.testing.screen import FixedOutput, screen_lines
from p2p_nerts.ui.app import NertsApp
from p2p_nerts.ui.config import Config

STEP = 0.05  # seconds of table time per step, as the tests take them
PLAYER_EVERY = 0.8  # seconds between the player's moves


class Table:
    """A seeded solo table and the app at it, on a clock that moves when told."""

    def __init__(self, seed: int, bots: int) -> None:
        self.now = 0.0
        player = Identity.from_seed(seed.to_bytes(32, "big"), "You")
        self.table = LocalTable(player, bots=bots, skill="medium", seed=seed, countdown=0.0,
                                clock=lambda: self.now)
        self.output = FixedOutput(80, 24)
        self.ui = NertsApp(self.table, Config(), input=DummyInput(), output=self.output)

    def play(self, seconds: float) -> None:
        end = self.now + seconds
        move_at = self.now + PLAYER_EVERY
        while self.now < end:
            self.now += STEP
            self.table.step()
            if self.now >= move_at:
                move_at += PLAYER_EVERY
                self.move()

    def move(self) -> None:
        """The player's move, by the controller's keys: a card up if one can go, else
        the stock turned."""
        ctl = self.ui.ctl
        rnd = ctl.view.round
        tab = ctl.tableau()
        if rnd is None or tab is None or not ctl.view.can_move():
            return
        for src in (NERTS, WASTE, *range(WORK0, WORK0 + WORK_PILES)):
            if foundation_target(tab, src, rnd.foundations) is not None:
                ctl.pile_key(src)
                ctl.send()
                return
        ctl.turn()

    def draw(self, columns: int, rows: int) -> str:
        self.output.size = Size(rows=rows, columns=columns)
        return "\n".join(screen_lines(self.ui.app)).rstrip("\n") + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--bots", type=int, default=5, help="computer players (1 to 7)")
    parser.add_argument("--seconds", type=float, default=9.0, help="of play before the picture")
    args = parser.parse_args()

    table = Table(args.seed, args.bots)
    pictures = {"screen-lobby.txt": table.draw(80, 24)}
    table.table.act(StartRound())
    table.play(args.seconds)
    if table.ui.ctl.view.phase is not Phase.PLAYING:
        print(f"the round ended within {args.seconds:g} s: ask for fewer", file=sys.stderr)
        return 1
    table.ui.ctl.pile_key(2)  # a card selected, as during play
    pictures["screen-table.txt"] = table.draw(120, 36)
    pictures["screen-table-80x24.txt"] = table.draw(80, 24)
    pictures["screen-table-200x60.txt"] = table.draw(200, 60)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in pictures.items():
        (args.out / name).write_text(text, encoding="utf-8")
        print(f"{args.out / name}: {text.count(chr(10))} lines")
    readme = args.out.parent / "README.md"
    if readme.exists():
        readme.write_text(with_picture(readme.read_text(encoding="utf-8"),
                                       pictures["screen-table.txt"]), encoding="utf-8")
        print(f"{readme}: its picture")
    return 0


def with_picture(readme: str, screen: str) -> str:
    """``readme`` with ``screen`` as the picture between its table marks."""
    start, end = "<!-- screen:table -->\n", "<!-- /screen -->"
    head, _, rest = readme.partition(start)
    _, _, tail = rest.partition(end)
    return f"{head}{start}```\n{screen.rstrip()}\n```\n{end}{tail}"


if __name__ == "__main__":
    sys.exit(main())
