"""A BERT encoder in numpy for queries: the model's own safetensors file, mapped, run layer by layer.

A one-query search pays for whatever runs its query encoder before the first vector: torch and
sentence-transformers take 4-6 s, an onnxruntime session ~0.3 s. numpy is loaded anyway, and BERT
(Devlin et al., "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
NAACL 2019) is a few matrix products per layer: this encoder reads the weights straight from
``model.safetensors`` (mapped, nothing exported or copied; the very file whose sha256 was verified),
tokenizes with the model's ``tokenizer.json`` (the fast tokenizer sentence-transformers uses), and
returns the mean-pooled last hidden states, as the packaged models pool. ~30 ms to start for MiniLM,
a few ms per short query.

It covers the plain BERT encoder: absolute positions, GELU, post-layer-norm (MiniLM, BGE, E5 and the
models tuned from them). Anything else is refused by :func:`supports`, and ``query_encoders.py`` uses it
only after its vectors were checked against torch's.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": None, "I64": np.int64}
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file as read-only arrays over one memory map (no copy).

    Format: an 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape and
    byte range, then the raw data.
    """
    with open(path, "rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(size))
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    tensors: dict[str, np.ndarray] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} is {entry['dtype']}, which this reader does not take")
        start, end = entry["data_offsets"]
        tensors[name] = raw[8 + size + start : 8 + size + end].view(dtype).reshape(entry["shape"])
    return tensors


def supports(folder: Path) -> bool:
    """Is the model in ``folder`` a plain BERT encoder in a safetensors file, with a fast tokenizer?"""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and (folder / "model.safetensors").is_file()
        and (folder / "tokenizer.json").is_file()
    )


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to 1.5e-7 (Abramowitz & Stegun 7.1.26): numpy has none, and BERT's GELU is the exact one."""
    t = 1.0 / (1.0 + _ERF_P * np.abs(x))
    a1, a2, a3, a4, a5 = _ERF_A
    y = 1.0 - ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t * np.exp(-x * x)
    return np.copysign(y, x)


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x * (1.0 / math.sqrt(2.0))))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    centered = x - mean
    variance = (centered * centered).mean(-1, keepdims=True)
    return centered / np.sqrt(variance + eps) * weight + bias


class NumpyBertEncoder:
    """Mean-pooled BERT outputs of texts (cut at ``max_seq_length`` word pieces), computed with numpy."""

    def __init__(self, folder: Path, max_seq_length: int) -> None:
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        tensors = read_safetensors(folder / "model.safetensors")
        # Saved from BertModel the names start at "embeddings."; from a model with a head, at "bert.".
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""
        self.weights: dict[str, Any] = {
            name[len(prefix) :]: tensor for name, tensor in tensors.items() if name.startswith(prefix)
        }
        if self.weights["embeddings.word_embeddings.weight"].dtype != np.float32:
            self.weights = {name: np.asarray(t, dtype=np.float32) for name, t in self.weights.items()}
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_seq_length)
        self.tokenizer.enable_padding()

    def encode(self, texts: list[str]) -> np.ndarray:
        """(len(texts), hidden) float32: the mean of each text's last hidden states over its real tokens."""
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        w = self.weights
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: ids.shape[1]]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        # Padding gets the most negative float added to its attention scores, as transformers does.
        padding = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for layer in range(self.layers):
            x = self._layer(x, padding, f"encoder.layer.{layer}.")
        weights = mask[:, :, None]
        return (x * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)

    def _layer(self, x: np.ndarray, padding: np.ndarray, name: str) -> np.ndarray:
        w = self.weights

        def linear(inputs: np.ndarray, part: str) -> np.ndarray:
            return inputs @ w[f"{name}{part}.weight"].T + w[f"{name}{part}.bias"]

        batch, length, hidden = x.shape
        size = hidden // self.heads

        def heads(part: str) -> np.ndarray:  # (batch, heads, length, size)
            return linear(x, part).reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        query, key, value = heads("attention.self.query"), heads("attention.self.key"), heads("attention.self.value")
        scores = query @ key.transpose(0, 1, 3, 2) * np.float32(1.0 / math.sqrt(size)) + padding
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        attended = (scores @ value).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = _layer_norm(
            linear(attended, "attention.output.dense") + x,
            w[f"{name}attention.output.LayerNorm.weight"],
            w[f"{name}attention.output.LayerNorm.bias"],
            self.eps,
        )
        inner = _gelu(linear(x, "intermediate.dense"))
        return _layer_norm(
            linear(inner, "output.dense") + x,
            w[f"{name}output.LayerNorm.weight"],
            w[f"{name}output.LayerNorm.bias"],
            self.eps,
        )
