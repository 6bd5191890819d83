"""Stores by URI scheme in the one registry; the store retrievers' names, aliases and mapping."""

from __future__ import annotations

import pytest

from ragline.components import component, names
from ragline.errors import ConfigError
from ragline.index.store import Index
from ragline.retrieve.registry import build_retriever
from ragline.retrieve.store import StoreBM25Retriever, for_store
from ragline.store import open_store
from ragline.store.embedded import EmbeddedCollection
from ragline.types import Document


def test_stores_are_opened_by_scheme_and_an_unknown_one_lists_the_choices(tmp_path):
    with open_store(f"file://{tmp_path / 'a'}") as collection:
        assert isinstance(collection, EmbeddedCollection) and collection.index.path == tmp_path / "a"
    with open_store(str(tmp_path / "b")) as collection:
        assert isinstance(collection, EmbeddedCollection)
    assert {"file", "milvus", "postgresql"} <= set(names("store"))
    assert component("store", "milvus+tls") is component("store", "milvus")  # an alias
    assert component("store", "postgres") is component("store", "postgresql")
    with pytest.raises(ConfigError, match="unknown store 'mongodb'.*file.*milvus.*postgresql"):
        open_store("mongodb://localhost/db")


def test_old_milvus_names_are_aliases_of_the_store_retrievers_and_not_listed():
    """Planted: registering the alias as its own name (listed twice) failed here."""
    for old, new in (("milvus-bm25", "store-bm25"), ("milvus-dense", "store-dense"), ("milvus-hybrid", "store-hybrid")):
        assert component("retriever", old) is component("retriever", new)
        assert old not in names("retriever") and new in names("retriever")
    index = Index.create(None)
    index.add([Document("d", "cats sleep", "", {})])
    index.commit()
    retriever = build_retriever("milvus-bm25", index)  # an old config's name still builds
    assert isinstance(retriever, StoreBM25Retriever) and retriever.config()["name"] == "store-bm25"
    assert retriever.rank("cats", 5)[0][0] == "d"


def test_on_a_store_the_embedded_retrievers_map_to_the_stores_own_searches():
    assert for_store("hybrid") == {"name": "store-hybrid"}
    assert for_store("dense") == {"name": "store-dense"}
    assert for_store("store-hybrid:fusion=rrf,k=30") == {"name": "store-hybrid", "fusion": "rrf", "k": 30}
    with pytest.raises(ConfigError, match="k1"):  # a parameter the store cannot honour is not dropped silently
        for_store("bm25:k1=1.2")
    with pytest.raises(ConfigError, match="maxsim.*store-bm25"):
        for_store("maxsim")
