"""Models, offline and verified: embedders (dense vectors), their registry, and an embedding cache on disk.

>>> from ragline.models import CachedEmbedder, load_embedder
>>> embedder = CachedEmbedder(load_embedder("minilm"))  # cache: $RAGLINE_CACHE or ~/.cache/ragline
>>> vectors = embedder.embed_passages(["first passage", "second passage"])  # (2, 384), unit length
"""

from __future__ import annotations

from ragline.models.cache import CachedEmbedder, EmbeddingCache, default_cache_path
from ragline.models.embedders import Embedder, load_embedder
from ragline.models.registry import DEFAULT_EMBEDDER, KNOWN_NAMES, EmbedderSpec, resolve_embedder
from ragline.models.weights import sha256_file, verify_weights

__all__ = [
    "DEFAULT_EMBEDDER",
    "KNOWN_NAMES",
    "CachedEmbedder",
    "Embedder",
    "EmbedderSpec",
    "EmbeddingCache",
    "default_cache_path",
    "load_embedder",
    "resolve_embedder",
    "sha256_file",
    "verify_weights",
]
