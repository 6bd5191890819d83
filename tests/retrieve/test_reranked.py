"""The cross-encoder reranker, its grader, and the reranked retriever over a first stage."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.components import build, spec_of
from ragline.errors import ConfigError
from ragline.eval.datasets import load_beir
from ragline.index.store import IndexSettings
from ragline.ingest.pipeline import IngestConfig, build_index
from ragline.retrieve.base import hits_for
from ragline.train.reranker import RerankerTraining, train_reranker
from train.tiny_beir import write_tiny_beir

pytest.importorskip("sentence_transformers")

RERANKER = "cross:model=trained:tiny,max_length=48"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("reranked")
    folder = write_tiny_beir(root / "tiny")
    patch = pytest.MonkeyPatch()
    patch.setenv("RAGLINE_CACHE", str(root / "cache"))
    settings = RerankerTraining(negatives=2, mine_depth=5, dev_fraction=0.25, dev_depth=3, max_steps=2, max_length=48)
    train_reranker(folder, "tiny", settings, progress=False)
    dataset = load_beir(folder, "test")
    yield dataset, build_index(dataset.corpus, IngestConfig(), IndexSettings())
    patch.undo()


def test_reranked_retriever_reorders_the_top_depth_and_keeps_the_rest_in_first_stage_order(setup):
    dataset, index = setup
    query = "does less salt lower blood pressure"
    first = build("retriever", "bm25", index=index).rank(query, 10)
    spec = f'reranked:first=bm25,reranker="{RERANKER}",depth=4'
    ranked = build("retriever", spec, index=index).rank(query, 10)
    expected_top = build("reranker", RERANKER).rerank(query, hits_for(index, first[:4]), 4)
    assert [doc for doc, _ in ranked[:4]] == [hit.doc_id for hit in expected_top]
    assert [doc for doc, _ in ranked[4:]] == [doc for doc, _ in first[4:10]]
    scores = [score for _, score in ranked]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)


def test_interpolation_zero_keeps_the_first_stage_order_and_one_is_the_cross_encoders(setup):
    dataset, index = setup
    query = "does smoking cause lung cancer"
    hits = build("retriever", "bm25", index=index).search(query, 6)
    kept = build("reranker", f"{RERANKER},interpolate=0").rerank(query, hits, 6)
    assert [h.doc_id for h in kept] == [h.doc_id for h in hits]
    cross = build("reranker", RERANKER)
    scores = cross.scores(query, hits)
    by_cross = [hits[i].doc_id for i in sorted(range(len(hits)), key=lambda i: -scores[i])]
    assert [h.doc_id for h in cross.rerank(query, hits, 3)] == by_cross[:3]
    assert [h.rank for h in cross.rerank(query, hits, 3)] == [1, 2, 3]


def test_the_grader_gives_probabilities_in_the_cross_encoders_order(setup):
    dataset, index = setup
    query = "do statins prevent heart attacks"
    hits = build("retriever", "bm25", index=index).search(query, 5)
    grades = build("grader", "cross-encoder:model=trained:tiny,max_length=48").grade(query, hits)
    scores = build("reranker", RERANKER).scores(query, hits)
    assert all(0.0 < g < 1.0 for g in grades)
    order = range(len(hits))
    assert len(hits) >= 2 and sorted(order, key=lambda i: -grades[i]) == sorted(order, key=lambda i: -scores[i])


def test_bad_settings_are_config_errors(setup):
    dataset, index = setup
    with pytest.raises(ConfigError, match="interpolate"):
        build("reranker", f"{RERANKER},interpolate=2")
    with pytest.raises(ConfigError, match="depth"):
        build("retriever", f'reranked:first=bm25,reranker="{RERANKER}",depth=0', index=index)
    assert build("retriever", f'reranked:first=bm25,reranker="{RERANKER}"', index=index).search("the of", 5) == []


def test_the_reranked_config_names_both_stages(setup, tmp_path: Path):
    dataset, index = setup
    config = build("retriever", f'reranked:first=bm25,reranker="{RERANKER}",depth=7', index=index).config()
    assert config["first"]["name"] == "bm25" and config["depth"] == 7
    assert config["reranker"]["model"] == "trained:tiny" and config["reranker"]["model_id"].startswith("tiny@")


def test_the_shipped_scifact_pipeline_parses_and_asks_for_its_training(setup, tmp_path: Path, monkeypatch):
    from ragline.config import load_config
    from ragline.errors import ModelError

    dataset, index = setup
    config = load_config(Path(__file__).resolve().parents[2] / "pipelines" / "scifact-best.toml")
    name, params = spec_of(config.retrieve.retriever)
    assert name == "reranked" and spec_of(params["reranker"])[1]["model"] == "trained:scifact"
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path))  # no model trained there
    with pytest.raises(ModelError, match="ragline train reranker DATASET --name scifact"):
        build("retriever", {**params, "name": name, "first": "bm25"}, index=index)
