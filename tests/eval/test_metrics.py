"""Metrics: hand-computed cases, empty cases, and parity with pytrec_eval and ranx on random runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragline.errors import ConfigError
from ragline.eval.metrics import evaluate, evaluate_mean, mean_scores, parse_metric, rank_documents

EVERY_METRIC = [
    "hit@3", "failed@3", "p@3", "recall@3", "mrr", "mrr@3", "map", "map@3",
    "ndcg", "ndcg@3", "ndcg_exp", "ndcg_exp@3", "rprec",
]  # fmt: skip

# ragline name -> pytrec_eval key; "failed@5" is checked as 1 - success_5.
PYTREC_EQUIVALENT = {
    "ndcg@3": "ndcg_cut_3",
    "ndcg@10": "ndcg_cut_10",
    "map@5": "map_cut_5",
    "map@100": "map_cut_100",
    "map": "map",
    "mrr": "recip_rank",
    "mrr@1000": "recip_rank",  # recip_rank has no cutoff: k above any run length
    "p@3": "P_3",
    "p@10": "P_10",
    "recall@3": "recall_3",
    "recall@100": "recall_100",
    "rprec": "Rprec",
    "hit@1": "success_1",
    "hit@5": "success_5",
}
PYTREC_MEASURES = {
    "ndcg_cut.3,10",
    "map_cut.5,100",
    "map",
    "recip_rank",
    "P.3,10",
    "recall.3,100",
    "Rprec",
    "success.1,5",
}


# --- hand-computed ---------------------------------------------------------------------

# Ranking d2 (0), d3 (1), d1 (2), d4 (unjudged); d9 is relevant but not retrieved: R = 3.
QRELS = {"q": {"d1": 2, "d2": 0, "d3": 1, "d9": 1}}
RUN = {"q": {"d1": 0.2, "d2": 0.9, "d3": 0.5, "d4": 0.1}}
L3 = math.log2(3)
HAND_COMPUTED = {
    "hit@1": 0.0,
    "hit@2": 1.0,
    "failed@1": 1.0,
    "failed@2": 0.0,
    "p@3": 2 / 3,
    "p@10": 2 / 10,
    "recall@2": 1 / 3,
    "recall@3": 2 / 3,
    "mrr": 1 / 2,
    "mrr@1": 0.0,
    "map": (1 / 2 + 2 / 3) / 3,
    "map@2": (1 / 2) / 3,
    "rprec": 2 / 3,
    "ndcg@1": 0.0,
    "ndcg@3": (1 / L3 + 2 / 2) / (2 + 1 / L3 + 1 / 2),
    "ndcg": (1 / L3 + 2 / 2) / (2 + 1 / L3 + 1 / 2),
    "ndcg_exp@3": (1 / L3 + 3 / 2) / (3 + 1 / L3 + 1 / 2),
}


@pytest.mark.parametrize("metric", HAND_COMPUTED)
def test_hand_computed(metric: str) -> None:
    assert evaluate(QRELS, RUN, [metric])["q"][metric] == pytest.approx(HAND_COMPUTED[metric], abs=1e-12)


def test_ndcg_exp_equals_ndcg_on_binary_qrels() -> None:
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    run = {"q": {"c": 3.0, "a": 2.0, "x": 1.0, "b": 0.5}}
    scores = evaluate(qrels, run, ["ndcg@3", "ndcg_exp@3"])["q"]
    assert scores["ndcg_exp@3"] == pytest.approx(scores["ndcg@3"])


def test_ties_are_broken_by_doc_id_descending() -> None:
    assert rank_documents({"a": 1.0, "c": 1.0, "b": 1.0, "z": 0.5, "y": 2.0}) == ["y", "c", "b", "a", "z"]
    assert rank_documents({"d10": 1.0, "d9": 1.0}) == ["d9", "d10"]  # string order, not numeric
    assert evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, ["mrr"])["q"]["mrr"] == 0.5


def test_negative_grades_are_not_relevant() -> None:
    scores = evaluate({"q": {"a": -1, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["mrr", "ndcg@2"])["q"]
    assert scores == {"mrr": 0.5, "ndcg@2": pytest.approx(1 / math.log2(3))}


# --- empty cases, every metric ---------------------------------------------------------


def _empty_score(metric: str) -> float:
    return 1.0 if metric.startswith("failed") else 0.0


@pytest.mark.parametrize("metric", EVERY_METRIC)
def test_empty_run_scores_every_judged_query(metric: str) -> None:
    per_query = evaluate({"q1": {"a": 1}, "q2": {"b": 2}}, {}, [metric])
    assert per_query == {"q1": {metric: _empty_score(metric)}, "q2": {metric: _empty_score(metric)}}


@pytest.mark.parametrize("metric", EVERY_METRIC)
def test_empty_qrels_give_no_queries_and_a_nan_mean(metric: str) -> None:
    assert evaluate({}, RUN, [metric]) == {}
    assert math.isnan(evaluate_mean({}, RUN, [metric])[metric])


@pytest.mark.parametrize("metric", EVERY_METRIC)
def test_query_absent_from_run_counts_in_the_mean(metric: str) -> None:
    qrels = {"found": {"a": 1}, "absent": {"a": 1}, "empty": {"a": 1}, "unjudged": {"a": 0}}
    run = {"found": {"a": 1.0}, "empty": {}, "unjudged": {"a": 1.0}, "not-in-qrels": {"a": 1.0}}
    per_query = evaluate(qrels, run, [metric])
    assert list(per_query) == ["found", "absent", "empty"]  # no relevant doc: skipped
    assert per_query["absent"][metric] == per_query["empty"][metric] == _empty_score(metric)
    found = per_query["found"][metric]
    assert mean_scores(per_query)[metric] == pytest.approx((found + 2 * _empty_score(metric)) / 3)


BAD_NAMES = ["bogus@3", "ndcg@0", "ndcg@x", "ndcg@-1", "ndcg@²", "p", "hit", "rprec@5", ""]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_metric_names_are_config_errors(name: str) -> None:
    with pytest.raises(ConfigError, match="metric"):
        parse_metric(name)


def test_a_lone_metric_string_is_one_metric() -> None:
    assert evaluate(QRELS, RUN, "mrr") == {"q": {"mrr": 0.5}}


def test_mean_scores_defaults_to_the_metrics_of_the_first_query() -> None:
    assert mean_scores({"a": {"m": 1.0}, "b": {"m": 0.0}}) == {"m": 0.5}
    assert mean_scores({}) == {}


# --- parity with pytrec_eval and ranx --------------------------------------------------


def random_collection(seed: int, n_queries: int, ties: bool) -> tuple[dict, dict]:
    """Random graded qrels and a run over the same doc pools.

    Doc ids are strings "d0".."d39" so that tie order (string) differs from numeric order;
    runs retrieve judged and unjudged docs, miss some relevant ones, and skip ~10% of queries.
    Scores come from {0, .25, .5, .75} when ``ties`` (many ties), else are continuous.
    """
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_queries):
        pool = [f"d{j}" for j in range(int(rng.integers(1, 40)))]
        judged = rng.choice(pool, size=int(rng.integers(0, len(pool) + 1)), replace=False)
        qrels[f"q{i}"] = {str(d): int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in judged}
        if rng.random() < 0.1:
            continue
        retrieved = list(rng.choice(pool, size=int(rng.integers(0, len(pool) + 1)), replace=False))
        retrieved += [f"x{j}" for j in range(int(rng.integers(0, 5)))]  # never judged
        scores = rng.integers(0, 4, len(retrieved)) / 4 if ties else rng.random(len(retrieved))
        run[f"q{i}"] = {str(d): float(s) for d, s in zip(retrieved, scores, strict=True)}
    return qrels, run


def _has_relevant(judgments: dict[str, int]) -> bool:
    return any(grade >= 1 for grade in judgments.values())


@pytest.mark.parametrize(("seed", "ties"), [(1, True), (2, True), (3, False)])
def test_parity_with_pytrec_eval(seed: int, ties: bool) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = random_collection(seed, 1500, ties)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    ours = evaluate(qrels, run, [*PYTREC_EQUIVALENT, "failed@5"])

    assert set(ours) == {q for q, judgments in qrels.items() if _has_relevant(judgments)}
    # pytrec_eval drops queries absent from the run; it keeps those without relevant docs (all 0).
    assert set(theirs) - set(ours) == {q for q in theirs if not _has_relevant(qrels[q])}
    assert set(ours) - set(theirs) == {q for q in ours if q not in run}
    compared = set(ours) & set(theirs)
    assert len(compared) > 1000
    for query_id in compared:
        for name, their_name in PYTREC_EQUIVALENT.items():
            expected = theirs[query_id][their_name]
            assert ours[query_id][name] == pytest.approx(expected, abs=1e-9), (query_id, name)
        assert ours[query_id]["failed@5"] == 1 - theirs[query_id]["success_5"]


@pytest.mark.slow  # ranx compiles its metrics with numba on first use
def test_parity_with_ranx() -> None:
    """ranx's tie order is its own, so the run is tie-free; ranx's ``ndcg`` has gain = grade,
    its ``ndcg_burges`` gain 2^grade - 1 (ragline's ``ndcg_exp``)."""
    ranx = pytest.importorskip("ranx")
    qrels, run = random_collection(seed=4, n_queries=300, ties=False)
    qrels = {q: judgments for q, judgments in qrels.items() if _has_relevant(judgments)}
    run = {q: run.get(q, {}) for q in qrels}  # ranx wants a (possibly empty) ranking per query
    names = {"ndcg@10": "ndcg@10", "ndcg_exp@10": "ndcg_burges@10", "mrr@5": "mrr@5", "mrr": "mrr"}
    ranx_run = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), ranx_run, list(names.values()))
    ours = evaluate(qrels, run, list(names))
    for query_id, scores in ours.items():
        for name, their_name in names.items():
            expected = ranx_run.scores[their_name][query_id]
            assert scores[name] == pytest.approx(expected, abs=1e-9), (query_id, name)
