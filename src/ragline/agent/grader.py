"""The retrieval grader (CRAG's "is this good enough?"): how well each hit answers a sub-question.

``lexical`` needs no model: a hit's grade is the share of the sub-question's terms (the index's
analyzer: stemmed, stopwords dropped) found in the hit's best sentence, rarer terms weighing more
(inverse frequency over the graded hits, so a term every hit shares says little). It runs on every
corpus and language the analyzer handles; a cross-encoder registered as a grader plugs in by spec.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ragline.components import register
from ragline.text.analyzer import get_analyzer
from ragline.text.sentences import sentence_texts
from ragline.types import Hit


def sentences(text: str) -> list[str]:
    """The sentences (and headings) of a text (``ragline.text.sentences``), whitespace collapsed."""
    return sentence_texts(text)


@register("grader", "lexical")
class LexicalGrader:
    """Share of the sub-question's terms in a hit's best sentence, rarer terms weighing more (no model)."""

    name = "lexical"

    def __init__(self, index: Any = None, analyzer: str | None = None) -> None:
        if analyzer is not None:
            self.analyze: Callable[[str], list[str]] = get_analyzer(analyzer)
        elif index is not None:
            self.analyze = index.settings.analyzer
        else:
            self.analyze = get_analyzer("english")

    def grade(self, question: str, hits: list[Hit]) -> list[float]:
        terms = set(self.analyze(question))
        if not terms or not hits:
            return [0.0 for _ in hits]
        per_hit = [[set(self.analyze(s)) for s in [h.title, *sentences(h.text)] if s] for h in hits]
        seen = {t: sum(any(t in s for s in hit) for hit in per_hit) for t in terms}
        weight = {t: math.log(1 + (len(hits) + 1) / (seen[t] + 1)) for t in terms}
        whole = sum(weight.values())
        return [max((sum(weight[t] for t in terms & s) / whole for s in hit), default=0.0) for hit in per_hit]

    def config(self) -> dict[str, Any]:
        return {"name": self.name}
