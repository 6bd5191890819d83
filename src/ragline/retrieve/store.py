"""Retrievers that rank through the collection interface (``ragline.store``): any store, Milvus or embedded.

``store-bm25`` (the store's BM25), ``store-dense`` (its vector index) and ``store-hybrid`` (RRF of the two:
``fusion=server`` by the store, Milvus's ``RRFRanker``; ``fusion=rrf`` by ragline over two searches). Given
the embedded index they rank through ``EmbeddedCollection``, so one config compares both stores. The names
they had when Milvus was the only other store (``milvus-bm25``, ``milvus-dense``, ``milvus-hybrid``) are
aliases, so configs that use them keep working.

``for_store(spec)`` is the retriever a pipeline runs on a store that is not the embedded index: ``bm25``,
``dense`` and ``hybrid`` become their ``store-*`` equivalents; a retriever that reads the embedded index's
segments (``maxsim``, a hybrid with custom legs, ...) is a ``ConfigError`` there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ragline.components import component, register, spec_of
from ragline.errors import ConfigError
from ragline.index.filters import FilterLike
from ragline.retrieve.base import Ranked, Retriever
from ragline.retrieve.fusion import fuse, rank
from ragline.roles import TEXT, VECTOR, Query

# the embedded index's retrievers -> the store's; ``hybrid`` keeps only what ``store-hybrid`` takes
STORE_RETRIEVERS = {"bm25": "store-bm25", "dense": "store-dense", "hybrid": "store-hybrid"}


def _collection(index: Any) -> Any:
    from ragline.store.base import as_collection

    return as_collection(index)


def for_store(spec: str | Mapping[str, Any]) -> dict[str, Any]:
    """The retriever spec that ranks like ``spec`` through a store's own searches (see the module docstring)."""
    name, params = spec_of(spec)
    mapped = STORE_RETRIEVERS.get(name, name)
    if mapped != name and params:  # the embedded retriever's parameters mean nothing to the store's searches
        raise ConfigError(
            f"retriever {spec_of(spec)[0]!r} with {sorted(params)} ranks on the embedded index; a store scores "
            f"with the settings stamped at its creation: write {name!r} without parameters"
        )
    if getattr(component("retriever", mapped).factory, "store_native", False):
        return {"name": mapped, **params}
    raise ConfigError(
        f"retriever {name!r} reads the embedded index's segments; on this store use one of "
        f"{', '.join(sorted(set(STORE_RETRIEVERS) | set(STORE_RETRIEVERS.values())))}"
    )


class _StoreRetriever(Retriever):
    store_native = True  # ranks through the collection interface alone

    def __init__(self, index: Any) -> None:
        super().__init__(index)
        self.collection = _collection(index)

    def config(self) -> dict[str, Any]:
        stamps = self.collection.stamps()
        return {
            "name": self.name,
            "store": str(getattr(self.collection, "uri", "embedded")),
            "settings": stamps["settings"],
            "embedder": stamps.get("embedder"),
        }


@register("retriever", "store-bm25", aliases=("milvus-bm25",))
class StoreBM25Retriever(_StoreRetriever):
    """BM25 scored by the collection's store (Milvus: its analyzer and statistics)."""

    name = "store-bm25"

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.collection.search_sparse(query, k, filter)


@register("retriever", "store-dense", aliases=("milvus-dense",))
class StoreDenseRetriever(_StoreRetriever):
    """Nearest neighbours by the collection's vector index (FLAT unless --vector-index says otherwise)."""

    name = "store-dense"
    needs_embeddings = True
    takes = frozenset((TEXT, VECTOR))

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.collection.search_dense(query, k, filter)

    def rank_vector(self, vector: np.ndarray, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.collection.search_vector(vector, k, filter)


class StoreHybridRetriever(_StoreRetriever):
    name = "store-hybrid"
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
        runs = [
            dict(self.collection.search_sparse(query.text, k, filter)),
            dict(self.collection.search_vector(query.vector, k, filter)),
        ]
        return rank(fuse("rrf", runs, k=self.rrf_k), k)

    def config(self) -> dict[str, Any]:
        return {**super().config(), "fusion": self.fusion, "k": self.rrf_k}


@register("retriever", "store-hybrid", aliases=("milvus-hybrid",))
def store_hybrid(index: Any, fusion: str = "server", k: int = 60) -> StoreHybridRetriever:
    """RRF (k=60) of the store's BM25 and dense searches: fusion=server (the store's RRF) or rrf (ragline's)."""
    return StoreHybridRetriever(index, fusion, k)


store_hybrid.needs_embeddings = True  # type: ignore[attr-defined]  # the store must be built with vectors
store_hybrid.store_native = True  # type: ignore[attr-defined]
