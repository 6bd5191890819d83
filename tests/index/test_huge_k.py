"""A huge ``k`` costs what the collection does: searches cap ``k`` at the live documents.

Each check runs in a subprocess whose address space is limited (``RLIMIT_AS``), so that a search
sizing its buffers by ``k`` fails there with ``MemoryError`` instead of taking the machine's memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("resource")

TESTS = Path(__file__).resolve().parents[1]
LIMIT_BYTES = 4 << 30  # far above what the searches below need, far below what k = 1e9 asks for

SCRIPT = textwrap.dedent(
    """
    import json, resource, sys
    import numpy as np
    sys.path.insert(0, {models!r})
    from embedding_fakes import HashEmbedder
    from ragline.answer.pipeline import RAGPipeline, build_reader
    from ragline.index import Index, IndexSettings
    from ragline.retrieve.registry import build_retriever
    from ragline.types import Document

    rng = np.random.default_rng(0)
    index = Index.create({path!r}, IndexSettings(embedder="minilm", vector_index="hnsw"))
    # a small segment (searched exactly) and one above the exact-search size (searched by the graph)
    for start, rows in ((0, 30), (30, 4200)):
        docs = [Document(f"d{{i}}", f"word{{i}} shared pay band text", metadata={{"acl": ["all" if i % 2 else "hr"]}})
                for i in range(start, start + rows)]
        vectors = rng.standard_normal((rows, 384)).astype(np.float32)
        index.add(docs, vectors=vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
        index.commit()
    index.delete(["d1", "d2"])
    index.commit()
    index._embedder = HashEmbedder(dim=384)  # queries embedded without a model
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    k = 10**9
    out = {{"live": len(index), "terms": len(index.search_terms(index.settings.analyzer("shared"), k)),
           "vector": len(index.search_vector(index.segments[1].vectors[0], k)),
           "vector_filtered": len(index.search_vector(index.segments[1].vectors[0], k, "acl = all"))}}
    for name in ("bm25", "dense", "hybrid"):
        out[name] = len(build_retriever(name, index).search("shared pay band", k))
    answer, context = RAGPipeline(index, build_reader("extractive"), retriever="hybrid", k=k).answer("What is band?")
    out["pipeline_sources"] = len(context.sources)
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_a_k_of_a_billion_returns_the_collection_in_bounded_memory(tmp_path: Path) -> None:
    """Planted fault: without the cap (``dense.search_vector`` asking each segment for ``k``, not its live rows),
    the vector search pads its result to 1e9 rows (7.45 GiB of row ids): MemoryError."""
    code = SCRIPT.format(models=str(TESTS / "models"), path=str(tmp_path / "idx"), limit=LIMIT_BYTES)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    live = got["live"]
    assert live == 4228, got
    assert got["terms"] == got["vector"] == got["bm25"] == got["dense"] == got["hybrid"] == live, got
    assert got["vector_filtered"] == 2114  # the 2,115 odd ids of 4,230, less d1
    assert 0 < got["pipeline_sources"] <= live
