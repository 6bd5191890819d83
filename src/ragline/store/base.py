"""The collection interface: what the pipeline writes to and retrieves through, whatever the store."""

from __future__ import annotations

from collections.abc import Collection as Keep
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragline.index.filters import FilterLike
from ragline.index.store import IndexSettings, SyncReport
from ragline.types import Document

Ranked = list[tuple[str, float]]


@runtime_checkable
class Collection(Protocol):
    """Documents by id with BM25 and dense search, filters applied inside the search.

    Writes (``add``, ``delete``, ``delete_documents``, ``sync``) take effect at ``commit``. ``settings``
    are the stamps the collection was created with (analyzer, fields, BM25, embedder, vector index);
    ``stamps()`` adds what only the store knows (e.g. the embedder's weights hash).
    """

    settings: IndexSettings

    def add(self, documents: Iterable[Document], vectors: np.ndarray | None = None) -> int: ...

    def delete(self, ids: Iterable[str]) -> int: ...

    def delete_documents(self, document_ids: Iterable[str]) -> int:
        """Delete documents and all their chunks (``<id>#<n>``)."""
        ...

    def sync(
        self, documents: Iterable[Document], prune: bool = True, keep: Keep[str] = (), vectors: np.ndarray | None = None
    ) -> SyncReport:
        """Hold exactly ``documents`` (by id and hash) after ``commit``; ``vectors`` serve the changed ones."""
        ...

    def commit(self) -> int: ...

    def get(self, doc_id: str) -> Document | None: ...

    def documents(self) -> Iterable[Document]: ...

    def search_sparse(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked: ...

    def search_dense(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked: ...

    def search_hybrid(
        self, query: str, k: int = 10, filter: FilterLike = None, fusion: str = "server", rrf_k: int = 60
    ) -> Ranked: ...

    def stats(self) -> dict[str, Any]: ...

    def stamps(self) -> dict[str, Any]: ...

    def close(self) -> None: ...
