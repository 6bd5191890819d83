"""Updates: after any interleaving of add / delete / upsert / commit / merge, an index scores every query
exactly as a fresh index built from its live documents (in memory, on disk, and reopened)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.errors import ConfigError
from ragline.index import VARIANTS, BM25Params, Index, IndexSettings
from ragline.text import get_analyzer
from ragline.types import Document

VOCAB = (
    "apple banana cherry durian elder fig grape hazel iris juniper kiwi lemon mango nectar olive "
    "papaya quince radish spinach tomato ugli vanilla walnut xigua yam zucchini almond basil clove dill"
).split()
assert len(VOCAB) == 30
IDS = [f"d{i}" for i in range(12)]
# Every single word, and a few multi-word queries (one with a repeated word).
QUERIES = [[w] for w in VOCAB] + [
    ["apple", "banana"],
    ["cherry", "dill", "fig", "kiwi"],
    ["mango", "mango", "zucchini"],
]
PARAMS = [BM25Params(variant=v) for v in VARIANTS] + [BM25Params(variant="bm25l", k1=1.5, b=1.0, delta=1.0)]


def make_settings(max_segments: int = 3) -> IndexSettings:
    # "simple": the vocabulary words are the terms, untouched
    return IndexSettings(analyzer=get_analyzer("simple"), max_segments=max_segments)


def all_scores(index: Index) -> dict:
    out = {}
    for params in PARAMS:
        for q in QUERIES:
            ranked = index.search_terms(q, k=1000, bm25=params)
            out[params, tuple(q)] = {index.segments[si].ids[row]: score for si, row, score in ranked}
    return out


def assert_same_scores(index: Index, live: dict[str, Document]) -> None:
    fresh = Index.create(None, index.settings)
    fresh.add(list(live.values()))
    fresh.commit()
    assert len(index) == len(live)
    assert index.id_map().keys() == live.keys()
    for doc_id, doc in live.items():
        got = index.get(doc_id)
        assert got is not None and (got.text, got.title, got.metadata) == (doc.text, doc.title, doc.metadata)
    expected, got = all_scores(fresh), all_scores(index)
    for key, scores in expected.items():
        assert got[key].keys() == scores.keys(), key
        for doc_id, score in scores.items():
            assert got[key][doc_id] == pytest.approx(score, rel=1e-5, abs=1e-6), (key, doc_id)


words = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=8).map(" ".join)
documents = st.builds(
    Document,
    id=st.sampled_from(IDS),
    text=words,
    title=st.one_of(st.just(""), words),
    metadata=st.fixed_dictionaries({"v": st.integers(0, 3)}),
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.lists(documents, min_size=1, max_size=5)),
        st.tuples(st.just("delete"), st.lists(st.sampled_from([*IDS, "unknown"]), min_size=1, max_size=3)),
        st.tuples(st.just("commit"), st.none()),
        st.tuples(st.just("merge"), st.integers(1, 3)),
    ),
    min_size=3,
    max_size=30,
)


def apply(index: Index, ops: list, reopen: Path | None = None) -> tuple[Index, dict[str, Document]]:
    """Run ``ops`` on ``index`` and on a model of it; returns the index and the model's live documents.

    The model mirrors the documented semantics: ``add`` stages an upsert, ``delete`` cancels a staged add
    and stages the deletion of a committed document (it counts ids that were either), ``commit`` applies.
    """
    committed: dict[str, Document] = {}
    adds: dict[str, Document] = {}
    deletes: set[str] = set()

    def do_commit() -> None:
        before, dirty = index.generation, bool(adds or deletes)
        assert index.dirty == dirty
        gen = index.commit()
        assert gen > before if dirty else gen == before
        for doc_id in deletes:
            del committed[doc_id]
        committed.update(adds)
        adds.clear()
        deletes.clear()
        assert len(index.segments) <= index.settings.max_segments

    for op, arg in ops:
        if op == "add":
            assert index.add(arg) == len(arg)
            for doc in arg:
                adds[doc.id] = doc
                deletes.discard(doc.id)
        elif op == "delete":
            known = 0
            for doc_id in dict.fromkeys(arg):  # a repeated id is one document
                known += doc_id in committed or doc_id in adds
                adds.pop(doc_id, None)
                if doc_id in committed:
                    deletes.add(doc_id)
            assert index.delete(arg) == known
        elif op == "commit":
            do_commit()
            if reopen is not None:
                index.close()
                index = Index.open(reopen)
        else:  # merge
            if adds or deletes:
                with pytest.raises(ConfigError):
                    index.merge(arg)
            else:
                index.merge(arg)
                assert len(index.segments) <= arg
    do_commit()
    return index, committed


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations)
def test_in_memory_equals_fresh_build(ops: list) -> None:
    index, live = apply(Index.create(None, make_settings()), ops)
    assert_same_scores(index, live)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations, reopen_each_commit=st.booleans())
def test_on_disk_equals_fresh_build_and_reopens(ops: list, reopen_each_commit: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ix"
        index, live = apply(Index.create(path, make_settings()), ops, reopen=path if reopen_each_commit else None)
        assert_same_scores(index, live)
        generation = index.generation
        index.close()
        reopened = Index.open(path)
        assert reopened.generation == generation
        assert_same_scores(reopened, live)
        reopened.close()


# -- sync ------------------------------------------------------------------------------------------------


def docs(*pairs: tuple[str, str]) -> list[Document]:
    return [Document(doc_id, text) for doc_id, text in pairs]


@pytest.mark.parametrize("path_kind", ["memory", "disk"])
def test_sync_reports_and_applies(tmp_path: Path, path_kind: str) -> None:
    index = Index.create(None if path_kind == "memory" else tmp_path / "ix", make_settings())
    report = index.sync(docs(("a", "apple"), ("b", "banana"), ("c", "cherry")))
    assert (report.added, report.updated, report.deleted, report.unchanged) == (3, 0, 0, 0)
    index.commit()
    report = index.sync(docs(("a", "apple"), ("b", "banana fig"), ("d", "durian")))
    assert (report.added, report.updated, report.deleted, report.unchanged) == (1, 1, 1, 1)
    index.commit()
    assert sorted(index.id_map()) == ["a", "b", "d"]
    assert index.get("b").text == "banana fig"
    assert_same_scores(index, {d.id: d for d in docs(("a", "apple"), ("b", "banana fig"), ("d", "durian"))})
    # prune=False keeps documents not given
    report = index.sync(docs(("e", "elder")), prune=False)
    assert (report.added, report.updated, report.deleted, report.unchanged) == (1, 0, 0, 0)
    index.commit()
    assert sorted(index.id_map()) == ["a", "b", "d", "e"]


def test_sync_keep_protects_ids_from_pruning() -> None:
    index = Index.create(None, make_settings())
    index.sync(docs(("a", "apple"), ("b", "banana"), ("c", "cherry")))
    index.commit()
    report = index.sync(docs(("a", "apple")), keep={"b", "unknown"})
    assert (report.added, report.updated, report.deleted, report.unchanged) == (0, 0, 1, 1)
    index.commit()
    assert sorted(index.id_map()) == ["a", "b"]


def test_sync_with_nothing_to_do_keeps_generation() -> None:
    index = Index.create(None, make_settings())
    index.sync(docs(("a", "apple")))
    gen = index.commit()
    report = index.sync(docs(("a", "apple")))
    assert (report.added, report.updated, report.deleted, report.unchanged) == (0, 0, 0, 1)
    assert not index.dirty
    assert index.commit() == gen


def test_sync_detects_metadata_and_title_changes() -> None:
    index = Index.create(None, make_settings())
    index.sync([Document("a", "apple", metadata={"v": 1}), Document("b", "banana", title="t")])
    index.commit()
    report = index.sync([Document("a", "apple", metadata={"v": 2}), Document("b", "banana", title="u")])
    assert (report.added, report.updated, report.deleted, report.unchanged) == (0, 2, 0, 0)


@pytest.mark.parametrize("path_kind", ["memory", "disk"])
def test_sync_empty_deletes_everything(tmp_path: Path, path_kind: str) -> None:
    index = Index.create(None if path_kind == "memory" else tmp_path / "ix", make_settings())
    index.sync(docs(("a", "apple"), ("b", "banana")))
    index.commit()
    report = index.sync([])
    assert (report.added, report.updated, report.deleted, report.unchanged) == (0, 0, 2, 0)
    index.commit()
    assert len(index) == 0
    assert index.search_terms(["apple"]) == []
    assert index.sync([]).deleted == 0


def test_sync_overrides_a_pending_delete() -> None:
    """sync() promises the index holds exactly the given documents, even one deleted but not committed."""
    index = Index.create(None, make_settings())
    index.add(docs(("a", "apple")))
    index.commit()
    index.delete(["a"])
    index.sync(docs(("a", "apple")))
    index.commit()
    assert sorted(index.id_map()) == ["a"]


def test_sync_after_another_writer_committed(tmp_path: Path) -> None:
    """sync() must compare against the newest commit, not the one this handle opened."""
    path = tmp_path / "ix"
    with Index.create(path, make_settings()) as first:
        first.add(docs(("a", "apple"), ("b", "banana")))
        first.commit()
    stale = Index.open(path)
    with Index.open(path) as other:
        other.delete(["a"])
        other.commit()
    report = stale.sync(docs(("a", "apple"), ("b", "banana")))
    stale.commit()
    assert sorted(stale.id_map()) == ["a", "b"]
    assert (report.added, report.unchanged) == (1, 1)
    stale.close()


# -- delete, commit, merge ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path_kind", ["memory", "disk"])
def test_delete_unknown_id(tmp_path: Path, path_kind: str) -> None:
    index = Index.create(None if path_kind == "memory" else tmp_path / "ix", make_settings())
    assert index.delete([]) == 0
    assert index.delete(["nope"]) == 0
    assert not index.dirty
    gen = index.commit()
    index.add(docs(("a", "apple")))
    index.commit()
    assert index.delete(["nope", "a"]) == 1
    assert index.commit() == gen + 2
    assert len(index) == 0


def test_delete_of_pending_document_counts_and_cancels_it() -> None:
    index = Index.create(None, make_settings())
    index.add(docs(("a", "apple")))
    assert index.delete(["a"]) == 1
    assert not index.dirty
    index.commit()
    assert len(index) == 0


@pytest.mark.parametrize("path_kind", ["memory", "disk"])
def test_commit_with_nothing_pending_keeps_generation(tmp_path: Path, path_kind: str) -> None:
    path = None if path_kind == "memory" else tmp_path / "ix"
    index = Index.create(path, make_settings())
    assert index.generation == 0
    assert index.commit() == 0
    index.add(docs(("a", "apple")))
    assert index.commit() == 1
    committed_at = index.manifest["committed_at"]
    assert index.commit() == 1
    assert index.manifest["committed_at"] == committed_at
    if path is not None:
        index.close()
        assert Index.open(path).generation == 1


def test_upsert_replaces_and_is_visible_only_after_commit() -> None:
    index = Index.create(None, make_settings())
    index.add(docs(("a", "apple")))
    index.commit()
    index.add(docs(("a", "banana")))
    assert [d for d, _ in index.search_ids("apple")] == ["a"]  # not yet committed
    assert index.search_ids("banana") == []
    index.commit()
    assert index.search_ids("apple") == []
    assert [d for d, _ in index.search_ids("banana")] == ["a"]
    assert len(index) == 1 and index.info()["deleted"] == 1


@pytest.mark.parametrize("path_kind", ["memory", "disk"])
def test_merge_keeps_scores_and_drops_deleted_rows(tmp_path: Path, path_kind: str) -> None:
    index = Index.create(None if path_kind == "memory" else tmp_path / "ix", make_settings(max_segments=10))
    rng = np.random.default_rng(7)
    live: dict[str, Document] = {}
    for batch in range(4):
        new = [Document(f"b{batch}-{i}", " ".join(rng.choice(VOCAB, size=5)), metadata={"v": i}) for i in range(6)]
        index.add(new)
        live.update({d.id: d for d in new})
        index.commit()
    gone = ["b0-0", "b1-3", "b3-5", "b2-1"]
    index.delete(gone)
    for doc_id in gone:
        del live[doc_id]
    index.commit()
    before = all_scores(index)
    assert len(index.segments) == 4 and index.info()["deleted"] == 4
    gen = index.generation
    assert index.merge() == gen + 1
    assert len(index.segments) == 1
    assert index.info()["deleted"] == 0 and len(index.segments[0]) == len(live) == len(index)
    after = all_scores(index)
    for key, scores in before.items():
        assert after[key].keys() == scores.keys()
        for doc_id, score in scores.items():
            assert after[key][doc_id] == pytest.approx(score, rel=1e-5, abs=1e-6)
    assert_same_scores(index, live)
    assert index.merge() == gen + 1  # nothing left to do: no new generation
    if index.path is not None:
        index.close()
        assert_same_scores(Index.open(index.path), live)


def test_merge_of_a_single_segment_drops_its_deleted_rows() -> None:
    """merge() documents "dropping deleted rows"; with one segment holding deletes, nothing is dropped."""
    index = Index.create(None, make_settings())
    index.add(docs(("a", "apple"), ("b", "banana"), ("c", "cherry")))
    index.commit()
    index.delete(["a"])
    index.commit()
    index.merge()
    assert index.info()["deleted"] == 0
    assert len(index.segments[0]) == 2


def test_merge_with_pending_changes_is_refused() -> None:
    index = Index.create(None, make_settings())
    index.add(docs(("a", "apple")))
    with pytest.raises(ConfigError, match="commit"):
        index.merge()


def test_merge_partial_keeps_largest_segments() -> None:
    index = Index.create(None, make_settings(max_segments=10))
    for n in (5, 1, 3, 2):
        index.add([Document(f"s{n}-{i}", "apple banana") for i in range(n)])
        index.commit()
    index.merge(max_segments=2)
    # the three smallest (1, 2, 3 rows) merge into one; the 5-row segment stays
    assert sorted(len(s) for s in index.segments) == [5, 6]


def test_segments_with_every_row_deleted_are_dropped_by_merge() -> None:
    index = Index.create(None, make_settings(max_segments=10))
    index.add(docs(("a", "apple")))
    index.commit()
    index.add(docs(("b", "banana")))
    index.commit()
    index.delete(["a"])
    index.commit()
    index.merge(max_segments=5)
    assert [s.ids for s in index.segments] == [["b"]]


@pytest.mark.parametrize("path_kind", ["memory", "disk"])
@pytest.mark.parametrize("max_segments", [1, 2, 4])
def test_auto_merge_when_segments_exceed_max(tmp_path: Path, path_kind: str, max_segments: int) -> None:
    index = Index.create(None if path_kind == "memory" else tmp_path / "ix", make_settings(max_segments))
    live = {}
    for batch in range(max_segments + 3):
        new = [Document(f"b{batch}-{i}", f"{VOCAB[batch]} {VOCAB[i]} apple") for i in range(3)]
        index.add(new)
        live.update({d.id: d for d in new})
        index.commit()
        assert len(index.segments) <= max_segments
    assert_same_scores(index, live)
    if index.path is not None:
        index.close()
        reopened = Index.open(index.path)
        assert len(reopened.segments) <= max_segments
        assert len(reopened.manifest["segments"]) == len(reopened.segments)
        assert len(list((index.path / "segments").iterdir())) == len(reopened.segments)  # merged-away ones are gone


def test_an_in_memory_segment_hashes_its_documents_only_when_asked(tmp_path) -> None:
    docs = [Document("a", "alpha", metadata={"acl": ["x"]}), Document("b", "beta", title="B")]
    index = Index.create(None, make_settings())
    index.add(docs)
    index.commit()
    assert index.segments[0]._hashes is None  # searching never needs them
    report = index.sync([docs[0], Document("b", "beta changed", title="B")])  # a sync does: computed then
    assert (report.unchanged, report.updated) == (1, 1)
    assert index.segments[0].hashes == [d.hash for d in docs]
    on_disk = Index.create(tmp_path / "ix", make_settings())
    on_disk.add(docs)
    on_disk.commit()
    on_disk.close()
    assert Index.open(tmp_path / "ix").segments[0].hashes == [d.hash for d in docs]  # written in the catalog
