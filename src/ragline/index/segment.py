"""An immutable segment: the postings, lengths and stored documents of one batch of documents.

Segments are written once and never changed (Lucene's design): adding documents writes a new
segment, deleting marks rows in a delete set kept beside it, and ``merge`` rewrites live rows into
a fresh segment. Postings are term-major CSR arrays per field (``indptr``, ``docs``, ``tfs``), so a
query term's postings are one contiguous slice and scoring is vectorized over it.
"""

from __future__ import annotations

import json
import mmap
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import ConfigError, CorruptIndexError
from ragline.fsutil import fsync_file
from ragline.index.filters import Column, Node, evaluate
from ragline.index.postings import FieldPostings
from ragline.text import Analyzer
from ragline.types import Document

# What text each indexable field takes from a document. ``body`` (title + text in one field) is
# Pyserini's "flat" indexing, the setting of the published BEIR BM25 baselines.
FIELD_TEXT: dict[str, Callable[[Document], str]] = {
    "body": lambda d: d.index_text if d.index_text is not None else f"{d.title}\n{d.text}" if d.title else d.text,
    "title": lambda d: d.title,
    "text": lambda d: d.index_text if d.index_text is not None else d.text,
}
# The same texts as parts that the analyzer reads in turn (``Analyzer.term_counts``): "title\ntext" is
# never built, which for a large document is a second copy of it.
FIELD_PARTS: dict[str, Callable[[Document], tuple[str, ...]]] = {
    "body": lambda d: (d.index_text,) if d.index_text is not None else (d.title, d.text) if d.title else (d.text,),
    "title": lambda d: (d.title,),
    "text": lambda d: (d.index_text if d.index_text is not None else d.text,),
}


def check_fields(fields: dict[str, float]) -> dict[str, float]:
    unknown = sorted(set(fields) - set(FIELD_TEXT))
    if unknown or not fields:
        raise ConfigError(f"unknown or no fields {unknown}; index fields are chosen from {sorted(FIELD_TEXT)}")
    return {name: float(weight) for name, weight in fields.items()}


JSON_PIECE_CHARS = 1 << 20


def json_line_pieces(stored: dict[str, str], piece_chars: int = JSON_PIECE_CHARS) -> Iterator[bytes]:
    """``json.dumps(stored, ensure_ascii=False)`` and a newline, UTF-8, byte for byte, in pieces.

    A large document is encoded ``piece_chars`` characters at a time, so its JSON copy and the bytes of
    that copy (twice its size) never exist whole. JSON escapes each character on its own, so the pieces
    of a string join into its encoding.
    """
    if sum(map(len, stored.values())) <= piece_chars:
        yield json.dumps(stored, ensure_ascii=False).encode() + b"\n"
        return
    yield b"{"
    for n, (key, value) in enumerate(stored.items()):
        yield ((", " if n else "") + json.dumps(key, ensure_ascii=False) + ': "').encode()
        for start in range(0, len(value), piece_chars):
            yield json.dumps(value[start : start + piece_chars], ensure_ascii=False)[1:-1].encode()
        yield b'"'
    yield b"}\n"


def build_vector_index(vectors: np.ndarray, spec: str) -> Any:
    """A ``VectorIndex`` of ``vectors`` (faiss is imported only when an index has vectors)."""
    from ragline.index.vectors import VectorIndex

    return VectorIndex.build(vectors, spec)


