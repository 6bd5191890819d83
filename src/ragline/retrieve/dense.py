"""Dense retrieval: cosine similarity between embedded query and passages, through the ANN index."""

from __future__ import annotations

from typing import Any

from ragline.components import register
from ragline.index.filters import FilterLike
from ragline.retrieve.base import Ranked, Retriever


@register("retriever", "dense")
class DenseRetriever(Retriever):
    """Nearest neighbours of the query embedding; filters and deletes are masks inside the search."""

    name = "dense"
    needs_embeddings = True

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        segments = self.index.segments
        return [(segments[si].ids[row], score) for si, row, score in self.index.search_dense(query, k, filter)]

    def config(self) -> dict[str, Any]:
        stamp = self.index.manifest.get("embedder") or {}
        return {
            "name": self.name,
            "embedder": self.index.settings.embedder,
            "embedder_id": stamp.get("id"),
            "vector_index": self.index.settings.vector_index,
        }
