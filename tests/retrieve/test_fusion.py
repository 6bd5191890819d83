"""Fusion: parity with ranx on random runs, plus the edge cases ranx cannot express (no run, empty runs)."""

from __future__ import annotations

import numpy as np
import pytest

from ragline.components import names
from ragline.errors import ConfigError
from ragline.retrieve.fusion import fuse, rank

FUSERS = names("fuser")

N_QUERIES = 150  # per parity case; ranx fuses them all in one call, so hundreds of runs stay cheap
POOL = [f"d{i:02d}" for i in range(40)]


def _random_runs(rng: np.random.Generator, n_runs: int, allow_constant: bool) -> list[dict[str, float]]:
    runs = []
    for _ in range(n_runs):
        size = int(rng.integers(1, 25))
        docs = rng.choice(POOL, size=size, replace=False)
        if allow_constant and rng.random() < 0.15:
            scores = np.full(size, rng.uniform(-3, 3))  # no spread: normalizes to all 0, as in ranx
        else:
            scores = rng.uniform(-5, 20, size=size)
        runs.append({str(d): float(s) for d, s in zip(docs, scores)})
    return runs


def _random_queries(seed: int, n_runs: int, allow_constant: bool) -> list[list[dict[str, float]]]:
    """``N_QUERIES`` queries, each with ``n_runs`` non-empty runs (ranx needs every run non-empty)."""
    rng = np.random.default_rng(seed)
    return [_random_runs(rng, n_runs, allow_constant) for _ in range(N_QUERIES)]


def _to_ranx(queries: list[list[dict[str, float]]], run_index: int):  # noqa: ANN202 - ranx.Run
    from ranx import Run

    return Run({f"q{q}": runs[run_index] for q, runs in enumerate(queries)})


def _ranx_fused(queries: list[list[dict[str, float]]], name: str, weights: list[float] | None) -> list[dict]:
    from ranx import fuse as ranx_fuse
    from ranx.fusion import rrf

    n_runs = len(queries[0])
    runs = [_to_ranx(queries, i) for i in range(n_runs)]
    if name == "rrf":
        # ranx's rrf takes no weights: fuse the per-run reciprocal ranks with a weighted sum instead.
        runs, norm = [rrf([run]) for run in runs], None
    else:
        norm = {"min_max": "min-max", "z_score": "zmuv", "comb_mnz": "min-max"}.get(name)
    method, params = ("wsum", {"weights": weights}) if weights is not None else ("sum", {})
    if name == "comb_mnz":
        method, params = "mnz", {}
    fused = ranx_fuse(runs, norm=norm, method=method, params=params).to_dict()
    return [fused[f"q{q}"] for q in range(len(queries))]


def _params(name: str, n_runs: int, weights: list[float] | None) -> dict[str, object]:
    if name == "weighted_sum":
        return {"weights": weights if weights is not None else [1.0] * n_runs}
    if name == "sum" or weights is None:
        return {}
    return {"weights": weights}


def _ranx_handles_constant_runs(name: str) -> bool:
    """Whether runs with all scores equal can be compared with ranx for this fuser.

    Not for RRF: ties make the order, and ranx breaks them arbitrarily. Not for z-score: ranx divides
    the mean's rounding error by 1e-9, where we return exactly 0 (see test_constant_run_normalizes_...).
    """
    return name not in ("rrf", "z_score")


PARITY_CASES = [
    (name, n_runs, weighted)
    for name in FUSERS
    for n_runs in (2, 3, 5)
    for weighted in (False, True)
    if not (name in ("sum", "comb_mnz") and weighted)  # CombSUM and CombMNZ have no weights
]


@pytest.mark.parametrize(("name", "n_runs", "weighted"), PARITY_CASES)
def test_parity_with_ranx(name: str, n_runs: int, weighted: bool) -> None:
    pytest.importorskip("ranx")
    queries = _random_queries(seed=n_runs, n_runs=n_runs, allow_constant=_ranx_handles_constant_runs(name))
    weights = [0.5 + i * 0.75 for i in range(n_runs)] if weighted else None
    expected = _ranx_fused(queries, name, weights)
    for runs, theirs in zip(queries, expected):
        ours = fuse(name, runs, **_params(name, n_runs, weights))
        assert ours == pytest.approx(theirs, abs=1e-9, rel=0)


