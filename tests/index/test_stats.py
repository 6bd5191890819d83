"""Collection statistics and BM25 weights of a commit are those of a fresh build of its live documents."""

from __future__ import annotations

import numpy as np

from ragline.index import BM25Params, Index, IndexSettings
from ragline.index.stats import BM25Scorer, CollectionStats
from ragline.types import Document

DOCS = [
    Document("a", "apple banana apple"),
    Document("b", "banana cherry"),
    Document("c", "cherry durian fig fig fig"),
    Document("d", "apple fig"),
]


def _by_term(stats: CollectionStats, field: str = "body") -> dict[str, int]:
    return {term: int(stats.df[field][gid]) for term, gid in stats.vocab.items() if stats.df[field][gid]}


def test_stats_after_deletes_and_segments_equal_a_fresh_build() -> None:
    updated = Index.create(None, IndexSettings(max_segments=10))
    updated.add(DOCS[:2])
    updated.commit()
    updated.add(DOCS[2:])
    updated.delete(["b"])
    updated.commit()
    fresh = Index.create(None)
    fresh.add([d for d in DOCS if d.id != "b"])
    fresh.commit()

    stats, expected = updated.collection_stats(), fresh.collection_stats()
    assert len(updated.segments) == 2 and isinstance(stats, CollectionStats)
    assert stats.n == expected.n == 3
    assert stats.avg == expected.avg
    assert _by_term(stats) == _by_term(expected) and _by_term(stats)["banana"] == 1  # b's banana is gone
    assert stats.deleted[0].any() and not stats.deleted[1].size  # no deleted row: an empty mask


def test_scorer_is_cached_per_commit_and_typed() -> None:
    index = Index.create(None)
    index.add(DOCS)
    index.commit()
    params = BM25Params(k1=1.2, b=0.75)
    scorer = index.bm25_scorer(params)
    assert isinstance(scorer, BM25Scorer) and index.bm25_scorer(params) is scorer
    assert scorer["df"] is scorer.stats.df and scorer["idf"] is scorer.idf  # read by key as well
    vocab, idf = scorer.stats.vocab, scorer.idf["body"]
    assert idf[vocab["durian"]] > idf[vocab["fig"]] > 0  # in one document, in two
    assert [w.dtype for w in scorer.weights[0].values()] == [np.float32]
    index.delete(["d"])
    index.commit()
    assert index.bm25_scorer(params) is not scorer  # a new commit: statistics again
