"""What a torch-free query encoder must meet: its vectors of probe texts against torch's, to a tolerance.

Shared by the numpy and the ONNX encoders (``query_encoders.py`` chooses between them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragline.models.normalize import l2_normalize

TOLERANCE = 1e-4  # max abs difference to torch's unit vectors for an encoder to be used
PROBES = (
    "receipt threshold",
    "How much is the remote work allowance for staff in the northern region?",
    "",
    "Électricité, 変電所 and ß: text outside ASCII",
    "long " * 400,  # cut at max_seq_length, like torch
)


class QueryEncoder(Protocol):
    def encode(self, texts: list[str]) -> np.ndarray:
        """Mean-pooled vectors of ``texts`` (not yet normalized)."""
        ...


def mean_pooled(embedder: Any) -> bool:
    """Is the model a transformer + mean pooling (+ normalize), hashed, with a fast tokenizer file?"""
    folder = Path(embedder.spec.path)
    if embedder.weights_sha256 is None or not (folder / "tokenizer.json").is_file():
        return False
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        pooling = json.loads((folder / modules[1]["path"] / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, IndexError):
        return False
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v}
    return (
        kinds[:2] == ["Transformer", "Pooling"]
        and set(kinds[2:]) <= {"Normalize"}
        and modes == {"pooling_mode_mean_tokens"}
    )


def difference_to_torch(encoder: QueryEncoder, expected: np.ndarray) -> float:
    """Max abs difference between ``encoder``'s unit vectors of :data:`PROBES` and torch's (``expected``)."""
    return float(np.abs(l2_normalize(encoder.encode(list(PROBES))) - expected).max())


def torch_probe_vectors(embedder: Any) -> np.ndarray:
    return embedder.model.encode(list(PROBES), convert_to_numpy=True, normalize_embeddings=True)