@pytest.mark.parametrize("name", list(FUSERS))
def test_single_run_parity_with_ranx(name: str) -> None:
    pytest.importorskip("ranx")
    from ranx import Run
    from ranx.fusion import rrf
    from ranx.normalization import min_max_norm, zmuv_norm

    queries = _random_queries(seed=7, n_runs=1, allow_constant=_ranx_handles_constant_runs(name))
    run = _to_ranx(queries, 0)
    reference = {
        "rrf": lambda: rrf([run]),
        "min_max": lambda: min_max_norm(run),
        "comb_mnz": lambda: min_max_norm(run),  # one run: each document is in 1 run
        "z_score": lambda: zmuv_norm(run),
        "weighted_sum": lambda: run,
        "sum": lambda: run,
    }[name]()
    assert isinstance(reference, Run)
    expected = reference.to_dict()
    for q, runs in enumerate(queries):
        assert fuse(name, runs, **_params(name, 1, None)) == pytest.approx(expected[f"q{q}"], abs=1e-9, rel=0)


@pytest.mark.parametrize("name", list(FUSERS))
def test_no_runs_and_empty_runs_fuse_to_nothing(name: str) -> None:
    assert fuse(name, [], **_params(name, 0, None)) == {}
    assert fuse(name, [{}, {}], **_params(name, 2, None)) == {}


@pytest.mark.parametrize("name", list(FUSERS))
def test_an_empty_run_contributes_nothing(name: str) -> None:
    run = {"a": 3.0, "b": 1.5, "c": -2.0}
    alone = fuse(name, [run], **_params(name, 1, None))
    assert fuse(name, [{}, run, {}], **_params(name, 3, None)) == pytest.approx(alone, abs=1e-12)


@pytest.mark.parametrize("name", list(FUSERS))
def test_a_single_run_keeps_its_order(name: str) -> None:
    run = {"a": 0.2, "b": 0.9, "c": 0.5, "d": -1.0}
    fused = fuse(name, [run], **_params(name, 1, None))
    assert [doc for doc, _ in rank(fused)] == ["b", "c", "a", "d"]


def test_missing_document_counts_as_the_minimum_after_min_max() -> None:
    fused = fuse("min_max", [{"a": 2.0, "b": 1.0, "c": 0.0}, {"a": 5.0, "b": 3.0}])
    assert fused == pytest.approx({"a": 2.0, "b": 0.5, "c": 0.0})


def test_constant_run_normalizes_to_zero_as_ranx_does() -> None:
    assert fuse("min_max", [{"only": 7.0}]) == {"only": 0.0}
    assert fuse("z_score", [{"x": 1.0, "y": 1.0}]) == {"x": 0.0, "y": 0.0}


def test_rrf_ranks_ties_by_doc_id_and_ignores_scores() -> None:
    fused = fuse("rrf", [{"b": 1.0, "a": 1.0, "c": 0.0}], k=0)
    assert fused == {"a": 1.0, "b": 0.5, "c": pytest.approx(1 / 3)}


def test_rank_orders_by_score_then_doc_id() -> None:
    fused = {"c": 1.0, "a": 1.0, "b": 2.0, "d": 0.5}
    assert rank(fused) == [("b", 2.0), ("a", 1.0), ("c", 1.0), ("d", 0.5)]
    assert rank(fused, 2) == [("b", 2.0), ("a", 1.0)]
    assert rank(fused, 0) == []
    assert rank(fused, 10) == rank(fused)


def test_bad_parameters_raise_config_error() -> None:
    choices = "comb_mnz, min_max, rrf, sum, weighted_sum, z_score"
    with pytest.raises(ConfigError, match=f"unknown fuser .borda.; choose one of: {choices}"):
        fuse("borda", [{"a": 1.0}])
    with pytest.raises(ConfigError, match="it accepts: k, weights"):
        fuse("rrf", [{"a": 1.0}], kk=60)
    with pytest.raises(ConfigError, match="weights"):
        fuse("weighted_sum", [{"a": 1.0}])
    with pytest.raises(ConfigError, match="one weight per run"):
        fuse("min_max", [{"a": 1.0}, {"b": 1.0}], weights=[1.0])
    with pytest.raises(ConfigError, match="finite"):
        fuse("z_score", [{"a": 1.0}], weights=[float("nan")])
    with pytest.raises(ConfigError, match="k must be"):
        fuse("rrf", [{"a": 1.0}], k=-1)
    with pytest.raises(ConfigError, match="k must be"):
        rank({"a": 1.0}, -1)
