"""Freshness: does an index still match the documents on disk and the pipeline that reads it?

Two questions, both answered without writing anything:

* **documents** (``compare_documents``, ``folder_status``): which documents were added, changed or
  removed on disk since they were indexed. The folder is loaded and chunked as ``ragline index``
  would (the chunker and context stamped in the index) and each chunk compared with the indexed one
  by id and content hash, exactly as ``Index.sync`` decides what to write; ``ragline index
  --dry-run`` and ``ragline status`` print that plan. A chunk context written by an LLM is not
  recomputed (it costs a model call per chunk): those chunks are compared on their text, title and
  metadata instead.
* **pipeline drift** (``pipeline_drift``): the analyzer, chunker, contextualizer and embedder of a
  config against the index's stamps, plus the sha256 of the embedder's weights on disk against the
  one stamped at embedding time, each with what must be redone (re-index, re-embed).

``stale_sources(index, hits)`` re-reads only the files behind some hits (an answer's citations) and
says which changed since indexing. ``is_stale(index, folder)`` is the yes/no a health check needs.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragline.fsutil import save_memo, stat_signature
from ragline.types import Document, content_hash, document_id_of


@dataclass
class DocumentStatus:
    """One document whose indexed chunks differ from what its source gives now."""

    doc_id: str
    status: str  # added | changed | removed | unreadable (kept as indexed: the file failed to load)
    source: str | None = None
    chunks: int = 0  # chunks to write (added, changed) or to delete (removed)

    def to_dict(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "status": self.status, "source": self.source, "chunks": self.chunks}


@dataclass
class FreshnessReport:
    """What a sync would do, by chunk and by document (nothing written)."""

    added: int = 0  # chunks
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    documents: list[DocumentStatus] = field(default_factory=list)
    drift: list[Drift] = field(default_factory=list)

    @property
    def stale(self) -> bool:
        return bool(self.added or self.updated or self.deleted or self.drift)

    def by_status(self, status: str) -> list[DocumentStatus]:
        return [d for d in self.documents if d.status == status]

    def to_dict(self) -> dict[str, Any]:
        counts = {s: len(self.by_status(s)) for s in ("added", "changed", "removed", "unreadable")}
        chunks = {"added": self.added, "updated": self.updated, "deleted": self.deleted, "unchanged": self.unchanged}
        changes, drift = [d.to_dict() for d in self.documents], [d.to_dict() for d in self.drift]
        return {"stale": self.stale, "chunks": chunks, "documents": counts, "changes": changes, "drift": drift}


@dataclass(frozen=True)
class Drift:
    """A pipeline setting that differs from the index's stamp, and what that costs."""

    setting: str  # analyzer | chunker | context | embedder | weights
    indexed: Any
    configured: Any
    redo: str  # what must be redone: "re-index" (re-analyze, re-chunk) or "re-embed"

    def to_dict(self) -> dict[str, Any]:
        return {"setting": self.setting, "indexed": self.indexed, "configured": self.configured, "redo": self.redo}


def _text_key(doc: Document, default_acl: Sequence[str] | None) -> str:
    """A digest of what a chunk says (not its context prefix), with the index's default acl applied."""
    metadata = dict(doc.metadata)
    if default_acl is not None and "acl" not in metadata:
        metadata["acl"] = list(default_acl)
    return content_hash("\x00".join((doc.title, doc.text, repr(sorted(metadata.items())))))


def chunk_like_index(index: Any, documents: Sequence[Document]) -> list[Document]:
    """``documents`` cut and contextualized with the chunker and context stamped in ``index``.

    An LLM context is left out (see the module note): compare those units with ``text_only=True``.
    """
    settings = index.settings
    if settings.chunker == "none":
        return list(documents)
    from ragline.ingest.pipeline import IngestConfig, chunk_documents

    context = "none" if settings.context in ("llm", "late") else settings.context
    units, _ = chunk_documents(list(documents), IngestConfig(settings.chunker, context))
    return units


