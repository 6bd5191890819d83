"""Writes staged until ``commit``, as the stores on a server keep them (Milvus, PostgreSQL): what ``add``,
``delete``, ``delete_documents`` and ``sync`` share. A store provides ``settings`` and ``_live_hashes(ids)``
(id -> content hash of the stored documents, of ``ids`` only when given) and applies ``_pending`` (id ->
document and its vector, if given) and ``_pending_deletes`` at its ``commit``."""

from __future__ import annotations

from collections.abc import Collection as Keep
from collections.abc import Iterable
from typing import Any, Self

import numpy as np

from ragline.errors import ConfigError, IndexMismatchError
from ragline.index.changes import count_documents
from ragline.index.settings import DefaultAclDocument
from ragline.index.store import SyncReport
from ragline.types import Document, document_id_of


class StagedWrites:
    """``add``, ``delete``, ``delete_documents`` and ``sync`` staged in memory for the store's ``commit``."""

    settings: Any
    _pending: dict[str, tuple[Document, np.ndarray | None]]
    _pending_deletes: set[str]
    _embedder: Any

    def _live_hashes(self, ids: list[str] | None = None) -> dict[str, str]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def embedding_counts(self) -> dict[str, Any] | None:
        """Passages embedded and taken from the cache since the store's embedder loaded (None: not loaded)."""
        e = self._embedder
        return None if e is None else {"computed": e.computed, "cached": e.cached, "id": e.id}

    def _discard(self) -> None:
        """Forget what is staged (closing without a commit)."""
        self._pending.clear()
        self._pending_deletes.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, documents: Iterable[Document], vectors: np.ndarray | None = None) -> int:
        documents = list(documents)
        if vectors is not None and len(vectors) != len(documents):
            raise ConfigError(f"add() got {len(vectors)} vectors for {len(documents)} documents")
        default_acl = self.settings.default_acl
        for i, doc in enumerate(documents):
            if not isinstance(doc, Document) or not doc.id:
                raise ConfigError(f"add() takes Documents with a non-empty id, got {doc!r:.80}")
            if default_acl is not None and doc.metadata.get("acl") is None:
                doc = DefaultAclDocument.stamp(doc, default_acl)
            self._pending[doc.id] = (doc, None if vectors is None else np.asarray(vectors[i], np.float32))
            self._pending_deletes.discard(doc.id)
        return len(documents)

    def delete(self, ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(ids))
        live = self._live_hashes(ids)
        for doc_id in ids:
            self._pending.pop(doc_id, None)
            if doc_id in live:
                self._pending_deletes.add(doc_id)
        return len(live)

    def delete_documents(self, document_ids: Iterable[str]) -> int:
        wanted = set(document_ids)
        return self.delete([i for i in self._live_hashes() if document_id_of(i) in wanted])

    def sync(
        self, documents: Iterable[Document], prune: bool = True, keep: Keep[str] = (), vectors: np.ndarray | None = None
    ) -> SyncReport:
        """Make the collection hold exactly ``documents`` (by id and content hash); commit to apply.

        ``vectors`` (one per document, computed elsewhere, e.g. on Ray) are used for the changed ones.
        """
        documents = list(documents)
        if vectors is not None and len(vectors) != len(documents):
            raise ConfigError(f"sync() got {len(vectors)} vectors for {len(documents)} documents")
        report, seen, live = SyncReport(), set(), self._live_hashes()
        changed, changed_rows = [], []
        for row, doc in enumerate(documents):
            seen.add(doc.id)
            stored = live.get(doc.id)
            if stored is None:
                report.added += 1
                changed.append(doc)
                changed_rows.append(row)
            elif stored != doc.hash:
                report.updated += 1
                changed.append(doc)
                changed_rows.append(row)
            else:
                report.unchanged += 1
                self._pending.pop(doc.id, None)
        self.add(changed, None if vectors is None else np.asarray(vectors)[changed_rows])
        if prune:
            gone = [i for i in live if i not in seen and document_id_of(i) not in keep]
            self._pending_deletes.update(gone)
            report.deleted = len(gone)
            count_documents(report, live, seen, gone)
        return report

    @property
    def dirty(self) -> bool:
        return bool(self._pending or self._pending_deletes)


def stamped_embedder(settings: Any, stamp: dict[str, Any] | None, where: str) -> Any:
    """The embedder ``settings`` name (its vectors cached on disk), refused when its weights are not the ones
    ``stamp`` recorded at creation (``where`` names the collection)."""
    if not settings.embedder:
        raise ConfigError(f"{where} has no vectors; create it with an embedder")
    from ragline.models import CachedEmbedder, load_embedder

    embedder = CachedEmbedder(load_embedder(settings.embedder))
    if stamp and (stamp["id"], stamp["sha256"]) != (embedder.id, embedder.embedder.weights_sha256):
        raise IndexMismatchError(
            f"{where} was embedded with {stamp['id']} (weights {stamp['sha256'][:12]}), but {settings.embedder!r} "
            f"now loads {embedder.id}; reinstall that model or index into a new collection"
        )
    return embedder


def embedder_stamp(settings: Any, embedder: Any) -> dict[str, Any]:
    """What a store records of its embedder at creation: name, id, weights hash, dimension."""
    return {
        "name": settings.embedder,
        "id": embedder.id,
        "sha256": embedder.embedder.weights_sha256,
        "dim": embedder.dim,
    }
