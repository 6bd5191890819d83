"""The indexing pipeline: documents -> chunks -> context -> an index, configured by specs.

``IngestConfig("structure:max_words=200", "breadcrumb")`` chunks each document, contextualizes its
chunks, and hands the chunks (and, for late chunking, their vectors) to an ``Index``. A document
indexed whole (chunker ``none``) keeps its own id; chunks are ``<doc id>#<n>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ragline.index.store import Index, IndexSettings
from ragline.ingest.chunkers import Chunker, build_chunker
from ragline.ingest.context import build_contextualizer
from ragline.progress import track
from ragline.types import Document


@dataclass(frozen=True)
class IngestConfig:
    chunker: str = "none"  # a chunker spec (ragline.ingest.chunkers), e.g. structure:max_words=200
    context: str = "none"  # none | breadcrumb | late

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def chunk_documents(
    documents: Sequence[Document], config: IngestConfig, embedder: Any = None, chunker: Chunker | None = None
) -> tuple[list[Document], np.ndarray | None]:
    """Every chunk of every document, contextualized; vectors only for late chunking. ``chunker``: one built
    from ``config.chunker`` already (the chunking experiment reads its cost after)."""
    chunker = chunker or build_chunker(config.chunker)
    contextualizer = build_contextualizer(config.context, embedder)
    chunks: list[Document] = []
    vectors: list[np.ndarray] = []
    for document in track(documents, f"chunking ({config.chunker}, {config.context})", total=len(documents)):
        if config.chunker == "none":
            pieces = [_whole(document)]
        else:
            pieces = chunker.chunk(document)
        pieces, piece_vectors = contextualizer.contextualize(document, pieces)
        chunks.extend(pieces)
        if piece_vectors is not None:
            vectors.append(piece_vectors)
    return chunks, (np.concatenate(vectors) if vectors else None)


def _whole(document: Document) -> Document:
    """A whole document as its own single chunk (same id), with the chunk metadata a reader expects."""
    metadata = {
        **document.metadata,
        "doc_id": document.id,
        "parent_id": document.id,
        "start": 0,
        "end": len(document.text),
        "section": [],
    }
    return Document(document.id, document.text, document.title, metadata, document.source, document.index_text)


def build_index(
    documents: Iterable[Document],
    config: IngestConfig,
    settings: IndexSettings,
    path: str | None = None,
    chunker: Chunker | None = None,
) -> Index:
    """A new index (in memory when ``path`` is None) of ``documents`` chunked by ``config`` (or ``chunker``)."""
    index = Index.create(path, settings)
    embedder = index.embedder.embedder if config.context == "late" else None
    chunks, vectors = chunk_documents(list(documents), config, embedder, chunker)
    index.add(chunks, vectors=vectors)
    index.commit()
    return index
