"""``explain`` reproduces the score ``Index.search`` gives every hit, and its parts add up to it."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from ragline.errors import ConfigError
from ragline.explain import bm25_explanation, explain, fusion_explanation
from ragline.index import VARIANTS, BM25Params, Index, IndexSettings
from ragline.retrieve.fusion import fuse, rank
from ragline.types import Document

WORDS = [f"w{i}" for i in range(40)] + ["meal", "limit", "travel", "E-2952", "E-2502", "policy"]


def random_documents(rng: random.Random, n: int, prefix: str) -> list[Document]:
    docs = []
    for i in range(n):
        # Zipf-like word choice so some terms are in most documents (negative Robertson IDF) and some rare.
        text = " ".join(WORDS[min(int(rng.paretovariate(1.1)) - 1, len(WORDS) - 1)] for _ in range(rng.randint(1, 60)))
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4)))
        docs.append(Document(f"{prefix}{i}", text, title))
    return docs


def segmented_index(fields: dict[str, float], seed: int) -> Index:
    """Three commits (three segments), with deletes and replacements across them."""
    rng = random.Random(seed)
    index = Index.create(None, IndexSettings(fields=fields, max_segments=8))
    for batch in range(3):
        index.add(random_documents(rng, 40, f"b{batch}-"))
        if batch:
            index.delete([f"b{batch - 1}-{i}" for i in range(0, 40, 3)])
            index.add(random_documents(rng, 5, "b0-"))  # replaces live rows of the first segment
        index.commit()
    assert len(index.segments) >= 3 and any(d.any() for d in index.deleted)
    return index


@pytest.mark.parametrize("fields", [{"body": 1.0}, {"title": 2.0, "text": 1.0}])
@pytest.mark.parametrize("variant", VARIANTS)
def test_explain_reproduces_every_hit_score(variant: str, fields: dict[str, float]) -> None:
    index = segmented_index(fields, seed=len(variant))
    rng = random.Random(7)
    params = BM25Params(variant=variant, k1=rng.uniform(0.5, 2.0), b=rng.uniform(0, 1), delta=0.7)
    checked = 0
    for _ in range(25):
        query = " ".join(rng.choice(WORDS + ["absent"]) for _ in range(rng.randint(1, 6)))
        for hit in index.search(query, k=len(index), bm25=params):
            parts = bm25_explanation(index, query, hit.doc_id, params)
            assert parts["matched"]
            assert parts["score"] == pytest.approx(hit.score, abs=1e-6)
            # The float64 textbook sum differs from the float32 index only by its rounding.
            assert parts["exact_score"] == pytest.approx(hit.score, rel=1e-5, abs=1e-6)
            checked += 1
    assert checked > 100


def test_contributions_follow_the_formula() -> None:
    docs = [Document("a", "meal meal meal limit", "Travel"), Document("b", "travel policy"), Document("c", "limit")]
    index = Index.create(None, IndexSettings(fields={"title": 3.0, "text": 1.0}))
    index.add(docs)
    index.commit()
    parts = bm25_explanation(index, "meal limit", "a", BM25Params(k1=1.2, b=0.75))
    meal = next(c for c in parts["contributions"] if c["term"] == "meal" and c["field"] == "text")
    avgdl = (4 + 2 + 1) / 3
    idf = np.log1p((3 - 1 + 0.5) / (1 + 0.5))
    assert (meal["tf"], meal["df"]) == (3.0, 1)
    assert meal["idf"] == pytest.approx(idf)
    assert meal["contribution"] == pytest.approx(idf * 3 / (3 + 1.2 * (1 - 0.75 + 0.75 * 4 / avgdl)))
    title_terms = [c for c in parts["contributions"] if c["field"] == "title"]
    assert all(c["tf"] == 0 and c["contribution"] == 0 for c in title_terms)  # "travel" is no query term


def test_a_document_no_term_reaches_is_no_hit_and_scores_zero() -> None:
    index = Index.create(None, IndexSettings())
    index.add([Document("a", "meal limit"), Document("b", "travel")])
    index.commit()
    parts = bm25_explanation(index, "meal", "b", BM25Params(variant="bm25+"))
    assert not parts["matched"] and parts["score"] == 0.0
    assert [h.doc_id for h in index.search("meal")] == ["a"]


def test_unknown_document_names_its_chunks() -> None:
    index = Index.create(None, IndexSettings())
    index.add([Document("guide#0", "meal"), Document("guide#1", "limit")])
    index.commit()
    with pytest.raises(ConfigError, match="guide#0"):
        bm25_explanation(index, "meal", "guide")


def test_dense_and_fusion_parts_match_the_fusers() -> None:
    rng = np.random.default_rng(0)
    docs = [Document(f"d{i}", " ".join(["meal"] * (1 + i % 4) + ["limit"] * (i % 3) + [f"w{i}"])) for i in range(30)]
    vectors = rng.normal(size=(30, 8)).astype(np.float32)
    index = Index.create(None, IndexSettings(embedder="minilm", vector_index="flat"))
    index.add(docs, vectors=vectors)
    index.commit()
    query_vector = rng.normal(size=8).astype(np.float32)
    bm25_run = dict(index.search_ids("meal limit", 100))
    dense_run = {index.segments[s].ids[r]: v for s, r, v in index.search_vector(query_vector, 100)}
    for doc_id in ("d0", "d5", "d29"):
        out = explain(index, "meal limit", doc_id, query_vector=query_vector)
        v = vectors[int(doc_id[1:])]
        assert out["dense"]["cosine"] == pytest.approx(dense_run[doc_id], abs=1e-5)
        assert out["dense"]["cosine"] == pytest.approx(
            v @ query_vector / np.linalg.norm(v) / np.linalg.norm(query_vector)
        )
        for name, part in out["fusion"].items():
            fused = fuse(name, [bm25_run, dense_run])
            assert part["fused_score"] == pytest.approx(fused[doc_id])
            assert part["rank"] == [d for d, _ in rank(fused)].index(doc_id) + 1
        json.dumps(out)  # the CLI prints it as JSON


def test_fusion_shows_a_document_missing_from_a_run() -> None:
    part = fusion_explanation({"bm25": {"a": 9.0, "b": 1.0}, "dense": {"b": 0.5, "c": 0.1}}, "a")
    assert part["min_max"]["normalized"] == {"bm25": 1.0, "dense": None}
    assert part["rrf"]["normalized"]["bm25"] == pytest.approx(1 / 61)


def test_cli_explain_prints_the_search_score_as_json(tmp_path, capsys) -> None:
    from ragline.cli import main

    index = Index.create(tmp_path / "idx", IndexSettings())
    index.add([Document("a", "meal limit meal"), Document("b", "meal travel"), Document("c", "limit")])
    index.commit()
    index.close()
    assert (
        main(["explain", "meal limit", "a", "--index", str(tmp_path / "idx"), "--output", "json", "--k1", "1.5"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    reopened = Index.open(tmp_path / "idx")
    hit = reopened.search("meal limit", bm25=BM25Params(k1=1.5))[0]
    assert (hit.doc_id, out["bm25"]["rank"], out["dense"]) == ("a", 1, None)
    assert out["bm25"]["score"] == pytest.approx(hit.score, abs=1e-6)
    assert main(["explain", "meal", "zzz", "--index", str(tmp_path / "idx")]) == 2
