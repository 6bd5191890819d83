from __future__ import annotations

import re

import numpy as np
import pytest

from ragline.errors import ConfigError
from ragline.ingest.chunkers import build_chunker
from ragline.ingest.context import (
    PrefixContextualizer,
    breadcrumb,
    build_contextualizer,
    document_token_vectors,
    late_chunk_vectors,
)
from ragline.models import EmbedderSpec
from ragline.models.embedders import Embedder
from ragline.types import Document

POLICIES = """# Expense Policies

## Travel

### Receipts

Submit receipts within 30 days of the trip.

## Meals

### Receipts

Submit receipts within 14 days of the meal.
"""


class WindowEmbedder(Embedder):
    """Tokens are words; it reads ``max_seq_length - 2`` of them; call k gives every token the vector e_k."""

    def __init__(self, max_seq_length: int = 6, dim: int = 8) -> None:
        spec = EmbedderSpec(name="window-fake", kind="sentence-transformers", path="-", dim=dim)
        super().__init__(spec, weights_sha256=None, dim=dim, max_seq_length=max_seq_length)
        self.calls: list[str] = []

    def token_embeddings(self, text: str) -> tuple[list[tuple[int, int]], np.ndarray]:
        words = [m.span() for m in re.finditer(r"\S+", text)][: self.max_seq_length - 2]
        offsets = [(0, 0), *words, (0, 0)]  # [CLS] ... [SEP]
        vectors = np.zeros((len(offsets), self.dim), dtype=np.float32)
        vectors[:, len(self.calls)] = 1.0
        self.calls.append(text)
        return offsets, vectors


def test_breadcrumb_prefixes_title_and_section_path_to_the_index_text_only() -> None:
    document = Document("policies", POLICIES, "Expense Policies", {"acl": ["all"]})
    chunks = build_chunker("structure").chunk(document)
    contextualized, vectors = build_contextualizer("breadcrumb").contextualize(document, chunks)
    assert vectors is None
    assert [c.index_text.split("]")[0] + "]" for c in contextualized] == [
        "[Expense Policies > Travel > Receipts]",
        "[Expense Policies > Meals > Receipts]",
    ]
    first = contextualized[0]
    assert first.index_text == "[Expense Policies > Travel > Receipts] " + first.text
    assert first.text == chunks[0].text and first.metadata == chunks[0].metadata  # what a reader sees is unchanged
    assert chunks[0].index_text is None  # the input chunks are not modified


def test_breadcrumb_edge_cases() -> None:
    assert breadcrumb("Manual", []) == "[Manual]"
    assert breadcrumb("", ["A", "B"]) == "[A > B]"
    assert breadcrumb("", []) == ""
    assert breadcrumb("Travel policy", ["Travel Policy", "Receipts"]) == "[Travel policy > Receipts]"
    document = Document("d", "no headings at all")
    chunk = build_chunker("none").chunk(document)[0]
    assert build_contextualizer("breadcrumb").contextualize(document, [chunk])[0][0].index_text == chunk.text


def test_none_leaves_chunks_alone_and_prefix_is_the_extension_point() -> None:
    document = Document("policies", POLICIES, "Expense Policies")
    chunks = build_chunker("structure").chunk(document)
    assert build_contextualizer("none").contextualize(document, chunks) == (chunks, None)

    class Summary(PrefixContextualizer):  # what an LLM-written context (Contextual Retrieval) plugs into
        name = "summary"

        def context_for(self, document: Document, chunk: Document) -> str:
            return f"From {document.title}, section {chunk.metadata['section'][-2]}."

    out, _ = Summary().contextualize(document, chunks)
    assert out[1].index_text.startswith("From Expense Policies, section Meals. ### Receipts")
    with pytest.raises(ConfigError, match="unknown contextualizer"):
        build_contextualizer("summary")


def test_long_documents_are_read_in_overlapping_windows_and_overlaps_averaged() -> None:
    embedder = WindowEmbedder(max_seq_length=6)  # 4 words a window, overlap 1
    text = "w0 w1 w2 w3 w4 w5 w6 w7 w8"
    spans, vectors = document_token_vectors(text, embedder, overlap=1)
    assert [text[s:e] for s, e in spans] == text.split()  # every word once, in order
    assert len(embedder.calls) == 3  # w0-w3, w3-w6, w6-w8
    by_word = dict(zip(text.split(), vectors))
    np.testing.assert_allclose(by_word["w0"][:3], [1, 0, 0])
    np.testing.assert_allclose(by_word["w3"][:3], [0.5, 0.5, 0])  # read by windows 0 and 1
    np.testing.assert_allclose(by_word["w6"][:3], [0, 0.5, 0.5])
    np.testing.assert_allclose(by_word["w8"][:3], [0, 0, 1])
    with pytest.raises(ConfigError, match="overlap"):
        document_token_vectors(text, embedder, overlap=4)
    disjoint = WindowEmbedder(max_seq_length=6)
    spans, vectors = document_token_vectors(text, disjoint, overlap=0)
    assert [text[s:e] for s, e in spans] == text.split() and len(disjoint.calls) == 3
    assert vectors.sum(axis=1).tolist() == [1.0] * 9  # every word read once


def test_late_chunk_vectors_pool_the_tokens_inside_each_chunk() -> None:
    embedder = WindowEmbedder(max_seq_length=6)
    document = Document("d", "w0 w1 w2 w3 w4 w5 w6 w7 w8")
    chunks = build_chunker("fixed:size=3").chunk(document)
    vectors = late_chunk_vectors(document.text, chunks, embedder, overlap=1)
    assert vectors.shape == (3, embedder.dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    assert vectors[0][0] > 0 and vectors[0][2] == 0  # w0-w2: only the first window
    assert vectors[2][2] > vectors[2][0]  # w6-w8: mostly the last window
    assert late_chunk_vectors("", [], embedder).shape == (0, embedder.dim)


@pytest.mark.models
def test_late_chunking_with_minilm_gives_contextual_unit_vectors() -> None:
    from ragline.models import load_embedder

    embedder = load_embedder("minilm")
    document = Document(
        "acme",
        "# ACME Corporation annual report\n\n## Revenue\n\nThe company grew revenue by 3% over the previous "
        "quarter. Growth came from the grid services unit.\n\n## Staff\n\nIt hired 40 engineers.",
        "ACME annual report",
    )
    chunks = build_chunker("sentences:window=1").chunk(document)
    contextualizer = build_contextualizer("late", embedder)
    same, vectors = contextualizer.contextualize(document, chunks)
    assert same is chunks and vectors is not None
    assert vectors.shape == (len(chunks), embedder.dim) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    alone = embedder.embed_passages([c.text for c in chunks], progress=False)
    similarity = np.sum(vectors * alone, axis=1)
    assert np.all(similarity < 0.99)  # the document's context changed every chunk's vector
    assert np.all(similarity > 0.3)  # ... but each still resembles its own text
    nearest = np.argmax(vectors @ alone.T, axis=1)
    assert nearest.tolist() == list(range(len(chunks)))  # aligned: chunk i's vector is nearest chunk i's text
