"""The Milvus collection beside the embedded index on a real corpus (the store contract, ``store_contract.py``,
holds it to write, sync, delete, filters, ACL, versions, stamps and a failed commit like every store)."""

from __future__ import annotations

import json

from ragline.eval.datasets import load_dataset
from ragline.index.store import Index, IndexSettings
from ragline.store import milvus as milvus_store
from ragline.store import open_store


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


def test_a_search_fetches_its_hits_in_one_request(milvus_uri, monkeypatch):
    """The hits of a store retriever (and a parent expansion's chunks) come from one ``get`` request, not one per hit.

    Planted fault, checked: ``hits_for`` calling ``get`` per ranked id made ten requests for ten hits.
    """
    from ragline.retrieve.registry import build_retriever
    from ragline.types import Document

    docs = [Document(f"d{i}", f"shared words and item {i}", f"T{i}", {"acl": ["all"]}) for i in range(30)]
    with open_store(milvus_uri, IndexSettings(vector_index="flat")) as collection:
        collection.add(docs)
        collection.commit()
        requests = []
        get = collection.client.get
        monkeypatch.setattr(collection.client, "get", lambda *a, **kw: requests.append(kw.get("ids")) or get(*a, **kw))
        hits = build_retriever("bm25", collection).search("shared words", 10, "acl in [all]")
        assert len(hits) == 10 and all(h.text.startswith("shared words") for h in hits)
        assert len(requests) == 1 and sorted(requests[0]) == sorted(h.doc_id for h in hits)
