"""The numpy BERT query encoder: the packaged weights mapped from safetensors, vectors equal to torch's.

A query process whose check memo says the numpy encoder matched torch must load neither torch nor
onnxruntime, and its vectors must be the same model's (same id, within the tolerance).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragline.models import embedders, numpy_bert, onnx_encoder, query_encoders
from ragline.models.registry import resolve_embedder

pytestmark = pytest.mark.models
SRC = Path(__file__).resolve().parents[2] / "src"
# Lengths that differ within one batch (padding), a cut at 256 word pieces, text outside ASCII.
QUERIES = ["How do I reset my password?", "receipt threshold", "", "Électricité à 変電所 ß", "word " * 300, "a"]


def _fresh(monkeypatch: pytest.MonkeyPatch, cache: Path) -> embedders.SentenceTransformerEmbedder:
    monkeypatch.setenv("RAGLINE_CACHE", str(cache))
    spec = resolve_embedder("minilm")
    return embedders.SentenceTransformerEmbedder(spec, embedders.verify_weights(spec))


def test_safetensors_are_read_as_the_library_reads_them() -> None:
    from safetensors.numpy import load_file

    path = Path(resolve_embedder("minilm").path) / "model.safetensors"
    ours, theirs = numpy_bert.read_safetensors(path), load_file(str(path))
    assert ours.keys() == theirs.keys()
    for name, tensor in theirs.items():
        assert ours[name].dtype == tensor.dtype and ours[name].shape == tensor.shape
        np.testing.assert_array_equal(ours[name], tensor)


def test_numpy_vectors_equal_torch_in_one_batch_and_one_at_a_time(monkeypatch, tmp_path) -> None:
    embedder = _fresh(monkeypatch, tmp_path)
    torch_vectors = embedder.model.encode(QUERIES, convert_to_numpy=True, normalize_embeddings=True)
    encoder = numpy_bert.NumpyBertEncoder(Path(embedder.spec.path), embedder.max_seq_length)
    batch = embedders.l2_normalize(encoder.encode(QUERIES))
    single = embedders.l2_normalize(np.concatenate([encoder.encode([q]) for q in QUERIES]))
    assert batch.dtype == np.float32
    assert float(np.abs(batch - torch_vectors).max()) <= query_encoders.TOLERANCE
    assert float(np.abs(single - torch_vectors).max()) <= query_encoders.TOLERANCE


def test_the_check_is_kept_and_a_new_embedder_answers_queries_without_torch(monkeypatch, tmp_path) -> None:
    first = _fresh(monkeypatch, tmp_path)
    assert first._query_encoder is None  # nothing checked yet
    torch_vectors = first.embed_queries(QUERIES)  # torch answers, then checks the numpy encoder
    assert isinstance(first._query_encoder, numpy_bert.NumpyBertEncoder)
    memo = json.loads(query_encoders._numpy_check_path(first).read_text(encoding="utf-8"))
    assert memo["max_difference"] <= query_encoders.TOLERANCE
    assert not (tmp_path / "onnx").exists()  # no export needed

    second = _fresh(monkeypatch, tmp_path)
    assert isinstance(second._query_encoder, numpy_bert.NumpyBertEncoder) and second._model is None
    vectors = second.embed_queries(QUERIES)
    assert second._model is None
    assert float(np.abs(vectors - torch_vectors).max()) <= query_encoders.TOLERANCE
    assert second.id == first.id


def test_a_failed_check_is_remembered_and_never_used(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(query_encoders, "difference_to_torch", lambda encoder, expected: 1.0)
    monkeypatch.setattr(onnx_encoder.OnnxQueryEncoder, "export", classmethod(lambda cls, embedder: None))
    first = _fresh(monkeypatch, tmp_path)
    first.embed_passages(["one passage"], progress=False)
    assert first._query_encoder is None
    assert json.loads(query_encoders._numpy_check_path(first).read_text(encoding="utf-8"))["max_difference"] == 1.0
    assert not isinstance(_fresh(monkeypatch, tmp_path)._query_encoder, numpy_bert.NumpyBertEncoder)


def test_a_damaged_memo_is_dropped(monkeypatch, tmp_path) -> None:
    probe = _fresh(monkeypatch, tmp_path)
    memo = query_encoders._numpy_check_path(probe)
    memo.parent.mkdir(parents=True)
    memo.write_text("not json", encoding="utf-8")
    again = _fresh(monkeypatch, tmp_path)
    assert not isinstance(again._query_encoder, numpy_bert.NumpyBertEncoder) and not memo.exists()


def test_only_plain_bert_models_are_taken(tmp_path) -> None:
    folder = Path(resolve_embedder("minilm").path)
    assert numpy_bert.supports(folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    for change in ({"model_type": "xlm-roberta"}, {"hidden_act": "relu"}, {"position_embedding_type": "relative_key"}):
        other = tmp_path / "-".join(change.values())
        other.mkdir()
        (other / "config.json").write_text(json.dumps(config | change), encoding="utf-8")
        for name in ("model.safetensors", "tokenizer.json"):
            (other / name).symlink_to(folder / name)
        assert not numpy_bert.supports(other)
    assert not numpy_bert.supports(tmp_path / "missing")


def test_a_query_process_with_the_check_loads_neither_torch_nor_onnxruntime(monkeypatch, tmp_path) -> None:
    _fresh(monkeypatch, tmp_path).embed_queries(["warm the check"])
    probe = (
        "import sys, json; from ragline.models import load_embedder; "
        "v = load_embedder('minilm').embed_queries(['receipt threshold']); "
        "heavy = ('torch', 'sentence_transformers', 'onnxruntime'); "
        "print(json.dumps([v.shape[1], *(m in sys.modules for m in heavy)]))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC), "RAGLINE_CACHE": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [384, False, False, False]
