"""A model-free embedder with meaning enough to cluster on: a text is the sum of its words' hashed directions.

Texts sharing words get close vectors, so a topic's documents cluster together, which a hash of the
whole text (``embedding_fakes.HashEmbedder``) would not give.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

DIM = 64


def word_vector(word: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(DIM)


class BagEmbedder:
    """``embed_passages`` / ``embed_queries`` as an index's embedder offers them."""

    id = "bag-of-words-test"
    weights_sha256 = "0" * 64
    dim = DIM

    def __init__(self) -> None:
        self.passages = 0
        self.embedder = self  # what an index's commit stamps (the cache wrapper's inner model)

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[i] += word_vector(word)
            norm = np.linalg.norm(out[i])
            out[i] = out[i] / norm if norm else out[i]
        return out

    def embed_passages(self, texts: list[str], batch_size: int = 32, progress: bool = True) -> np.ndarray:
        self.passages += len(texts)
        return self._embed(list(texts))

    def embed_queries(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        return self._embed(list(texts))
