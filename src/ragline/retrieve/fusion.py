"""Rank fusion: combine the ranked lists that several retrievers return for one query.

A fuser takes ``runs``, one mapping doc id -> score per retriever (all for the same query, higher is
better), and returns one mapping doc id -> fused score; :func:`rank` turns that into a ranked list.
Fusers register by name (``rrf``, ``min_max``, ``z_score``, ``weighted_sum``, ``sum``) in ``ragline.components``.

Conventions, the same as ranx 0.3 (Bassani 2022), which the tests compare against:

* A document missing from a run contributes 0 from that run. After min-max normalization 0 is the
  run's minimum, so a missing document counts as that run's worst. After z-score normalization 0 is
  the run's *mean*, so a missing document counts as an average one: above that run's below-average
  documents. On raw scores 0 means whatever it means to the retriever (BM25: no match).
* Every document of any run is in the result, even when its fused score is 0.
* A run whose scores are all equal (a one-document run, say) has no spread to normalize by. ranx
  divides by ``max(spread, 1e-9)``, so all its documents normalize to 0, under min-max as under
  z-score: such a run adds nothing, as if it were missing. We do the same, for parity (exactly 0:
  under z-score ranx leaves the mean's rounding error, magnified by 1e9, which we do not copy).
* Empty runs contribute nothing; no runs, or only empty ones, fuse to ``{}``.
* ``weights``: one per run (default 1 each); a run's contribution is multiplied by its weight.
"""

from __future__ import annotations

import heapq
import inspect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from ragline.components import component, register
from ragline.errors import ConfigError

Run = Mapping[str, float]
Fuser = Callable[..., dict[str, float]]

# ranx's floor on the spread a run is normalized by; it keeps constant runs from dividing by zero.
_MIN_SPREAD = 1e-9


def _ranking_key(item: tuple[str, float]) -> tuple[float, str]:
    doc_id, score = item
    return (-score, doc_id)


def rank(fused: Mapping[str, float], k: int | None = None) -> list[tuple[str, float]]:
    """The ``k`` best (doc id, score) pairs, all of them when ``k`` is None.

    Order: score descending, then doc id ascending, so equal scores always come out the same way.
    """
    if k is None:
        return sorted(fused.items(), key=_ranking_key)
    if k < 0:
        raise ConfigError(f"rank: k must be >= 0 (or None for all), got {k}")
    # nsmallest(k) equals sorted(...)[:k] but costs n log k instead of n log n.
    return heapq.nsmallest(k, fused.items(), key=_ranking_key)


def _weights(weights: Sequence[float] | None, n_runs: int) -> list[float]:
    if weights is None:
        return [1.0] * n_runs
    values = [float(w) for w in weights]
    if len(values) != n_runs:
        raise ConfigError(f"got {len(values)} fusion weights for {n_runs} runs: give one weight per run")
    if not all(math.isfinite(w) for w in values):
        raise ConfigError(f"fusion weights must be finite numbers, got {values}")
    return values


def _weighted_sum(runs: Iterable[Run], weights: Sequence[float]) -> dict[str, float]:
    # Missing documents add nothing, which is the "missing = 0" convention of the module docstring.
    fused: dict[str, float] = {}
    for run, weight in zip(runs, weights):
        for doc_id, score in run.items():
            fused[doc_id] = fused.get(doc_id, 0.0) + weight * score
    return fused


def min_max_normalize(run: Run) -> dict[str, float]:
    """Scores mapped linearly onto [0, 1]; a run with all scores equal maps to all 0 (as ranx)."""
    if not run:
        return {}
    low, high = min(run.values()), max(run.values())
    spread = max(high - low, _MIN_SPREAD)
    return {doc_id: (score - low) / spread for doc_id, score in run.items()}


def z_score_normalize(run: Run) -> dict[str, float]:
    """Zero mean, unit (population) standard deviation; a constant run maps to all 0 (as ranx)."""
    if not run:
        return {}
    scores = np.fromiter(run.values(), dtype=np.float64, count=len(run))
    if scores.min() == scores.max():
        # ranx gets the mean's rounding error divided by 1e-9 here (noise up to ~1e-6); we return 0.
        return dict.fromkeys(run, 0.0)
    mean, std = float(scores.mean()), float(scores.std())
    spread = max(std, _MIN_SPREAD)
    return {doc_id: (score - mean) / spread for doc_id, score in run.items()}


def reciprocal_ranks(run: Run, k: float) -> dict[str, float]:
    return {doc_id: 1.0 / (k + position) for position, (doc_id, _) in enumerate(rank(run), start=1)}


@register("fuser", "rrf")
def reciprocal_rank_fusion(
    runs: Sequence[Run], k: float = 60, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Reciprocal Rank Fusion: a document scores ``sum_i w_i / (k + rank_i)``.

    Cormack, Clarke & Büttcher, "Reciprocal rank fusion outperforms Condorcet and individual rank
    learning methods", SIGIR 2009; they use k = 60. Only the order of each run matters, never its
    scores: rank 1 is the highest score, ties broken by doc id ascending (as :func:`rank`).
    """
    if not (isinstance(k, int | float) and math.isfinite(k) and k >= 0):
        raise ConfigError(f"rrf: k must be a finite number >= 0 (the paper uses 60), got {k!r}")
    w = _weights(weights, len(runs))
    return _weighted_sum((reciprocal_ranks(run, k) for run in runs), w)


@register("fuser", "min_max")
def min_max_fusion(runs: Sequence[Run], weights: Sequence[float] | None = None) -> dict[str, float]:
    """Weighted sum of min-max normalized scores (each run onto [0, 1]); CombSUM when unweighted.

    Fox & Shaw, "Combination of multiple searches", TREC-2 1993; Lee, SIGIR 1997 for the normalization.
    """
    w = _weights(weights, len(runs))
    return _weighted_sum((min_max_normalize(run) for run in runs), w)


@register("fuser", "z_score")
def z_score_fusion(runs: Sequence[Run], weights: Sequence[float] | None = None) -> dict[str, float]:
    """Weighted sum of z-score normalized scores (ranx's "zmuv": zero mean, unit variance).

    Montague & Aslam, "Relevance score normalization for metasearch", CIKM 2001.
    """
    w = _weights(weights, len(runs))
    return _weighted_sum((z_score_normalize(run) for run in runs), w)


@register("fuser", "weighted_sum")
def weighted_sum_fusion(runs: Sequence[Run], weights: Sequence[float]) -> dict[str, float]:
    """Weighted sum of the raw scores: only meaningful when the retrievers' scales are comparable."""
    return _weighted_sum(runs, _weights(weights, len(runs)))


@register("fuser", "sum")
def sum_fusion(runs: Sequence[Run]) -> dict[str, float]:
    """CombSUM on raw scores (Fox & Shaw 1993): each document's scores added up."""
    return _weighted_sum(runs, [1.0] * len(runs))


def fuse(name: str, runs: Sequence[Run], **params: object) -> dict[str, float]:
    """Run the fuser registered as ``name`` (``ragline.components``) with ``params`` (e.g. ``k``, ``weights``)."""
    fuser = component("fuser", name).factory
    signature = inspect.signature(fuser)
    try:
        # Check the parameters here so a typo reads as a config error, not as a TypeError deep inside.
        signature.bind(runs, **params)
    except TypeError as error:
        accepted = ", ".join(p for p in signature.parameters if p != "runs") or "no parameters"
        raise ConfigError(f"fuser {name!r}: {error}; it accepts: {accepted}") from None
    return fuser(runs, **params)
