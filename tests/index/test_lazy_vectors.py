"""A segment maps its faiss file when it opens and reads it at the first dense search.

So a BM25-only reader never loads faiss (a tenth of a second of a one-query command), and a reader that
opened before a merge removed the file still searches its vectors (the mapping outlives the unlink).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from ragline.index import Index, IndexSettings
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
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


def test_a_reader_searches_vectors_whose_file_a_merge_removed(tmp_path: Path) -> None:
    vectors = _index_with_vectors(tmp_path / "idx")
    reader = Index.open(tmp_path / "idx")
    folders = [segment.folder for segment in reader.segments]
    writer = Index.open(tmp_path / "idx")
    writer.merge(max_segments=1)
    writer.close()
    assert not any((folder / "vectors.faiss").exists() for folder in folders)
    hits = reader.search_vector(vectors[25], k=1)
    assert [(reader.segments[s].ids[row]) for s, row, _ in hits] == ["d25"]
