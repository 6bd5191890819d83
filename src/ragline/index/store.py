"""The on-disk collection: segments, delete sets and a manifest, committed atomically.

Layout of an index directory::

    manifest.json               the last completed commit (replaced atomically)
    write.lock                  held (flock) by the one writer
    segments/<name>/...         immutable segments (see segment.py)
    deletes/<name>.<gen>.npy    rows of a segment deleted as of commit <gen>

A commit writes new files first and swaps ``manifest.json`` last (write temp, fsync, rename), so a
crash at any point leaves the previous commit intact; then it removes the files the new manifest does
not name. A reader loads everything at open, and when a commit removed files of the commit it was
loading (the manifest moved on), it loads the newer commit. Collection statistics (N, df, average
length) are summed over live rows of all segments at open and after each commit, so scores always
equal those of a fresh build of the live documents.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import threading
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragline import __version__
from ragline.errors import (
    ConfigError,
    CorruptIndexError,
    IndexDirectoryError,
    IndexLockedError,
    IndexMismatchError,
    IndexNotFoundError,
)
from ragline.index.bm25 import BM25Params, absent_weight, idf, tf_weight
from ragline.index.filters import FilterLike, parse_filter
from ragline.index.kernels import accumulate, select_from_allowed_rows, select_from_postings, select_from_rows
from ragline.index.segment import FIELD_TEXT, FieldPostings, Segment, build_vector_index, check_fields
from ragline.index.vectors import AllowedRows
from ragline.text import Analyzer, get_analyzer
from ragline.types import Document, Hit

FORMAT = 2  # 2: the english analyzer indexes CJK text (its stamp changed)
MANIFEST = "manifest.json"
_NO_MASK = np.zeros(0, dtype=np.bool_)
_KEPT_VECTOR_MASKS = 32  # (segment, filter) masks of live, allowed rows kept for vector search
_LOAD_ATTEMPTS = 20  # commits a reader follows while loading before it gives up (each one is a writer's commit)


@dataclass(frozen=True)
class IndexSettings:
    """What an index is built with; stamped in the manifest and checked on open."""

    analyzer: Analyzer = field(default_factory=lambda: get_analyzer("english"))
    fields: dict[str, float] = field(default_factory=lambda: {"body": 1.0})
    bm25: BM25Params = field(default_factory=BM25Params)
    max_segments: int = 8
    embedder: str | None = None  # a model name or folder (see ragline.models); None: BM25 only
    vector_index: str = "hnsw"  # VectorIndexConfig spec, e.g. "hnsw:m=32,ef_search=128" or "flat"
    chunker: str = "none"  # how `ragline index` cuts documents (ragline.ingest.chunkers spec)
    context: str = "none"  # and contextualizes the chunks (none | breadcrumb | llm)
    # Documents without an ``acl`` get this acl when added; None: they keep none and are hidden from
    # every caller who gives groups (an acl filter matches no document without the field).
    default_acl: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "analyzer": self.analyzer.to_dict(),
            "fields": self.fields,
            "bm25": self.bm25.to_dict(),
            "max_segments": self.max_segments,
            "embedder": self.embedder,
            "vector_index": self.vector_index,
            "chunker": self.chunker,
            "context": self.context,
            "default_acl": None if self.default_acl is None else list(self.default_acl),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IndexSettings:
        return cls(
            analyzer=Analyzer.from_dict(data["analyzer"]),
            fields=check_fields(data["fields"]),
            bm25=BM25Params(**data["bm25"]),
            max_segments=data.get("max_segments", 8),
            embedder=data.get("embedder"),
            vector_index=data.get("vector_index", "hnsw"),
            chunker=data.get("chunker", "none"),
            context=data.get("context", "none"),
            default_acl=None if data.get("default_acl") is None else tuple(data["default_acl"]),
        )


@dataclass(slots=True)
class _DefaultAclDocument(Document):
    """A copy of a document given the index's default acl, keeping the hash of the document as given.

    ``sync`` compares a source's hash with the stored one; the stamp is the index's doing, not a
    change of the source, so it must not make every unchanged source look updated.
    """

    source_hash: str = ""

    @classmethod
    def stamp(cls, doc: Document, acl: tuple[str, ...]) -> Document:
        metadata = {**doc.metadata, "acl": list(acl)}
        return cls(doc.id, doc.text, doc.title, metadata, doc.source, doc.index_text, source_hash=doc.hash)

    @property
    def hash(self) -> str:
        return self.source_hash

    def to_dict(self) -> dict[str, Any]:
        return Document(self.id, self.text, self.title, self.metadata, self.source, self.index_text).to_dict()


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of the index at ``path`` (it is replaced atomically, so one read sees one commit)."""
    if not (path / MANIFEST).is_file():
        raise IndexNotFoundError(str(path))
    try:
        manifest = json.loads((path / MANIFEST).read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CorruptIndexError(f"{path / MANIFEST} is not valid JSON ({error}); restore it from a backup") from None
    if not isinstance(manifest, dict):
        raise CorruptIndexError(f"{path / MANIFEST} is not an index manifest (a JSON object); restore it from a backup")
    found = manifest.get("format")
    if found != FORMAT:
        # An index of another format is refused, never read with today's analyzer or layout.
        rebuild = f"delete {path} and rebuild it with `ragline index SOURCE --index {path}`"
        if isinstance(found, int) and not isinstance(found, bool) and found < FORMAT:
            problem, advice = f"was built by an older ragline (format {found}", rebuild
        elif isinstance(found, int) and not isinstance(found, bool):
            problem, advice = f"was built by a newer ragline (format {found}", f"upgrade ragline, or {rebuild}"
        else:
            problem, advice = f"has no valid format number ({found!r}", rebuild
        raise IndexMismatchError(f"index {path} {problem}; this ragline reads format {FORMAT}): {advice}")
    return manifest


def _folder_bytes(folder: Path) -> int:
    """Bytes of the files under ``folder``; a file a writer removes meanwhile counts as gone."""
    total = 0
    for root, _, files in os.walk(folder):  # os.walk skips a folder removed before it is listed
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                total += os.stat(os.path.join(root, name)).st_size
    return total


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Index:
    """A searchable, updatable collection of documents (BM25 over segments, filters, stored text).

    Changes (``add``, ``delete``, ``sync``) become visible at ``commit``. ``path=None`` keeps
    everything in memory (evaluation runs use this).
    """

    def __init__(self, path: Path | None, settings: IndexSettings, manifest: dict[str, Any] | None = None) -> None:
        self.path, self.settings = path, settings
        self.manifest = manifest or {
            "format": FORMAT,
            "ragline_version": __version__,
            "generation": 0,
            "created_at": _now(),
            "committed_at": None,
            "settings": settings.to_dict(),
            "segments": [],
        }
        self.segments: list[Segment] = []
        self.deleted: list[np.ndarray] = []  # per segment, True = deleted row
        self._pending: dict[str, Document] = {}
        self._pending_deletes: set[str] = set()
        self._pending_vectors: dict[str, np.ndarray] = {}
        self._lock_fd: int | None = None
        self._embedder: Any = None
        self._scratch = threading.local()
        self._scorers: dict[BM25Params, dict[str, Any]] = {}
        self._vector_masks: dict[tuple[int, Any], AllowedRows | None] = {}  # (segment, filter) -> allowed rows
        self._collection_stats: dict[str, Any] | None = None
        self._id_map: dict[str, tuple[int, int]] | None = None

    # -- opening ----------------------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path | None = None, settings: IndexSettings | None = None) -> Index:
        """A new, empty index; at ``path`` it is committed at once, so it can be opened."""
        index = cls(Path(path) if path is not None else None, settings or IndexSettings())
        if index.path is not None:
            if (index.path / MANIFEST).exists():
                raise ConfigError(f"an index already exists at {index.path}; open it instead")
            index.path.mkdir(parents=True, exist_ok=True)
            index._lock()
            index._write_manifest(index.manifest)
        return index

    @classmethod
    def open(cls, path: str | Path, analyzer: str | Analyzer | None = None) -> Index:
        """Open the last commit at ``path``. Passing an analyzer checks it matches the index's."""
        path = Path(path)
        manifest = _read_manifest(path)
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

    def _load_commit(self, manifest: dict[str, Any]) -> tuple[dict[str, Any], list[Segment], list[np.ndarray]]:
        """The segments and delete sets of ``manifest``'s commit, or of a newer one if a writer moved on.

        A writer removes the files of older commits only after it has swapped in a newer manifest. So a
        named file that is missing or short while ``manifest.json`` still says the same is corruption; when
        the manifest changed meanwhile, a commit removed it, and the newer commit is loaded instead.
        Segments never change, so those already loaded (here or by an earlier attempt) are reused.
        """
        assert self.path is not None
        loaded = {seg.name: seg for seg in self.segments}
        for _ in range(_LOAD_ATTEMPTS):
            try:
                return (manifest, *self._load_segments(manifest, loaded))
            except CorruptIndexError:
                newer = _read_manifest(self.path)
                if newer == manifest:
                    raise
                if newer["settings"] != manifest["settings"]:
                    raise IndexMismatchError(
                        f"index {self.path} was replaced by one with other settings while it was being opened; "
                        "open it again"
                    ) from None
                manifest = newer
        raise IndexDirectoryError(
            f"index {self.path} got {_LOAD_ATTEMPTS} new commits while one was being loaded; "
            "open it again when the writer commits less often"
        )

    def _load_segments(
        self, manifest: dict[str, Any], loaded: dict[str, Segment]
    ) -> tuple[list[Segment], list[np.ndarray]]:
        """Load what ``manifest`` names (``loaded`` supplies and collects segments by name)."""
        assert self.path is not None
        segments, deleted = [], []
        for entry in manifest["segments"]:
            segment = loaded.get(entry["name"])
            if segment is None:
                segment = loaded[entry["name"]] = Segment.load(
                    self.path / "segments" / entry["name"],
                    self.settings.fields,
                    entry["files"],
                    self.settings.vector_index,
                )
            dead = np.zeros(len(segment), dtype=bool)
            if entry.get("deletes"):
                file = self.path / "deletes" / entry["deletes"]
                try:
                    dead[np.load(file)] = True
                except FileNotFoundError:
                    raise CorruptIndexError(
                        f"delete set {file} named by the manifest is missing; restore the index from a backup"
                    ) from None
            segments.append(segment)
            deleted.append(dead)
        return segments, deleted

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
        manifest = _read_manifest(self.path)
        if manifest["generation"] == self.generation:
            return False
        self._adopt(*self._load_commit(manifest))
        return True

    # -- locking ----------------------------------------------------------------------------------
    def _lock(self) -> None:
        """Take the writer lock (flock: released by the kernel if this process dies)."""
        if self.path is None or self._lock_fd is not None:
            return
        fd = os.open(self.path / "write.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown process"
            os.close(fd)
            raise IndexLockedError(str(self.path), holder) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} since {_now()}".encode(), 0)
        self._lock_fd = fd
        if self.refresh():
            self._pending.clear()

    def close(self) -> None:
        """Release the writer lock; uncommitted changes are dropped."""
        self._pending.clear()
        self._pending_deletes.clear()
        self._pending_vectors.clear()
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

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
            self._id_map = {
                doc_id: (si, row)
                for si, (seg, dead) in enumerate(zip(self.segments, self.deleted))
                for row, doc_id in enumerate(seg.ids)
                if not dead[row]
            }
        return self._id_map

    def get(self, doc_id: str) -> Document | None:
        where = self.id_map().get(doc_id)
        return self.segments[where[0]].document(where[1]) if where else None

    def documents(self) -> Iterable[Document]:
        for seg, dead in zip(self.segments, self.deleted):
            for row in np.flatnonzero(~dead):
                yield seg.document(int(row))

    def info(self) -> dict[str, Any]:
        size = _folder_bytes(self.path) if self.path else 0
        return {
            "path": str(self.path) if self.path else None,
            "documents": len(self),
            "deleted": int(sum(d.sum() for d in self.deleted)),
            "segments": [
                {"name": s.name, "rows": len(s), "deleted": int(d.sum())} for s, d in zip(self.segments, self.deleted)
            ],
            "size_bytes": size,
            "generation": self.generation,
            "format": self.manifest["format"],
            "ragline_version": self.manifest["ragline_version"],
            "created_at": self.manifest["created_at"],
            "committed_at": self.manifest["committed_at"],
            "settings": self.manifest["settings"],
        }

    # -- BM25 search --------------------------------------------------------------------------------
    def search(self, query: str, k: int = 10, filter: FilterLike = None, bm25: BM25Params | None = None) -> list[Hit]:
        """The ``k`` best documents for ``query``; ``filter`` restricts candidates before ranking."""
        ranked = self.search_terms(self.settings.analyzer(query), k, filter, bm25)
        hits = []
        for rank, (si, row, score) in enumerate(ranked, start=1):
            doc = self.segments[si].document(row)
            hits.append(Hit(doc.id, score, rank, doc.title, doc.text, doc.metadata))
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
        if k <= 0:
            return []
        scorer = self._scorer(bm25 or self.settings.bm25)
        vocab = scorer["vocab"]
        gids = np.array([g for g in (vocab.get(t, -1) for t in terms) if g >= 0], dtype=np.int64)
        node = parse_filter(filter)
        found_values, found_seg, found_rows = [], [], []
        one_field = len(self.settings.fields) == 1
        # Masks first: a filter that fails must fail before any score lands in the shared buffers.
        masks = [seg.filter_mask(node) if node is not None else _NO_MASK for seg in self.segments]
        for si, seg in enumerate(self.segments):
            scores = self._buffer(si, len(seg))
            visited = 0
            for fname, fweight in self.settings.fields.items():
                postings = seg.fields[fname]
                g2l = scorer["g2l"][si][fname]
                visited += accumulate(
                    postings.indptr, postings.docs, scorer["weights"][si][fname], g2l, gids, fweight, scores
                )
            if not visited:
                continue
            deleted, allowed = scorer["deleted"][si], masks[si]
            if one_field and visited * 8 < len(seg):  # few postings: revisit them, not every row
                rows, values = select_from_postings(
                    postings.indptr, postings.docs, g2l, gids, scores, deleted, allowed, k
                )
            elif node is not None:
                rows, values = select_from_allowed_rows(scores, seg.filter_rows(node), deleted, k)
            else:
                rows, values = select_from_rows(scores, deleted, _NO_MASK, k)
            if not len(rows):
                continue
            found_values.append(values)
            found_rows.append(rows)
            found_seg.append([si] * len(rows))
        if not found_values:
            return []
        absent = scorer["absent"](gids)
        if len(found_values) == 1:  # one segment: already in order
            si = found_seg[0][0]
            return [(si, r, v + absent) for r, v in zip(found_rows[0].tolist(), found_values[0].tolist())]
        values = np.concatenate(found_values).astype(np.float64) + absent
        order = np.argsort(-values, kind="stable")[:k]  # segments in order, rows ascending: ties stay put
        segs, rows = np.concatenate([np.asarray(s, dtype=np.int64) for s in found_seg]), np.concatenate(found_rows)
        return [(int(segs[i]), int(rows[i]), float(values[i])) for i in order]

    def _buffer(self, si: int, n_rows: int) -> np.ndarray:
        """This thread's score buffer for segment ``si``: all zeros between queries (the kernels reset it)."""
        cache = getattr(self._scratch, "by_segment", None)
        if cache is None or self._scratch.generation != self.generation:
            cache = self._scratch.by_segment = {}
            self._scratch.generation = self.generation
        if si not in cache:
            cache[si] = np.zeros(n_rows, np.float32)
        return cache[si]

    def _stats(self) -> dict[str, Any]:
        """Per-commit collection statistics: global vocabulary, live df and average length per field."""
        if self._collection_stats is not None:
            return self._collection_stats
        vocab: dict[str, int] = {}
        l2g = [
            {
                f: np.array([vocab.setdefault(t, len(vocab)) for t in p.terms], dtype=np.int64)
                for f, p in seg.fields.items()
            }
            for seg in self.segments
        ]
        g2l = []  # per segment and field: global term id -> local term id (-1: absent)
        for seg_l2g in l2g:
            maps = {}
            for f, ids in seg_l2g.items():
                maps[f] = np.full(len(vocab), -1, dtype=np.int32)
                maps[f][ids] = np.arange(len(ids), dtype=np.int32)
            g2l.append(maps)
        n_live = len(self)
        df = {f: np.zeros(len(vocab), dtype=np.int64) for f in self.settings.fields}
        total = dict.fromkeys(self.settings.fields, 0.0)
        for seg, dead, seg_l2g in zip(self.segments, self.deleted, l2g):
            live = ~dead if dead.any() else None
            for f, postings in seg.fields.items():
                np.add.at(df[f], seg_l2g[f], postings.live_df(live))
                total[f] += float(postings.lengths.sum() if live is None else postings.lengths[live].sum())
        avg = {f: total[f] / n_live if n_live else 0.0 for f in self.settings.fields}
        deleted = [d if d.any() else _NO_MASK for d in self.deleted]  # an empty mask: the kernels skip the check
        self._collection_stats = {
            "vocab": vocab, "l2g": l2g, "g2l": g2l, "df": df, "avg": avg, "n": n_live, "deleted": deleted
        }  # fmt: skip
        return self._collection_stats

    def _scorer(self, params: BM25Params) -> dict[str, Any]:
        """IDF per field and the weight of every posting under ``params`` (cached per commit)."""
        if params in self._scorers:
            return self._scorers[params]
        stats = self._stats()
        fields = self.settings.fields
        idfs = {f: idf(params, stats["df"][f], stats["n"]) for f in fields}
        # Each posting's weight times its term's IDF: the search kernel then only adds.
        weights = [
            {
                f: (
                    tf_weight(params, p.tfs, p.lengths[p.docs], stats["avg"][f])
                    * np.repeat(idfs[f][l2g[f]], np.diff(p.indptr))
                ).astype(np.float32)
                for f, p in seg.fields.items()
            }
            for seg, l2g in zip(self.segments, stats["l2g"])
        ]
        absent = absent_weight(params)

        def absent_score(gids: np.ndarray) -> float:
            # bm25l / bm25+: every matching document also earns idf * weight(0) for each query term.
            return sum(w * absent * float(idfs[f][gids].sum()) for f, w in fields.items()) if absent else 0.0

        scorer = {**stats, "idf": idfs, "weights": weights, "absent": absent_score}
        self._scorers[params] = scorer
        return scorer

    def _invalidate(self) -> None:
        self._collection_stats = None
        self._scorers.clear()
        self._vector_masks.clear()
        self._id_map = None

    # -- dense search -----------------------------------------------------------------------------
    @property
    def embedder(self) -> Any:
        """The index's embedder (loaded on first use, wrapped in the on-disk embedding cache)."""
        if self._embedder is None:
            if not self.settings.embedder:
                raise ConfigError(
                    "this index has no embeddings; create it with an embedder (ragline index --embedder minilm)"
                )
            from ragline.models import CachedEmbedder, load_embedder

            self._embedder = CachedEmbedder(load_embedder(self.settings.embedder))
            stamp = self.manifest.get("embedder")
            if stamp and stamp["id"] != self._embedder.id:
                raise IndexMismatchError(
                    f"index {self.path} was embedded with {stamp['id']}, but {self.settings.embedder!r} now "
                    f"loads {self._embedder.id}; reinstall that model or rebuild the index"
                )
        return self._embedder

    def embedding_counts(self) -> dict[str, Any] | None:
        """Passages embedded vs. found in the cache since this handle loaded its embedder (None: not loaded)."""
        e = self._embedder
        return None if e is None else {"computed": e.computed, "cached": e.cached, "id": e.id}

    def _embedder_stamp(self) -> dict[str, Any]:
        e = self._embedder
        return {"name": self.settings.embedder, "id": e.id, "sha256": e.embedder.weights_sha256, "dim": e.dim}

    def _vectors_for(self, documents: list[Document]) -> np.ndarray:
        """One vector per document: given to ``add``, else the embedding of its indexed text."""
        missing = [d for d in documents if d.id not in self._pending_vectors]
        embedded = self.embedder.embed_passages([FIELD_TEXT["body"](d) for d in missing]) if missing else None
        by_id = dict(zip((d.id for d in missing), embedded)) if embedded is not None else {}
        return np.stack([self._pending_vectors.get(d.id, by_id.get(d.id)) for d in documents]).astype(np.float32)

    def search_dense(self, query: str, k: int = 10, filter: FilterLike = None) -> list[tuple[int, int, float]]:
        """(segment, row, cosine) of the ``k`` nearest live rows to the embedded ``query``."""
        return self.search_vector(self.embedder.embed_queries([query])[0], k, filter)

    def search_vector(self, vector: np.ndarray, k: int = 10, filter: FilterLike = None) -> list[tuple[int, int, float]]:
        """Nearest live rows to ``vector``; deletes and ``filter`` are masks inside the ANN search."""
        if k <= 0:
            return []
        node = parse_filter(filter)
        found: list[tuple[int, int, float]] = []
        for si, seg in enumerate(self.segments):
            if seg.ann is None:
                continue
            scores, rows = seg.ann.search(vector[np.newaxis, :], k, self._vector_allowed(si, node))
            found.extend((si, int(r), float(sc)) for sc, r in zip(scores[0], rows[0]) if r >= 0)
        found.sort(key=lambda hit: -hit[2])
        return found[:k]

    def _vector_allowed(self, si: int, node: Any) -> AllowedRows | None:
        """Rows of segment ``si`` a vector search may return: live and passing ``node`` (None: every row).

        Prepared for faiss once (``VectorIndex.allow``) and kept until the next commit or reload, so the
        queries that share a filter do not rebuild and pack it (at 1M rows ~150 us a query otherwise).
        """
        key = (si, node)
        if key in self._vector_masks:
            return self._vector_masks[key]
        dead, seg = self.deleted[si], self.segments[si]
        mask = None if node is None else seg.filter_mask(node)
        if dead.any():
            mask = ~dead if mask is None else mask & ~dead
        allowed = None if mask is None else seg.ann.allow(mask)
        if len(self._vector_masks) >= _KEPT_VECTOR_MASKS:
            self._vector_masks.clear()  # a bound on memory: masks are cheap to build again
        self._vector_masks[key] = allowed
        return allowed

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
                doc = _DefaultAclDocument.stamp(doc, default_acl)
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
        live = self.id_map()
        for doc_id in dict.fromkeys(ids):  # each id once, in order
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
        report, seen, live = SyncReport(), set(), self.id_map()
        changed = []
        for doc in documents:
            seen.add(doc.id)
            where = live.get(doc.id)
            if where is None:
                report.added += 1
                changed.append(doc)
            elif self.segments[where[0]].hashes[where[1]] != doc.hash:
                report.updated += 1
                changed.append(doc)
            else:
                report.unchanged += 1
                self._pending.pop(doc.id, None)  # the committed version is the one wanted: unstage
                self._pending_deletes.discard(doc.id)
        self.add(changed)
        if prune:
            for doc_id in [d for d in self._pending if d not in seen and d not in keep]:
                del self._pending[doc_id]  # staged earlier, but not in the set to mirror
            gone = [doc_id for doc_id in live if doc_id not in seen and _document_of(doc_id) not in keep]
            report.deleted = self.delete(gone)
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
        live = self.id_map()
        for doc_id in self._pending_deletes | (self._pending.keys() & live.keys()):
            si, row = live[doc_id]
            deleted[si][row] = True
        segments = list(self.segments)
        if self._pending:
            documents = list(self._pending.values())
            segments.append(
                Segment.build(
                    self._segment_name(gen),
                    documents,
                    self.settings.analyzer,
                    self.settings.fields,
                    vectors=self._vectors_for(documents) if self.settings.embedder else None,
                    vector_index=self.settings.vector_index,
                )
            )
            deleted.append(np.zeros(len(segments[-1]), dtype=bool))
        self._publish(gen, segments, deleted)
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
        live_counts = [len(s) - int(d.sum()) for s, d in zip(self.segments, self.deleted)]
        empties = [i for i, n in enumerate(live_counts) if n == 0]
        order = sorted((i for i in range(len(self.segments)) if live_counts[i]), key=lambda i: live_counts[i])
        n_merge = max(0, len(order) - max(max_segments, 1) + 1) if len(order) > max_segments else 0
        chosen = set(order[:n_merge]) if n_merge >= 2 else set()
        if expunge_deletes:
            chosen |= {i for i in order if self.deleted[i].any()}
        chosen = sorted(chosen)
        if not chosen and not empties:
            return self.generation
        gen = self.generation + 1
        keep = [i for i in range(len(self.segments)) if i not in chosen and i not in empties]
        segments = [self.segments[i] for i in keep]
        deleted = [self.deleted[i] for i in keep]
        if chosen:
            merged = _merge_segments(
                self._segment_name(gen),
                [(self.segments[i], ~self.deleted[i]) for i in chosen],
                self.settings.vector_index,
            )
            segments.append(merged)
            deleted.append(np.zeros(len(merged), dtype=bool))
        self._publish(gen, segments, deleted)
        return self.generation

    def _segment_name(self, gen: int) -> str:
        return f"seg-{gen:06d}-{secrets.token_hex(3)}"

    def _publish(self, gen: int, segments: list[Segment], deleted: list[np.ndarray]) -> None:
        """Write what is new, swap the manifest, then adopt the new state (and clean up)."""
        manifest = dict(self.manifest, generation=gen, committed_at=_now(), ragline_version=__version__)
        if self._embedder is not None:
            manifest["embedder"] = self._embedder_stamp()
        entries, old = [], {e["name"]: e for e in self.manifest["segments"]}
        for seg, dead in zip(segments, deleted):
            entry = dict(old.get(seg.name) or {"name": seg.name})
            if self.path is not None:
                if seg.name not in old:
                    tmp = self.path / "segments" / f"{seg.name}.tmp"
                    entry["files"] = seg.write(tmp)
                    tmp.rename(self.path / "segments" / seg.name)
                    _fsync_dir(self.path / "segments")
                n_dead = int(dead.sum())
                if n_dead and n_dead != old.get(seg.name, {}).get("n_deleted", 0):
                    (self.path / "deletes").mkdir(exist_ok=True)
                    entry["deletes"] = f"{seg.name}.{gen:06d}.npy"
                    with open(self.path / "deletes" / entry["deletes"], "wb") as fh:
                        np.save(fh, np.flatnonzero(dead).astype(np.int32))
                        fh.flush()
                        os.fsync(fh.fileno())
                elif not n_dead:
                    entry.pop("deletes", None)
            entry["rows"], entry["n_deleted"] = len(seg), int(dead.sum())
            entries.append(entry)
        manifest["segments"] = entries
        if self.path is not None:
            self._write_manifest(manifest)
        self._adopt(manifest, segments, deleted)
        if self.path is not None:
            self._collect_garbage()

    def _write_manifest(self, manifest: dict[str, Any]) -> None:
        assert self.path is not None
        tmp = self.path / f"{MANIFEST}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path / MANIFEST)
        _fsync_dir(self.path)

    def _collect_garbage(self) -> None:
        """Remove segment folders and delete sets that the current manifest does not name."""
        assert self.path is not None
        names = {e["name"] for e in self.manifest["segments"]}
        deletes = {e.get("deletes") for e in self.manifest["segments"]}
        for folder in (self.path / "segments").glob("*") if (self.path / "segments").exists() else []:
            if folder.name not in names:
                shutil.rmtree(folder, ignore_errors=True)
        for file in (self.path / "deletes").glob("*") if (self.path / "deletes").exists() else []:
            if file.name not in deletes:
                file.unlink(missing_ok=True)


def _document_of(doc_id: str) -> str:
    """The document a chunk id ``<document>#<n>`` belongs to (a document id is its own)."""
    head, sep, tail = doc_id.rpartition("#")
    return head if sep and tail.isdigit() else doc_id


def _merge_segments(name: str, parts: list[tuple[Segment, np.ndarray]], vector_index: str) -> Segment:
    """One segment holding the live rows of ``parts`` (segment, live mask), in order."""
    documents: list[Document] = []
    ids, hashes, sources = [], [], []
    for seg, live in parts:
        for row in np.flatnonzero(live):
            documents.append(seg.document(int(row)))
            ids.append(seg.ids[row])
            hashes.append(seg.hashes[row])
            sources.append(seg.sources[row])
    fields = {}
    for fname in parts[0][0].fields:
        vocab: dict[str, int] = {}
        term_parts, row_parts, tf_parts, lengths = [], [], [], []
        offset = 0
        for seg, live in parts:
            p: FieldPostings = seg.fields[fname]
            local_to_new = np.array([vocab.setdefault(t, len(vocab)) for t in p.terms], dtype=np.int64)
            new_row = np.cumsum(live) - 1 + offset  # old row -> new row (valid where live)
            owner = np.repeat(np.arange(len(p.terms)), np.diff(p.indptr))
            keep = live[p.docs]
            term_parts.append(local_to_new[owner[keep]])
            row_parts.append(new_row[p.docs[keep]])
            tf_parts.append(np.asarray(p.tfs)[keep])
            lengths.append(np.asarray(p.lengths)[live])
            offset += int(live.sum())
        terms, rows, tfs = (np.concatenate(x) for x in (term_parts, row_parts, tf_parts))
        order = np.lexsort((rows, terms))
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=len(vocab)), out=indptr[1:])
        fields[fname] = FieldPostings(
            list(vocab), indptr, rows[order].astype(np.int32), tfs[order].astype(np.float32), np.concatenate(lengths)
        )
    vectors = ann = None
    if parts[0][0].vectors is not None:
        vectors = np.concatenate([np.asarray(seg.vectors)[live] for seg, live in parts])
        ann = build_vector_index(vectors, vector_index)
    return Segment(name, ids, hashes, sources, fields, documents=documents, vectors=vectors, ann=ann)
