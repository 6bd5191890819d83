"""BM25 parity: ragline's scores equal bm25s's (five variants) and rank_bm25's (okapi) on real SciFact text.

ragline indexes the documents normally (field ``body`` = title + "\\n" + text); the reference libraries get
the very same terms from ragline's ``english`` analyzer, so any difference is in the scoring.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from ragline.index import BM25Params, Index, IndexSettings
from ragline.text import get_analyzer
from ragline.types import Document

N_DOCS = 1000
N_QUERIES = 50
REPO = Path(__file__).resolve().parents[2]


def _bench_dir() -> Path:
    return Path(os.environ.get("RAGLINE_BENCH") or REPO.parent / "shared" / "bench")


SCIFACT = _bench_dir() / "scifact"


def _read_jsonl(path: Path, limit: int) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if len(rows) == limit:
                break
            rows.append(json.loads(line))
    return rows


@pytest.fixture(scope="module")
def scifact() -> dict:
    if not (SCIFACT / "corpus.jsonl").is_file() or not (SCIFACT / "queries.jsonl").is_file():
        pytest.skip(f"SciFact not found under {SCIFACT} (set RAGLINE_BENCH)")
    analyzer = get_analyzer("english")
    rows = _read_jsonl(SCIFACT / "corpus.jsonl", N_DOCS)
    docs = [Document(str(r["_id"]), r.get("text", ""), r.get("title", "")) for r in rows]
    corpus_tokens = [analyzer(f"{d.title}\n{d.text}") for d in docs]
    queries = [analyzer(q["text"]) for q in _read_jsonl(SCIFACT / "queries.jsonl", N_QUERIES)]
    queries = [q for q in queries if q]
    assert len(queries) >= N_QUERIES - 2
    index = Index.create(None, IndexSettings(analyzer=analyzer, fields={"body": 1.0}))
    index.add(docs)
    index.commit()
    return {"docs": docs, "tokens": corpus_tokens, "queries": queries, "index": index}


def _ragline_scores(index: Index, terms: list[str], params: BM25Params) -> dict[str, float]:
    ranked = index.search_terms(terms, k=10 * N_DOCS, bm25=params)
    return {index.segments[si].ids[row]: score for si, row, score in ranked}


def _check(
    ours: dict[str, float], ids: list[str], expected: np.ndarray, absent: float, rel: float, what: object
) -> int:
    """Matched documents score as the reference does; every other document gets ``absent`` there."""
    expected = np.asarray(expected, dtype=np.float64)
    matched = np.array([doc_id in ours for doc_id in ids])
    got = np.array([ours.get(doc_id, absent) for doc_id in ids])
    bad = ~np.isclose(got, expected, rtol=rel, atol=1e-6)
    assert not bad.any(), (what, [(ids[i], bool(matched[i]), got[i], expected[i]) for i in np.flatnonzero(bad)[:5]])
    return int(matched.sum())


def test_fixture_tokens_match_what_ragline_indexed(scifact: dict) -> None:
    index, docs, tokens = scifact["index"], scifact["docs"], scifact["tokens"]
    assert len(index) == len(docs) == N_DOCS
    lengths = np.concatenate([np.asarray(s.fields["body"].lengths) for s in index.segments])
    assert lengths.tolist() == [len(t) for t in tokens]


# (k1, b, delta): Anserini's defaults, and rank_bm25 / bm25s defaults with a larger delta.
PARAM_SETS = [(0.9, 0.4, 0.5), (1.5, 0.75, 1.0)]


@pytest.mark.parametrize(("k1", "b", "delta"), PARAM_SETS, ids=["anserini", "classic"])
@pytest.mark.parametrize("variant", ["lucene", "robertson", "atire", "bm25l", "bm25+"])
def test_scores_equal_bm25s(scifact: dict, variant: str, k1: float, b: float, delta: float) -> None:
    import bm25s

    retriever = bm25s.BM25(method=variant, k1=k1, b=b, delta=delta)
    retriever.index(scifact["tokens"], show_progress=False)
    params = BM25Params(variant=variant, k1=k1, b=b, delta=delta)
    ids = [d.id for d in scifact["docs"]]
    n_matched = 0
    for terms in scifact["queries"]:
        reference = retriever.get_scores(terms)
        known = retriever.get_tokens_ids(terms)
        # A document with no query term gets the non-occurrence score (0 except for bm25l / bm25+).
        baseline = float(retriever.nonoccurrence_array[known].sum()) if retriever.nonoccurrence_array is not None else 0
        ours = _ragline_scores(scifact["index"], terms, params)
        n_matched += _check(ours, ids, reference, baseline, 1e-5, terms)
    assert n_matched > 1000  # the comparison is not vacuous


def test_default_params_are_lucene_with_anserini_k1_b(scifact: dict) -> None:
    index, terms = scifact["index"], scifact["queries"][0]
    default = index.search_terms(terms, k=20)
    explicit = index.search_terms(terms, k=20, bm25=BM25Params(variant="lucene", k1=0.9, b=0.4))
    assert default == explicit


# -- okapi: rank_bm25's BM25Okapi --------------------------------------------------------------------------


def test_okapi_equals_rank_bm25(scifact: dict) -> None:
    from rank_bm25 import BM25Okapi

    reference = BM25Okapi(scifact["tokens"], k1=1.5, b=0.75, epsilon=0.25)
    # The epsilon floor must be exercised: some term is in more than half of the documents.
    assert any(v < 0 for v in (math.log(N_DOCS - df + 0.5) - math.log(df + 0.5) for df in _dfs(scifact).values()))
    params = BM25Params(variant="okapi", k1=1.5, b=0.75, epsilon=0.25)
    ids = [d.id for d in scifact["docs"]]
    n_compared = 0
    for terms in scifact["queries"]:
        expected = reference.get_scores(terms)
        ours = _ragline_scores(scifact["index"], terms, params)
        n_compared += _check(ours, ids, expected, 0.0, 1e-6, terms)
        # Top 10: same documents in the same order, except that tied documents may swap.
        top = scifact["index"].search_terms(terms, k=10, bm25=params)
        our_ids = [scifact["index"].segments[si].ids[row] for si, row, _ in top]
        their_order = np.argsort(-expected, kind="stable")[: len(our_ids)]
        their_ids = [ids[i] for i in their_order]
        position = {doc_id: i for i, doc_id in enumerate(ids)}
        for rank, (mine, theirs) in enumerate(zip(our_ids, their_ids)):
            assert expected[position[mine]] == pytest.approx(expected[position[theirs]], rel=1e-6), (terms, rank)
            if mine != theirs:  # only a tie may reorder
                assert abs(expected[position[mine]] - expected[position[theirs]]) <= 1e-6 * abs(
                    expected[position[mine]]
                )
    assert n_compared > 1000


def test_okapi_query_with_epsilon_term(scifact: dict) -> None:
    """A query of only a very common term: its IDF is epsilon * mean IDF, as in rank_bm25."""
    from rank_bm25 import BM25Okapi

    dfs = _dfs(scifact)
    common = max(dfs, key=dfs.get)
    assert dfs[common] > N_DOCS / 2
    reference = BM25Okapi(scifact["tokens"], k1=1.5, b=0.75, epsilon=0.25)
    assert reference.idf[common] == pytest.approx(0.25 * reference.average_idf)
    ours = _ragline_scores(scifact["index"], [common], BM25Params(variant="okapi", k1=1.5, b=0.75, epsilon=0.25))
    expected = reference.get_scores([common])
    assert len(ours) == dfs[common]
    for i, doc in enumerate(scifact["docs"]):
        if doc.id in ours:
            assert ours[doc.id] == pytest.approx(float(expected[i]), rel=1e-6)


def _dfs(scifact: dict) -> dict[str, int]:
    dfs: dict[str, int] = {}
    for tokens in scifact["tokens"]:
        for t in set(tokens):
            dfs[t] = dfs.get(t, 0) + 1
    return dfs


# -- tfidf and the formulas on a hand-computed case ------------------------------------------------------------


def _tiny(variant: str, **kw: float) -> tuple[Index, BM25Params]:
    index = Index.create(None, IndexSettings(analyzer=get_analyzer("simple")))
    index.add(
        [
            Document("d1", "apple apple banana"),
            Document("d2", "banana cherry"),
            Document("d3", "cherry"),
        ]
    )
    index.commit()
    return index, BM25Params(variant=variant, **kw)


def test_tfidf_hand_computed() -> None:
    index, params = _tiny("tfidf")
    # N = 3; df(apple) = 1, df(banana) = 2, df(cherry) = 2; idf = ln(1 + N / df); weight = 1 + ln(tf).
    idf_apple, idf_banana, idf_cherry = math.log(4), math.log(2.5), math.log(2.5)
    expected = {
        "apple": {"d1": idf_apple * (1 + math.log(2))},
        "banana": {"d1": idf_banana, "d2": idf_banana},
        "apple banana": {"d1": idf_apple * (1 + math.log(2)) + idf_banana, "d2": idf_banana},
        "cherry cherry": {"d2": 2 * idf_cherry, "d3": 2 * idf_cherry},  # a repeated query term counts twice
        "durian": {},
    }
    for query, scores in expected.items():
        got = dict(index.search_ids(query, k=10, bm25=params))
        assert got.keys() == scores.keys(), query
        for doc_id, score in scores.items():
            assert got[doc_id] == pytest.approx(score, rel=1e-6), (query, doc_id)


def test_tfidf_ignores_length() -> None:
    index = Index.create(None, IndexSettings(analyzer=get_analyzer("simple")))
    index.add([Document("short", "apple"), Document("long", "apple " + "filler " * 50), Document("x", "other")])
    index.commit()
    got = dict(index.search_ids("apple", k=10, bm25=BM25Params(variant="tfidf")))
    assert got["short"] == pytest.approx(got["long"]) == pytest.approx(math.log(1 + 3 / 2))


def test_lucene_hand_computed() -> None:
    index, params = _tiny("lucene", k1=1.2, b=0.75)
    # lengths 3, 2, 1 -> avgdl 2; "apple": df 1, tf 2 in d1 (dl 3)
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    norm = 1 - 0.75 + 0.75 * 3 / 2
    assert dict(index.search_ids("apple", bm25=params))["d1"] == pytest.approx(idf * 2 / (2 + 1.2 * norm), rel=1e-6)


@pytest.mark.parametrize("variant", ["bm25l", "bm25+"])
def test_absent_weight_is_added_to_matching_documents(variant: str) -> None:
    """bm25l / bm25+: a document matching one query term also earns the tf = 0 weight of the other."""
    index, params = _tiny(variant, k1=1.2, b=0.75, delta=0.5)
    k1, b, delta, n, avgdl = 1.2, 0.75, 0.5, 3, 2.0

    def idf(df: int) -> float:
        return math.log((n + 1) / (df + 0.5)) if variant == "bm25l" else math.log((n + 1) / df)

    def weight(tf: int, dl: int) -> float:
        if variant == "bm25l":
            c = tf / (1 - b + b * dl / avgdl)
            return (k1 + 1) * (c + delta) / (k1 + c + delta)
        return (k1 + 1) * tf / (k1 * (1 - b + b * dl / avgdl) + tf) + delta

    got = dict(index.search_ids("apple cherry", bm25=params))
    assert got.keys() == {"d1", "d2", "d3"}
    assert got["d1"] == pytest.approx(idf(1) * weight(2, 3) + idf(2) * weight(0, 3), rel=1e-6)
    assert got["d2"] == pytest.approx(idf(1) * weight(0, 2) + idf(2) * weight(1, 2), rel=1e-6)
    assert got["d3"] == pytest.approx(idf(1) * weight(0, 1) + idf(2) * weight(1, 1), rel=1e-6)


def test_robertson_clamps_negative_idf_and_drops_those_matches() -> None:
    index = Index.create(None, IndexSettings(analyzer=get_analyzer("simple")))
    index.add([Document("a", "common rare"), Document("b", "common"), Document("c", "common"), Document("d", "x")])
    index.commit()
    params = BM25Params(variant="robertson")
    # df(common) = 3 of 4: ln((4 - 3 + 0.5) / 3.5) < 0, clamped to 0, so "common" matches nothing
    assert index.search_ids("common", bm25=params) == []
    assert [doc_id for doc_id, _ in index.search_ids("common rare", bm25=params)] == ["a"]


@pytest.mark.parametrize("variant", ["lucene", "robertson", "okapi", "atire", "bm25l", "bm25+", "tfidf"])
def test_every_variant_on_empty_cases(variant: str) -> None:
    params = BM25Params(variant=variant)
    empty = Index.create(None)
    assert empty.search_terms(["apple"], k=10, bm25=params) == []
    index, _ = _tiny(variant)
    assert index.search_terms([], k=10, bm25=params) == []
    assert index.search_terms(["durian"], k=10, bm25=params) == []
    assert index.search_terms(["apple"], k=0, bm25=params) == []
    assert index.search("", bm25=params) == []
