"""A batch of BM25 queries gives, query by query, exactly what one search per query gives.

Checked on several segments with deletes, one and two weighted fields, filters, repeated and unknown
terms, on the numpy loops and on the compiled kernels, with one thread and with several.
"""

from __future__ import annotations

import random

import pytest

from ragline.index import Index, IndexSettings, sparse
from ragline.types import Document

WORDS = [f"w{i}" for i in range(40)]


def _index(fields: dict[str, float]) -> Index:
    rng = random.Random(3)
    index = Index.create(None, IndexSettings(fields=fields))
    for batch in range(3):  # three commits: three segments
        docs = []
        for i in range(120):
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 25)))
            title = " ".join(rng.choice(WORDS[:10]) for _ in range(rng.randint(0, 4)))
            docs.append(Document(f"d{batch}-{i}", body, title, metadata={"acl": rng.choice(["all", "hr", "it"])}))
        docs += [Document(f"d{batch}-dup{j}", "w1 w2 w3", "w4") for j in range(4)]  # ties
        index.add(docs)
        index.commit()
    index.delete([f"d2-{i}" for i in range(0, 120, 4)])
    index.commit()
    return index


def _queries(n: int) -> list[list[str]]:
    rng = random.Random(5)
    queries = [[rng.choice(WORDS) for _ in range(rng.randint(1, 5))] for _ in range(n)]
    return queries + [["unknown-term"], [], ["w1", "w1", "unknown-term"]]


def _kernels(compiled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if compiled:
        monkeypatch.setitem(sparse._state, "kernels", sparse.compiled_kernels())
    else:
        monkeypatch.setitem(sparse._state, "kernels", None)
        monkeypatch.setitem(sparse._state, "queries", 0)
        monkeypatch.setattr(sparse, "COMPILED_AFTER", 10**9)
        monkeypatch.setattr(sparse, "COMPILED_POSTINGS", 10**12)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("fields", [{"body": 1.0}, {"title": 2.5, "text": 0.7}])
@pytest.mark.parametrize("filter", [None, "acl = hr"])
@pytest.mark.parametrize("threads", [1, 3])
def test_batch_equals_one_query_at_a_time(compiled, fields, filter, threads, monkeypatch) -> None:
    index = _index(fields)
    queries = _queries(40)
    _kernels(compiled, monkeypatch)
    for k in (1, 10, 500):
        one_by_one = [index.search_terms(q, k, filter) for q in queries]
        batched = index.search_terms_batch(queries, k, filter, threads=threads)
        assert batched == one_by_one
    assert any(one_by_one)  # the queries do find rows
    if not compiled:
        assert sparse._state["kernels"] is None  # the numpy loops really answered


def test_search_ids_batch_equals_search_ids() -> None:
    index = _index({"body": 1.0})
    texts = [" ".join(q) for q in _queries(20)]
    assert index.search_ids_batch(texts, 7, threads=2) == [index.search_ids(t, 7) for t in texts]


def test_batch_loads_compiled_kernels_once_it_is_large(monkeypatch) -> None:
    # A batch counts as all its queries: past COMPILED_AFTER it runs on the compiled kernels.
    index = _index({"body": 1.0})
    _kernels(False, monkeypatch)
    monkeypatch.setattr(sparse, "COMPILED_AFTER", 10)
    queries = _queries(20)
    expected = [index.search_terms(q, 10) for q in queries[:5]]
    assert sparse._state["kernels"] is None
    assert index.search_terms_batch(queries, 10)[:5] == expected
    assert sparse._state["kernels"] is not None


def test_empty_batch_and_k_zero() -> None:
    index = _index({"body": 1.0})
    assert index.search_terms_batch([], 10) == []
    assert index.search_terms_batch([["w1"], ["w2"]], 0) == [[], []]


def test_bad_filter_fails_before_any_query_scores() -> None:
    index = _index({"body": 1.0})
    expected = index.search_terms(["w1", "w2"], 5)
    with pytest.raises(Exception) as raised:
        index.search_terms_batch([["w1"], ["w2"]], 5, "acl = = hr")
    assert type(raised.value).__module__ == "ragline.errors"
    assert index.search_terms(["w1", "w2"], 5) == expected  # buffers left clean
