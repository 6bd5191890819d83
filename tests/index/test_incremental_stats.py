"""Collection statistics updated from the previous commit's equal those computed from scratch.

A commit that adds segments and deletes or replaces rows keeps the earlier segments as they were, so
only the new segments and the newly deleted rows are counted; a merge changes the segments, so the
statistics are computed again. Either way every field equals ``CollectionStats.compute`` on the commit.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from ragline.index import Index, IndexSettings
from ragline.index.stats import CollectionStats
from ragline.types import Document

WORDS = [f"w{i}" for i in range(60)]


def _documents(rng: random.Random, prefix: str, n: int) -> list[Document]:
    return [
        Document(f"{prefix}{i}", " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))),
                 " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3))))
        for i in range(n)
    ]  # fmt: skip


def _assert_equal(stats: CollectionStats, expected: CollectionStats) -> None:
    assert stats.vocab == expected.vocab  # the same global term ids
    assert stats.n == expected.n and stats.avg == expected.avg and stats.totals == expected.totals
    for field in expected.df:
        assert np.array_equal(stats.df[field], expected.df[field])
    for mine, theirs in zip(stats.l2g + stats.g2l, expected.l2g + expected.g2l, strict=True):
        assert mine.keys() == theirs.keys() and all(np.array_equal(mine[f], theirs[f]) for f in theirs)
    assert all(np.array_equal(a, b) for a, b in zip(stats.deleted, expected.deleted, strict=True))


@pytest.mark.parametrize("fields", [{"body": 1.0}, {"title": 2.0, "text": 1.0}])
def test_stats_updated_after_adds_deletes_and_replacements_equal_a_full_computation(fields) -> None:
    rng = random.Random(11)
    index = Index.create(None, IndexSettings(fields=fields, max_segments=50))
    index.add(_documents(rng, "a", 80))
    index.commit()
    before = index.collection_stats()
    for round_ in range(4):
        index.add(_documents(rng, f"n{round_}-", 30))
        index.add(_documents(rng, "a", 5))  # replaced: the old rows are deleted
        index.delete([f"a{rng.randrange(80)}" for _ in range(6)] + [f"n{round_}-3"])  # one of this commit's own
        index.commit()
        stats = index.collection_stats()
        assert stats.l2g[0] is before.l2g[0]  # the first segment's term ids were reused, not recounted
        _assert_equal(stats, CollectionStats.compute(index.segments, index.deleted, index.settings.fields))
        before = stats
    # the updated statistics score as a fresh index of the live documents does
    fresh = Index.create(None, IndexSettings(fields=fields))
    fresh.add(list(index.documents()))
    fresh.commit()
    for terms in (["w1", "w2"], ["w7"], ["w3", "w3", "w40", "unknown"]):
        ids = lambda ix, t=terms: [(ix.segments[s].ids[r], round(v, 5)) for s, r, v in ix.search_terms(t, 20)]  # noqa: E731
        assert sorted(ids(index)) == sorted(ids(fresh))


def test_a_merge_computes_the_stats_again() -> None:
    rng = random.Random(2)
    index = Index.create(None, IndexSettings(max_segments=50))
    for batch in range(3):
        index.add(_documents(rng, f"b{batch}-", 40))
        index.commit()
    index.delete(["b0-1", "b1-2"])
    index.commit()
    before = index.collection_stats()
    index.merge(1)
    assert index._previous_stats is None  # not held: the merged-away segments can be freed
    stats = index.collection_stats()
    assert stats is not before and stats.l2g[0] is not before.l2g[0]
    _assert_equal(stats, CollectionStats.compute(index.segments, index.deleted, index.settings.fields))


def test_stats_of_an_index_opened_from_disk_update_after_its_next_commit(tmp_path) -> None:
    rng = random.Random(4)
    index = Index.create(tmp_path / "ix")
    index.add(_documents(rng, "d", 50))
    index.commit()
    index.close()
    reopened = Index.open(tmp_path / "ix")
    first = reopened.collection_stats()
    reopened.add(_documents(rng, "e", 20))
    reopened.delete(["d4"])
    reopened.commit()
    stats = reopened.collection_stats()
    assert stats.l2g[0] is first.l2g[0]
    _assert_equal(stats, CollectionStats.compute(reopened.segments, reopened.deleted, reopened.settings.fields))
    reopened.close()
