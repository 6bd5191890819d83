"""Training a reranker here: seeded, resumable, saved with a card, named as trained:NAME."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ragline.components import build
from ragline.errors import ConfigError, ModelError
from ragline.eval.datasets import load_beir
from ragline.train.data import mine_examples, split_dev
from ragline.train.models import resolve_model
from ragline.train.reranker import RerankerTraining, train_reranker
from train.tiny_beir import encoder_change, write_tiny_beir

pytest.importorskip("sentence_transformers")

TINY = RerankerTraining(
    negatives=2, mine_depth=5, dev_fraction=0.25, dev_depth=3, epochs=2, max_steps=4, queries_per_step=2,
    max_length=48, eval_every=2, patience=5, learning_rate=1e-4,
)  # fmt: skip


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write_tiny_beir(tmp_path / "tiny")


def test_split_dev_is_seeded_and_disjoint():
    ids = [f"q{i}" for i in range(20)]
    train, dev = split_dev(ids, 0.25, seed=3)
    assert (train, dev) == split_dev(ids, 0.25, seed=3)
    assert len(dev) == 5 and not set(train) & set(dev) and sorted(train + dev) == sorted(ids)
    assert split_dev(ids, 0.25, seed=4)[1] != dev
    with pytest.raises(ConfigError, match="dev fraction"):
        split_dev(ids, 1.5, seed=0)


def test_mined_negatives_never_include_a_judged_document(tiny: Path):
    from ragline.index.store import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index
    from ragline.retrieve.registry import build_retriever

    dataset = load_beir(tiny, "train")
    dataset.qrels["q-salt"]["salt-survey"] = 0  # judged non-relevant: still not taught as a negative
    index = build_index(dataset.corpus, IngestConfig(), IndexSettings())
    examples = mine_examples(dataset, build_retriever("bm25", index), sorted(dataset.queries), 3, 10, seed=0)
    assert len(examples) == 8
    for example in examples:
        assert set(example.negatives).isdisjoint(dataset.qrels[example.query_id])
        assert example.positives == (example.query_id.removeprefix("q-"),)
    salt = next(e for e in examples if e.query_id == "q-salt")
    assert "salt-survey" not in salt.negatives


def test_same_seed_same_model_and_interrupted_run_resumes(tiny: Path, tmp_path: Path, monkeypatch):
    """Also: the saved model's transformer weights moved from MiniLM's. Planted fault: the training loop's
    ``optimizer.step()`` removed (reproducible, resumable, and never trained: the old checks all passed)."""
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "a"))
    first = train_reranker(tiny, "tiny", TINY, progress=False)
    assert first["steps"] == 4 and first["dev_queries"] == 2 and first["train_queries"] == 6
    folder = Path(resolve_model("trained:tiny"))
    assert folder == tmp_path / "a" / "models" / "tiny"
    assert encoder_change(folder) > 1e-6  # the optimizer stepped
    assert json.loads((folder / "card.json").read_text())["dev"]["best"] == first["dev"]["best"]

    # The same run again, interrupted after its first checkpoint (step 2), then started again.
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "b"))
    messages: list[str] = []

    def stop_at_step_2(message: str) -> None:
        messages.append(message)
        if message.startswith("step 2/"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_reranker(tiny, "tiny", TINY, log=stop_at_step_2, progress=False)
    assert (tmp_path / "b" / "models" / "tiny.partial" / "state.json").is_file()
    messages.clear()
    again = train_reranker(tiny, "tiny", TINY, log=messages.append, progress=False)
    assert any(m.startswith("resuming from step 2") for m in messages)
    assert not (tmp_path / "b" / "models" / "tiny.partial").exists()
    for a, b in zip(first["dev"]["history"], again["dev"]["history"]):
        assert a["step"] == b["step"] and abs(a["ndcg@10"] - b["ndcg@10"]) <= 1e-6
    assert first["loss_first_last"] == again["loss_first_last"]

    # The saved models score alike: the reranker built from trained:tiny gives the same scores.
    from ragline.types import Hit

    hits = [Hit("salt", 1.0, 1, "Salt", "Lower salt intake reduced blood pressure."), Hit("x", 0.5, 2, "", "Letters.")]
    scores_b = build("reranker", "cross:model=trained:tiny,max_length=48").scores("salt and blood pressure", hits)
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "a"))
    scores_a = build("reranker", "cross:model=trained:tiny,max_length=48").scores("salt and blood pressure", hits)
    assert scores_a.tolist() == pytest.approx(scores_b.tolist(), abs=1e-5)


def test_another_seed_gives_another_dev_slice(tiny: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path))
    card = train_reranker(tiny, "tiny", replace(TINY, seed=1, max_steps=2), progress=False)
    assert card["settings"]["seed"] == 1 and card["steps"] == 2
    assert card["dev"]["untrained"] is not None and card["commit"] is None or isinstance(card["commit"], str)


def test_a_missing_trained_model_names_the_command_that_trains_it(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path))
    with pytest.raises(ModelError, match="ragline train reranker DATASET --name scifact"):
        build("reranker", "cross:model=trained:scifact")
    with pytest.raises(ConfigError, match="model name"):
        resolve_model("trained:../escape")
