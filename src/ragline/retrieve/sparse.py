"""BM25 retrieval over an ``Index`` (see ``ragline.index.bm25`` for the variants)."""

from __future__ import annotations

from typing import Any

from ragline.components import register
from ragline.index.bm25 import BM25Params
from ragline.index.filters import FilterLike
from ragline.index.store import Index
from ragline.retrieve.base import Ranked, Retriever

BM25_KEYS = ("variant", "k1", "b", "delta", "epsilon")


class BM25Retriever(Retriever):
    name = "bm25"

    def __init__(self, index: Index, params: BM25Params | None = None) -> None:
        super().__init__(index)
        self.params = params or index.settings.bm25

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.index.search_ids(query, k, filter, self.params)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "bm25": self.params.to_dict(),
            "analyzer": self.index.settings.analyzer.to_dict(),
            "fields": self.index.settings.fields,
        }


def bm25_params(base: BM25Params, **overrides: Any) -> BM25Params:
    """``base`` with the BM25 keys of a spec (variant, k1, b, delta, epsilon) that are not None."""
    given = {key: value for key, value in overrides.items() if value is not None}
    return BM25Params(**{**base.to_dict(), **given})


@register("retriever", "bm25")
def bm25_retriever(
    index: Index,
    bm25: BM25Params | None = None,
    variant: str | None = None,
    k1: float | None = None,
    b: float | None = None,
    delta: float | None = None,
    epsilon: float | None = None,
) -> BM25Retriever:
    """BM25 over the index's terms (variant, k1, b, delta, epsilon; defaults: the index's)."""
    params = bm25_params(bm25 or index.settings.bm25, variant=variant, k1=k1, b=b, delta=delta, epsilon=epsilon)
    return BM25Retriever(index, params)
