"""A deterministic stand-in embedder for cache tests: no model, vectors derived from the input's sha256.

Imported by the tests and by the subprocesses they start (which put this folder on ``sys.path``).
"""

from __future__ import annotations

import hashlib

import numpy as np

from ragline.models import EmbedderSpec
from ragline.models.embedders import Embedder, l2_normalize


def fake_vector(model_input: str, dim: int) -> np.ndarray:
    """The unit vector HashEmbedder gives for an exact model input (prefix included)."""
    seed = int.from_bytes(hashlib.sha256(model_input.encode("utf-8")).digest()[:8], "little")
    return l2_normalize(np.random.default_rng(seed).standard_normal((1, dim)))[0]


class HashEmbedder(Embedder):
    """Embeds ``prefix + text`` as a pseudo-random unit vector seeded by its hash; counts what it encodes."""

    def __init__(self, dim: int = 16, query_prefix: str = "q: ", passage_prefix: str = "p: ") -> None:
        spec = EmbedderSpec(
            name="hash-embedder",
            kind="sentence-transformers",
            path="-",
            query_prefix=query_prefix,
            passage_prefix=passage_prefix,
            dim=dim,
        )
        super().__init__(spec, weights_sha256="0" * 64, dim=dim, max_seq_length=512)
        self.encoded: list[str] = []

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        prefix = self.spec.query_prefix if is_query else self.spec.passage_prefix
        self.encoded.extend(prefix + text for text in texts)
        return np.stack([fake_vector(prefix + text, self.dim) for text in texts])
