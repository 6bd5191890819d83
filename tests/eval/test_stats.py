"""Paired significance tests: hand-checkable cases, exact enumeration, and scipy as the reference."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ragline.errors import ConfigError
from ragline.eval.stats import bootstrap_ci, cohens_d_paired, compare, paired_t_test, randomization_test


def scores(values) -> dict[str, float]:
    return {f"q{i}": float(v) for i, v in enumerate(values)}


def exact_sign_flip_p(differences: np.ndarray) -> float:
    """Share of all 2^n sign assignments with |mean| at least the observed |mean|."""
    observed = abs(differences.mean())
    signs = np.array(list(itertools.product([1, -1], repeat=differences.size)))
    return float(np.mean(np.abs((signs * differences).mean(axis=1)) >= observed - 1e-12))


RNG = np.random.default_rng(7)
A = RNG.random(40)
B = np.clip(A + RNG.normal(0.05, 0.2, 40), 0, 1)


def test_identical_runs() -> None:
    a = scores([0.1, 0.5, 0.9, 0.0])
    result = compare(a, a)
    assert result["delta"] == 0 and result["effect_size"] == 0
    assert result["p_t_test"] == 1.0 and result["p_randomization"] == 1.0
    assert result["ci"] == (0.0, 0.0)


def test_strongly_different_runs() -> None:
    a = scores(A * 0.3)
    b = scores(A * 0.3 + 0.4 + RNG.normal(0, 0.05, A.size))
    result = compare(a, b)
    assert result["delta"] == pytest.approx(0.4, abs=0.03) and result["mean_b"] > result["mean_a"]
    assert result["p_t_test"] < 1e-10
    # No resample is as extreme as the observed one, which counts itself; then doubled (two-sided).
    assert result["p_randomization"] == pytest.approx(2 / 10_001)
    assert result["ci"][0] > 0.3 and result["effect_size"] > 5


def test_t_test_equals_scipy() -> None:
    assert paired_t_test(scores(A), scores(B)) == pytest.approx(stats.ttest_rel(B, A).pvalue, rel=1e-12)


def test_constant_difference_has_the_limit_p_value() -> None:
    a, b = scores([0.1, 0.2, 0.3]), scores([0.6, 0.7, 0.8])  # differences 0.5 up to the last bit
    assert paired_t_test(a, b) == 0.0 and cohens_d_paired(a, b) == math.inf
    assert paired_t_test(a, a) == 1.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_randomization_is_exact_for_few_queries(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.random(8), rng.random(8)
    assert randomization_test(scores(a), scores(b)) == pytest.approx(exact_sign_flip_p(b - a), abs=1e-12)


def test_randomization_samples_close_to_exact_for_many_queries() -> None:
    a, b = A[:16], B[:16]  # 2^16 > 10,000: sampled, Monte Carlo error about 0.005
    exact = exact_sign_flip_p(b - a)
    assert randomization_test(scores(a), scores(b), seed=3) == pytest.approx(exact, abs=0.02)


def test_randomization_is_seeded_and_two_sided() -> None:
    a, b = scores(A), scores(B)
    assert randomization_test(a, b, seed=5) == randomization_test(a, b, seed=5)
    assert randomization_test(a, b, seed=5) == randomization_test(b, a, seed=5)


def test_bootstrap_matches_scipy_percentile_bootstrap() -> None:
    differences = B - A
    reference = stats.bootstrap(
        (differences,), np.mean, method="percentile", n_resamples=10_000, rng=np.random.default_rng(1)
    ).confidence_interval
    low, high = bootstrap_ci(scores(A), scores(B), seed=2)
    assert low == pytest.approx(reference.low, abs=0.01) and high == pytest.approx(reference.high, abs=0.01)
    assert low < differences.mean() < high
    assert bootstrap_ci(scores(A), scores(B), seed=2) == (low, high)  # seeded
    narrow = bootstrap_ci(scores(A), scores(B), confidence=0.5)
    assert low < narrow[0] < narrow[1] < high


def test_cohens_d_paired_by_hand() -> None:
    assert cohens_d_paired(scores([0, 0, 0]), scores([1, 2, 3])) == pytest.approx(2.0)  # mean 2, sd 1
    assert cohens_d_paired(scores([1, 1]), scores([0, 0])) == -math.inf


def test_compare_reports_every_field() -> None:
    result = compare(scores(A), scores(B), n_resamples=2000)
    assert result["n"] == 40 and result["confidence"] == 0.95
    assert result["delta"] == pytest.approx(np.mean(B) - np.mean(A))
    assert result["p_t_test"] == paired_t_test(scores(A), scores(B))
    assert result["ci"] == bootstrap_ci(scores(A), scores(B), n_resamples=2000)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ({"q1": 0.1, "q2": 0.2}, {"q1": 0.1, "q3": 0.2}, "same queries: 1 only in A"),
        ({"q1": 0.1}, {"q1": 0.2}, "at least 2 queries"),
        ({"q1": 0.1, "q2": math.nan}, {"q1": 0.1, "q2": 0.2}, "finite"),
    ],
)
def test_bad_inputs_are_config_errors(a: dict, b: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        compare(a, b)


def test_bad_settings_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="confidence"):
        bootstrap_ci(scores(A), scores(B), confidence=95)
    with pytest.raises(ConfigError, match="n_resamples"):
        bootstrap_ci(scores(A), scores(B), n_resamples=0)
