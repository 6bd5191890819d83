"""Dense and hybrid retrieval through the Index: filters inside the ANN search, embeddings cached."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.index import Index, IndexSettings, dense
from ragline.index.filters import parse_filter
from ragline.index.vectors import AllowedRows
from ragline.retrieve.registry import build_retriever, parse_spec
from ragline.types import Document

DIM = 16


def allowed(index, si, node):
    """The rows a vector search of segment ``si`` may return, as packed for faiss (kept per filter)."""
    return index._vector_masks.allowed(si, index.segments[si], index.deleted[si], node)


def vector_index(kind: str, n: int = 400, seed: int = 0) -> tuple[Index, np.ndarray]:
    """An index whose vectors are given (no model): rows in 8 clusters, metadata group = row % 100."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(8, DIM))
    vectors = centres[rng.integers(0, 8, n)] + 0.3 * rng.normal(size=(n, DIM))
    docs = [
        Document(f"d{i}", f"text {i}", metadata={"group": i % 100, "acl": ["all"] if i % 2 else ["hr"]})
        for i in range(n)
    ]
    index = Index.create(None, IndexSettings(embedder="minilm", vector_index=kind))
    index.add(docs, vectors=vectors)
    index.commit()
    return index, vectors


@pytest.mark.parametrize("kind", ["flat", "hnsw:m=8,ef_search=16"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_filtered_dense_search_stays_inside_the_filter(kind: str, data: st.DataObject) -> None:
    index, _ = vector_index(kind)
    groups = data.draw(st.lists(st.integers(0, 99), min_size=0, max_size=12, unique=True))
    k = data.draw(st.integers(1, 20))
    query = np.asarray(data.draw(st.lists(st.floats(-1, 1), min_size=DIM, max_size=DIM)), dtype=np.float32)
    if not np.any(query):
        query[0] = 1.0
    flt = {"group": groups} if groups else "group in [-1]"
    found = index.search_vector(query, k, flt)
    allowed = {f"d{i}" for i in range(400) if i % 100 in groups}
    ids = [index.segments[si].ids[row] for si, row, _ in found]
    assert set(ids) <= allowed
    assert len(ids) == min(k, len(allowed))  # k results whenever k exist, even at 1% selectivity
    assert len(set(ids)) == len(ids)


def test_deleted_rows_never_come_back_and_deletes_survive_merge() -> None:
    index, vectors = vector_index("hnsw")
    index.delete([f"d{i}" for i in range(0, 400, 3)])
    index.commit()
    for q in vectors[:20]:
        rows = index.search_vector(q, 10)
        assert all(int(index.segments[si].ids[r][1:]) % 3 for si, r, _ in rows)
    index.merge()
    assert len(index.segments[0]) == len(index) == 400 - 134
    assert all(int(i[1:]) % 3 for i in index.segments[0].ids)


def test_hybrid_fuses_its_legs_with_the_same_filter() -> None:
    # Two BM25 legs with different parameters, so the test needs no model: the fused ranking must be
    # the fuser applied to what each leg ranks under the same filter, and stay inside the filter.
    from ragline.retrieve.fusion import fuse, rank

    docs = [
        Document(f"d{i}", " ".join(["meal limit"] * (1 + i % 4) + ["travel"] * (i % 7) + [f"w{i}"] * (i % 3)),
                 metadata={"acl": ["all"] if i % 2 else ["hr"]})
        for i in range(60)
    ]  # fmt: skip
    index = Index.create(None, IndexSettings())
    index.add(docs)
    index.commit()
    hybrid = build_retriever("hybrid:legs=[bm25:k1=0.5,b=0.2; bm25:k1=2.0,b=0.9],fuser=rrf,k=10,depth=30", index)
    legs = [build_retriever("bm25:k1=0.5,b=0.2", index), build_retriever("bm25:k1=2.0,b=0.9", index)]
    for query in ("meal limit", "travel meal", "w1 travel"):
        fused = hybrid.rank(query, 10, "acl = all")
        runs = [dict(leg.rank(query, 30, "acl = all")) for leg in legs]
        assert runs[0] != runs[1]  # the legs really differ
        assert fused == rank(fuse("rrf", runs, k=10), 10)
        assert fused and all(int(doc_id[1:]) % 2 for doc_id, _ in fused)
    assert hybrid.config()["fuser"] == "rrf" and hybrid.config()["depth"] == 30
    assert [leg["bm25"]["k1"] for leg in hybrid.config()["legs"]] == [0.5, 2.0]


def test_hybrid_dense_leg_keeps_the_filter() -> None:
    index, vectors = vector_index("flat")
    dense_hits = index.search_vector(vectors[5], 50, "acl = all")
    assert all(index.segments[si].ids[r] in {f"d{i}" for i in range(1, 400, 2)} for si, r, _ in dense_hits)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("bm25", ("bm25", {})),
        ("hybrid:fuser=rrf,k=60", ("hybrid", {"fuser": "rrf", "k": 60})),
        ("hybrid:weights=0.7/0.3,depth=200", ("hybrid", {"weights": [0.7, 0.3], "depth": 200})),
        ("bm25:variant=bm25+,k1=1.2", ("bm25", {"variant": "bm25+", "k1": 1.2})),
    ],
)
def test_retriever_specs_parse(spec: str, expected: tuple) -> None:
    assert parse_spec(spec) == expected


