"""Collection statistics updated from the previous commit's equal those computed from scratch.

A commit that adds segments and deletes or replaces rows keeps the earlier segments as they were, so
only the new segments and the newly deleted rows are counted: every field equals ``CollectionStats.compute``
on the commit. A merge moves live rows without changing any count, so it carries the statistics over,
numbering only the merged segment's terms: equal to a computation from scratch but for term numbering.
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


def _assert_same_counts(stats: CollectionStats, expected: CollectionStats) -> None:
    """Equal but for the numbering of terms: the same terms with the same counts, and each segment's term
    maps consistent with its own terms."""
    assert stats.n == expected.n and stats.avg == expected.avg and stats.totals == expected.totals
    assert set(expected.vocab) <= set(stats.vocab)  # a merge may keep terms that left with deleted rows
    names = dict(zip(stats.vocab.values(), stats.vocab))
    for field in expected.df:
        df = {names[gid]: int(c) for gid, c in enumerate(stats.df[field]) if c}
        assert df == {t: int(expected.df[field][gid]) for t, gid in expected.vocab.items() if expected.df[field][gid]}
        for si, seg in enumerate(stats.segments):
            terms, l2g, g2l = seg.fields[field].terms, stats.l2g[si][field], stats.g2l[si][field]
            assert [names[g] for g in l2g.tolist()] == list(terms)
            assert np.array_equal(g2l[l2g], np.arange(len(terms))) and int((g2l >= 0).sum()) == len(terms)
    assert all(np.array_equal(a, b) for a, b in zip(stats.deleted, expected.deleted, strict=True))


@pytest.mark.parametrize("max_segments", [1, 2])
def test_a_merge_carries_the_stats_over_without_counting_again(max_segments: int) -> None:
    rng = random.Random(2)
    index = Index.create(None, IndexSettings(max_segments=50))
    for batch in range(4):
        index.add(_documents(rng, f"b{batch}-", 40))
        index.commit()
    index.delete(["b0-1", "b1-2"] + [f"b2-{i}" for i in range(40)])  # b2 empties: it is dropped, not merged
    index.commit()
    before = index.collection_stats()
    kept_l2g = before.l2g[3]  # the largest live segment: kept as it is when two are left
    index.merge(max_segments)
    assert index._previous_stats is None  # not held: the merged-away segments can be freed
    stats = index._collection_stats
    assert stats is not None and stats.segments == tuple(index.segments)  # carried over by the merge itself
    assert (stats.l2g[0] is kept_l2g) == (max_segments == 2)
    _assert_same_counts(stats, CollectionStats.compute(index.segments, index.deleted, index.settings.fields))
    fresh = Index.create(None, IndexSettings())
    fresh.add(list(index.documents()))
    fresh.commit()
    for terms in (["w1", "w2"], ["w7"], ["w3", "w40", "unknown"]):
        ids = lambda ix, t=terms: sorted((ix.segments[s].ids[r], round(v, 5)) for s, r, v in ix.search_terms(t, 30))  # noqa: E731
        assert ids(index) == ids(fresh)
    index.add(_documents(rng, "c", 10))  # and the next commit updates them from there
    index.commit()
    assert index.collection_stats().l2g[0] is stats.l2g[0]
    _assert_same_counts(index.collection_stats(),
                        CollectionStats.compute(index.segments, index.deleted, index.settings.fields))  # fmt: skip


def test_a_merge_without_statistics_computes_none() -> None:
    index = Index.create(None, IndexSettings(max_segments=50))
    for batch in range(3):
        index.add(_documents(random.Random(batch), f"b{batch}-", 10))
        index.commit()
    index.merge(1)  # a writer that never searched (``ragline index``) does not pay for statistics
    assert index._collection_stats is None and index._previous_stats is None


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
