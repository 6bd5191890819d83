"""The Milvus collection: ACL never leaks, sync by content hash, stamps, convergence after a failed commit."""

from __future__ import annotations

import json
import random

import pytest

from ragline.errors import IndexMismatchError, InputError
from ragline.eval.datasets import load_dataset
from ragline.index.filters import acl_filter
from ragline.index.store import Index, IndexSettings
from ragline.store import milvus as milvus_store
from ragline.store import open_store
from ragline.types import Document

GROUPS = [f"g{i}" for i in range(12)] + ["2024", "a,b", "or"]
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def test_acl_no_document_outside_the_principals_groups(milvus_uri):
    rng = random.Random(1)
    documents = []
    for i in range(300):
        acl = rng.sample(GROUPS, rng.randint(0, 3))
        meta = {"acl": acl} if rng.random() < 0.9 else {}
        documents.append(Document(f"d{i}", " ".join(rng.choices(WORDS, k=8)), "", meta))
    acl_of = {d.id: set(d.metadata.get("acl", [])) for d in documents}
    with open_store(milvus_uri, IndexSettings(vector_index="flat")) as collection:
        collection.sync(documents)
        collection.commit()
        pairs = returned = 0
        for _ in range(1000):
            groups = rng.sample(GROUPS, rng.randint(0, 3))
            query = " ".join(rng.sample(WORDS, 2))
            hits = collection.search_sparse(query, 50, acl_filter(groups))
            pairs += 1
            returned += len(hits)
            assert all(acl_of[doc_id] & set(groups) for doc_id, _ in hits), (groups, query, hits)
        assert pairs == 1000 and returned > 1000  # the searches did return documents


def test_sync_adds_updates_deletes_by_hash_and_reopens_with_its_stamps(milvus_uri):
    settings = IndexSettings(vector_index="flat")
    docs = [Document(f"doc{i}", f"text number {i}", "", {"n": i}) for i in range(5)]
    with open_store(milvus_uri, settings) as collection:
        assert vars(collection.sync(docs)) == {"added": 5, "updated": 0, "deleted": 0, "unchanged": 0,
                                               "removed_documents": set(), "live_documents": 0}  # fmt: skip
        collection.commit()
    changed = [*docs[:3], Document("doc3", "new text", "", {"n": 3}), Document("doc9", "fresh", "", {})]
    with open_store(milvus_uri, settings) as collection:
        report = collection.sync(changed, keep={"doc4"})  # doc4 failed to load this time: kept
        assert vars(report) == {"added": 1, "updated": 1, "deleted": 0, "unchanged": 3,
                                "removed_documents": set(), "live_documents": 5}  # fmt: skip
        collection.commit()
        assert len(collection) == 6 and collection.get("doc3").text == "new text"
        assert collection.sync(changed).removed_documents == {"doc4"}
        collection.commit()
        assert collection.get("doc4") is None and len(collection) == 5
    with pytest.raises(IndexMismatchError, match="other settings"):
        open_store(milvus_uri, IndexSettings(vector_index="flat", chunker="structure:max_words=200"))


def test_a_commit_that_fails_midway_converges_when_run_again(milvus_uri, monkeypatch):
    monkeypatch.setattr(milvus_store, "BATCH", 10)
    docs = [Document(f"d{i}", f"word{i} shared", "", {}) for i in range(35)]
    too_long = Document("d30", "x " * 40000, "", {})  # in the fourth batch: three batches are already written
    with open_store(milvus_uri, IndexSettings(vector_index="flat")) as collection:
        collection.sync([*docs[:30], too_long, *docs[31:]])
        with pytest.raises(InputError, match="d30"):
            collection.commit()
    with open_store(milvus_uri, IndexSettings(vector_index="flat")) as collection:
        assert 0 < len(collection) < 35  # the failed run wrote part
        report = collection.sync(docs)
        assert report.unchanged == 30 and report.added == 5
        collection.commit()
        ids = sorted(row["id"] for row in collection.client.query(collection.name, filter='id != ""', limit=100))
        assert ids == sorted(d.id for d in docs)  # no duplicate, no loss


def test_cranfield_slice_bm25_close_to_the_embedded_index(milvus_uri, bench):
    dataset = load_dataset(bench / "cranfield")
    corpus = dataset.corpus[:200]
    index = Index.create(None, IndexSettings())
    index.add(corpus)
    index.commit()
    with open_store(milvus_uri, IndexSettings(vector_index="flat")) as collection:
        collection.sync(corpus)
        collection.commit()
        assert len(collection) == 200
        overlaps = []
        for text in list(dataset.queries.values())[:30]:
            ours = {i for i, _ in index.search_ids(text, 10)}
            theirs = {i for i, _ in collection.search_sparse(text, 10)}
            overlaps.append(len(ours & theirs) / max(1, len(ours)))
        # Different analyzers (Milvus: no stemming, no stopwords), same corpus statistics: mostly the same top 10.
        assert sum(overlaps) / len(overlaps) > 0.5
        assert json.loads(collection.properties[milvus_store.SETTINGS_KEY]) == collection.settings.to_dict()
