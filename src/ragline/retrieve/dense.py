"""Dense retrieval: cosine similarity between the query (embedded text, or a given vector) and passages, through
the ANN index."""

from __future__ import annotations

from typing import Any

import numpy as np

from ragline.components import register
from ragline.index.filters import FilterLike
from ragline.retrieve.base import Ranked, Retriever
from ragline.roles import TEXT, VECTOR


@register("retriever", "dense")
class DenseRetriever(Retriever):
    """Nearest neighbours of the query embedding; filters and deletes are masks inside the search."""

    name = "dense"
    needs_embeddings = True
    takes = frozenset((TEXT, VECTOR))

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        segments = self.index.segments
        return [(segments[si].ids[row], score) for si, row, score in self.index.search_dense(query, k, filter)]

    def rank_vector(self, vector: np.ndarray, k: int = 10, filter: FilterLike = None) -> Ranked:
        segments = self.index.segments
        return [(segments[si].ids[row], score) for si, row, score in self.index.search_vector(vector, k, filter)]

    def config(self) -> dict[str, Any]:
        stamp = self.index.manifest.get("embedder") or {}
        return {
            "name": self.name,
            "embedder": self.index.settings.embedder,
            "embedder_id": stamp.get("id"),
            "vector_index": self.index.settings.vector_index,
        }