def compare_documents(
    index: Any, units: Iterable[Document], prune: bool = True, keep: Collection[str] = (), text_only: bool = False
) -> FreshnessReport:
    """What ``index.sync(units, prune, keep)`` would write, by chunk and by document, without writing it.

    ``text_only`` compares chunks on text, title and metadata (for contexts not recomputed here).
    """
    report = FreshnessReport()
    live = index.id_map()
    default_acl = index.settings.default_acl
    touched: dict[str, DocumentStatus] = {}
    seen: set[str] = set()
    known_docs = {document_id_of(i) for i in live}

    def mark(doc_id: str, status: str, source: str | None) -> None:
        entry = touched.setdefault(doc_id, DocumentStatus(doc_id, status, source))
        entry.chunks += 1
        if entry.source is None:
            entry.source = source

    for unit in units:
        seen.add(unit.id)
        where = live.get(unit.id)
        doc = document_id_of(unit.id)
        if where is None:
            report.added += 1
            mark(doc, "changed" if doc in known_docs else "added", unit.source)
            continue
        segment = index.segments[where[0]]
        if text_only:
            same = _text_key(segment.document(where[1]), None) == _text_key(unit, default_acl)
        else:
            same = segment.hashes[where[1]] == unit.hash
        if same:
            report.unchanged += 1
        else:
            report.updated += 1
            mark(doc, "changed", unit.source)
    new_docs = {document_id_of(i) for i in seen}
    if prune:
        for chunk_id, (si, row) in live.items():
            doc = document_id_of(chunk_id)
            if chunk_id in seen:
                continue
            source = index.segments[si].sources[row]
            if doc in keep:
                touched.setdefault(doc, DocumentStatus(doc, "unreadable", source))
                continue
            report.deleted += 1
            mark(doc, "changed" if doc in new_docs else "removed", source)
    report.documents = sorted(touched.values(), key=lambda d: (d.status, d.doc_id))
    return report


def folder_status(
    index: Any, source: str | Path, config: Any = None, max_bytes: int = 20 * 1024 * 1024, follow_links: bool = False
) -> FreshnessReport:
    """Documents changed, added or removed in ``source`` since ``index`` was synced, and ``config``'s drift."""
    path = Path(source)
    loaded = load_source(path, max_bytes, follow_links)
    units = chunk_like_index(index, loaded.documents)
    one_file = path.is_file() and path.suffix != ".jsonl"
    report = compare_documents(
        index, units, prune=not one_file, keep=loaded.keep, text_only=index.settings.context in ("llm", "late")
    )
    if config is not None:
        report.drift = pipeline_drift(index, config)
    return report


def load_source(source: Path, max_bytes: int, follow_links: bool = False) -> Any:
    """A .jsonl corpus, a BEIR folder (corpus.jsonl), a folder of documents, or one document file (``LoadReport``)."""
    from ragline.ingest import load_jsonl_corpus, load_path

    if source.is_file() and source.suffix == ".jsonl":
        return load_jsonl_corpus(source)
    if (source / "corpus.jsonl").is_file():
        return load_jsonl_corpus(source / "corpus.jsonl")
    return load_path(source, max_bytes=max_bytes, follow_links=follow_links)


def is_stale(index: Any, source: str | Path, config: Any = None) -> bool:
    """Whether ``index`` lags the documents in ``source`` (or, given ``config``, the pipeline)."""
    return folder_status(index, source, config).stale


def pipeline_drift(index: Any, config: Any) -> list[Drift]:
    """Where ``config`` (a ``PipelineConfig``) differs from what ``index`` was built with, and the cost."""
    from ragline.text import get_analyzer

    settings, drift = index.settings, []
    wanted = get_analyzer(config.index.analyzer).to_dict()
    if wanted != settings.analyzer.to_dict():
        drift.append(Drift("analyzer", settings.analyzer.to_dict(), wanted, "re-index"))
    if settings.chunker != "none" and config.ingest.chunker != settings.chunker:
        drift.append(Drift("chunker", settings.chunker, config.ingest.chunker, "re-index and re-embed"))
    if settings.chunker != "none" and config.ingest.context != settings.context:
        drift.append(Drift("context", settings.context, config.ingest.context, "re-index and re-embed"))
    configured = None if str(config.index.embedder).lower() == "none" else config.index.embedder
    if configured and settings.embedder and configured != settings.embedder:
        drift.append(Drift("embedder", settings.embedder, configured, "re-embed"))
    weights = weights_drift(index)
    if weights is not None:
        drift.append(weights)
    return drift


