"""Every module of ``src/ragline`` reads top to bottom in a few minutes: none is over ``MAX_LINES`` lines.

The data tables (template and country texts) are lists to look things up in, not code to read.
"""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ragline"
MAX_LINES = 450
DATA_TABLES = {"corpora/orrin/templates.py", "corpora/countries.py"}


def test_no_module_is_over_the_line_limit() -> None:
    lengths = {
        path.relative_to(SRC).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in SRC.rglob("*.py")
    }
    assert lengths.keys() >= DATA_TABLES, "a data table moved: update DATA_TABLES"
    long = {name: n for name, n in lengths.items() if n > MAX_LINES and name not in DATA_TABLES}
    assert not long, f"modules over {MAX_LINES} lines (split them by concern): {long}"
