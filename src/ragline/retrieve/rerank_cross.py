"""The cross-encoder reranker: query and passage read together by one transformer, one score per pair.

A bi-encoder embeds query and passage apart and compares vectors; a cross-encoder attends across both
(Nogueira & Cho, "Passage Re-ranking with BERT", 2019), which is more precise and far slower, so it only
reorders the first stage's best ``depth`` candidates ("recall first, precision second"). The model is any
sentence-transformers ``CrossEncoder`` (a hub id or a folder) or one trained here, ``trained:NAME``
(``ragline train reranker``, see ``ragline.train``).

``interpolate=w`` (0..1) mixes the cross-encoder's score with the first stage's (``ragline.retrieve.rerank``,
the base every reranker shares: checks, interpolation, ties, ranks); ``w = 1`` (the default) ranks by the
cross-encoder alone.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragline.components import register
from ragline.errors import ConfigError, ModelError
from ragline.retrieve.rerank import BaseReranker, interpolation_weight, passage_of
from ragline.train.models import read_card, resolve_model
from ragline.types import Hit

DEFAULT_MODEL = "trained:scifact"
_models: dict[tuple[str, int], Any] = {}
_lock = threading.Lock()


def load_cross_encoder(model: str, max_length: int) -> Any:
    """The ``CrossEncoder`` ``model`` names, loaded once per process and length."""
    folder = resolve_model(model, "reranker")
    key = (folder, max_length)
    with _lock:
        if key not in _models:
            if os.path.isdir(folder):
                os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder needs no network
            try:
                import torch
                from sentence_transformers import CrossEncoder
            except ImportError as error:
                raise ModelError(
                    f"the cross-encoder needs sentence-transformers: pip install 'ragline[dense]' ({error})"
                ) from error
            try:
                encoder = CrossEncoder(folder, num_labels=1, max_length=max_length, device="cpu")
            except (OSError, ValueError) as error:
                raise ModelError(f"cross-encoder {model!r} ({folder}) could not be loaded: {error}") from error
            encoder.default_activation_function = torch.nn.Identity()
            _models[key] = encoder
        return _models[key]


def score_pairs(encoder: Any, query: str, passages: Sequence[str], batch_size: int) -> np.ndarray:
    """The raw score (logit) of each (query, passage) pair."""
    if not passages:
        return np.zeros(0, dtype=np.float32)
    import torch

    scores = encoder.predict(
        [(query, passage) for passage in passages],
        batch_size=batch_size,
        show_progress_bar=False,
        activation_fn=torch.nn.Identity(),
        convert_to_numpy=True,
    )
    return np.asarray(scores, dtype=np.float32).reshape(-1)


@register("reranker", "cross")
class CrossEncoderReranker(BaseReranker):
    """A cross-encoder over the candidates (model=trained:NAME, a folder or hub id; batch_size, max_length)."""

    name = "cross"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        batch_size: int = 32,
        max_length: int = 256,
        interpolate: float = 1.0,
    ) -> None:
        if int(batch_size) < 1 or int(max_length) < 8:
            raise ConfigError(f"reranker 'cross': batch_size >= 1 and max_length >= 8, got {batch_size}, {max_length}")
        self.model, self.batch_size, self.max_length = str(model), int(batch_size), int(max_length)
        self.interpolate = interpolation_weight("cross", interpolate)
        resolve_model(self.model, "reranker")  # a trained:NAME never trained fails now, naming the command
        self._encoder: Any = None

    @property
    def encoder(self) -> Any:
        """The model, loaded at the first query: a config builds, round-trips and prints without loading it."""
        if self._encoder is None:
            self._encoder = load_cross_encoder(self.model, self.max_length)
        return self._encoder

    def scores(self, query: str, hits: Sequence[Hit]) -> np.ndarray:
        return score_pairs(self.encoder, query, [passage_of(hit) for hit in hits], self.batch_size)

    def config(self) -> dict[str, Any]:
        try:
            folder = resolve_model(self.model, "reranker")
        except ModelError:
            folder = ""  # not trained (yet): the config still says which model it names
        card = read_card(folder) if folder and os.path.isdir(folder) else {}
        return {
            "name": "cross",
            "model": self.model,
            "model_id": card.get("id"),
            "max_length": self.max_length,
            "batch_size": self.batch_size,
            "interpolate": self.interpolate,
        }


@register("grader", "cross-encoder")
class CrossEncoderGrader:
    """The cross-encoder's relevance probability (sigmoid of its score) as a grade of each hit."""

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 32, max_length: int = 256) -> None:
        self.reranker = CrossEncoderReranker(model, batch_size, max_length)

    def grade(self, question: str, hits: list[Hit]) -> list[float]:
        scores = self.reranker.scores(question, hits).astype(np.float64)
        return (1.0 / (1.0 + np.exp(-scores))).tolist()

    def config(self) -> dict[str, Any]:
        return {**self.reranker.config(), "name": "cross-encoder"}
