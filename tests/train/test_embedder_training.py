"""Training an embedder here: seeded, resumable, saved with a card, named as trained:NAME wherever an
embedder is named, and an index embedded by other weights under that name is refused."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ragline.cli import main
from ragline.errors import IndexMismatchError, ModelError
from ragline.eval.datasets import load_beir
from ragline.train.embedder import EmbedderTraining, dev_pool, train_embedder
from train.tiny_beir import encoder_change, write_tiny_beir

pytest.importorskip("sentence_transformers")

TINY = EmbedderTraining(
    mine_depth=5, dev_fraction=0.5, dev_pool=8, epochs=2, max_steps=4, batch_size=3, max_seq_length=64,
    eval_every=2, patience=5, learning_rate=1e-4,
)  # fmt: skip
PASSAGES = ["Lower salt intake reduced blood pressure.", "Coffee drinkers had lower rates of cirrhosis."]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write_tiny_beir(tmp_path / "tiny")


def _vectors() -> np.ndarray:
    from ragline.models.embedders import load_embedder

    return load_embedder("trained:tiny").embed_passages(PASSAGES, progress=False)


def test_same_seed_same_model_and_interrupted_run_resumes(tiny: Path, tmp_path: Path, monkeypatch):
    """Also: the saved model's transformer weights moved from MiniLM's. Planted fault: the training loop's
    ``optimizer.step()`` removed (reproducible, resumable, and never trained: the old checks all passed)."""
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "a"))
    first = train_embedder(tiny, "tiny", TINY, progress=False)
    assert first["kind"] == "embedder" and first["steps"] == 4 and first["dev_queries"] == 4
    assert first["train_queries"] == 4 and first["max_seq_length"] == 64 and first["dim"] == 384
    assert len(first["dev"]["history"]) == 3 and first["seconds"] > 0
    folder = tmp_path / "a" / "models" / "tiny"
    assert json.loads((folder / "card.json").read_text())["dev"]["best"] == first["dev"]["best"]
    assert encoder_change(folder) > 1e-6  # the optimizer stepped
    vectors_a = _vectors()

    # The same run again, interrupted after its first checkpoint (step 2), then started again.
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "b"))
    messages: list[str] = []

    def stop_at_step_2(message: str) -> None:
        messages.append(message)
        if message.startswith("step 2/"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_embedder(tiny, "tiny", TINY, log=stop_at_step_2, progress=False)
    assert (tmp_path / "b" / "models" / "tiny.partial" / "state.json").is_file()
    messages.clear()
    again = train_embedder(tiny, "tiny", TINY, log=messages.append, progress=False)
    assert any(m.startswith("resuming from step 2") for m in messages)
    assert not (tmp_path / "b" / "models" / "tiny.partial").exists()
    for a, b in zip(first["dev"]["history"], again["dev"]["history"], strict=True):
        assert a["step"] == b["step"] and abs(a["ndcg@10"] - b["ndcg@10"]) <= 1e-6
    assert first["loss_first_last"] == again["loss_first_last"]
    # The two saved models embed alike, loaded by name as any embedder is.
    assert np.allclose(_vectors(), vectors_a, atol=1e-5)


def test_an_index_embedded_by_other_weights_of_the_same_name_is_refused(tiny: Path, tmp_path: Path, monkeypatch):
    from ragline.index.store import Index, IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index

    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "a"))
    train_embedder(tiny, "tiny", replace(TINY, max_steps=2), progress=False)
    corpus = load_beir(tiny, "train").corpus
    build_index(corpus, IngestConfig(), IndexSettings(embedder="trained:tiny"), path=str(tmp_path / "ix")).close()
    index = Index.open(tmp_path / "ix")
    assert index.search_dense("does less salt lower blood pressure", 1)  # the model it was built with
    index.close()

    # Trained again with another seed: other weights under the same name, so other vectors.
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "c"))
    train_embedder(tiny, "tiny", replace(TINY, max_steps=2, seed=1), progress=False)
    with pytest.raises(IndexMismatchError, match="trained:tiny@sha256:"):
        Index.open(tmp_path / "ix").search_dense("does less salt lower blood pressure", 1)


def test_the_dev_pool_holds_judged_and_retrieved_documents_only(tiny: Path):
    dataset = load_beir(tiny, "train")

    class FirstTwo:  # a fixed ranking, so that the pool's contents are known
        def rank(self, query: str, k: int) -> list[tuple[str, float]]:
            return [("mouse", 2.0), ("heart", 1.0), ("sleep", 0.5)][:k]

    pool = dev_pool(dataset, ["q-salt", "q-coffee"], [FirstTwo()], depth=2)
    judged = set(dataset.qrels["q-salt"]) | set(dataset.qrels["q-coffee"])
    assert set(pool.doc_ids) == judged | {"mouse", "heart"}
    assert pool.doc_ids == sorted(pool.doc_ids) and len(pool.passages) == len(pool.doc_ids)


def test_a_missing_or_wrong_kind_of_trained_model_names_what_to_do(tiny: Path, tmp_path: Path, monkeypatch):
    from ragline.models.registry import resolve_embedder

    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path))
    with pytest.raises(ModelError, match="ragline train embedder DATASET --name scifact-embedder"):
        resolve_embedder("trained:scifact-embedder")
    (tmp_path / "models" / "rr").mkdir(parents=True)
    (tmp_path / "models" / "rr" / "card.json").write_text(json.dumps({"kind": "reranker"}))
    with pytest.raises(ModelError, match="is a reranker, not an embedder"):
        resolve_embedder("trained:rr")


def test_cli_trains_an_embedder_and_refuses_a_reranker_flag(tiny: Path, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))
    argv = ["train", "embedder", str(tiny), "--name", "tiny", "--max-steps", "1", "--batch-size", "3",
            "--mine-depth", "5", "--dev-fraction", "0.5", "--dev-pool", "3", "--max-seq-length", "64"]  # fmt: skip
    assert main([*argv, "--output", "json"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert card["kind"] == "embedder" and card["steps"] == 1 and card["settings"]["batch_size"] == 3
    assert main(argv) == 0
    assert "up to date" in capsys.readouterr().err
    assert main([*argv, "--negatives", "3"]) == 2
    assert "--negatives: only for `ragline train reranker`" in capsys.readouterr().err


def test_a_model_trained_on_a_trained_base_is_out_of_date_once_the_base_is_trained_again(
    tiny: Path, tmp_path: Path, monkeypatch
):
    from ragline.train.models import read_card, trained_path

    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path))
    on_top = replace(TINY, base="trained:tiny", max_steps=1)
    train_embedder(tiny, "tiny", replace(TINY, max_steps=1), progress=False)
    first_base = read_card(trained_path("tiny"))["id"]
    key_on_first = on_top.key()
    train_embedder(tiny, "tiny", replace(TINY, max_steps=2), progress=False)
    assert read_card(trained_path("tiny"))["id"] != first_base
    # The same settings on top of the retrained base: another key, so `ragline train` does not skip them.
    assert on_top.key() != key_on_first
