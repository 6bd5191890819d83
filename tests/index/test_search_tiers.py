"""BM25 search gives the same rows and the same float32 scores on the numpy loops as on the compiled kernels.

A process answers its first queries with numpy (loading numba costs more than they take) and then
switches; a user must never see a ranking change when it does. Checked on several segments, deletes,
two weighted fields, filters, ties and every selection route of the kernels.
"""

from __future__ import annotations

import random

import pytest

from ragline.index import Index, IndexSettings, sparse
from ragline.types import Document

WORDS = [f"w{i}" for i in range(40)]


def _index(fields: dict[str, float]) -> Index:
    rng = random.Random(7)
    index = Index.create(None, IndexSettings(fields=fields))
    for batch in range(3):  # three commits: three segments
        docs = []
        for i in range(150):
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 30)))
            title = " ".join(rng.choice(WORDS[:10]) for _ in range(rng.randint(0, 4)))
            acl = rng.choice(["all", "hr", "it"])
            docs.append(Document(f"d{batch}-{i}", body, title, metadata={"acl": acl}))
        # Exact duplicates tie on score: the lower row must win on both routes.
        docs += [Document(f"d{batch}-dup{j}", "w1 w2 w3", "w4") for j in range(5)]
        index.add(docs)
        index.commit()
    index.delete([f"d1-{i}" for i in range(0, 150, 3)])
    index.commit()
    return index


def _run(index: Index, compiled: bool, monkeypatch: pytest.MonkeyPatch, **search) -> list:
    if compiled:
        monkeypatch.setitem(sparse._state, "kernels", sparse.compiled_kernels())
    else:
        monkeypatch.setitem(sparse._state, "kernels", None)
        monkeypatch.setitem(sparse._state, "queries", 0)
        monkeypatch.setattr(sparse, "COMPILED_AFTER", 10**9)
        monkeypatch.setattr(sparse, "COMPILED_POSTINGS", 10**12)
    rng = random.Random(11)
    results = []
    for _ in range(60):
        terms = [rng.choice(WORDS) for _ in range(rng.randint(1, 5))] + ["unknown-term"]
        results.append(index.search_terms(terms, rng.choice([1, 3, 10, 500]), **search))
    if not compiled:
        assert sparse._state["kernels"] is None  # the numpy loops really answered
    return results


@pytest.mark.parametrize("fields", [{"body": 1.0}, {"title": 2.5, "text": 0.7}])
@pytest.mark.parametrize("filter", [None, "acl = hr", "acl in [hr, it]"])
def test_numpy_loops_equal_compiled_kernels(fields, filter, monkeypatch) -> None:
    index = _index(fields)
    with monkeypatch.context() as patch:
        on_numpy = _run(index, False, patch, filter=filter)
    with monkeypatch.context() as patch:
        on_kernels = _run(index, True, patch, filter=filter)
    assert on_numpy == on_kernels
    assert any(len(r) > 1 for r in on_numpy)


def test_a_process_switches_to_the_compiled_kernels(monkeypatch) -> None:
    monkeypatch.setitem(sparse._state, "kernels", None)
    monkeypatch.setitem(sparse._state, "queries", 0)
    monkeypatch.setattr(sparse, "COMPILED_AFTER", 3)
    index = _index({"body": 1.0})
    first = [index.search_terms(["w1", "w2"], 5) for _ in range(5)]
    assert sparse._state["kernels"] is not None
    assert all(r == first[0] for r in first)
