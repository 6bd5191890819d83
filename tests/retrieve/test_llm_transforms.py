"""The LLM query transforms (rewrite, multi-query, HyDE, decompose) and RM3 under a principal's filter."""

from __future__ import annotations

import numpy as np
import pytest

from llm_fakes import FakeLLM
from ragline.components import build
from ragline.errors import ConfigError
from ragline.index.filters import acl_filter
from ragline.index.store import Index, IndexSettings
from ragline.models.llm import CachedLLM, LLMResponseCache
from ragline.retrieve.fusion import fuse, rank
from ragline.retrieve.transforms import reply_lines, weighted_queries
from ragline.roles import Query
from ragline.types import Document

DOCS = [
    Document("fever", "Aspirin lowers fever and eases headache pain in adults.", metadata={"acl": ["all"]}),
    Document("pain", "Aspirin and ibuprofen: fever and headache compared.", metadata={"acl": ["all"]}),
    Document("secret", "Aspirin fever trial codename zebrafinch, results embargoed.", metadata={"acl": ["hr"]}),
    Document("bird", "The zebrafinch sings at dawn in the garden.", metadata={"acl": ["all"]}),
    Document("cars", "Electric cars need batteries that last ten years.", metadata={"acl": ["all"]}),
]


@pytest.fixture(scope="module")
def index() -> Index:
    index = Index.create(None, IndexSettings())
    index.add(DOCS)
    index.commit()
    return index


def cached(reply, tmp_path) -> tuple[FakeLLM, CachedLLM]:
    model = FakeLLM(reply)
    return model, CachedLLM(model, LLMResponseCache(tmp_path))


def test_rm3_reads_only_the_documents_the_filter_admits(index: Index):
    rm3 = build("query_transform", "rm3:fb_docs=3,fb_terms=10", index=index)
    everyone = acl_filter(["all"])
    assert "zebrafinch" in [w for w, _ in rm3.expansion_terms("aspirin fever")]  # unfiltered, it reads "secret"
    assert "zebrafinch" not in [w for w, _ in rm3.expansion_terms("aspirin fever", everyone)]
    assert "zebrafinch" not in " ".join(q for q, _ in weighted_queries(rm3, "aspirin fever", everyone))
    # Through the retriever: the secret's codename must not pull in the public document that shares it.
    retriever = build("retriever", 'transformed:transforms="rm3:fb_docs=3,fb_terms=10"', index=index)
    assert "bird" not in dict(retriever.rank("aspirin fever", 10, everyone))
    assert "bird" in dict(retriever.rank("aspirin fever", 10))


def test_reply_lines_drop_markers_repeats_and_the_query():
    reply = '1. pain relief drugs\n2) "fever medicine"\n- pain relief drugs\nQuery 3: Aspirin fever\n\n* ok'
    assert reply_lines(reply, "aspirin fever") == ["pain relief drugs", "fever medicine"]


def test_multi_query_adds_each_paraphrase_at_weight_one_and_caches(index: Index, tmp_path):
    model, llm = cached(["1. drugs for a temperature\n2. headache pills\n3. a third\n4. a fourth"], tmp_path)
    multi = build("query_transform", "multi-query:n=2", index=index, llm=llm)
    expected = [("aspirin fever", 1.0), ("drugs for a temperature", 1.0), ("headache pills", 1.0)]
    assert multi.transform("aspirin fever") == expected
    assert multi.transform("aspirin fever") == expected and len(model.calls) == 1  # the second from the cache
    assert "3 different" not in model.calls[0][0]["content"] and "2 different" in model.calls[0][0]["content"]
    with pytest.raises(ConfigError, match="n must be"):
        build("query_transform", "multi-query:n=0", index=index, llm=llm)


