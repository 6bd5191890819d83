import dataclasses

import pytest

from ragline.config import load_config
from ragline.eval.datasets import load_dataset
from ragline.store.evaluate import evaluate_on_store


@pytest.fixture
def cranfield_slice(bench):
    """200 Cranfield documents and the queries judged on them (their qrels restricted to those documents)."""
    dataset = load_dataset(bench / "cranfield")
    corpus = dataset.corpus[:200]
    ids = {d.id for d in corpus}
    qrels = {q: {d: g for d, g in judged.items() if d in ids} for q, judged in dataset.qrels.items()}
    qrels = {q: judged for q, judged in qrels.items() if judged}
    return dataclasses.replace(dataset, corpus=corpus, qrels=qrels)


def test_eval_through_milvus_and_reuse_of_the_collection(cranfield_slice, milvus_uri):
    config = load_config("bm25")
    config = dataclasses.replace(config, ingest=dataclasses.replace(config.ingest, chunker="none", context="none"))
    first = evaluate_on_store(cranfield_slice, config, milvus_uri, metrics=("ndcg@10",), depth=100)
    again = evaluate_on_store(cranfield_slice, config, milvus_uri, metrics=("ndcg@10",), depth=100)
    assert first.retriever["name"] == "milvus-bm25"
    assert 0.1 < first.metrics["ndcg@10"] <= 1.0
    assert again.metrics == first.metrics  # the same collection, reused
