"""The store contract: what every store behind ``ragline.store.base.Collection`` must do, one set of tests.

As Haystack's ``testing/document_store.py``: a store's test module subclasses :class:`CollectionContract`
and provides one fixture, ``store``, a :class:`StoreUnderTest` (how to make a fresh URI, and how to make
the next commit fail partway). The tests open collections with ``ragline.store.open_store``, so they
run through the store registry by URI scheme as every command does.

What is held: writes are invisible until ``commit``, which raises ``generation``; ``sync`` compares by
content hash; deletes by id and by document; filters select the same documents as the embedded index's
semantics (``ragline.store.base.admits``) inside ``filter_documents`` and inside every search, before the
top ``k``; the ACL never leaks; the version graph is read from ``metadata()`` and follows the generation;
counts and ``info()``; stamps checked when reopened; a commit that fails partway converges when the same
sync runs again (a store with atomic commits shows nothing of it before); exact vector search equals
numpy's cosine ranking.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from ragline.answer.version_policy import VersionPolicy, version_graph
from ragline.errors import IndexMismatchError
from ragline.index.filters import acl_filter, parse_filter, restrict
from ragline.index.store import IndexSettings
from ragline.store import open_store
from ragline.store.base import Collection, admits
from ragline.types import Document

FLAT = IndexSettings(vector_index="flat")
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
GROUPS = [f"g{i}" for i in range(8)] + ["2024", "a,b", "or"]
# written filters whose semantics stores must share (numbers match their text, absent fields, lists, quoting)
FILTERS = [
    "year >= 2024",
    "not year < 2024",
    "acl in [hr, all]",
    "status != draft",
    "year = 2024",
    'year = "2024"',
    "tags in []",
    "status < m",
    "tags in [x, y] and not status = final",
    "year > 2020 or acl in [hr]",
]


@dataclass
class StoreUnderTest:
    """What a store's test module provides: ``new_uri()`` a fresh, empty collection's URI each call;
    ``break_commit(collection, monkeypatch)`` makes that collection's next commit raise after writing part
    (a store whose commit is atomic shows nothing of it); ``atomic`` says which."""

    new_uri: Callable[[], str]
    break_commit: Callable[[Collection, pytest.MonkeyPatch], None]
    atomic: bool


def metadata_corpus() -> list[Document]:
    rng = random.Random(7)
    values = [2019, 2024, 2024.5, "2024", "draft", "final", "hr", "all", "x", "y", True]
    docs = []
    for i in range(40):
        meta = {}
        for field in ("year", "status", "acl", "tags"):
            if rng.random() < 0.7:
                meta[field] = rng.choice(values) if rng.random() < 0.5 else rng.sample(values, rng.randint(0, 3))
        docs.append(Document(f"m{i}", f"shared text {rng.choice(WORDS)}", "", meta))
    return docs


class CollectionContract:
    """Subclass it in a store's test module and define the ``store`` fixture (a ``StoreUnderTest``)."""

    def open(self, store: StoreUnderTest, uri: str | None = None, settings: IndexSettings | None = FLAT) -> Collection:
        return open_store(uri or store.new_uri(), settings)  # type: ignore[no-any-return]

    # -- write, read, counts ---------------------------------------------------------------------
    def test_writes_show_at_commit_which_raises_the_generation(self, store: StoreUnderTest) -> None:
        """Planted: a Milvus commit that kept its generation failed here; so did an embedded get_many that kept the
        absent ids (as None)."""
        docs = [Document(f"d{i}", f"text number {i}", f"Title {i}", {"n": i, "acl": ["all"]}) for i in range(5)]
        with self.open(store) as collection:
            before = collection.generation
            collection.add(docs)
            assert len(collection) == 0 and collection.get("d1") is None  # staged, not visible
            assert collection.commit() == collection.generation > before
            assert len(collection) == 5 == collection.info()["documents"]
            got = collection.get("d3")
            assert got is not None and (got.text, got.title, got.metadata) == ("text number 3", "Title 3",
                                                                              {"n": 3, "acl": ["all"]})  # fmt: skip
            assert collection.get("nope") is None
            many = collection.get_many(["d4", "nope", "d0", "d4"])  # one request: present ones, each once
            assert sorted(many) == ["d0", "d4"] and many["d4"] == collection.get("d4") and collection.get_many([]) == {}
            assert sorted(d.id for d in collection.documents()) == [d.id for d in docs]
            assert dict(collection.metadata()) == {d.id: d.metadata for d in docs}
            unchanged = collection.generation
            assert collection.commit() == unchanged  # nothing staged: the generation stays
            assert collection.info()["generation"] == unchanged

    def test_sync_compares_content_hashes_and_keeps_what_failed_to_load(self, store: StoreUnderTest) -> None:
        """Planted: a sync that compared ids only (never hashes) failed here."""
        uri = store.new_uri()
        docs = [Document(f"doc{i}", f"text number {i}", "", {"n": i}) for i in range(5)]
        with self.open(store, uri) as collection:
            report = collection.sync(docs)
            assert (report.added, report.updated, report.deleted, report.unchanged) == (5, 0, 0, 0)
            collection.commit()
        changed = [*docs[:3], Document("doc3", "new text", "", {"n": 3}), Document("doc9", "fresh", "", {})]
        with self.open(store, uri) as collection:
            report = collection.sync(changed, keep={"doc4"})  # doc4 failed to load this time: kept
            assert (report.added, report.updated, report.deleted, report.unchanged) == (1, 1, 0, 3)
            collection.commit()
            assert len(collection) == 6 and collection.get("doc3").text == "new text"  # type: ignore[union-attr]
            assert collection.sync(changed).removed_documents == {"doc4"}
            collection.commit()
            assert collection.get("doc4") is None and len(collection) == 5

    def test_the_default_acl_is_stamped_and_a_resync_sees_no_change(self, store: StoreUnderTest) -> None:
        """Planted: the server stores' staged ``add`` importing a name the index module no longer had (every
        ``index --store --default-acl`` failed) failed here."""
        settings = IndexSettings(vector_index="flat", default_acl=("all",))
        docs = [Document("open", "no acl of its own"), Document("hr", "salaries", metadata={"acl": ["hr"]})]
        with self.open(store, settings=settings) as collection:
            collection.sync(docs)
            collection.commit()
            assert collection.get("open").metadata["acl"] == ["all"]  # type: ignore[union-attr]
            assert collection.get("hr").metadata["acl"] == ["hr"]  # type: ignore[union-attr]
            report = collection.sync(docs)  # the stamp is the store's doing, not a change of the source
            assert (report.added, report.updated, report.unchanged) == (0, 0, 2)

    def test_delete_by_id_and_by_document(self, store: StoreUnderTest) -> None:
        chunks = [Document(i, f"text {i}", "", {"doc_id": i.split("#")[0]}) for i in ("a#0", "a#1", "b#0", "c")]
        with self.open(store) as collection:
            collection.add(chunks)
            collection.commit()
            assert collection.delete(["b#0", "nope"]) == 1
            assert collection.delete_documents(["a"]) == 2
            assert len(collection) == 4  # not before the commit
            collection.commit()
            assert sorted(d.id for d in collection.documents()) == ["c"]

    # -- filters and the ACL ---------------------------------------------------------------------
    def test_filters_select_the_same_documents_inside_every_search(self, store: StoreUnderTest) -> None:
        """Planted: Milvus filter_documents ignoring its filter, and the embedded search_sparse dropping it,
        failed here."""
        docs = metadata_corpus()
        with self.open(store) as collection:
            collection.add(docs)
            collection.commit()
            for text in FILTERS:
                node = parse_filter(text)
                expected = {d.id for d in docs if admits(node, d.metadata)}
                assert {d.id for d in collection.filter_documents(node)} == expected, text
                # every document holds "shared": a search as deep as the collection returns exactly the admitted
                assert {i for i, _ in collection.search_sparse("shared", len(docs), node)} == expected, text
                top = collection.search_sparse("shared", 3, node)  # the filter applies before the top k
                assert len(top) == min(3, len(expected)) and {i for i, _ in top} <= expected, text

    def test_acl_no_document_outside_the_principals_groups(self, store: StoreUnderTest) -> None:
        """Planted: a search that dropped its filter failed here."""
        rng = random.Random(1)
        docs = []
        for i in range(120):
            meta = {"acl": rng.sample(GROUPS, rng.randint(0, 3))} if rng.random() < 0.9 else {}
            docs.append(Document(f"d{i}", " ".join(rng.choices(WORDS, k=8)), "", meta))
        acl_of = {d.id: set(d.metadata.get("acl", [])) for d in docs}
        with self.open(store) as collection:
            collection.sync(docs)
            collection.commit()
            returned = 0
            for _ in range(150):
                groups = rng.sample(GROUPS, rng.randint(0, 3))
                hits = collection.search_sparse(" ".join(rng.sample(WORDS, 2)), 30, acl_filter(groups))
                returned += len(hits)
                assert all(acl_of[doc_id] & set(groups) for doc_id, _ in hits), groups
            assert returned > 150  # the searches did return documents
            assert {d.id for d in collection.filter_documents(acl_filter(["g1"]))} == {
                d.id for d in docs if "g1" in acl_of[d.id]
            }

    # -- versions --------------------------------------------------------------------------------
    def test_the_version_graph_follows_the_generation(self, store: StoreUnderTest) -> None:
        """Planted: metadata() yielding deleted rows, and a generation that stayed, failed here."""
        docs = [
            Document("p1", "policy text old", "", {"doc_id": "p1", "effective_date": "2024-01-01",
                                                   "superseded_by": "p2"}),
            Document("p2", "policy text new", "", {"doc_id": "p2", "effective_date": "2025-01-01"}),
            Document("q", "policy text other", "", {"doc_id": "q"}),
        ]  # fmt: skip
        with self.open(store) as collection:
            collection.add(docs)
            collection.commit()
            current = VersionPolicy.parse("current").restriction(collection)
            assert {i for i, _ in collection.search_sparse("policy", 10, current)} == {"p2", "q"}
            as_of = VersionPolicy.parse("as-of=2024-06-30").restriction(collection)
            assert {i for i, _ in collection.search_sparse("policy", 10, as_of)} == {"p1", "q"}
            graph = version_graph(collection)
            assert graph.live == {"p1", "p2", "q"} and graph.successors == {"p1": {"p2"}}
            collection.delete(["p2"])
            collection.commit()  # a new generation: the graph is read again, p1 is current once more
            current = VersionPolicy.parse("current").restriction(collection)
            assert {i for i, _ in collection.search_sparse("policy", 10, current)} == {"p1", "q"}

    # -- stamps, refresh -------------------------------------------------------------------------
    def test_reopened_with_its_stamps_and_refused_with_others(self, store: StoreUnderTest) -> None:
        uri = store.new_uri()
        with self.open(store, uri) as collection:
            collection.add([Document("d", "text", "", {})])
            collection.commit()
            stamps = collection.stamps()
        with open_store(uri, None, create=False) as again:
            assert again.settings.to_dict() == FLAT.to_dict() and again.stamps()["settings"] == stamps["settings"]
            assert again.stamps()["format"] == stamps["format"]
        with pytest.raises(IndexMismatchError):
            open_store(uri, IndexSettings(vector_index="flat", chunker="structure:max_words=200"))

    def test_a_second_handle_reads_what_the_first_committed(self, store: StoreUnderTest) -> None:
        uri = store.new_uri()
        with self.open(store, uri) as writer:
            writer.add([Document("d0", "text", "", {})])
            writer.commit()
            with open_store(uri, None, create=False) as reader:
                writer.add([Document("d1", "more text", "", {})])
                writer.commit()
                reader.refresh()
                assert len(reader) == 2 and reader.generation == writer.generation
                assert reader.get("d1") is not None

    # -- failure during commit -------------------------------------------------------------------
    def test_a_commit_that_fails_partway_converges_when_run_again(
        self, store: StoreUnderTest, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Planted: a sync comparing ids only failed here, and (atomic store) a failure after the manifest swap."""
        uri = store.new_uri()
        first = [Document(f"d{i}", f"word{i} shared", "", {}) for i in range(10)]
        docs = [Document(f"d{i}", f"word{i} shared again", "", {}) for i in range(35)]
        with self.open(store, uri) as collection:
            collection.sync(first)
            collection.commit()
            generation = collection.generation
            collection.sync(docs)
            with monkeypatch.context() as patch:
                store.break_commit(collection, patch)
                with pytest.raises(Exception):  # noqa: B017  # whatever the store raises
                    collection.commit()
        with self.open(store, uri) as collection:
            if store.atomic:  # nothing of the failed commit shows
                assert collection.generation == generation
                assert sorted(d.text for d in collection.documents()) == sorted(d.text for d in first)
            report = collection.sync(docs)
            assert report.added + report.updated + report.unchanged == 35 and report.deleted == 0
            collection.commit()
            assert sorted(d.id for d in collection.documents()) == sorted(d.id for d in docs)  # no duplicate, no loss
            assert all(collection.get(d.id).text == d.text for d in docs)  # type: ignore[union-attr]

    # -- vectors ---------------------------------------------------------------------------------
    @pytest.mark.models
    def test_exact_vector_search_is_cosine_ranking_with_the_filter_inside(self, store: StoreUnderTest) -> None:
        """Vectors given (no passage embedded); the store loads MiniLM for its dimension only.

        Planted: a Milvus vector search that dropped its filter failed here. The hybrid search is held to its
        filter and to scores best first."""
        rng = np.random.default_rng(3)
        vectors = rng.normal(size=(60, 384)).astype(np.float32)
        docs = [Document(f"v{i}", f"text {i}", "", {"acl": ["even" if i % 2 == 0 else "odd"]}) for i in range(60)]
        with self.open(store, settings=IndexSettings(embedder="minilm", vector_index="flat")) as collection:
            collection.add(docs, vectors)
            collection.commit()
            unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
            query = unit[5] + 0.5 * unit[8]
            cosine = unit @ (query / np.linalg.norm(query))
            odd = restrict(None, acl_filter(["odd"]))
            for flt, rows in ((None, range(60)), (odd, range(1, 60, 2))):
                expected = sorted(rows, key=lambda r: -cosine[r])[:7]
                got = collection.search_vector(query, 7, flt)
                assert [i for i, _ in got] == [f"v{r}" for r in expected]
                assert np.allclose([s for _, s in got], cosine[expected], atol=1e-4)
            fused = collection.search_hybrid("text 5", 7, odd)  # BM25 and dense (a MiniLM query), filter inside
            assert 0 < len(fused) <= 7 and {i for i, _ in fused} <= {f"v{r}" for r in range(1, 60, 2)}
            assert [s for _, s in fused] == sorted((s for _, s in fused), reverse=True)
