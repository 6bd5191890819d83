"""``plain_table`` prints the search results table exactly as rich does where rich prints no styles."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragline.cli.plain_table import MIN_WIDTH, plain_table
from ragline.cli.search import HEADERS, print_hits

# Letters of one cell, two cells (CJK, emoji) and none (a combining accent, a zero-width space), spaces of
# both kinds, control codes rich strips, and characters that str.splitlines breaks at but rich's wrap does not.
ALPHABET = [*"abcdefghij klmnop  qrstuvwxyz-#/[]'.,", "中", "文", "😀", "é", "\u0301", "\u200b", "\u3000", "Ａ",
            "\r", "\x07", "\x1c", "\u2028", "\n"]  # fmt: skip


def rich_table(title: str, rows: list[tuple[str, str, str, str, str]], width: int) -> str:
    """What ``ragline search`` printed before ``plain_table``: rich's table, to a file."""
    console = Console(file=io.StringIO(), width=width)
    table = Table(title=Text(title))
    for column in HEADERS:
        table.add_column(column, overflow="fold")
    for rank, score, doc_id, name, text in rows:
        table.add_row(rank, score, Text(doc_id), Text.assemble((name, "bold"), "\n" if name else "", text))
    console.print(table)
    return console.file.getvalue()


def random_table(rng: random.Random) -> tuple[str, list[tuple[str, str, str, str, str]]]:
    def text(n: int) -> str:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, n)))

    rows = []
    for rank in range(1, rng.randint(0, 12) + 1):
        doc_id = "-".join(text(12) for _ in range(rng.randint(1, 5))) + f"#{rank}"
        snippet = " ".join(text(15) for _ in range(rng.randint(0, 30))) if rng.random() < 0.9 else text(300)
        rows.append((str(rank), f"{rng.uniform(-5, 50):.3f}", doc_id, "" if rng.random() < 0.2 else text(70), snippet))
    return f"{len(rows)} results for {text(60)!r}", rows


@pytest.mark.parametrize("seed", range(4))
def test_the_plain_table_is_rich_s_table_character_for_character(seed: int) -> None:
    rng = random.Random(seed)
    plain = 0
    for _ in range(150):
        title, rows = random_table(rng)
        width = rng.choice([rng.randint(1, 40), rng.randint(40, 120), rng.randint(120, 260)])
        console = Console(file=io.StringIO(), width=width)
        print_hits(console, title, rows)
        assert console.file.getvalue() == rich_table(title, rows, width), (width, title, rows)
        plain += width >= MIN_WIDTH
    assert plain > 100  # most cases took the plain route (the others test the fallback)


def test_styles_tabs_and_narrow_consoles_are_left_to_rich() -> None:
    rows = [("1", "2.000", "a#0", "Title\nsome text")]
    assert plain_table(Console(file=io.StringIO(), width=80), "t", HEADERS, rows) is not None
    assert plain_table(Console(file=io.StringIO(), width=80, force_terminal=True), "t", HEADERS, rows) is None
    assert plain_table(Console(file=io.StringIO(), width=80), "t", HEADERS, [(*rows[0][:3], "a\tb")]) is None
    assert plain_table(Console(file=io.StringIO(), width=MIN_WIDTH - 1), "t", HEADERS, rows) is None
