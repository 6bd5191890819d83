"""Citation markers, their mapping to sources, and the lexical support check."""

from __future__ import annotations

import pytest

from ragline.answer.citations import (
    check_support,
    cited_numbers,
    parse_citations,
    strip_citations,
    supports,
)
from ragline.answer.context import build_context
from ragline.eval.citations import citation_precision, citation_recall
from ragline.types import Answer, Citation, Hit

MEALS = "The daily meal allowance is capped at $70 per person. Receipts must be submitted within 60 days."
LODGING = "Hotel rooms are reimbursed up to $140 per night. Receipts must be submitted within 30 days."
FAQ = "Claims are paid with the next monthly payroll run."


def context():
    hits = [
        Hit("meals#2", 3.0, 1, "Meals Policy", MEALS, {"doc_id": "policy-meals"}),
        Hit("lodging#2", 2.0, 2, "Lodging Policy", LODGING, {"doc_id": "policy-lodging"}),
        Hit("faq#0", 1.0, 3, "FAQ", FAQ, {"doc_id": "faq"}),
    ]
    return build_context(hits, budget=10_000)


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("The cap is $70 [1].", [1]),
        ("Both say so [1, 3].", [1, 3]),
        ("Both say so [1,3].", [1, 3]),
        ("Both say so [1][3].", [1, 3]),
        ("Later first [3] then [1].", [3, 1]),
        ("Repeated [2] and again [2].", [2]),
        ("A range [1-3].", [1, 2, 3]),
        ("An en dash [2\u20133].", [2, 3]),
        ("Named [Source 2] and [sources 1, 3].", [2, 1, 3]),
        ("Spaces [ 2 ].", [2]),
        ("No markers at all.", []),
        ("Not a marker [a] or [1a] or [].", []),
        ("A silly range [1-1000] is not expanded.", [1, 1000]),
        ("", []),
    ],
)
def test_cited_numbers(text: str, numbers: list[int]) -> None:
    assert cited_numbers(text) == numbers


@pytest.mark.parametrize(
    ("text", "bare"),
    [
        ("The cap is $70 per person [1].", "The cap is $70 per person."),
        ("A [1][2], then B [3].", "A, then B."),
        ("[2] Starts with a marker.", "Starts with a marker."),
        ("No markers.", "No markers."),
    ],
)
def test_strip_citations(text: str, bare: str) -> None:
    assert strip_citations(text) == bare


def test_parse_maps_known_numbers_and_reports_unknown_ones() -> None:
    parsed = parse_citations("Capped at $70 [1][7], see also [2, 0].", context())
    assert parsed.numbers == [1, 7, 2, 0]
    assert parsed.unknown == [7, 0]
    assert [(c.n, c.doc_id, c.chunk_id, c.title) for c in parsed.citations] == [
        (1, "policy-meals", "meals#2", "Meals Policy"),
        (2, "policy-lodging", "lodging#2", "Lodging Policy"),
    ]
    assert parsed.citations[0].text == MEALS and parsed.citations[0].supported is None


def test_parse_on_an_empty_context_reports_everything_unknown() -> None:
    parsed = parse_citations("It is $70 [1].", build_context([]))
    assert parsed.citations == [] and parsed.unknown == [1]


@pytest.mark.parametrize(
    ("answer", "source", "expected"),
    [
        ("$70", MEALS, True),
        ("$70 per person", MEALS, True),
        ("$7", MEALS, False),  # whole tokens: 7 is not 70
        ("$700", MEALS, False),
        ("the daily allowance", MEALS, True),  # article and case do not matter
        ("60 days", MEALS, True),
        ("submit receipts within 60 days", MEALS, True),  # "submitted" and "submit" share a stem
        ("The daily meal allowance is capped at $70 per person.", MEALS, True),
        ("A daily meal allowance is capped at $70 for each person.", MEALS, True),  # 6 of 7 terms
        ("A daily meal allowance is capped at $90 for each person.", MEALS, False),  # a wrong number never passes
        ("Staff may claim meals, capped at $70 per person.", MEALS, False),  # 5 of 8 terms
        ("Hotel rooms are reimbursed up to $140 per night.", MEALS, False),
        ("", MEALS, False),
        ("$70", "", False),
    ],
)
def test_supports(answer: str, source: str, expected: bool) -> None:
    assert supports(answer, source) is expected


def test_check_support_sets_the_flag_on_copies() -> None:
    cited = parse_citations("[1][2]", context()).citations
    checked = check_support("$70 per person", cited)
    assert [c.supported for c in checked] == [True, False]
    assert [c.supported for c in cited] == [None, None]


def test_citation_precision() -> None:
    meals = Citation(1, "policy-meals", "meals#2", text=MEALS)
    lodging = Citation(2, "policy-lodging", "lodging#2", text=LODGING)
    assert citation_precision(Answer("$70", False, [meals])) == 1.0
    assert citation_precision(Answer("$70", False, [meals, lodging])) == 0.5
    assert citation_precision(Answer("$70", False, [lodging])) == 0.0
    assert citation_precision(Answer("$70", False, [])) is None
    assert citation_precision(Answer("", True, [])) is None
    flagged = Citation(2, "policy-lodging", "lodging#2", text=LODGING, supported=True)
    assert citation_precision(Answer("$70", False, [flagged])) == 1.0  # a set flag is trusted


def test_citation_recall() -> None:
    ctx = context()
    meals, lodging, faq = (parse_citations(f"[{n}]", ctx).citations[0] for n in (1, 2, 3))
    assert citation_recall(Answer("$70", False, [faq, meals]), ctx) == 1.0
    assert citation_recall(Answer("$70", False, [faq]), ctx) == 0.0
    assert citation_recall(Answer("$70", False, []), ctx) == 0.0
    assert citation_recall(Answer("within 30 days", False, [lodging]), ctx) == 1.0
    assert citation_recall(Answer("$999", False, [meals]), ctx) is None  # no source supports it
    assert citation_recall(Answer("", True, []), ctx) is None


def test_an_answer_of_the_wrong_type_is_supported_by_no_source() -> None:
    """The LLM answered "What is the pay band for ...?" with the job grade the band's own sentence names (Orrin's
    salary bands). Planted fault checked: without the type check in ``supports`` the sentence supports "T3"."""
    page = "- The band for Senior Field Technician (grade T3) runs from $56,000 to $68,000."
    question = "What is the pay band for a senior field technician?"
    assert supports("Senior Field Technician (grade T3)", page) is True  # without the question: the words only
    assert supports("Senior Field Technician (grade T3)", page, question=question) is False
    assert supports("$56,000 to $68,000", page, question=question) is True
