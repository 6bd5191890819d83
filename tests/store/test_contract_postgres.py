"""The store contract (``store_contract.py``) on PostgreSQL with pgvector (``postgresql://`` URIs, conftest's
server): BM25 over the collection's own inverted index, exact cosine search, filters judged before the top k,
and a commit that is one transaction."""

from __future__ import annotations

import itertools
import time
from typing import Any
from urllib.parse import urlsplit

import pytest
from store_contract import CollectionContract, StoreUnderTest

from ragline.store import postgres as postgres_store

_names = itertools.count()


def _fail_after_two_batches(collection: Any, patch: pytest.MonkeyPatch) -> None:
    """Batches of 10; the third upsert fails (a dropped connection, say) after two were written."""
    patch.setattr(postgres_store, "BATCH", 10)
    upsert, calls = collection._upsert, itertools.count()

    def flaky(*args: Any, **kwargs: Any) -> Any:
        if next(calls) == 2:
            raise ConnectionError("connection reset (planted)")
        return upsert(*args, **kwargs)

    patch.setattr(collection, "_upsert", flaky)


class TestPostgres(CollectionContract):
    @pytest.fixture
    def store(self, postgres_server: str) -> StoreUnderTest:
        stamp = int(time.time() * 1000) % 10**8
        parts = urlsplit(postgres_server)

        def new_uri() -> str:
            return f"postgresql://{parts.netloc}{parts.path}/contract{next(_names)}_{stamp}?{parts.query}"

        return StoreUnderTest(new_uri, _fail_after_two_batches, atomic=True)


def test_index_and_search_on_postgres_give_the_embedded_index_bm25_hits(postgres_server, tmp_path, capsys) -> None:
    """``ragline index --store postgresql://...`` then ``search --store``: ragline's BM25 over the table's own
    inverted index, so the same hits and scores as the embedded index, the ACL inside.

    Planted faults, checked: ``search_sparse`` scoring with the idf of the first query term for every term, and
    counting a repeated query term once (the embedded index counts each repeat), gave other scores than the
    embedded index.
    """
    import json

    from ragline.cli import main

    folder = tmp_path / "docs"
    folder.mkdir()
    texts = {
        "cats": "Cats sleep for most of the day. A cat purrs when it is content.",
        "dogs": "Dogs bark at strangers. A dog needs a daily walk and a bowl of water.",
        "pets": "A pet cat or dog needs water every day; cats drink less than dogs.",
        "hr": "The dog trainer earns forty thousand a year.",
    }
    for name, text in texts.items():
        acl = "hr" if name == "hr" else "all"
        (folder / f"{name}.md").write_text(f"---\nacl: [{acl}]\n---\n# {name.title()}\n{text}\n")
    parts = urlsplit(postgres_server)
    uri = f"postgresql://{parts.netloc}{parts.path}/cli{next(_names)}?{parts.query}"
    flags = ["--embedder", "none", "--output", "json"]
    assert main(["index", str(folder), "--store", uri, *flags]) == 0
    assert main(["index", str(folder), "--index", str(tmp_path / "index"), *flags]) == 0
    capsys.readouterr()
    asked = ("does a dog need water", "what does the dog trainer earn", "water for a dog or a cat, a dog")
    for question, groups in ((q, "all") for q in asked):
        hits = {}
        for where in (["--store", uri], ["--index", str(tmp_path / "index")]):
            assert main(["search", question, *where, "--retriever", "bm25", "--groups", groups, *flags[2:]]) == 0
            hits[where[0]] = [
                (h["chunk_id"], round(h["score"], 4)) for h in json.loads(capsys.readouterr().out)["hits"]
            ]
        assert hits["--store"] == hits["--index"] and hits["--store"]
        assert all(not chunk.startswith("hr") for chunk, _ in hits["--store"])


def test_a_postgres_uri_names_database_and_collection_and_never_prints_the_password() -> None:
    """Planted fault, checked: the error quoting the URI as given printed the password."""
    from ragline.errors import ConfigError

    conninfo, name = postgres_store.parse_postgres_uri("postgresql://me:secret@db.local:5433/rag/Docs?sslmode=require")
    assert (conninfo, name) == ("postgresql://me:secret@db.local:5433/rag?sslmode=require", "docs")
    for bad in ("postgresql://me:secret@h/rag", "postgresql://me:secret@h/rag/bad-name", "mysql://h/a/b"):
        with pytest.raises(ConfigError) as caught:
            postgres_store.parse_postgres_uri(bad)
        assert "secret" not in str(caught.value)
