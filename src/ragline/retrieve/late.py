"""Late interaction (ColBERT's MaxSim) over MiniLM's token vectors, as a reranker of first-stage hits.

ColBERT (Khattab & Zaharia, SIGIR 2020) keeps one vector per token instead of one per passage and scores
``sum over query tokens of the max cosine with any passage token``: finer than one pooled vector, far
cheaper than a cross-encoder, since passage tokens are encoded once, without the query. Here the token
vectors are the packaged bi-encoder's contextual outputs before pooling (``Embedder.token_embeddings``),
L2-normalized and kept as float16 (half the memory; MaxSim is a max of dot products, which float16 keeps
to about 1e-3). Passage vectors are computed when first needed and kept per document id for the
process; :meth:`MaxSimReranker.stored_bytes` reports what they take. MiniLM was never trained for MaxSim
(ColBERT trains its own projection), so this measures what untrained token vectors give.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ragline.components import register
from ragline.models.embedders import load_embedder
from ragline.retrieve.rerank_cross import passage_of
from ragline.types import Hit


def maxsim(query: np.ndarray, passage: np.ndarray) -> float:
    """``sum_i max_j q_i . p_j`` of unit token vectors (rows); 0 when either side has none."""
    if not len(query) or not len(passage):
        return 0.0
    return float((query.astype(np.float32) @ passage.astype(np.float32).T).max(axis=1).sum())


@register("reranker", "maxsim")
class MaxSimReranker:
    """ColBERT-style MaxSim over the embedder's token vectors (float16), passages encoded once each."""

    def __init__(self, embedder: str = "minilm") -> None:
        self.embedder_name = embedder
        self.embedder = load_embedder(embedder)
        self.vectors: dict[tuple[str, int], np.ndarray] = {}

    def token_vectors(self, text: str) -> np.ndarray:
        """Unit float16 vectors of ``text``'s tokens, special tokens ([CLS], [SEP]) left out."""
        offsets, vectors = self.embedder.token_embeddings(text)
        keep = [i for i, (start, end) in enumerate(offsets) if end > start]
        kept = vectors[keep]
        norms = np.linalg.norm(kept, axis=1, keepdims=True)
        return (kept / np.where(norms > 0, norms, 1.0)).astype(np.float16)

    def _passage(self, hit: Hit) -> np.ndarray:
        text = passage_of(hit)
        key = (hit.doc_id, hash(text))  # the text is part of the key: a changed document is encoded again
        if key not in self.vectors:
            self.vectors[key] = self.token_vectors(text)
        return self.vectors[key]

    def scores(self, query: str, hits: list[Hit]) -> list[float]:
        q = self.token_vectors(query)
        return [maxsim(q, self._passage(hit)) for hit in hits]

    def rerank(self, query: str, hits: list[Hit], k: int) -> list[Hit]:
        scores = self.scores(query, hits)
        order = sorted(range(len(hits)), key=lambda i: (-scores[i], hits[i].rank))[:k]
        return [replace(hits[i], score=scores[i], rank=rank) for rank, i in enumerate(order, start=1)]

    def stored_bytes(self) -> int:
        return sum(v.nbytes for v in self.vectors.values())

    def config(self) -> dict[str, Any]:
        return {"name": "maxsim", "embedder": self.embedder_name, "embedder_id": self.embedder.id, "dtype": "float16"}
