"""``Index``: the searchable, updatable collection, a facade over the parts that do the work.

- ``storage.py``: the directory layout, the manifest swapped atomically at each commit, the writer
  lock, loading a commit (following a writer that moves on), removing unreferenced files.
- ``stats.py``: collection statistics (``CollectionStats``) summed over the live rows of all segments
  at open and after each commit, so scores always equal those of a fresh build of the live documents;
  ``sparse.py`` searches with them.
- ``dense.py``: the embedder and nearest-neighbour search with deletes and filters as masks.
- ``merge.py``: rewriting segments into one. ``settings.py``: ``IndexSettings``.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragline import __version__
from ragline.errors import ConfigError, IndexMismatchError
from ragline.index.bm25 import BM25Params
from ragline.index.changes import COMMIT_BATCH_CHARS, SyncReport, build_batches, compare_with_index, count_documents
from ragline.index.dense import VectorMasks, embedder_stamp, load_index_embedder, search_vector, vectors_for
from ragline.index.filters import FilterLike, parse_filter
from ragline.index.live_ids import find_live, live_id_map
from ragline.index.merge import merged_commit, segments_to_merge
from ragline.index.segment import Segment
from ragline.index.settings import DefaultAclDocument, IndexSettings
from ragline.index.sparse import ScoreBuffers, search_terms, search_terms_batch
from ragline.index.stats import BM25Scorer, CollectionStats, extends
from ragline.index.storage import (
    FORMAT,
    MANIFEST,
    Commit,
    WriterLock,
    check_directory,
    collect_garbage,
    index_info,
    load_commit,
    new_manifest,
    now,
    read_manifest,
    write_manifest,
    write_segments,
)
from ragline.text import Analyzer, get_analyzer
from ragline.types import Document, Hit, document_id_of

__all__ = ["FORMAT", "MANIFEST", "Index", "IndexSettings", "SyncReport"]


class Index:
    """A searchable, updatable collection of documents (BM25 over segments, filters, stored text).

    Changes (``add``, ``delete``, ``sync``) are staged and become new segments and new delete sets at
    ``commit``: one segment per ``commit_batch_chars`` characters of text or more (at most
    ``max_segments`` of them), all made visible together by the one manifest swap. ``path=None``
    keeps everything in memory (evaluation runs use this).
    """

    commit_batch_chars: int = COMMIT_BATCH_CHARS

    def __init__(self, path: Path | None, settings: IndexSettings, manifest: dict[str, Any] | None = None) -> None:
        self.path, self.settings = path, settings
        self.manifest = manifest or new_manifest(settings)
        self.segments: list[Segment] = []
        self.deleted: list[np.ndarray] = []  # per segment, True = deleted row
        self._pending: dict[str, Document] = {}
        self._pending_deletes: set[str] = set()
        self._pending_vectors: dict[str, np.ndarray] = {}
        self._writer = WriterLock(path) if path is not None else None
        self._embedder: Any = None
        self._buffers = ScoreBuffers()
        self._scorers: dict[BM25Params, BM25Scorer] = {}
        self._vector_masks = VectorMasks()
        self._collection_stats: CollectionStats | None = None
        self._previous_stats: CollectionStats | None = None
        self._id_map: dict[str, tuple[int, int]] | None = None

    # -- opening ----------------------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path | None = None, settings: IndexSettings | None = None) -> Index:
        """A new, empty index; at ``path`` it is committed at once, so it can be opened."""
        index = cls(Path(path) if path is not None else None, settings or IndexSettings())
        if index.path is not None:
            check_directory(index.path)
            if (index.path / MANIFEST).exists():
                raise ConfigError(f"an index already exists at {index.path}; open it instead")
            index.path.mkdir(parents=True, exist_ok=True)
            index._lock()
            write_manifest(index.path, index.manifest)
        return index

    @classmethod
    def open(cls, path: str | Path, analyzer: str | Analyzer | None = None) -> Index:
        """Open the last commit at ``path``. Passing an analyzer checks it matches the index's."""
        path = Path(path)
        manifest = read_manifest(path)
        settings = IndexSettings.from_dict(manifest["settings"])
        if analyzer is not None and get_analyzer(analyzer) != settings.analyzer:
            raise IndexMismatchError(
                f"index {path} was built with analyzer {settings.analyzer.name!r} "
                f"({settings.analyzer.to_dict()}), not {get_analyzer(analyzer).name!r}; "
                "query it with the analyzer it was built with, or rebuild it"
            )
        index = cls(path, settings, manifest)
        index._adopt(*index._load_commit(manifest))
        return index

    @classmethod
    def open_or_create(cls, path: str | Path, settings: IndexSettings | None = None) -> Index:
        if (Path(path) / MANIFEST).is_file():
            index = cls.open(path)
            if settings is not None and settings.to_dict() != index.settings.to_dict():
                raise IndexMismatchError(
                    f"index {path} exists with other settings: {index.settings.to_dict()}; "
                    "use another --index directory or delete this one"
                )
            return index
        return cls.create(path, settings)

    def _load_commit(self, manifest: dict[str, Any]) -> Commit:
        """``manifest``'s commit, or a newer one if a writer moved on (``storage.load_commit``)."""
        assert self.path is not None
        return load_commit(self.path, manifest, self.settings, {seg.name: seg for seg in self.segments})

    def _adopt(self, manifest: dict[str, Any], segments: list[Segment], deleted: list[np.ndarray]) -> None:
        """Make a loaded or published commit this handle's state (all parts together, then caches reset)."""
        self.manifest, self.segments, self.deleted = manifest, segments, deleted
        self._invalidate()

    def refresh(self) -> bool:
        """Load a newer commit made by another writer, if any; True when something changed.

        If loading fails, this handle keeps serving the commit it had.
        """
        if self.path is None or not (self.path / MANIFEST).is_file():
            return False
        manifest = read_manifest(self.path)
        if manifest["generation"] == self.generation:
            return False
        self._adopt(*self._load_commit(manifest))
        return True

    # -- locking ----------------------------------------------------------------------------------
    def _lock(self) -> None:
        """Take the writer lock, then load any commit made before it was taken."""
        if self._writer is None or self._writer.held:
            return
        self._writer.acquire()
        if self.refresh():
            self._pending.clear()

    def close(self) -> None:
        """Release the writer lock; uncommitted changes are dropped."""
        self._pending.clear()
        self._pending_deletes.clear()
        self._pending_vectors.clear()
        if self._writer is not None:
            self._writer.release()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ----------------------------------------------------------------------------------
    @property
    def generation(self) -> int:
        return int(self.manifest["generation"])

    def __len__(self) -> int:
        return sum(len(s) - int(d.sum()) for s, d in zip(self.segments, self.deleted))

    def id_map(self) -> dict[str, tuple[int, int]]:
        """Live document id -> (segment number, row)."""
        if self._id_map is None:
            self._id_map = live_id_map(self.segments, self.deleted)
        return self._id_map

    def _live_rows(self, doc_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        """(segment number, row) of those of ``doc_ids`` that are live, without the whole id map."""
        if self._id_map is not None:
            return {doc_id: self._id_map[doc_id] for doc_id in doc_ids if doc_id in self._id_map}
        return find_live(self.segments, self.deleted, doc_ids)

    def get(self, doc_id: str) -> Document | None:
        where = self.id_map().get(doc_id)
        return self.segments[where[0]].document(where[1]) if where else None

    def documents(self) -> Iterable[Document]:
        for seg, dead in zip(self.segments, self.deleted):
            for row in np.flatnonzero(~dead):
                yield seg.document(int(row))

    def info(self) -> dict[str, Any]:
        """Documents, deletes, segments, size on disk, generation and the stamps of the manifest."""
        return index_info(self)

    # -- BM25 search --------------------------------------------------------------------------------
    def search(self, query: str, k: int = 10, filter: FilterLike = None, bm25: BM25Params | None = None) -> list[Hit]:
        """The ``k`` best documents for ``query``; ``filter`` restricts candidates before ranking."""
        ranked = self.search_terms(self.settings.analyzer(query), k, filter, bm25)
        hits = []
        for rank, (si, row, score) in enumerate(ranked, start=1):
            doc = self.segments[si].document(row)
            hits.append(Hit(doc.id, score, rank, doc.title, doc.text, doc.metadata, doc.parent))
        return hits

    def search_ids(
        self, query: str, k: int = 10, filter: FilterLike = None, bm25: BM25Params | None = None
    ) -> list[tuple[str, float]]:
        """Like ``search`` but only (doc id, score): no stored text is read."""
        ranked = self.search_terms(self.settings.analyzer(query), k, filter, bm25)
        return [(self.segments[si].ids[row], score) for si, row, score in ranked]

    def search_terms(
        self, terms: Sequence[str], k: int = 10, filter: FilterLike = None, bm25: BM25Params | None = None
    ) -> list[tuple[int, int, float]]:
        """(segment, row, score) of the ``k`` best live rows for already-analyzed ``terms``.

        A row is a candidate when it contains a query term with positive weight and passes the filter
        and the delete set; ties keep segment-then-row order.
        """
        scorer, node, k = self.bm25_scorer(bm25), parse_filter(filter), min(k, len(self))  # k: at most the live docs
        return search_terms(self.segments, self.settings.fields, scorer, terms, k, node, self._buffers, self.generation)

    def search_terms_batch(
        self,
        queries: Sequence[Sequence[str]],
        k: int = 10,
        filter: FilterLike = None,
        bm25: BM25Params | None = None,
        threads: int = 1,
    ) -> list[list[tuple[int, int, float]]]:
        """``search_terms`` for many already-analyzed queries at once, equal to one call per query.

        The filter is parsed and evaluated once for the batch; ``threads`` > 1 spreads the queries over
        that many threads (the compiled kernels release the GIL).
        """
        scorer, node, k = self.bm25_scorer(bm25), parse_filter(filter), min(k, len(self))  # k: at most the live docs
        return search_terms_batch(
            self.segments, self.settings.fields, scorer, queries, k, node, self._buffers, self.generation, threads
        )

    def search_ids_batch(
        self,
        queries: Sequence[str],
        k: int = 10,
        filter: FilterLike = None,
        bm25: BM25Params | None = None,
        threads: int = 1,
    ) -> list[list[tuple[str, float]]]:
        """``search_ids`` for each of ``queries`` (text, analyzed here), in order."""
        ranked = self.search_terms_batch([self.settings.analyzer(q) for q in queries], k, filter, bm25, threads)
        return [[(self.segments[si].ids[row], score) for si, row, score in hits] for hits in ranked]

    def collection_stats(self) -> CollectionStats:
        """Live df, N and average lengths of the current commit, as searched (cached per commit)."""
        if self._collection_stats is None:  # updated from the last commit's where only segments were added
            self._collection_stats = CollectionStats.compute(
                self.segments, self.deleted, self.settings.fields, self._previous_stats
            )
        return self._collection_stats

    def bm25_scorer(self, params: BM25Params | None = None) -> BM25Scorer:
        """IDF per field and the weight of every posting under ``params`` (cached per commit)."""
        params = params or self.settings.bm25
        if params not in self._scorers:
            stats, fields = self.collection_stats(), self.settings.fields
            self._scorers[params] = BM25Scorer.build(stats, self.segments, fields, params)
        return self._scorers[params]

    def _invalidate(self) -> None:
        # Kept only while it can be updated from: a merge's old segments are not held in memory for it
        # (``merge`` carries its statistics over itself).
        last, self._collection_stats = self._collection_stats or self._previous_stats, None
        self._previous_stats = last if last and extends(last, self.segments, self.settings.fields) else None
        self._scorers.clear()
        self._vector_masks.clear()
        self._id_map = None

    # -- dense search -----------------------------------------------------------------------------
    @property
    def embedder(self) -> Any:
        """The index's embedder (loaded on first use, wrapped in the on-disk embedding cache)."""
        if self._embedder is None:
            self._embedder = load_index_embedder(self.settings.embedder, self.manifest.get("embedder"), self.path)
        return self._embedder

    def embedding_counts(self) -> dict[str, Any] | None:
        """Passages embedded vs. found in the cache since this handle loaded its embedder (None: not loaded)."""
        e = self._embedder
        return None if e is None else {"computed": e.computed, "cached": e.cached, "id": e.id}

    def _vectors_for(self, documents: list[Document]) -> np.ndarray:
        """One vector per document: given to ``add``, else embedded (the embedder loads only if needed)."""
        return vectors_for(documents, self._pending_vectors, lambda texts: self.embedder.embed_passages(texts))

    def search_dense(self, query: str, k: int = 10, filter: FilterLike = None) -> list[tuple[int, int, float]]:
        """(segment, row, cosine) of the ``k`` nearest live rows to the embedded ``query``."""
        return self.search_vector(self.embedder.embed_queries([query])[0], k, filter)

    def search_vector(self, vector: np.ndarray, k: int = 10, filter: FilterLike = None) -> list[tuple[int, int, float]]:
        """Nearest live rows to ``vector``; deletes and ``filter`` are masks inside the ANN search."""
        return search_vector(self.segments, self.deleted, vector, k, parse_filter(filter), self._vector_masks)

    def live_mask(self, si: int, node: Any) -> np.ndarray | None:
        """Rows of segment ``si`` a search may return, live and passing ``node``, as a mask (None: every row)."""
        return self._vector_masks.mask(si, self.segments[si], self.deleted[si], node)

    # -- writing ----------------------------------------------------------------------------------
    def add(self, documents: Iterable[Document], vectors: np.ndarray | None = None) -> int:
        """Add or replace (same id) documents; visible after ``commit``. Returns how many.

        ``vectors`` (one row per document) are used instead of embedding ``index_text``: late
        chunking computes chunk vectors from the whole document.
        """
        self._lock()
        documents = list(documents)
        if vectors is not None and len(vectors) != len(documents):
            raise ConfigError(f"add() got {len(vectors)} vectors for {len(documents)} documents")
        default_acl = self.settings.default_acl
        if isinstance(default_acl, str):
            raise ConfigError(f"default_acl takes a tuple of group names, e.g. ({default_acl!r},), not a string")
        for i, doc in enumerate(documents):
            if not isinstance(doc, Document) or not doc.id:
                raise ConfigError(f"add() takes Documents with a non-empty id, got {doc!r:.80}")
            if default_acl is not None and doc.metadata.get("acl") is None:
                doc = DefaultAclDocument.stamp(doc, default_acl)
            self._pending[doc.id] = doc
            self._pending_deletes.discard(doc.id)
            if vectors is not None:
                self._pending_vectors[doc.id] = np.asarray(vectors[i], dtype=np.float32)
            else:
                self._pending_vectors.pop(doc.id, None)
        return len(documents)

    def delete(self, ids: Iterable[str]) -> int:
        """Delete documents by id; visible after ``commit``. Returns how many were known."""
        self._lock()
        n = 0
        ids = dict.fromkeys(ids)  # each id once, in order
        live = self._live_rows(ids)
        for doc_id in ids:
            known = doc_id in live or doc_id in self._pending
            self._pending.pop(doc_id, None)
            if doc_id in live:
                self._pending_deletes.add(doc_id)
            n += known
        return n

    def sync(self, documents: Iterable[Document], prune: bool = True, keep: Collection[str] = ()) -> SyncReport:
        """Make the index hold exactly ``documents`` (by id and content hash); commit to apply.

        With ``prune``, live documents not given are deleted, except the ids in ``keep`` and their chunks
        ``<id>#<n>`` (sources that failed to load this time keep what an earlier run indexed).
        """
        self._lock()  # first: taking the lock loads a newer commit, which is what to compare with
        live = self.id_map()
        hash_at = lambda si, row: self.segments[si].hashes[row]  # noqa: E731 (a key into this commit's rows)
        report, changed, unchanged, seen = compare_with_index(documents, live, hash_at)
        for doc_id in unchanged:  # the committed version is the one wanted: unstage
            self._pending.pop(doc_id, None)
            self._pending_deletes.discard(doc_id)
        self.add(changed)
        if prune:
            for doc_id in [d for d in self._pending if d not in seen and d not in keep]:
                del self._pending[doc_id]  # staged earlier, but not in the set to mirror
            gone = [doc_id for doc_id in live if doc_id not in seen and document_id_of(doc_id) not in keep]
            report.deleted = self.delete(gone)
            count_documents(report, live, seen, gone)
        return report

    @property
    def dirty(self) -> bool:
        return bool(self._pending or self._pending_deletes)

    def commit(self) -> int:
        """Apply pending changes atomically; returns the new generation (unchanged if nothing to do)."""
        if not self.dirty:
            return self.generation
        self._lock()
        gen = self.generation + 1
        deleted = [d.copy() for d in self.deleted]
        for si, row in self._live_rows(self._pending_deletes | self._pending.keys()).values():
            deleted[si][row] = True
        segments = list(self.segments)
        written: dict[str, dict[str, int]] = {}
        for segment, files in build_batches(self, list(self._pending.values()), gen):
            if files is not None:
                written[segment.name] = files
            segments.append(segment)
            deleted.append(np.zeros(len(segment), dtype=bool))
        self._publish(gen, segments, deleted, written)
        self._pending.clear()
        self._pending_deletes.clear()
        self._pending_vectors.clear()
        if len(self.segments) > self.settings.max_segments:
            self.merge(self.settings.max_segments, expunge_deletes=False)
        return self.generation

    def merge(self, max_segments: int = 1, expunge_deletes: bool = True) -> int:
        """Rewrite the smallest segments into one, dropping deleted rows, until at most ``max_segments``.

        With ``expunge_deletes`` every segment with deleted rows is rewritten too (even alone), so the
        deleted documents' text leaves the disk; the automatic merge after a commit skips that.
        Postings are merged directly (no re-analysis). Scores do not change.
        """
        if self.dirty:
            raise ConfigError("commit pending changes before merge()")
        self._lock()
        chosen, empties = segments_to_merge(self.segments, self.deleted, max_segments, expunge_deletes)
        if not chosen and not empties:
            return self.generation
        gen = self.generation + 1
        keep, segments, deleted = merged_commit(
            self.segments, self.deleted, chosen, empties, self._segment_name(gen), self.settings.vector_index
        )
        # Statistics already had (or cheaply updated) carry over the merge: counting 1M documents again
        # would cost the first query after a small commit more than the commit itself.
        had = self.collection_stats() if self._collection_stats or self._previous_stats else None
        self._publish(gen, segments, deleted)
        if had is not None:
            self._collection_stats = CollectionStats.after_merge(had, keep, self.segments, self.deleted)
        return self.generation

    def _segment_name(self, gen: int) -> str:
        return f"seg-{gen:06d}-{secrets.token_hex(3)}"

    def _publish(
        self,
        gen: int,
        segments: list[Segment],
        deleted: list[np.ndarray],
        written: dict[str, dict[str, int]] | None = None,
    ) -> None:
        """Write what is new (``written``: segments already written), swap the manifest, then adopt it."""
        manifest = dict(self.manifest, generation=gen, committed_at=now(), ragline_version=__version__)
        if self._embedder is not None:
            manifest["embedder"] = embedder_stamp(self.settings.embedder, self._embedder)
        manifest["segments"] = write_segments(self.path, self.manifest["segments"], segments, deleted, gen, written)
        if self.path is not None:
            write_manifest(self.path, manifest)
        self._adopt(manifest, segments, deleted)
        if self.path is not None:
            collect_garbage(self.path, self.manifest)
