"""A source's title is shown once: its heading path leaves out a first heading equal to the title."""

from __future__ import annotations

from types import SimpleNamespace

from rich.console import Console

from ragline.cli.ask import print_answer
from ragline.server.shapes import section_of
from ragline.text import get_analyzer
from ragline.types import Answer, Hit, section_below_title

TITLE = "Orrin Grid Business Travel Expense Policy"


def test_the_heading_path_drops_a_first_heading_equal_to_the_title() -> None:
    assert section_below_title(TITLE, [TITLE]) == []
    assert section_below_title(TITLE, [TITLE.upper() + " ", "Limits"]) == ["Limits"]
    assert section_below_title(TITLE, ["Scope", TITLE]) == ["Scope", TITLE]
    assert section_below_title("", ["Scope"]) == ["Scope"] and section_below_title(TITLE, None) == []


def test_ask_and_the_api_show_the_title_once() -> None:
    """Planted fault: print_answer joining the whole section path again printed
    "Orrin Grid Business Travel Expense Policy — Orrin Grid Business Travel Expense Policy"."""
    under_title = Hit("policy-expense-travel#1", 1.0, 1, TITLE, "Flights shorter than 6 hours...", {"section": [TITLE]})
    deeper = Hit("policy-expense-travel#2", 0.9, 2, TITLE, "Limits include taxes.", {"section": [TITLE, "Limits"]})
    context = SimpleNamespace(sources=[SimpleNamespace(n=1, hit=under_title), SimpleNamespace(n=2, hit=deeper)])
    console = Console(width=200, record=True)
    print_answer(console, Answer("6 hours", False), context, get_analyzer("english"), "flight hours")
    shown = console.export_text()
    assert shown.count(TITLE) == 2, shown  # once per source
    assert f"[2] {TITLE} — Limits (policy-expense-travel#2)" in shown
    assert section_of(under_title) == "" and section_of(deeper) == "Limits"