def test_bad_specs_fail_before_any_query() -> None:
    index, _ = vector_index("flat", n=20)
    from ragline.errors import ConfigError

    for bad in ("hybrid:fuser=best", "hybrid:k", "bm25:colour=red", "sparse"):
        with pytest.raises(ConfigError):
            build_retriever(bad, index)


@pytest.mark.models
def test_unchanged_corpus_is_never_embedded_twice_across_processes(tmp_path: Path) -> None:
    """Two separate processes evaluate the same corpus: the second embeds nothing."""
    root = tmp_path / "set"
    (root / "qrels").mkdir(parents=True)
    texts = [
        "The remote access gateway needs a hardware token.",
        "Badge release printing for the copier.",
        "Salary band 4 pays 80k to 95k.",
        "Substation SS-339 is maintained by the Ridgeback team.",
    ]
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(texts))
    )
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "how do I print on the copier"}) + "\n")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    env = dict(os.environ, RAGLINE_CACHE=str(tmp_path / "cache"))
    cmd = [sys.executable, "-m", "ragline", "eval", str(root), "--retriever", "dense", "--vector-index", "flat",
           "--output", "json"]  # fmt: skip
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    second = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    assert "embeddings: 4 computed, 0 from cache" in first.stderr
    assert "embeddings: 0 computed, 4 from cache" in second.stderr
    assert json.loads(first.stdout)["metrics"] == json.loads(second.stdout)["metrics"]
    assert json.loads(second.stdout)["metrics"]["hit@10"] == 1.0


def test_a_repeated_filter_is_prepared_once_per_segment(monkeypatch: pytest.MonkeyPatch) -> None:
    # The index prepares each segment's allowed rows once; the vector index reuses them for every query.
    monkeypatch.setattr(dense, "EXACT_SEGMENT_ROWS", 0)  # a segment large enough for its faiss index
    index, vectors = vector_index("hnsw")
    first = [index.search_vector(q, 10, "acl = all") for q in vectors[:5]]
    prepared = allowed(index, 0, parse_filter("acl = all"))
    assert isinstance(prepared, AllowedRows) and prepared.params  # used by the searches above
    again = [index.search_vector(q, 10, "acl = all") for q in vectors[:5]]
    assert again == first and allowed(index, 0, parse_filter("acl = all")) is prepared
    assert all(int(index.segments[si].ids[r][1:]) % 2 for hits in again for si, r, _ in hits)


@pytest.mark.parametrize("flt", [None, "acl = all"])
def test_kept_vector_masks_follow_each_commit(flt: str | None) -> None:
    # The allowed rows (live, passing the filter) are kept between queries, and rebuilt after a commit.
    index, vectors = vector_index("hnsw")
    index.delete([f"d{i}" for i in range(0, 400, 3)])
    index.commit()
    node = parse_filter(flt)
    kept = allowed(index, 0, node)
    assert kept is allowed(index, 0, node) and isinstance(kept, AllowedRows)
    before = [index.search_vector(q, 10, flt) for q in vectors[:10]]
    assert all(int(index.segments[si].ids[r][1:]) % 3 for hits in before for si, r, _ in hits)
    index.delete([f"d{i}" for i in range(1, 400, 5)])
    index.commit()
    for q in vectors[:10]:
        ids = [int(index.segments[si].ids[r][1:]) for si, r, _ in index.search_vector(q, 10, flt)]
        assert len(ids) == 10 and all(i % 3 and i % 5 != 1 for i in ids)
        assert flt is None or all(i % 2 for i in ids)
