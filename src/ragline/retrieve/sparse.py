"""BM25 retrieval over an ``Index`` (see ``ragline.index.bm25`` for the variants)."""

from __future__ import annotations

from typing import Any

from ragline.index.bm25 import BM25Params
from ragline.index.filters import FilterLike
from ragline.index.store import Index
from ragline.retrieve.base import Ranked, Retriever


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
