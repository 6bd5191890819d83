"""``make demo``'s answer column: the answer and the sources that state it."""

from __future__ import annotations

from ragline.demo import said_with_citations
from ragline.types import Answer, Citation


def _cite(n: int, supported: bool) -> Citation:
    return Citation(n, f"doc-{n}", f"doc-{n}#0", "", "", supported)


def test_the_answer_shows_the_sources_that_state_it() -> None:
    """Planted fault: printing every citation shows "$60 [1] [2] [3]" for an answer only source 1 states."""
    answer = Answer("$60", False, [_cite(1, True), _cite(2, False), _cite(3, False)], "llm")
    assert said_with_citations(answer) == "$60 [1]"
    unsupported = Answer("$60", False, [_cite(2, False), _cite(3, False)], "llm")
    assert said_with_citations(unsupported) == "$60 [2] [3]"  # none states it: the model's own, shown as given
    assert said_with_citations(Answer("", True, [], "llm")) == "(abstains)"