def weights_drift(index: Any) -> Drift | None:
    """The embedder's weights on disk against the sha256 stamped when the index was embedded (None: same)."""
    stamp = index.manifest.get("embedder") or {}
    if not index.settings.embedder or not stamp.get("sha256"):
        return None
    from ragline.errors import RaglineError
    from ragline.models.registry import resolve_embedder
    from ragline.models.weights import sha256_file

    try:
        spec = resolve_embedder(index.settings.embedder)
        actual = sha256_file(spec.weights) if spec.weights else None
    except (RaglineError, OSError) as error:
        return Drift("weights", stamp["sha256"], f"unavailable: {error}", "re-embed")
    if actual is None or actual == stamp["sha256"]:
        return None
    return Drift("weights", stamp["sha256"], actual, "re-embed")


@dataclass(frozen=True)
class StaleSource:
    doc_id: str
    source: str
    status: str  # changed | removed | unreadable (the file or its folder cannot be read now)

    def to_dict(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "source": self.source, "status": self.status}


def stale_sources(index: Any, hits: Iterable[Any], roots: Sequence[str | Path] | None = None) -> list[StaleSource]:
    """The files behind ``hits`` that changed (or vanished) since they were indexed.

    A hit's source path is relative to the folder it was indexed from: ``roots`` (default: the sources
    ``ragline index`` recorded for this index). Hits with no file behind them (a corpus) are skipped. A
    file that cannot be looked at now (its folder lost its permissions) is ``unreadable``: a warning, and
    the search or answer goes on.
    """
    roots = [Path(r) for r in (recorded_sources(index.path) if roots is None else roots)]
    by_file: dict[str, set[str]] = {}
    for hit in hits:
        where = index.id_map().get(hit.doc_id)
        source = index.segments[where[0]].sources[where[1]] if where else None
        if source:
            by_file.setdefault(source, set()).add(hit.document_id)
    stale: list[StaleSource] = []
    verified = VerifiedFiles.of(index)
    for source, docs in by_file.items():
        try:
            stale += _stale_file(index, source, docs, roots, verified)
        except OSError as error:  # a folder made unreadable since it was indexed (PermissionError)
            where = error.filename if isinstance(error.filename, str) else source
            stale += [StaleSource(d, where, "unreadable") for d in sorted(docs)]
    verified.save()
    return stale


def _stale_file(
    index: Any, source: str, docs: set[str], roots: Sequence[Path], verified: VerifiedFiles
) -> list[StaleSource]:
    """The stale sources among ``docs``, all from the file indexed as ``source`` (see ``stale_sources``)."""
    path = _resolve(source, roots)
    if path is None:
        return []
    if not path.is_file():
        return [StaleSource(d, str(path), "removed") for d in sorted(docs)]
    if verified.unchanged(path):
        return []
    from ragline.errors import RaglineError
    from ragline.ingest.loaders import load_file

    try:
        loaded = [load_file(path, Path(source))]
    except (RaglineError, OSError):
        return [StaleSource(d, str(path), "changed") for d in sorted(docs)]
    units = [u for u in chunk_like_index(index, loaded) if document_id_of(u.id) in docs]
    wanted = {i for i in index.id_map() if document_id_of(i) in docs}
    sub = compare_documents(
        _Subset(index, wanted), units, prune=True, text_only=index.settings.context in ("llm", "late")
    )
    changed = {d.doc_id for d in sub.documents if d.status != "unreadable"}
    if not changed and not any(d.status == "unreadable" for d in sub.documents):
        verified.remember(path)
    return [StaleSource(d, str(path), "changed") for d in sorted(docs & changed)]


