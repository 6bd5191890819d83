"""The embedded index (``ragline.index.Index``) behind the collection interface.

A thin adapter: searches return ids (the index returns segment rows for dense search), and hybrid is
ragline's RRF over the two searches, so it ranks as ``MilvusCollection.search_hybrid(fusion="rrf")``.
"""

from __future__ import annotations

from collections.abc import Collection as Keep
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ragline.components import register
from ragline.errors import ConfigError
from ragline.index.filters import FilterLike, parse_filter
from ragline.index.store import Index, IndexSettings, SyncReport
from ragline.retrieve.fusion import fuse, rank
from ragline.types import Document, document_id_of


class EmbeddedCollection:
    def __init__(self, index: Index) -> None:
        self.index = index

    @property
    def settings(self) -> IndexSettings:
        return self.index.settings

    def add(self, documents: Iterable[Document], vectors: np.ndarray | None = None) -> int:
        return self.index.add(documents, vectors)

    def delete(self, ids: Iterable[str]) -> int:
        return self.index.delete(ids)

    def delete_documents(self, document_ids: Iterable[str]) -> int:
        wanted = set(document_ids)
        return self.index.delete([i for i in self.index.id_map() if document_id_of(i) in wanted])

    def sync(
        self, documents: Iterable[Document], prune: bool = True, keep: Keep[str] = (), vectors: np.ndarray | None = None
    ) -> SyncReport:
        """``Index.sync``; with ``vectors`` (one per document, computed elsewhere) the changed ones use them."""
        documents = list(documents)
        report = self.index.sync(documents, prune, keep)
        if vectors is not None:
            if len(vectors) != len(documents):
                raise ConfigError(f"sync() got {len(vectors)} vectors for {len(documents)} documents")
            # After sync: it loads the newest commit first, which is what "changed" is measured against.
            live, segments = self.index.id_map(), self.index.segments
            stored = {doc_id: segments[si].hashes[row] for doc_id, (si, row) in live.items()}
            changed = [i for i, doc in enumerate(documents) if stored.get(doc.id) != doc.hash]
            if changed:
                self.index.add([documents[i] for i in changed], np.asarray(vectors)[changed])
        return report

    def commit(self) -> int:
        """Apply the staged writes atomically; the new generation."""
        return self.index.commit()

    @property
    def generation(self) -> int:
        return self.index.generation

    def refresh(self) -> None:
        self.index.refresh()

    def metadata(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for seg, dead in zip(self.index.segments, self.index.deleted):
            for row, meta in enumerate(seg.metadata):
                if not dead[row]:
                    yield seg.ids[row], meta

    def filter_documents(self, filter: FilterLike) -> Iterator[Document]:
        node = parse_filter(filter)
        if node is None:
            yield from self.index.documents()
            return
        for seg, dead in zip(self.index.segments, self.index.deleted):
            for row in seg.filter_rows(node):
                if not dead[row]:
                    yield seg.document(int(row))

    def get(self, doc_id: str) -> Document | None:
        return self.index.get(doc_id)

    def get_many(self, doc_ids: Iterable[str]) -> dict[str, Document]:
        return {doc_id: doc for doc_id in dict.fromkeys(doc_ids) if (doc := self.index.get(doc_id)) is not None}

    def documents(self) -> Iterable[Document]:
        return self.index.documents()

    def __len__(self) -> int:
        return len(self.index)

    def search_sparse(self, query: str, k: int = 10, filter: FilterLike = None) -> list[tuple[str, float]]:
        return self.index.search_ids(query, k, filter)

    def search_ids(
        self, query: str, k: int = 10, filter: FilterLike = None, bm25: Any = None
    ) -> list[tuple[str, float]]:
        return self.index.search_ids(query, k, filter, bm25)

    def search_dense(self, query: str, k: int = 10, filter: FilterLike = None) -> list[tuple[str, float]]:
        segments = self.index.segments
        return [(segments[si].ids[row], score) for si, row, score in self.index.search_dense(query, k, filter)]

    def search_vector(self, vector: np.ndarray, k: int = 10, filter: FilterLike = None) -> list[tuple[str, float]]:
        segments = self.index.segments
        return [(segments[si].ids[row], score) for si, row, score in self.index.search_vector(vector, k, filter)]

    def search_hybrid(
        self, query: str, k: int = 10, filter: FilterLike = None, fusion: str = "rrf", rrf_k: int = 60
    ) -> list[tuple[str, float]]:
        if fusion not in ("rrf", "server"):
            raise ConfigError(f"hybrid fusion is 'server' or 'rrf', not {fusion!r}")
        # The embedded index is its own server: "server" fusion is the same RRF.
        runs = [dict(self.search_sparse(query, k, filter)), dict(self.search_dense(query, k, filter))]
        return rank(fuse("rrf", runs, k=rrf_k), k)

    def stamps(self) -> dict[str, Any]:
        return {
            "format": self.index.manifest["format"],
            "settings": self.index.manifest["settings"],
            "embedder": self.index.manifest.get("embedder"),
        }

    def info(self) -> dict[str, Any]:
        return {"store": str(self.index.path) if self.index.path else "memory", **self.index.info()}

    stats = info

    def embedding_counts(self) -> dict[str, Any] | None:
        return self.index.embedding_counts()

    def close(self) -> None:
        self.index.close()

    def __enter__(self) -> EmbeddedCollection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@register("store", "file")
def open_embedded(uri: str | None, settings: IndexSettings | None = None, create: bool = True) -> EmbeddedCollection:
    """The embedded index in a folder (``file:///abs/path``, ``file://rel/path`` or a plain path; None: in memory)."""
    if uri is None:
        return EmbeddedCollection(Index.create(None, settings))
    path = uri[len("file://") :] if uri.lower().startswith("file://") else uri
    if not path:
        raise ConfigError(f"store URI {uri!r} names no folder; write file:///path/to/index or a path")
    return EmbeddedCollection(Index.open_or_create(path, settings) if create else Index.open(path))
