"""An embedding cache on disk, shared by every process and command: a text is embedded once per model.

Entries are keyed by (:attr:`Embedder.id`, sha256 of the exact model input, prefix included). The id pins
the weights and the input length and the hash pins the text, so an entry can never be stale and the cache
needs no invalidation: re-indexing a collection, a second benchmark run or a query asked twice costs a
lookup. The default file is ``$RAGLINE_CACHE/embeddings.sqlite``, else ``~/.cache/ragline/embeddings.sqlite``.

Storage is SQLite (stdlib ``sqlite3``) in WAL mode: readers and the writer don't block each other, writers
queue on a busy timeout, and each :meth:`EmbeddingCache.put_many` is one transaction, so concurrent
processes and a crash mid-run leave whole batches, never a torn one. Vectors are float32 blobs (1.5 KiB
for 384 dimensions).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragline.models.embedders import Embedder
from ragline.paths import cache_root
from ragline.progress import track
from ragline.sqlite_store import SqliteStore
from ragline.types import content_hash

FILENAME = "embeddings.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model  TEXT NOT NULL,  -- Embedder.id
    hash   TEXT NOT NULL,  -- content_hash(prefix + text)
    vector BLOB NOT NULL,  -- float32, little-endian
    PRIMARY KEY (model, hash)
)
"""
# Stay below SQLite's limit on bound parameters per statement (999 before SQLite 3.32).
_LOOKUP_CHUNK = 500


def default_cache_path() -> Path:
    """``$RAGLINE_CACHE/embeddings.sqlite``, else ``~/.cache/ragline/embeddings.sqlite``."""
    return cache_root() / FILENAME


class EmbeddingCache(SqliteStore):
    """Vectors on disk by (model id, text hash). Safe to share between threads and processes.

    ``path`` is a directory (the cache is ``embeddings.sqlite`` in it) or a file ending ``.sqlite`` /
    ``.db``; None means :func:`default_cache_path`. The file is created on first use.
    """

    FILENAME = FILENAME
    TABLE = "embeddings"
    SCHEMA = _SCHEMA

    def get_many(self, model_id: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``hashes``, by hash; missing hashes are absent from the result."""
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, np.ndarray] = {}
        with self._lock:
            connection = self._connect()
            for start in range(0, len(wanted), _LOOKUP_CHUNK):
                chunk = wanted[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(
                    f"SELECT hash, vector FROM embeddings WHERE model = ? AND hash IN ({marks})", [model_id, *chunk]
                )
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        return found

    def put_many(self, model_id: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store ``vectors[i]`` under ``hashes[i]``, in one transaction. Existing entries are kept as they are."""
        vectors = np.asarray(vectors, dtype="<f4")
        if len(hashes) != len(vectors):
            raise ValueError(f"{len(hashes)} hashes for {len(vectors)} vectors")
        rows = [(model_id, key, vector.tobytes()) for key, vector in zip(hashes, vectors)]
        with self._lock:
            connection = self._connect()
            # IMMEDIATE takes the write lock now, so a busy database is waited for here, under the timeout,
            # rather than failing on a read-to-write lock upgrade.
            connection.execute("BEGIN IMMEDIATE")
            try:
                # Another process may have stored the same text meanwhile: same key, same vector, keep one.
                connection.executemany("INSERT OR IGNORE INTO embeddings VALUES (?, ?, ?)", rows)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")


class CachedEmbedder:
    """An :class:`Embedder` that looks texts up in an :class:`EmbeddingCache` and embeds only the missing.

    Same interface as the embedder it wraps. New vectors are written after each batch, so an interrupted
    run keeps what it computed. ``computed`` and ``cached`` count distinct texts embedded by the model and
    answered by the cache, over the object's lifetime (a text twice in one call counts once).
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache | None = None) -> None:
        self.embedder = embedder
        self.cache = cache if cache is not None else EmbeddingCache()
        self.computed = 0
        self.cached = 0

    @property
    def id(self) -> str:
        return self.embedder.id

    @property
    def dim(self) -> int:
        return self.embedder.dim

    @property
    def spec(self) -> Any:
        return self.embedder.spec

    def embed_queries(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return self._embed(texts, is_query=True, batch_size=batch_size, progress=False)

    def embed_passages(self, texts: Sequence[str], batch_size: int = 32, progress: bool = True) -> np.ndarray:
        return self._embed(texts, is_query=False, batch_size=batch_size, progress=progress)

    def _embed(self, texts: Sequence[str], *, is_query: bool, batch_size: int, progress: bool) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("pass a list of texts, not one string")
        texts = list(texts)
        model_input = self.embedder.query_text if is_query else self.embedder.passage_text
        keys = [content_hash(model_input(text)) for text in texts]
        vectors = self.cache.get_many(self.id, keys)
        self.cached += len(vectors)

        missing: dict[str, str] = {}  # key -> text, each distinct text once
        for key, text in zip(keys, texts):
            if key not in vectors:
                missing.setdefault(key, text)
        todo = sorted(missing, key=lambda key: -len(missing[key]))  # longest first, as Embedder does
        batches: Any = [todo[start : start + batch_size] for start in range(0, len(todo), batch_size)]
        if progress and batches:
            description = f"embedding {len(todo)} passages, {len(vectors)} cached ({self.embedder.spec.name})"
            batches = track(batches, description, total=len(batches))
        for batch in batches:
            batch_texts = [missing[key] for key in batch]
            if is_query:
                new = self.embedder.embed_queries(batch_texts, batch_size=len(batch))
            else:
                new = self.embedder.embed_passages(batch_texts, batch_size=len(batch), progress=False)
            self.cache.put_many(self.id, batch, new)
            vectors.update(zip(batch, new))
            self.computed += len(batch)

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([vectors[key] for key in keys]).astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.id!r}, {self.cache!r})"
