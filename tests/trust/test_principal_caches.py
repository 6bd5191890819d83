"""Caches and derived artifacts under principals: LLM replies and LLM-written chunk context are keyed by the
ACLs of the documents they come from; chunks inherit their document's ACL; the embedding cache holds no text."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from llm_fakes import FakeLLM
from ragline.answer.context import build_context
from ragline.answer.pipeline import LLMReader
from ragline.ingest.chunkers import build_chunker
from ragline.ingest.llm_context import LLMContextualizer
from ragline.models.llm import CachedLLM, LLMResponseCache
from ragline.models.llm.cache import acl_scope
from ragline.types import Document, Hit


def _cached(tmp_path: Path, reply: str = "ok") -> tuple[FakeLLM, CachedLLM]:
    fake = FakeLLM(lambda *args: reply)
    return fake, CachedLLM(fake, LLMResponseCache(tmp_path / "llm.sqlite"))


def test_a_reply_is_served_only_within_its_scope(tmp_path: Path) -> None:
    fake, llm = _cached(tmp_path)
    messages = [{"role": "user", "content": "What is the salary band?"}]
    llm.chat(messages, scope=acl_scope([["hr"]]))
    llm.chat(messages, scope=acl_scope([["hr"]]))
    llm.chat(messages, scope=acl_scope([["all"]]))
    assert (llm.hits, llm.misses, len(fake.calls)) == (1, 2, 2)
    assert acl_scope([["hr", "all"], None]) == acl_scope([None, ["all", "hr"]])  # canonical: order-free
    llm.chat(messages)  # no scope: the key it always had (an old cache stays valid)
    assert llm.misses == 3


def test_reader_keys_replies_by_the_acls_of_its_sources(tmp_path: Path) -> None:
    fake, llm = _cached(tmp_path, "The band is B4 [1].")
    reader = LLMReader(llm=llm)
    text = "The salary band for engineers is B4."
    hr = build_context([Hit("pay", 1.0, 1, "Pay", text, {"acl": ["hr"]})], 1500, "rank")
    everyone = build_context([Hit("pay", 1.0, 1, "Pay", text, {"acl": ["all"]})], 1500, "rank")
    reader.read("What is the band?", hr)
    reader.read("What is the band?", everyone)  # same prompt, other ACL: not served from the hr entry
    assert len(fake.calls) == 2
    list(reader.stream("What is the band?", hr))  # the same scope as read: a hit
    assert len(fake.calls) == 2


def test_llm_context_is_scoped_by_the_document_acl_and_chunks_inherit_it(tmp_path: Path) -> None:
    fake, llm = _cached(tmp_path, "This chunk is about pay.")
    contextualizer = LLMContextualizer(llm, max_tokens=16)
    body = "# Pay\n\nSalaries are paid on the 25th. The band for engineers is B4."
    for acl in (["hr"], ["all"], ["hr"]):
        document = Document("pay", body, "Pay", {"acl": acl})
        chunks, _ = contextualizer.contextualize(document, build_chunker("fixed:size=100").chunk(document))
        assert all(c.metadata["acl"] == acl for c in chunks)
    assert len(fake.calls) == 2  # hr, all; the second hr document is served from the hr entry


@pytest.mark.slow
def test_embedding_cache_maps_text_to_a_vector_and_stores_no_text(tmp_path: Path) -> None:
    from ragline.models import CachedEmbedder, EmbeddingCache, load_embedder

    secret = "The executive salary approval code is E4471ZQ."
    embedder = CachedEmbedder(load_embedder("minilm"), EmbeddingCache(tmp_path / "emb.sqlite"))
    first = embedder.embed_passages([secret], progress=False)
    again = embedder.embed_passages([secret], progress=False)
    assert embedder.cached == 1 and (first == again).all()
    embedder.cache.close()
    for file in tmp_path.glob("emb.sqlite*"):  # the database and its write-ahead log
        assert b"E4471ZQ" not in file.read_bytes() and b"salary" not in file.read_bytes()
    with sqlite3.connect(tmp_path / "emb.sqlite") as db:
        assert [c[1] for c in db.execute("PRAGMA table_info(embeddings)")] == ["model", "hash", "vector"]
