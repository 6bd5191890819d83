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
    assert first.retriever["name"] == "store-bm25"
    assert 0.1 < first.metrics["ndcg@10"] <= 1.0
    assert again.metrics == first.metrics  # the same collection, reused


def test_ragline_eval_store_flag_gives_the_same_json_shape(tmp_path, milvus_uri, capsys):
    # `ragline eval DIR --store milvus://...` evaluates through the collection, output as for the embedded store.
    import json

    from ragline.cli import main

    root = tmp_path / "set"
    (root / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{i}", "text": f"report {i} on wing flutter at mach {i}"} for i in range(12)]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q", "text": "flutter at mach 7"}) + "\n")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\td7\t1\n")
    assert main(["eval", str(root), "--store", milvus_uri, "--output", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["metrics"]["hit@10"] == 1.0 and result["provenance"]["store"] == milvus_uri
    assert main(["eval", str(root), "--store", milvus_uri, "--reader", "extractive"]) == 2
