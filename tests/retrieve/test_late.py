"""Late interaction: the MaxSim score, and the MaxSim reranker over MiniLM token vectors."""

from __future__ import annotations

import numpy as np
import pytest

from ragline.components import build
from ragline.retrieve.late import maxsim
from ragline.types import Hit

pytest.importorskip("sentence_transformers")


def test_maxsim_sums_each_query_tokens_best_match():
    query = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float16)
    passage = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, -1.0]], dtype=np.float16)
    # token 1 best matches passage token 2 (1.0); token 2 best matches passage token 1 (0.8)
    assert maxsim(query, passage) == pytest.approx(1.8, abs=1e-3)
    assert maxsim(query, passage[:0]) == 0.0


def test_maxsim_reranker_puts_the_matching_passage_first_and_encodes_each_passage_once():
    reranker = build("reranker", "maxsim")
    hits = [
        Hit("cars", 2.0, 1, "Cars", "Electric cars need large batteries and charging stations."),
        Hit("sleep", 1.0, 2, "Sleep", "Students who sleep after studying remember more vocabulary."),
    ]
    ranked = reranker.rerank("does sleep improve memory of new words", hits, 2)
    assert [h.doc_id for h in ranked] == ["sleep", "cars"] and [h.rank for h in ranked] == [1, 2]
    size = reranker.stored_bytes()
    assert size > 0 and all(v.dtype == np.float16 for v in reranker.vectors.values())
    reranker.rerank("electric batteries", hits, 1)
    assert reranker.stored_bytes() == size  # the passages' vectors were kept, not encoded again
