"""Contextualizers: give each chunk the context it lost when it was cut out of its document.

A chunk that says "Receipts must be submitted within 30 days" does not say *which* policy (Lecture 3
§2.3). Three ways to put the document back, all applied per document, after chunking::

    none         chunks as they are
    breadcrumb   index_text = "[Title > Section > Subsection] " + chunk text: deterministic, free, and
                 enough for documents with a heading tree (the lecture's "[Travel Policy > Receipts]")
    late         late chunking (Günther et al., "Late Chunking: Contextual Chunk Embeddings Using
                 Long-Context Embedding Models", 2024): embed the whole document once at token level,
                 then mean-pool each chunk's tokens. No text is added; the context is in the vector.

``contextualize(document, chunks)`` returns ``(chunks, vectors)``: ``vectors`` is None except for
``late``, whose rows (unit length, float32) are aligned with the chunks and are meant for
``Index.add(chunks, vectors)`` in place of embedding ``index_text``. ``text`` is never changed: context
helps retrieval, the reader still sees (and cites) only what the source says.

Extension point for LLM-written context (Anthropic, "Introducing Contextual Retrieval", 2024): subclass
:class:`PrefixContextualizer` and implement ``context_for(document, chunk)`` by asking a model, with the
whole document then the chunk, to "give a short succinct context to situate this chunk within the
overall document for the purposes of improving search retrieval of the chunk" (50-100 tokens; put the
document first so a prompt cache shares it across the document's chunks). Register it with
``@register("contextualizer", NAME)`` (``ragline.components``), as ``ingest/llm_context.py`` does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ragline.components import build, register, spec_of
from ragline.errors import ConfigError
from ragline.types import Document, section_below_title

if TYPE_CHECKING:
    from ragline.models.embedders import Embedder

Contextualized = tuple[list[Document], np.ndarray | None]


@register("contextualizer", "none")
class Contextualizer:
    """Base class: ``contextualize`` one document's chunks; ``none`` returns them unchanged."""

    name: ClassVar[str] = "none"

    def contextualize(self, document: Document, chunks: list[Document]) -> Contextualized:
        return chunks, None

    def config(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class PrefixContextualizer(Contextualizer):
    """Sets ``index_text = context + " " + text`` for each chunk; subclasses write ``context_for``."""

    def contextualize(self, document: Document, chunks: list[Document]) -> Contextualized:
        out = []
        for chunk in chunks:
            context = self.context_for(document, chunk)
            out.append(replace(chunk, index_text=f"{context} {chunk.text}" if context else chunk.text))
        return out, None

    def context_for(self, document: Document, chunk: Document) -> str:
        raise NotImplementedError


@register("contextualizer", "breadcrumb")
class BreadcrumbContextualizer(PrefixContextualizer):
    """``[Title > Section > Subsection]``: the document title, then the chunk's heading path.

    A first heading equal to the title (a Markdown file's ``# Title``) is not repeated.
    """

    name = "breadcrumb"

    def context_for(self, document: Document, chunk: Document) -> str:
        return breadcrumb(document.title, chunk.metadata.get("section") or [])


def breadcrumb(title: str, section: list[str]) -> str:
    parts = [p for p in (title, *section_below_title(title, section)) if p]
    return f"[{' > '.join(parts)}]" if parts else ""


@register("contextualizer", "late")
class LateChunkingContextualizer(Contextualizer):
    """Chunk vectors pooled from the token vectors of the whole document (Günther et al., 2024).

    A document longer than the model's input (MiniLM: 256 word pieces) is read in windows of the full
    length, each starting ``overlap`` tokens before the previous one ended ("long late chunking" in the
    paper), and a token seen by two windows gets the mean of its two vectors. So a chunk's vector carries
    the context of up to a window around it, not of the whole of a long document.
    """

    name = "late"

    def __init__(self, embedder: Embedder | None = None, overlap: int | None = None) -> None:
        self._embedder = embedder
        self.overlap = overlap

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:  # loaded on first use: building a pipeline should not load a model
            from ragline.models.embedders import load_embedder

            self._embedder = load_embedder("minilm")
        return self._embedder

    def config(self) -> dict[str, Any]:
        embedder = self._embedder.id if self._embedder is not None else "all-MiniLM-L6-v2"
        return {"embedder": embedder, "overlap": self.overlap}

    def contextualize(self, document: Document, chunks: list[Document]) -> Contextualized:
        return chunks, late_chunk_vectors(document.text, chunks, self.embedder, self.overlap)


def late_chunk_vectors(text: str, chunks: list[Document], embedder: Embedder, overlap: int | None = None) -> np.ndarray:
    """One unit-length vector per chunk: the mean of the vectors of the tokens inside its span.

    Chunks are located by ``metadata["start"]``/``["end"]``. A token belongs to a chunk when their
    character spans overlap; special tokens ([CLS], [SEP]) belong to none. A chunk with no token (only
    characters the tokenizer drops) falls back to embedding its text alone.
    """
    from ragline.models.embedders import l2_normalize

    if not chunks:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    spans, vectors = document_token_vectors(text, embedder, overlap)
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    ends = np.array([e for _, e in spans], dtype=np.int64)
    out = np.zeros((len(chunks), embedder.dim), dtype=np.float32)
    for i, chunk in enumerate(chunks):
        start, end = chunk.metadata["start"], chunk.metadata["end"]
        inside = (starts < end) & (ends > start)
        if inside.any():
            out[i] = vectors[inside].mean(axis=0)
        else:
            out[i] = embedder.embed_passages([chunk.text], progress=False)[0]
    return l2_normalize(out)


def document_token_vectors(
    text: str, embedder: Embedder, overlap: int | None = None
) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Contextual token vectors of a whole text, read in overlapping windows of the model's length.

    Returns the distinct token spans (document character offsets) in order and their vectors, a token
    read by more than one window averaged over them. ``overlap`` (tokens) defaults to a quarter window.
    """
    window = embedder.max_seq_length - 2  # [CLS] and [SEP]
    overlap = window // 4 if overlap is None else overlap
    if not 0 <= overlap < window:
        raise ConfigError(f"late chunking: overlap must be in [0, {window}), got {overlap}")
    sums: dict[tuple[int, int], np.ndarray] = {}
    counts: dict[tuple[int, int], int] = {}
    length = len(text.rstrip())
    begin = 0
    while begin < length:
        # The model reads at most `window` tokens; handing it a slice (cut at a space) spares tokenizing
        # the whole rest of a long document for every window. A word piece spans at most ~100 characters.
        stop = _slice_end(text, begin + 16 * window)
        offsets, vectors = embedder.token_embeddings(text[begin:stop])
        seen = [(begin + s, begin + e, v) for (s, e), v in zip(offsets, vectors) if e > s]
        if not seen:  # nothing the tokenizer keeps (control characters, say): skip the slice
            begin = stop
            continue
        for start, end, vector in seen:
            key = (start, end)
            sums[key] = sums[key] + vector if key in sums else vector.astype(np.float32)
            counts[key] = counts.get(key, 0) + 1
        if seen[-1][1] >= length:
            break
        following = len(seen) - overlap  # the first token of the next window
        if 0 < following < len(seen):
            begin = _next_window_start(text, begin, seen[following][0])
        else:  # no overlap asked for, or too few tokens to overlap by: go on after the last one
            begin = seen[-1][1]
    spans = sorted(sums)
    if not spans:
        return [], np.zeros((0, embedder.dim), dtype=np.float32)
    return spans, np.stack([sums[s] / counts[s] for s in spans])


def _slice_end(text: str, limit: int) -> int:
    if limit >= len(text):
        return len(text)
    space = max(text.rfind(" ", limit - 200, limit), text.rfind("\n", limit - 200, limit))
    return space if space > 0 else limit


def _next_window_start(text: str, previous: int, at: int) -> int:
    """``at``, moved back to the start of its word (a window should not start inside a word piece)."""
    start = at
    while start > previous + 1 and start > at - 50 and not text[start - 1].isspace():
        start -= 1
    return start if start > previous and (start == 0 or text[start - 1].isspace()) else at


def build_contextualizer(spec: str, embedder: Embedder | None = None) -> Contextualizer:
    """The registered contextualizer ``spec`` names (``none``, ``breadcrumb``, ``late``, ``llm[:model=...]``).

    ``late`` uses ``embedder`` (default: MiniLM, loaded on first use).
    """
    name, params = spec_of(spec.strip())
    return build("contextualizer", {"name": name.lower(), **params}, embedder=embedder)
