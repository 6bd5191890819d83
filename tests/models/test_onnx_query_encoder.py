"""The ONNX query encoder: MiniLM's own weights, exported once, vectors equal to torch's to 1e-4, same id.

MiniLM is a BERT model, which the numpy encoder takes first; here it is refused, so the ONNX route runs.

An index built with torch is searched with ONNX query vectors, so they must be the same model's
vectors (same id in the stamp); a process with the export in its cache must not load torch for a query.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragline.models import embedders, onnx_encoder, query_encoders
from ragline.models.registry import resolve_embedder

pytestmark = pytest.mark.models
pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

SRC = Path(__file__).resolve().parents[2] / "src"
QUERIES = ["How do I reset my password?", "receipt threshold", "", "Électricité à 変電所", "word " * 300]


@pytest.fixture(autouse=True)
def no_numpy_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(query_encoders, "supports", lambda folder: False)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


def _fresh(monkeypatch: pytest.MonkeyPatch, cache: Path) -> embedders.SentenceTransformerEmbedder:
    monkeypatch.setenv("RAGLINE_CACHE", str(cache))
    spec = resolve_embedder("minilm")
    return embedders.SentenceTransformerEmbedder(spec, embedders.verify_weights(spec))


def test_export_equals_torch_and_keeps_the_id(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    first = _fresh(monkeypatch, cache)
    assert first._query_encoder is None  # nothing exported yet: queries go through torch
    torch_vectors = first.embed_queries(QUERIES)
    assert first._query_encoder is not None and onnx_encoder.OnnxQueryEncoder.path_for(first).is_file()

    second = _fresh(monkeypatch, cache)
    assert second._query_encoder is not None and second._model is None  # from the cache, torch not loaded
    onnx_vectors = second.embed_queries(QUERIES)
    assert second._model is None
    assert onnx_vectors.shape == torch_vectors.shape and onnx_vectors.dtype == np.float32
    assert float(np.abs(onnx_vectors - torch_vectors).max()) <= query_encoders.TOLERANCE
    assert second.id == first.id == f"all-MiniLM-L6-v2@sha256:{first.weights_sha256}+len256"
    # Passages still go through torch, so an index's vectors never change with the export.
    np.testing.assert_array_equal(second.embed_passages(QUERIES, progress=False), first.embed_passages(QUERIES))


def test_a_damaged_export_falls_back_to_torch(monkeypatch: pytest.MonkeyPatch, cache: Path, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path))
    spec = resolve_embedder("minilm")
    probe = embedders.SentenceTransformerEmbedder(spec, embedders.verify_weights(spec))
    path = onnx_encoder.OnnxQueryEncoder.path_for(probe)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a model")
    again = embedders.SentenceTransformerEmbedder(spec, embedders.verify_weights(spec))
    assert again._query_encoder is None and not path.exists()


def test_a_query_process_with_the_export_loads_no_torch(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    _fresh(monkeypatch, cache).embed_queries(["warm the export"])  # the export exists (made by torch once)
    probe = (
        "import sys, json; from ragline.models import load_embedder; "
        "v = load_embedder('minilm').embed_queries(['receipt threshold']); "
        "print(json.dumps([v.shape[1], 'torch' in sys.modules, 'sentence_transformers' in sys.modules]))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC), "RAGLINE_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [384, False, False]


def test_a_failed_export_is_tried_once_not_for_every_batch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path))
    tries = []
    monkeypatch.setattr(onnx_encoder.OnnxQueryEncoder, "export", classmethod(lambda cls, e: tries.append(e) and None))
    spec = resolve_embedder("minilm")
    embedder = embedders.SentenceTransformerEmbedder(spec, embedders.verify_weights(spec))
    embedder.embed_passages(["one passage", "another", "a third"], batch_size=1, progress=False)
    assert len(tries) == 1 and embedder._query_encoder is None
