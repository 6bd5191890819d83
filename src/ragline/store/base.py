"""The collection interface: what the pipeline writes to and retrieves through, whatever the store."""

from __future__ import annotations

from collections.abc import Collection as Keep
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragline.index.filters import Column, FilterLike, evaluate, parse_filter
from ragline.index.store import IndexSettings, SyncReport
from ragline.types import Document

Ranked = list[tuple[str, float]]


@runtime_checkable
class Collection(Protocol):
    """Documents by id with BM25 and dense search, filters applied inside the search.

    Writes (``add``, ``delete``, ``delete_documents``, ``sync``) take effect at ``commit``, which raises
    ``generation``: what a reader caches from the collection (the version graph, say) is valid while the
    generation is unchanged. ``settings`` are the stamps the collection was created with (analyzer, fields,
    BM25, embedder, vector index); ``stamps()`` adds what only the store knows (e.g. the embedder's weights
    hash). Every search returns ``(id, score)`` pairs, best first, the filter applied before the top ``k``.
    ``tests/store/store_contract.py`` holds every store to the same behaviour.
    """

    @property
    def settings(self) -> IndexSettings: ...

    # -- writing
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

    # -- reading
    @property
    def generation(self) -> int:
        """Raised by every commit that changed something."""
        ...

    def __len__(self) -> int: ...

    def get(self, doc_id: str) -> Document | None: ...

    def get_many(self, doc_ids: Iterable[str]) -> dict[str, Document]:
        """The live documents of ``doc_ids`` by id, absent ids left out: one request for a result list, where a
        ``get`` per hit is one round trip each on a server."""
        ...

    def documents(self) -> Iterable[Document]: ...

    def metadata(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(id, metadata)`` of every live document, streamed."""
        ...

    def filter_documents(self, filter: FilterLike) -> Iterator[Document]:
        """The live documents ``filter`` selects (the same semantics as inside a search), streamed."""
        ...

    def refresh(self) -> None:
        """Read what other writers committed since this handle opened (a no-op where reads are always fresh)."""
        ...

    # -- searching
    def search_sparse(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked: ...

    def search_dense(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked: ...

    def search_vector(self, vector: np.ndarray, k: int = 10, filter: FilterLike = None) -> Ranked: ...

    def search_hybrid(
        self, query: str, k: int = 10, filter: FilterLike = None, fusion: str = "server", rrf_k: int = 60
    ) -> Ranked: ...

    # -- describing
    def info(self) -> dict[str, Any]:
        """``store``, ``documents``, ``generation`` and the stamps; the embedded index adds its own fields."""
        ...

    def stats(self) -> dict[str, Any]: ...

    def stamps(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


def as_collection(store: Any) -> Collection:
    """``store`` behind the collection interface: the embedded ``Index`` wrapped, a collection as it is."""
    from ragline.index.store import Index

    if isinstance(store, Index):
        from ragline.store.embedded import EmbeddedCollection

        return EmbeddedCollection(store)
    return store  # type: ignore[no-any-return]


def is_embedded(store: Any) -> bool:
    """Whether ``store`` is the embedded index (bare or wrapped): every retriever runs on it."""
    from ragline.index.store import Index

    return isinstance(store, Index) or isinstance(getattr(store, "index", None), Index)


def admits(filter: FilterLike, metadata: dict[str, Any]) -> bool:
    """Whether ``filter`` selects one document of this ``metadata`` (the embedded index's semantics)."""
    node = parse_filter(filter)
    return node is None or bool(evaluate(node, lambda field: Column([metadata.get(field)]), 1)[0])