class Segment:
    """Documents ``0..n-1`` of one commit: ids, hashes, postings per field, stored text and metadata."""

    def __init__(
        self,
        name: str,
        ids: list[str],
        hashes: list[str] | None,
        sources: list[str | None],
        fields: dict[str, FieldPostings],
        documents: Sequence[Document] | None = None,
        folder: Path | None = None,
        vectors: np.ndarray | None = None,
        ann: Any = None,
        metadata: list[dict[str, Any]] | None = None,
    ) -> None:
        self.name, self.ids, self._hashes, self.sources, self.fields = name, ids, hashes, sources, fields
        self.folder = folder
        self.vectors, self.ann = vectors, ann  # dense embeddings (rows x dim) and their VectorIndex
        self._documents = documents  # in memory until written; then read back through the mmap
        self._offsets: np.ndarray | None = None
        self._map: mmap.mmap | None = None
        self._metadata = metadata  # None: taken from ``documents`` or read from the folder when needed
        self._columns: dict[str, Column] = {}
        self._masks: OrderedDict[Node, tuple[np.ndarray, np.ndarray]] = OrderedDict()

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def hashes(self) -> list[str]:
        """Each row's content hash (``Document.hash``): a segment built in memory hashes its documents when
        first asked (writing it, a sync, a merge), so an in-memory index that is only searched never does."""
        if self._hashes is None:
            assert self._documents is not None, "a segment without documents is built with its hashes"
            self._hashes = [d.hash for d in self._documents]
        return self._hashes

    @property
    def ann(self) -> Any:
        """The VectorIndex over ``vectors`` (None without vectors). A segment read from disk maps the faiss
        file when it opens and reads it here, at the first dense search, so a BM25-only reader never loads
        faiss or the graph."""
        mapped = self._ann_file
        if self._ann is None and mapped is not None:
            from ragline.index.vectors import VectorIndex

            assert self.folder is not None
            self._ann = VectorIndex.load(self.folder / "vectors.faiss", mapped[1], mapped=mapped[0])
            self._ann_file = None
        return self._ann

    @ann.setter
    def ann(self, value: Any) -> None:
        self._ann = value
        self._ann_file: tuple[mmap.mmap, str] | None = None  # set by _read: the mapped file and its config

    @property
    def vector_metric(self) -> str:
        """The metric its vectors are searched by, from the vector index's settings (faiss not loaded)."""
        if self._ann is not None:
            return self._ann.config.metric
        from ragline.index.vector_config import as_config

        assert self._ann_file is not None, "a segment without vectors has no vector metric"
        return as_config(self._ann_file[1]).metric

    # -- building and storing -----------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        name: str,
        documents: Sequence[Document],
        analyzer: Analyzer,
        fields: dict[str, float],
        vectors: np.ndarray | None = None,
        vector_index: str = "hnsw",
    ) -> Segment:
        """Analyze ``documents`` into a new in-memory segment; ``vectors`` (one row each) get an ANN index."""
        postings = {f: FieldPostings.analyze(analyzer, map(FIELD_PARTS[f], documents)) for f in fields}
        return cls(
            name,
            ids=[d.id for d in documents],
            hashes=None,  # computed when first needed
            sources=[d.source for d in documents],
            fields=postings,
            documents=list(documents),
            vectors=vectors,
            ann=build_vector_index(vectors, vector_index) if vectors is not None else None,
        )

    def write(self, folder: Path) -> dict[str, int]:
        """Write every file into ``folder`` (fsynced); returns file name -> size for the manifest."""
        folder.mkdir(parents=True)
        catalog = {"ids": self.ids, "hashes": self.hashes, "sources": self.sources}
        (folder / "catalog.json").write_text(json.dumps(catalog, ensure_ascii=False), "utf-8")
        offsets = np.zeros(len(self) + 1, dtype=np.int64)
        metadata = []
        with open(folder / "docs.jsonl", "wb") as out:
            for i in range(len(self)):
                doc = self.document(i)
                metadata.append(doc.metadata)
                stored = {"title": doc.title, "text": doc.text}
                if doc.index_text is not None:
                    stored["index_text"] = doc.index_text
                if doc.parent is not None:
                    stored["parent"] = doc.parent
                written = 0
                for piece in json_line_pieces(stored):
                    out.write(piece)
                    written += len(piece)
                offsets[i + 1] = offsets[i] + written
        np.save(folder / "docs.offsets.npy", offsets)
        (folder / "metadata.json").write_text(json.dumps(metadata, ensure_ascii=False), "utf-8")
        for field, postings in self.fields.items():
            postings.save(folder, field)
        if self.vectors is not None:
            np.save(folder / "vectors.npy", np.asarray(self.vectors, dtype=np.float32))
            self.ann.save(folder / "vectors.faiss")
        sizes = {}
        for path in sorted(folder.iterdir()):
            with open(path, "rb") as fh:
                fsync_file(fh)
            sizes[path.name] = path.stat().st_size
        return sizes

    @classmethod
    def load(cls, folder: Path, fields: dict[str, float], files: dict[str, int], vector_index: str = "hnsw") -> Segment:
        """Read a written segment; every file is read or mapped here, so none is opened after this returns."""
        for name, size in files.items():
            path = folder / name
            if not path.is_file() or path.stat().st_size != size:
                raise CorruptIndexError(
                    f"segment file {path} is missing or has the wrong size (expected {size} bytes); "
                    "restore the index from a backup or rebuild it"
                )
        try:
            return cls._read(folder, fields, files, vector_index)
        except FileNotFoundError as error:  # removed after the check above (a commit collected it)
            raise CorruptIndexError(
                f"segment file {error.filename} is missing; restore the index from a backup or rebuild it"
            ) from None
        except (ValueError, KeyError, TypeError) as error:  # a damaged catalog or metadata file (bad bytes, JSON)
            raise CorruptIndexError(
                f"segment {folder} cannot be read ({type(error).__name__}: {error}); restore the index from a "
                "backup or rebuild it"
            ) from None

    def serve_from(self, folder: Path) -> None:
        """After ``write``: read postings, vectors and stored text from the files in ``folder`` from now
        on, so what was built in memory for them can be let go. Ids, hashes and metadata stay as they
        are (reading them back would make a second copy while the documents are still held)."""
        self._metadata, self._hashes = self.metadata, self.hashes
        self.fields = {name: FieldPostings.load(folder, name) for name in self.fields}
        if self.vectors is not None:
            self.vectors = np.load(folder / "vectors.npy", mmap_mode="r")
        self._offsets = np.load(folder / "docs.offsets.npy")
        with open(folder / "docs.jsonl", "rb") as fh:
            self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if self._offsets[-1] else None
        self.folder, self._documents = folder, None

    @classmethod
    def _read(cls, folder: Path, fields: dict[str, float], files: dict[str, int], vector_index: str) -> Segment:
        catalog = json.loads((folder / "catalog.json").read_text("utf-8"))
        postings = {f: FieldPostings.load(folder, f) for f in fields}
        segment = cls(folder.name, catalog["ids"], catalog["hashes"], catalog["sources"], postings, folder=folder)
        segment._offsets = np.load(folder / "docs.offsets.npy")
        # Read now, not on first use: a merge by another writer may remove this folder while we serve.
        segment._metadata = json.loads((folder / "metadata.json").read_text("utf-8"))
        if "vectors.npy" in files:
            segment.vectors = np.load(folder / "vectors.npy", mmap_mode="r")
            with open(folder / "vectors.faiss", "rb") as fh:
                segment._ann_file = (mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ), vector_index)
        with open(folder / "docs.jsonl", "rb") as fh:
            # The mapping outlives an unlink by a later merge, so an open reader keeps working.
            segment._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if segment._offsets[-1] else None
        return segment

    # -- stored documents and metadata ----------------------------------------------------------------
    def document(self, row: int) -> Document:
        if self._documents is not None:
            return self._documents[row]
        assert self._offsets is not None and self._map is not None
        try:
            raw = json.loads(self._map[self._offsets[row] : self._offsets[row + 1]])
            raw["text"], raw["title"]  # noqa: B018 (a record without them is damaged too)
        except (ValueError, KeyError, TypeError) as error:  # bad bytes (UnicodeDecodeError) or JSON
            where = self.folder / "docs.jsonl" if self.folder is not None else "docs.jsonl"
            raise CorruptIndexError(
                f"{where}: the stored text of {self.ids[row]!r} cannot be read ({type(error).__name__}); "
                "restore the index from a backup or rebuild it"
            ) from None
        return Document(
            self.ids[row],
            raw["text"],
            raw["title"],
            self.metadata[row],
            self.sources[row],
            raw.get("index_text"),
            raw.get("parent"),
        )

    @property
    def metadata(self) -> list[dict[str, Any]]:
        if self._metadata is None:
            if self._documents is not None:
                self._metadata = [d.metadata for d in self._documents]
            else:
                assert self.folder is not None
                self._metadata = json.loads((self.folder / "metadata.json").read_text("utf-8"))
        return self._metadata

    def column(self, field: str) -> Column:
        if field not in self._columns:
            self._columns[field] = Column([m.get(field) for m in self.metadata])
        return self._columns[field]

    def filter_mask(self, node: Node) -> np.ndarray:
        """Rows that satisfy a filter, as a boolean mask; cached, since a segment never changes."""
        return self._filtered(node)[0]

    def filter_rows(self, node: Node) -> np.ndarray:
        """Rows that satisfy a filter, ascending (cached with the mask)."""
        return self._filtered(node)[1]

    def _filtered(self, node: Node) -> tuple[np.ndarray, np.ndarray]:
        found = self._masks.get(node)
        if found is None:
            mask = evaluate(node, self.column, len(self))
            found = self._masks[node] = (mask, np.flatnonzero(mask))
            if len(self._masks) > 64:
                self._masks.popitem(last=False)
        else:
            self._masks.move_to_end(node)
        return found
