"""Query encoders that need no torch: the same weights, checked against torch's vectors once.

torch and sentence-transformers take 4-6 s to load, most of a one-query search. A query can be encoded
without them, by the same weights, in one of two ways (passages, the index's own vectors, always go
through torch, so an index never changes with this):

- :class:`~ragline.models.numpy_bert.NumpyBertEncoder`: plain BERT models (MiniLM, BGE, E5), computed in
  numpy from the mapped safetensors file: ~30 ms to start.
- :class:`~ragline.models.onnx_encoder.OnnxQueryEncoder`: any mean-pooled transformer, exported once to
  onnxruntime's format: ~0.3 s to start.

Either is used only once its vectors were compared with torch's on :data:`PROBES` and found within
:data:`TOLERANCE`. The comparison runs in a process that has torch loaded anyway (indexing, or the first
query before any check), once per weights file and input length, and its outcome is kept in the cache
(``$RAGLINE_CACHE/query-encoders``), named by the weights' sha256, so it never stands for other weights.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragline.fsutil import save_memo
from ragline.models.encoder_check import (
    PROBES,
    TOLERANCE,
    QueryEncoder,
    difference_to_torch,
    mean_pooled,
    torch_probe_vectors,
)
from ragline.models.numpy_bert import NumpyBertEncoder, supports
from ragline.models.onnx_encoder import OnnxQueryEncoder
from ragline.paths import cache_root

__all__ = ["PROBES", "TOLERANCE", "QueryEncoder", "cached_query_encoder", "checked_query_encoder"]


def _numpy_check_path(embedder: Any) -> Path:
    name = f"{embedder.spec.name}-{embedder.weights_sha256}-len{embedder.max_seq_length}.numpy.json"
    return cache_root() / "query-encoders" / name


def _numpy_encoder(embedder: Any) -> QueryEncoder | None:
    if not mean_pooled(embedder) or not supports(Path(embedder.spec.path)):
        return None
    return NumpyBertEncoder(Path(embedder.spec.path), embedder.max_seq_length)


def cached_query_encoder(embedder: Any) -> QueryEncoder | None:
    """An encoder already checked against torch for these weights (numpy first), or None."""
    check = _numpy_check_path(embedder)
    if check.is_file():
        try:
            passed = json.loads(check.read_text(encoding="utf-8"))["max_difference"] <= TOLERANCE
            encoder = _numpy_encoder(embedder) if passed else None
        except Exception:  # a damaged record or model file: torch still answers, and the next check redoes it
            check.unlink(missing_ok=True)
            encoder = None
        if encoder is not None:
            return encoder
    return OnnxQueryEncoder.cached(embedder)


def checked_query_encoder(embedder: Any) -> QueryEncoder | None:
    """With torch loaded: check the numpy encoder (and keep the outcome), else export to ONNX; None if neither."""
    try:
        encoder = _numpy_encoder(embedder)
    except Exception:  # an unreadable or unexpected weights file: the ONNX export may still do
        encoder = None
    if encoder is not None:
        expected = torch_probe_vectors(embedder)
        difference = difference_to_torch(encoder, expected)
        save_memo(_numpy_check_path(embedder), {"max_difference": difference, "tolerance": TOLERANCE})
        if difference <= TOLERANCE:
            return encoder
    return OnnxQueryEncoder.export(embedder)
