"""What every reranker shares: ``BaseReranker.rerank``, a template method around one score per candidate.

A reranker writes ``scores(query, hits)``, one number per hit, higher better (``ragline.retrieve.rerank_cross``,
``late``, ``rerank_llm``). ``rerank`` does the rest alike for all of them, as llama_index's
``BaseNodePostprocessor.postprocess_nodes`` does around ``_postprocess_nodes``: it checks ``k`` and the
scores it got (one finite number per hit, else an error naming the reranker), asks nothing of a model
for no hits or ``k = 0``, mixes the scores with the first stage's (``interpolate``), sorts with ties
kept in the first stage's order, keeps the best ``k`` and numbers their ranks from 1.

``interpolate=w`` (0..1) mixes the reranker's score with the first stage's, each z-scored over the
candidates: ``w * z(reranker) + (1 - w) * z(first)``. A reranker trained on a few hundred queries is noisy
on its own; keeping some of the first stage's evidence guards against its mistakes. ``w = 1`` (the
default) ranks by the reranker alone.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ragline.errors import ConfigError, ModelError
from ragline.retrieve.fusion import z_score_fusion
from ragline.types import Hit


def passage_of(hit: Hit) -> str:
    """What a reranker reads of a hit: its title, then its text."""
    return f"{hit.title}. {hit.text}" if hit.title and not hit.text.startswith(hit.title) else hit.text


def interpolated(scores: Sequence[float], first: Sequence[float], weight: float) -> np.ndarray:
    """``weight * z(scores) + (1 - weight) * z(first)`` over one query's candidates; ``scores`` when weight is 1."""
    if weight >= 1.0:
        return np.asarray(scores, dtype=np.float64)
    keys = [str(i) for i in range(len(scores))]
    runs = [dict(zip(keys, map(float, scores))), dict(zip(keys, map(float, first)))]
    mixed = z_score_fusion(runs, weights=[weight, 1.0 - weight])
    return np.array([mixed[key] for key in keys])


def interpolation_weight(reranker: str, weight: float) -> float:
    """``weight`` checked to be in 0..1 (1: the reranker's own score alone), else a ConfigError naming ``reranker``."""
    if not 0.0 <= float(weight) <= 1.0:
        raise ConfigError(f"reranker {reranker!r}: interpolate must be in 0..1 (1: its own score only), got {weight}")
    return float(weight)


def reordered(hits: list[Hit], score: Callable[[list[Hit]], Sequence[float]], weight: float, k: int) -> list[Hit]:
    """The best ``k`` of ``hits`` by ``score(hits)`` mixed with their first-stage scores (``interpolated``),
    renumbered; equal scores keep the first stage's order. No hits: no model is asked anything."""
    if not hits or k <= 0:
        return []
    final = interpolated(score(hits), [hit.score for hit in hits], weight)
    order = sorted(range(len(hits)), key=lambda i: (-final[i], hits[i].rank, i))[:k]
    return [replace(hits[i], score=float(final[i]), rank=rank) for rank, i in enumerate(order, start=1)]


class BaseReranker(ABC):
    """A reranker (``ragline.roles.Reranker``) written as ``scores``; ``rerank`` is the same for every one."""

    name: str = "reranker"
    interpolate: float = 1.0  # set with ``interpolation_weight`` by a reranker that takes the parameter

    @abstractmethod
    def scores(self, query: str, hits: list[Hit]) -> Sequence[float]:
        """One score per hit, in order, higher better; never called with no hits."""

    def rerank(self, query: str, hits: list[Hit], k: int) -> list[Hit]:
        """The best ``k`` of ``hits`` for ``query``, ranks renumbered from 1 (see the module docstring)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ConfigError(f"reranker {self.name!r}: k (hits kept) must be an integer >= 0, got {k!r}")
        return reordered(hits, lambda candidates: self._checked(query, candidates), self.interpolate, int(k))

    def _checked(self, query: str, hits: list[Hit]) -> Sequence[float]:
        scores = list(self.scores(query, hits))
        if len(scores) != len(hits) or not all(math.isfinite(float(s)) for s in scores):
            raise ModelError(
                f"reranker {self.name!r} gave {len(scores)} scores for {len(hits)} hits"
                f"{'' if len(scores) != len(hits) else ', not all finite'}: {scores[:5]}"
            )
        return scores

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "interpolate": self.interpolate}
