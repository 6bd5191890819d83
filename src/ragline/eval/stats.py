"""Is system B better than system A? Paired tests over per-query scores.

Every function takes two mappings query id -> score (say nDCG@10 of each judged query, one
column of ``metrics.evaluate``) over the same queries, pairs them by query id, and looks at
the differences ``b - a``: a positive delta means B scores higher.

Which test: Smucker, Allan & Carterette (CIKM 2007) compared tests on TREC runs and recommend
the randomization (permutation) test; they found the paired t-test agrees with it closely and
the sign and Wilcoxon tests do not, so those two are left out. The bootstrap confidence interval
says how large the difference may be, the p value only whether it is there (Sakai, SIGIR 2006,
"Evaluating evaluation metrics based on the bootstrap"). Randomized procedures are seeded, so
a report is reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TypedDict

import numpy as np
from scipy import stats

from ragline.errors import ConfigError

N_RESAMPLES = 10_000
_BATCH = 1_000  # resamples drawn at once: memory is _BATCH x number of queries


class Comparison(TypedDict):
    n: int
    mean_a: float
    mean_b: float
    delta: float  # mean_b - mean_a
    p_t_test: float
    p_randomization: float
    ci: tuple[float, float]  # bootstrap interval of delta
    confidence: float
    effect_size: float  # Cohen's d of the paired differences


def paired_t_test(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Two-sided p value of the paired t-test (``scipy.stats.ttest_rel``; Student 1908).

    When all differences are equal (up to float rounding) the t statistic is 0/0 or x/0; we
    return its limit, 1.0 for identical scores and 0.0 for a constant non-zero difference,
    where scipy returns NaN or warns of catastrophic cancellation.
    """
    scores_a, scores_b = _paired(a, b)
    differences = scores_b - scores_a
    if _is_constant(differences):
        return 1.0 if _is_zero(differences.mean()) else 0.0
    return float(stats.ttest_rel(scores_b, scores_a).pvalue)


def randomization_test(
    a: Mapping[str, float], b: Mapping[str, float], n_resamples: int = N_RESAMPLES, seed: int = 0
) -> float:
    """Two-sided p value of the paired randomization test (Fisher 1935; Smucker et al. 2007).

    Under the null hypothesis A and B are exchangeable on each query, so each difference's
    sign is a coin flip; the p value is the share of sign assignments whose mean difference is
    at least as far from 0 as the observed one. scipy enumerates all 2^n assignments when that
    is at most ``n_resamples`` (exact test); otherwise it samples ``n_resamples`` of them, counts
    the observed assignment among them (so p >= 1 / (n_resamples + 1) per side) and doubles the
    smaller one-sided p value, which the symmetry of sign flips makes the same thing.
    """
    scores_a, scores_b = _paired(a, b)
    result = stats.permutation_test(
        (scores_b, scores_a),
        _mean_difference,
        permutation_type="samples",  # with two paired samples: swap a and b within a query
        vectorized=True,
        n_resamples=n_resamples,
        batch=_BATCH,
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


def bootstrap_ci(
    a: Mapping[str, float],
    b: Mapping[str, float],
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean difference ``b - a`` (Efron & Tibshirani,
    "An Introduction to the Bootstrap", 1993, ch. 13): resample queries with replacement,
    take the mean difference of each resample, and cut the tails of that distribution."""
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be between 0 and 1, got {confidence}")
    scores_a, scores_b = _paired(a, b)
    differences = scores_b - scores_a
    rng = np.random.default_rng(seed)
    resampled_means = np.concatenate(
        [
            differences[rng.integers(0, differences.size, size=(size, differences.size))].mean(axis=1)
            for size in _batch_sizes(n_resamples)
        ]
    )
    tail = (1 - confidence) / 2
    low, high = np.quantile(resampled_means, [tail, 1 - tail])
    return float(low), float(high)


def cohens_d_paired(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Effect size: mean difference over the standard deviation of the differences (Cohen
    1988's d for paired samples, also written d_z). 0 when all differences are 0, +-inf when
    they are all equal (up to float rounding) and non-zero."""
    scores_a, scores_b = _paired(a, b)
    differences = scores_b - scores_a
    mean = float(np.mean(differences))
    if _is_constant(differences):
        return 0.0 if _is_zero(mean) else math.copysign(math.inf, mean)
    return mean / float(np.std(differences, ddof=1))


def compare(
    a: Mapping[str, float],
    b: Mapping[str, float],
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> Comparison:
    """Everything needed to report "B vs A" in one table row."""
    scores_a, scores_b = _paired(a, b)
    return Comparison(
        n=int(scores_a.size),
        mean_a=float(np.mean(scores_a)),
        mean_b=float(np.mean(scores_b)),
        delta=float(np.mean(scores_b - scores_a)),
        p_t_test=paired_t_test(a, b),
        p_randomization=randomization_test(a, b, n_resamples, seed),
        ci=bootstrap_ci(a, b, confidence, n_resamples, seed),
        confidence=confidence,
        effect_size=cohens_d_paired(a, b),
    )


def _paired(a: Mapping[str, float], b: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """The two score vectors aligned by query id; both must cover the same queries."""
    if a.keys() != b.keys():
        only_a, only_b = sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())
        raise ConfigError(
            f"the two runs must be scored on the same queries: {len(only_a)} only in A "
            f"(e.g. {only_a[:3]}), {len(only_b)} only in B (e.g. {only_b[:3]})"
        )
    if len(a) < 2:
        raise ConfigError(f"a paired comparison needs at least 2 queries, got {len(a)}")
    query_ids = list(a)
    scores_a = np.array([a[q] for q in query_ids], dtype=float)
    scores_b = np.array([b[q] for q in query_ids], dtype=float)
    if not (np.all(np.isfinite(scores_a)) and np.all(np.isfinite(scores_b))):
        raise ConfigError("per-query scores must be finite numbers (found NaN or infinity)")
    return scores_a, scores_b


def _is_constant(differences: np.ndarray) -> bool:
    # Scores are sums of fractions: 0.7 - 0.2 and 0.6 - 0.1 differ in the last bit.
    return bool(np.allclose(differences, differences[0], rtol=1e-9, atol=1e-12))


def _is_zero(value: float) -> bool:
    return abs(value) <= 1e-12


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def _batch_sizes(total: int) -> list[int]:
    if total < 1:
        raise ConfigError(f"n_resamples must be a positive integer, got {total}")
    return [_BATCH] * (total // _BATCH) + ([total % _BATCH] if total % _BATCH else [])
