"""Hybrid retrieval: several retrievers' candidates fused into one ranking.

BM25 finds rare literals (error codes, names) that embeddings blur; embeddings find paraphrases that
share no words with the query. Each leg (any registered retriever; default ``bm25`` and ``dense``)
retrieves ``max(depth, k)`` candidates with the same filter, and a registered fuser combines them. A typed
query reaches each leg as the kind it takes (``Retriever.rank_query``): HyDE's vector the dense leg.
The default, the z-score normalized sum with equal weights, was chosen on SciFact's train split (809
queries: z-score 0.7385 nDCG@10, min-max 0.7357, RRF k=60 0.7158; see BENCHMARKS.md).

Specs: ``hybrid``, ``hybrid:fuser=rrf,k=60``, ``hybrid:weights=0.7/0.3``, ``hybrid:k1=1.2`` (BM25 keys
go to the BM25 legs), ``hybrid:legs=[bm25:k1=1.2,b=0.3; dense]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragline.components import build, register
from ragline.index.bm25 import BM25Params
from ragline.index.filters import FilterLike
from ragline.index.store import Index
from ragline.retrieve.base import Ranked, Retriever, needs_embeddings
from ragline.retrieve.fusion import fuse, rank
from ragline.retrieve.sparse import BM25_KEYS, bm25_params
from ragline.roles import Query

DEFAULT_FUSER = "z_score"
DEFAULT_DEPTH = 100
DEFAULT_LEGS = ("bm25", "dense")
LegSpec = str | Mapping[str, Any]


@register("retriever", "hybrid")
class HybridRetriever(Retriever):
    """Candidates of several retrievers (default bm25 + dense) fused (default z-score, depth 100)."""

    name = "hybrid"

    def __init__(
        self,
        index: Index,
        fuser: str = DEFAULT_FUSER,
        depth: int = DEFAULT_DEPTH,
        weights: Sequence[float] | None = None,
        bm25: BM25Params | None = None,
        legs: Sequence[LegSpec] = DEFAULT_LEGS,
        **fuser_params: Any,
    ) -> None:
        super().__init__(index)
        overrides = {key: fuser_params.pop(key) for key in BM25_KEYS if key in fuser_params}
        leg_bm25 = bm25_params(bm25 or index.settings.bm25, **overrides)
        if isinstance(legs, (str, Mapping)):
            legs = [legs]
        self.legs: list[Retriever] = [build("retriever", leg, index=index, bm25=leg_bm25) for leg in legs]
        self.fuser, self.depth, self.fuser_params = fuser, depth, dict(fuser_params)
        if weights is not None:
            self.fuser_params["weights"] = list(weights)
        fuse(fuser, [{} for _ in self.legs], **self.fuser_params)  # fail now, not at the first query

    @staticmethod
    def needs_embeddings(params: Mapping[str, Any]) -> bool:
        return needs_embeddings(params.get("legs", DEFAULT_LEGS))

    @property
    def takes(self) -> frozenset[str]:  # type: ignore[override]
        return frozenset().union(*(leg.takes for leg in self.legs))

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.rank_query(Query(query), k, filter)

    def rank_query(self, query: Query, k: int = 10, filter: FilterLike = None) -> Ranked:
        """Each leg ranks the kind of ``query`` it takes (HyDE's vector in a dense leg, its text in BM25)."""
        runs = [dict(leg.rank_query(query, max(self.depth, k), filter)) for leg in self.legs]
        return rank(fuse(self.fuser, runs, **self.fuser_params), k)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "fuser": self.fuser,
            "fuser_params": self.fuser_params,
            "depth": self.depth,
            "legs": [leg.config() for leg in self.legs],
        }
