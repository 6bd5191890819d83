"""The cross-encoder reranker's reordering: a passage the cross-encoder scores as relevant moves above
one the first stage preferred, and ``interpolate`` moves the order between the two stages.

The cross-encoder is a scorer of the ``CrossEncoder`` shape (``predict`` over (query, passage) pairs,
returning one logit each) whose logits are known: the number of query words the passage holds. A tiny
trained cross-encoder could not learn relevance in a test's budget; what is tested here is everything
the reranker does with the logits (pairing, interpolation, ordering, cutting to k, renumbering).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ragline.retrieve.rerank_cross import CrossEncoderReranker
from ragline.types import Hit

QUERY = "per diem for the Lyon audit trip"


class QueryWordCounter:
    """``CrossEncoder.predict``'s contract: one raw score per (query, passage) pair, as a numpy array."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def predict(self, pairs, batch_size=32, show_progress_bar=False, activation_fn=None, convert_to_numpy=True):  # type: ignore[no-untyped-def]
        self.pairs.extend(pairs)
        scores = []
        for query, passage in pairs:
            words = {w.strip(".,:?").lower() for w in passage.split()}
            scores.append(float(sum(w.lower() in words for w in query.split() if len(w) > 3)))
        return np.asarray(scores, dtype=np.float32)


def _hits() -> list[Hit]:
    """First stage: a passage on another trip first, the relevant one second, an unrelated one last."""
    return [
        Hit("travel-desk", 10.0, 1, "Travel desk", "Book trains at the travel desk before any trip."),
        Hit("lyon-audit", 9.0, 2, "Lyon audit", "The per diem for the Lyon audit trip is 65 euros."),
        Hit("canteen", 1.0, 3, "Canteen", "The canteen serves lunch at noon for the Lyon audit team."),
    ]


def _reranker(tmp_path: Path, interpolate: float) -> tuple[CrossEncoderReranker, QueryWordCounter]:
    reranker = CrossEncoderReranker(model=str(tmp_path), interpolate=interpolate)
    scorer = QueryWordCounter()
    reranker._encoder = scorer  # the loaded model's place; nothing else of the reranker is replaced
    return reranker, scorer


def test_the_relevant_passage_outranks_the_one_the_first_stage_preferred(tmp_path: Path) -> None:
    """Planted fault: ``reordered`` sorting ascending (``key=(final[i], rank)``): the relevant passage
    (logit 4) falls last and the one on another trip (logit 1) comes first."""
    reranker, scorer = _reranker(tmp_path, 1.0)
    ranked = reranker.rerank(QUERY, _hits(), k=3)
    assert [h.doc_id for h in ranked] == ["lyon-audit", "canteen", "travel-desk"]
    assert [h.rank for h in ranked] == [1, 2, 3]
    assert [h.score for h in ranked] == [4.0, 2.0, 1.0]  # the logits themselves at weight 1
    assert scorer.pairs[1] == (QUERY, "Lyon audit. The per diem for the Lyon audit trip is 65 euros.")
    top = reranker.rerank(QUERY, _hits(), k=1)
    assert [h.doc_id for h in top] == ["lyon-audit"]


def test_interpolation_moves_the_order_from_the_first_stage_to_the_cross_encoder(tmp_path: Path) -> None:
    """Planted fault: the weights swapped in ``interpolated`` (``[1 - w, w]``): weight 0 then gives the
    cross-encoder's order and weight 0.5 is unchanged, so the first assertion fails."""
    order = {w: [h.doc_id for h in _reranker(tmp_path, w)[0].rerank(QUERY, _hits(), k=3)] for w in (0.0, 0.5, 1.0)}
    assert order[0.0] == ["travel-desk", "lyon-audit", "canteen"]  # the first stage's order
    assert order[1.0] == ["lyon-audit", "canteen", "travel-desk"]  # the cross-encoder's
    # half of each: the relevant passage leads, and the first stage's strong second keeps the unrelated one last
    assert order[0.5] == ["lyon-audit", "travel-desk", "canteen"]
