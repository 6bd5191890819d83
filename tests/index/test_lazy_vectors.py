"""A segment maps its faiss file when it opens and reads it at the first dense search of a large segment.

So a BM25-only reader never loads faiss (a tenth of a second of a one-query command), a small segment is
searched exactly from its mapped vectors without faiss, and a reader that opened before a merge removed
the file still searches its vectors (the mapping outlives the unlink).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragline.index import Index, IndexSettings, dense
from ragline.types import Document


def _index_with_vectors(path: Path, segments: int = 2) -> np.ndarray:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((segments * 20, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = Index.create(path, IndexSettings(embedder="minilm", vector_index="hnsw"))
    for s in range(segments):
        rows = range(s * 20, (s + 1) * 20)
        index.add([Document(f"d{i}", f"word{i} shared text") for i in rows], vectors=vectors[s * 20 : (s + 1) * 20])
        index.commit()
    index.close()
    return vectors


def test_a_bm25_search_does_not_load_faiss(tmp_path: Path) -> None:
    _index_with_vectors(tmp_path / "idx")
    code = (
        "import sys\n"
        "from ragline.index import Index\n"
        f"index = Index.open({str(tmp_path / 'idx')!r})\n"
        "assert index.search('shared', k=3)\n"
        "print('faiss.loader' in sys.modules)\n"
        "index.search_vector(index.segments[0].vectors[0], k=3)\n"
        "print('faiss.loader' in sys.modules)\n"
        "from ragline.index import dense\n"
        "dense.EXACT_SEGMENT_ROWS = 0\n"
        "index.search_vector(index.segments[0].vectors[0], k=3)\n"
        "print('faiss.loader' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "True"]  # small segments: exact, no faiss; a large one reads its graph


def test_small_segments_are_searched_exactly_as_faiss_flat_would(tmp_path: Path, monkeypatch) -> None:
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((300, 16)).astype(np.float32) * rng.uniform(0.1, 3.0, (300, 1)).astype(np.float32)
    vectors[7] = 0.0  # a zero vector scores 0 against everything
    index = Index.create(tmp_path / "idx", IndexSettings(embedder="minilm", vector_index="flat"))
    for part in range(3):
        rows = range(part * 100, (part + 1) * 100)
        docs = [Document(f"d{i}", f"text {i}", metadata={"group": f"g{i % 3}"}) for i in rows]
        index.add(docs, vectors=vectors[part * 100 : (part + 1) * 100])
        index.commit()
    index.delete([f"d{i}" for i in range(0, 300, 11)])
    index.commit()
    queries = rng.standard_normal((20, 16)).astype(np.float32)
    for where in (None, "group = g1"):
        exact = [index.search_vector(q, k=15, filter=where) for q in queries]
        monkeypatch.setattr(dense, "EXACT_SEGMENT_ROWS", 0)
        index._vector_masks.clear()
        by_faiss = [index.search_vector(q, k=15, filter=where) for q in queries]
        monkeypatch.undo()
        for a, b in zip(exact, by_faiss):
            assert [(s, r) for s, r, _ in a] == [(s, r) for s, r, _ in b]
            np.testing.assert_allclose([x for *_, x in a], [x for *_, x in b], atol=1e-6)
    with pytest.raises(Exception, match="dimensional"):
        index.search_vector(np.ones(8, dtype=np.float32), k=3)


def test_a_reader_searches_vectors_whose_file_a_merge_removed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(dense, "EXACT_SEGMENT_ROWS", 0)  # the faiss file, not the vectors, is read
    vectors = _index_with_vectors(tmp_path / "idx")
    reader = Index.open(tmp_path / "idx")
    folders = [segment.folder for segment in reader.segments]
    writer = Index.open(tmp_path / "idx")
    writer.merge(max_segments=1)
    writer.close()
    assert not any((folder / "vectors.faiss").exists() for folder in folders)
    hits = reader.search_vector(vectors[25], k=1)
    assert [(reader.segments[s].ids[row]) for s, row, _ in hits] == ["d25"]