class VerifiedFiles:
    """Files known equal to this index generation's chunks, by stat signature, under ``$RAGLINE_CACHE``.

    Re-reading and re-chunking a cited file on every query cost a one-query command the import of every
    loader. ``ragline index`` records the signature each file had before it was read for the commit it
    made, and the stale-source check records the files it re-read and found fresh; a file whose size,
    mtime, ctime and inode still match, at the same index generation, is fresh without reading it (git's
    index does the same). A file modified within two seconds of being recorded is not remembered (git's
    "racy" rule: a same-size edit in the same timestamp tick keeps the signature). A new commit starts a
    new memo; any other change to a file is read and compared.
    """

    RACY_SECONDS = 2.0

    def __init__(self, index_path: str | Path | None, generation: int) -> None:
        import hashlib
        import json

        from ragline.paths import cache_root

        self.file: Path | None = None
        self.generation = generation
        self.files: dict[str, list[int]] = {}
        self.dirty = False
        if index_path is None:  # an in-memory index: nothing to key a memo by
            return
        key = hashlib.sha256(str(Path(index_path).resolve()).encode()).hexdigest()[:24]
        self.file = cache_root() / "freshness" / f"{key}.json"
        try:
            memo = json.loads(self.file.read_text("utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(memo, dict) and memo.get("generation") == generation and isinstance(memo.get("files"), dict):
            self.files = memo["files"]

    @classmethod
    def of(cls, index: Any) -> VerifiedFiles:
        return cls(getattr(index, "path", None), int(index.generation))

    def unchanged(self, path: Path) -> bool:
        return self.file is not None and self.files.get(str(path.resolve())) == stat_signature(path)

    def remember(self, path: str | Path, signature: list[int] | None = None) -> None:
        """Record ``path`` as fresh with ``signature`` (default: its signature now)."""
        import time

        signature = stat_signature(path) if signature is None else signature
        if self.file is not None and time.time_ns() - max(signature[1], signature[2]) > self.RACY_SECONDS * 1e9:
            self.files[str(Path(path).resolve())] = list(signature)
            self.dirty = True

    def save(self) -> None:
        """Write the memo (atomic replace); a read-only cache only means the files are read next time."""
        if self.file is not None and self.dirty:
            save_memo(self.file, {"generation": self.generation, "files": self.files})


def _resolve(source: str, roots: Sequence[Path]) -> Path | None:
    """The file on disk for a source path recorded relative to one of ``roots`` (None: not found under any)."""
    for root in roots:
        if root.is_dir() or not root.suffix:
            candidate = root / source
            if candidate.is_file() or len(roots) == 1:
                return candidate
        elif root.name == source:
            return root
    return None


SOURCES_FILE = "sources.json"  # beside the manifest: where `ragline index` read from (absolute paths)


def record_source(index_path: str | Path, source: str | Path) -> None:
    """Remember that ``index_path`` was synced from ``source``: a folder replaces the list, a file joins it."""
    import json
    import os

    folder, source = Path(index_path), Path(source).resolve()
    known = [] if source.is_dir() else [s for s in recorded_sources(folder) if Path(s).exists()]
    paths = list(dict.fromkeys([*known, str(source)]))
    tmp = folder / f"{SOURCES_FILE}.tmp"
    tmp.write_text(json.dumps({"sources": paths}, indent=1), "utf-8")
    os.replace(tmp, folder / SOURCES_FILE)


def recorded_sources(index_path: str | Path | None) -> list[str]:
    """The sources ``ragline index`` recorded for ``index_path`` (empty when none, or unreadable)."""
    import json

    if index_path is None:
        return []
    try:
        data = json.loads((Path(index_path) / SOURCES_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return []
    return [str(s) for s in data.get("sources", []) if isinstance(s, str)] if isinstance(data, dict) else []


class _Subset:
    """An index seen through some of its live ids (for comparing one file's chunks alone)."""

    def __init__(self, index: Any, ids: set[str]) -> None:
        self.settings, self.segments = index.settings, index.segments
        self._ids = {i: w for i, w in index.id_map().items() if i in ids}

    def id_map(self) -> dict[str, tuple[int, int]]:
        return self._ids


def stale_files(index: Any) -> list[dict[str, Any]]:
    """``{"path", "reason", "doc_id"}`` for each file that changed, appeared or vanished since ``index`` was synced.

    The folders are the ones ``ragline index`` recorded for the index; an index with none (built from
    the Python API or a corpus) reports nothing stale.
    """
    out = []
    for source in recorded_sources(getattr(index, "path", None)):
        for document in folder_status(index, source).documents:
            out.append(
                {"path": document.source or document.doc_id, "reason": document.status, "doc_id": document.doc_id}
            )
    return out
