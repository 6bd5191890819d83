"""``BaseReranker``: what every reranker shares, checked on a scorer whose scores the test sets.

Planted faults, checked: ``_checked`` returning the scores unchecked lets a short list and a NaN through
(no error names the reranker); ``rerank`` passing 1 for ``self.interpolate`` makes ``w = 0`` reorder by the
reranker.
"""

from __future__ import annotations

import pytest

from ragline.errors import ModelError
from ragline.retrieve.rerank import BaseReranker
from ragline.types import Hit


class Fixed(BaseReranker):
    name = "fixed-test"

    def __init__(self, scores: list[float], interpolate: float = 1.0) -> None:
        self.given, self.interpolate = scores, interpolate

    def scores(self, query: str, hits: list[Hit]) -> list[float]:
        return self.given


HITS = [Hit(f"h{i}", float(3 - i), i + 1, "", f"text {i}") for i in range(3)]


def test_the_scores_order_the_hits_and_w0_keeps_the_first_stage():
    assert [h.doc_id for h in Fixed([0.1, 0.5, 0.9]).rerank("q", HITS, 3)] == ["h2", "h1", "h0"]
    assert [h.doc_id for h in Fixed([0.1, 0.5, 0.9], interpolate=0.0).rerank("q", HITS, 3)] == ["h0", "h1", "h2"]


@pytest.mark.parametrize("scores", [[0.1, 0.2], [0.1, float("nan"), 0.3]])
def test_a_wrong_count_or_a_non_finite_score_is_a_model_error_naming_the_reranker(scores):
    with pytest.raises(ModelError, match="fixed-test"):
        Fixed(scores).rerank("q", HITS, 3)
