"""``ragline train reranker``: trains, prints the card, and keeps a model already trained the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main
from train.tiny_beir import write_tiny_beir

pytest.importorskip("sentence_transformers")


def test_train_reranker_then_again_keeps_the_model(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))
    folder = write_tiny_beir(tmp_path / "tiny")
    argv = ["train", "reranker", str(folder), "--name", "tiny", "--max-steps", "2", "--negatives", "2", "--mine-depth",
            "5", "--dev-fraction", "0.25", "--dev-depth", "3", "--max-length", "48", "--output", "json"]  # fmt: skip
    assert main(argv) == 0
    card = json.loads(capsys.readouterr().out)
    assert card["kind"] == "reranker" and card["steps"] == 2 and card["settings"]["negatives"] == 2
    weights = tmp_path / "cache" / "models" / "tiny" / "model.safetensors"
    written = weights.stat().st_mtime_ns
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "up to date" in out.err and json.loads(out.out) == card
    assert weights.stat().st_mtime_ns == written  # not trained again
    assert main(["train", "reranker", str(folder), "--name", "../x"]) == 2
    assert "model name" in capsys.readouterr().err


def test_train_reader_flags_belong_to_the_reader(tmp_path: Path, capsys):
    """A reranker-only flag given to the reader is an error naming it, and a reader flag to the reranker too;
    bad window settings are refused before any data is read. Planted fault: skipping the other-kind flag check
    lets ``--negatives`` through silently."""
    data = str(tmp_path / "missing.jsonl.gz")
    assert main(["train", "reader", data, "--name", "r", "--negatives", "3"]) == 2
    assert "--negatives: only for `ragline train reranker`, not reader" in capsys.readouterr().err
    assert main(["train", "reranker", data, "--name", "r", "--no-answer-share", "0.3"]) == 2
    assert "--no-answer-share: only for `ragline train reader`" in capsys.readouterr().err
    assert main(["train", "reader", data, "--name", "r", "--stride", "90", "--max-length", "128"]) == 2
    assert "stride 90 must be under half" in capsys.readouterr().err
    assert main(["train", "reader", data, "--name", "r"]) == 2
    assert "missing.jsonl.gz: no such file" in capsys.readouterr().err