def test_rewrite_keeps_the_query_and_adds_the_rewrite(index: Index, tmp_path):
    _, llm = cached(["Aspirin fever reduction\n", "aspirin fever"], tmp_path)
    rewrite = build("query_transform", "rewrite:weight=0.5", index=index, llm=llm)
    assert rewrite.transform("does aspirin help a temperature") == [
        ("does aspirin help a temperature", 1.0), ("Aspirin fever reduction", 0.5)]  # fmt: skip
    assert rewrite.transform("aspirin fever") == [("aspirin fever", 1.0)]  # a rewrite equal to the query adds nothing


def test_decompose_uses_the_agents_decomposer_without_the_bridge_slot(index: Index, tmp_path):
    _, llm = cached(["Which trial studied aspirin?\nWho runs {bridge}?"], tmp_path)
    decompose = build("query_transform", "decompose:weight=0.5", index=index, llm=llm)
    assert decompose.transform("Who runs the trial that studied aspirin?") == [
        ("Who runs the trial that studied aspirin?", 1.0), ("Which trial studied aspirin?", 0.5),
        ("Who runs ?", 0.5)]  # fmt: skip
    rules = build("query_transform", "decompose:decomposer=rules", index=index)  # no model needed
    queries = rules.transform("Who leads the team that maintains SS-900?")
    assert [q for q, _ in queries][1:] == ["team that maintains SS-900", "Who leads ?"]


@pytest.mark.models
def test_hyde_gives_dense_legs_the_mean_of_query_and_passage_vectors(tmp_path):
    index = Index.create(None, IndexSettings(embedder="minilm"))
    index.add(DOCS)
    index.commit()
    passage = "Aspirin brings a high temperature down within an hour."
    _, llm = cached(lambda *args: passage, tmp_path)
    hyde = build("query_transform", "hyde", index=index, llm=llm)
    query = "does aspirin help a temperature"
    (original, w0), (hypothetical, w1) = hyde.transform(query)
    assert (original, w0, w1) == (query, 1.0, 1.0) and isinstance(hypothetical, Query)
    assert hypothetical.text == passage
    q, p = index.embedder.embed_queries([query, passage])
    mean = (q / np.linalg.norm(q) + p / np.linalg.norm(p)) / 2
    np.testing.assert_allclose(hypothetical.vector, mean / np.linalg.norm(mean), atol=1e-5)

    dense = build("retriever", "dense", index=index)
    by_vector = [(index.segments[si].ids[row], s) for si, row, s in index.search_vector(hypothetical.vector, 5)]
    assert dense.rank_query(hypothetical, 5) == by_vector
    assert dense.rank_query(hypothetical, 5) != dense.rank(passage, 5)  # not the passage's own vector
    hybrid = build("retriever", "hybrid", index=index)
    runs = [dict(build("retriever", "bm25", index=index).rank(passage, 100)), dict(index_run(index, hypothetical))]
    assert hybrid.rank_query(hypothetical, 5) == rank(fuse("z_score", runs), 5)

    retriever = build("retriever", "transformed:first=dense,transforms=hyde", index=index, llm=llm)
    expected = rank(fuse("rrf", [dict(dense.rank(query, 1000)), dict(index_run(index, hypothetical, 1000))]), 5)
    assert retriever.rank(query, 5) == expected


def index_run(index: Index, query: Query, k: int = 100) -> list[tuple[str, float]]:
    return [(index.segments[si].ids[row], s) for si, row, s in index.search_vector(query.vector, k)]


def test_a_pipeline_hands_its_filter_to_rm3(index: Index):
    from ragline.answer.pipeline import RAGPipeline

    rm3 = build("query_transform", "rm3:fb_docs=3,fb_terms=10", index=index)
    pipeline = RAGPipeline(index, None, retriever="bm25", k=10, transforms=[rm3], versions="all")
    assert "bird" in [h.doc_id for h in pipeline.retrieve("aspirin fever")]
    assert "bird" not in [h.doc_id for h in pipeline.retrieve("aspirin fever", acl_filter(["all"]))]
