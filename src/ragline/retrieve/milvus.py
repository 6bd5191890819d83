"""Retrievers that rank through the collection interface (``ragline.store``), e.g. a Milvus collection.

``milvus-bm25`` (the server's BM25), ``milvus-dense`` (its vector index) and ``milvus-hybrid`` (RRF of the
two: ``fusion=server`` by Milvus, ``fusion=rrf`` by ragline over two searches). Given the embedded
index they rank through ``EmbeddedCollection``, so one config compares both stores.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragline.components import register
from ragline.index.filters import FilterLike
from ragline.retrieve.base import Ranked, Retriever
from ragline.retrieve.fusion import fuse, rank
from ragline.roles import TEXT, VECTOR, Query


def _collection(index: Any) -> Any:
    if hasattr(index, "search_sparse"):
        return index
    from ragline.store.embedded import EmbeddedCollection

    return EmbeddedCollection(index)


class _StoreRetriever(Retriever):
    def __init__(self, index: Any) -> None:
        super().__init__(index)
        self.collection = _collection(index)

    def config(self) -> dict[str, Any]:
        stamps = self.collection.stamps()
        return {"name": self.name, "store": str(getattr(self.collection, "uri", "embedded")),
                "settings": stamps["settings"], "embedder": stamps.get("embedder")}  # fmt: skip


@register("retriever", "milvus-bm25")
class StoreBM25Retriever(_StoreRetriever):
    """BM25 scored by the collection's store (Milvus: its analyzer and statistics)."""

    name = "milvus-bm25"

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.collection.search_sparse(query, k, filter)


@register("retriever", "milvus-dense")
class StoreDenseRetriever(_StoreRetriever):
    """Nearest neighbours by the collection's vector index (FLAT unless --vector-index says otherwise)."""

    name = "milvus-dense"
    needs_embeddings = True
    takes = frozenset((TEXT, VECTOR))

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.collection.search_dense(query, k, filter)

    def rank_vector(self, vector: np.ndarray, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.collection.search_vector(vector, k, filter)


class StoreHybridRetriever(_StoreRetriever):
    name = "milvus-hybrid"
    needs_embeddings = True
    takes = frozenset((TEXT, VECTOR))

    def __init__(self, index: Any, fusion: str = "server", k: int = 60) -> None:
        super().__init__(index)
        self.fusion, self.rrf_k = fusion, k

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.collection.search_hybrid(query, k, filter, self.fusion, self.rrf_k)

    def rank_query(self, query: Query, k: int = 10, filter: FilterLike = None) -> Ranked:
        """A query with a vector (HyDE's): ragline's RRF of BM25 on its text and the search of its vector (the
        store's own hybrid search embeds text only)."""
        if query.vector is None:
            return self.rank(query.text, k, filter)
        runs = [dict(self.collection.search_sparse(query.text, k, filter)),
                dict(self.collection.search_vector(query.vector, k, filter))]  # fmt: skip
        return rank(fuse("rrf", runs, k=self.rrf_k), k)

    def config(self) -> dict[str, Any]:
        return {**super().config(), "fusion": self.fusion, "k": self.rrf_k}


@register("retriever", "milvus-hybrid")
def milvus_hybrid(index: Any, fusion: str = "server", k: int = 60) -> StoreHybridRetriever:
    """RRF (k=60) of the store's BM25 and dense searches: fusion=server (Milvus's RRFRanker) or rrf (ragline's)."""
    return StoreHybridRetriever(index, fusion, k)


milvus_hybrid.needs_embeddings = True  # type: ignore[attr-defined]  # the store must be built with vectors
