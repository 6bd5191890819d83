"""Ranking metrics per query and their means, with trec_eval's conventions.

Data model: a *run* maps query id -> doc id -> score (higher is better); *qrels* map
query id -> doc id -> graded relevance. Metrics are named by strings such as ``"ndcg@10"``
(see ``METRIC_NAMES``).

Conventions, chosen so that numbers agree with trec_eval 9 / pytrec_eval and with papers:

- Ranking: a query's docs sorted by score descending, ties broken by doc id descending in
  string order. trec_eval sorts this way (``comp_sim_docno`` in form_res_rels.c), so runs
  with tied scores give the same numbers here as there. The rank column of a run file is
  ignored, as in trec_eval.
- Relevant: grade >= 1 (trec_eval's default ``relevance_level=1``); 0 or negative is not relevant.
- Which queries count: every *judged* query, i.e. every query of the qrels with at least one
  relevant doc. Queries whose judgments are all non-relevant are skipped: recall, AP and nDCG
  divide by the number (or ideal gain) of relevant docs, 0/0 for them (trec_eval scores them 0
  and averages them in). Run queries absent from the qrels are ignored, as in trec_eval.
- A judged query absent from the run, or with no results, scores 0 (``failed@k`` 1) and is
  part of the mean. pytrec_eval silently drops queries absent from the run, so its means are
  over fewer queries and can be higher; ragline averages over every judged query.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragline.errors import ConfigError

Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]
RunLike = Mapping[str, Mapping[str, float]]
QrelsLike = Mapping[str, Mapping[str, int]]
Means = dict[str, float]  # metric name -> mean over the judged queries

RELEVANCE_LEVEL = 1
"""Smallest grade that counts as relevant (trec_eval's default)."""


def rank_documents(scores: Mapping[str, float]) -> list[str]:
    """Doc ids best first: score descending, then doc id descending (trec_eval's tie rule)."""
    return sorted(scores, key=lambda doc_id: (scores[doc_id], doc_id), reverse=True)


def ranked_grades(judgments: Mapping[str, int], scores: Mapping[str, float]) -> np.ndarray:
    """Grades of a query's retrieved docs in rank order; unjudged and non-relevant docs are 0."""
    grades = [judgments.get(doc_id, 0) for doc_id in rank_documents(scores)]
    return np.array([g if g >= RELEVANCE_LEVEL else 0 for g in grades], dtype=float)


def relevant_grades(judgments: Mapping[str, int]) -> np.ndarray:
    """Grades of every relevant doc of a query, retrieved or not (``R`` = its length)."""
    return np.array([g for g in judgments.values() if g >= RELEVANCE_LEVEL], dtype=float)


# Every metric below takes ``ranked`` (from ranked_grades), ``relevant`` (from relevant_grades,
# never empty) and a cutoff ``k`` (None = the whole ranking), and returns a float.


def hit(ranked: np.ndarray, relevant: np.ndarray, k: int) -> float:
    """1 if a relevant doc is in the top k, else 0 (trec_eval ``success.k``; "Hit@k")."""
    return float(np.any(ranked[:k] > 0))


def failed(ranked: np.ndarray, relevant: np.ndarray, k: int) -> float:
    """1 if no relevant doc is in the top k ("Failed@k"), i.e. 1 - ``hit``. Its mean is the
    share of questions whose top-k context gives a RAG pipeline nothing to answer from."""
    return 1.0 - hit(ranked, relevant, k)


def precision(ranked: np.ndarray, relevant: np.ndarray, k: int) -> float:
    """Relevant docs in the top k, divided by k even if fewer were retrieved (trec_eval ``P.k``)."""
    return np.count_nonzero(ranked[:k]) / k


def recall(ranked: np.ndarray, relevant: np.ndarray, k: int) -> float:
    """Relevant docs in the top k divided by all relevant docs R (trec_eval ``recall.k``)."""
    return np.count_nonzero(ranked[:k]) / relevant.size


def reciprocal_rank(ranked: np.ndarray, relevant: np.ndarray, k: int | None = None) -> float:
    """1 / rank of the first relevant doc within the top k, 0 if none (Voorhees, TREC-8 QA
    track, 1999; trec_eval ``recip_rank`` has no cutoff, i.e. k=None). Its mean is MRR."""
    hit_positions = np.flatnonzero(ranked[:k])
    return 1.0 / (hit_positions[0] + 1) if hit_positions.size else 0.0


def average_precision(ranked: np.ndarray, relevant: np.ndarray, k: int | None = None) -> float:
    """Mean of the precision at each relevant doc's rank, over all R relevant docs; relevant
    docs not in the top k contribute 0 (Voorhees & Harman, TREC, 2005; trec_eval ``map`` and,
    with k, ``map_cut.k``, which also divides by R, not by min(R, k)). Its mean is MAP."""
    hit_ranks = np.flatnonzero(ranked[:k]) + 1
    precisions_at_hits = np.arange(1, hit_ranks.size + 1) / hit_ranks
    return float(precisions_at_hits.sum()) / relevant.size


def r_precision(ranked: np.ndarray, relevant: np.ndarray, k: None = None) -> float:
    """Precision at rank R, the number of relevant docs (Buckley & Voorhees 2000; trec_eval
    ``Rprec``). Takes no cutoff."""
    return np.count_nonzero(ranked[: relevant.size]) / relevant.size


def _dcg(gains: np.ndarray) -> float:
    """Discounted cumulative gain: gain at rank r divided by log2(r + 1)."""
    return float(np.sum(gains / np.log2(np.arange(2, gains.size + 2))))


def ndcg(ranked: np.ndarray, relevant: np.ndarray, k: int | None = None) -> float:
    """nDCG with gain = grade (Järvelin & Kekäläinen, ACM TOIS 20(4), 2002), discount
    log2(rank + 1), normalized by the DCG of the ideal ranking of all relevant docs cut at k.
    This is trec_eval's ``ndcg_cut.k`` and ranx's ``ndcg``."""
    ideal = np.sort(relevant)[::-1]
    return _dcg(ranked[:k]) / _dcg(ideal[:k])


def ndcg_exp(ranked: np.ndarray, relevant: np.ndarray, k: int | None = None) -> float:
    """nDCG with exponential gain 2^grade - 1 (Burges et al., ICML 2005), which rewards highly
    relevant docs more; the same as ``ndcg`` on binary qrels. ranx calls it ``ndcg_burges``."""
    ideal = np.sort(relevant)[::-1]
    return _dcg(np.exp2(ranked[:k]) - 1) / _dcg(np.exp2(ideal[:k]) - 1)


# name -> (function, cutoff rule): "required" (name@k only), "optional" (name or name@k), "none".
_METRICS: dict[str, tuple[Callable[..., float], str]] = {
    "hit": (hit, "required"),
    "failed": (failed, "required"),
    "p": (precision, "required"),
    "recall": (recall, "required"),
    "mrr": (reciprocal_rank, "optional"),
    "map": (average_precision, "optional"),
    "ndcg": (ndcg, "optional"),
    "ndcg_exp": (ndcg_exp, "optional"),
    "rprec": (r_precision, "none"),
}
METRIC_NAMES = "hit@k, failed@k, p@k, recall@k, mrr[@k], map[@k], ndcg[@k], ndcg_exp[@k], rprec"


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: ``function(ranked, relevant, k)`` gives one query's score."""

    name: str
    function: Callable[..., float]
    k: int | None


def parse_metric(name: str) -> Metric:
    """Parse ``"ndcg@10"``, ``"map"``... into a Metric; ConfigError names the valid forms."""
    base, at, cutoff = name.partition("@")
    if base not in _METRICS:
        raise ConfigError(f"unknown metric {name!r}; valid: {METRIC_NAMES} (k a positive integer)")
    function, rule = _METRICS[base]
    if not at:
        if rule == "required":
            raise ConfigError(f"metric {name!r} needs a cutoff, e.g. {base}@10")
        return Metric(name, function, None)
    if rule == "none":
        raise ConfigError(f"metric {base!r} takes no cutoff; write {base!r}")
    if not (cutoff.isascii() and cutoff.isdigit()) or int(cutoff) < 1:
        raise ConfigError(f"metric {name!r}: cutoff {cutoff!r} is not a positive integer")
    return Metric(name, function, int(cutoff))


def _names(metrics: Sequence[str]) -> list[str]:
    # A lone string is one name: iterating "ndcg@10" would give metrics "n", "d", ...
    return [metrics] if isinstance(metrics, str) else list(metrics)


def evaluate(qrels: QrelsLike, run: RunLike, metrics: Sequence[str]) -> dict[str, dict[str, float]]:
    """Score every judged query: query id -> metric name -> value.

    Judged queries are those with a relevant doc in ``qrels``; one missing from ``run`` is
    scored as an empty ranking (see the module docstring for how this differs from pytrec_eval).
    """
    parsed = [parse_metric(name) for name in _names(metrics)]  # fail on a bad name before any work
    per_query: dict[str, dict[str, float]] = {}
    for query_id, judgments in qrels.items():
        relevant = relevant_grades(judgments)
        if relevant.size == 0:
            continue
        ranked = ranked_grades(judgments, run.get(query_id, {}))
        per_query[query_id] = {m.name: float(m.function(ranked, relevant, m.k)) for m in parsed}
    return per_query


def mean_scores(per_query: Mapping[str, Mapping[str, float]], metrics: Sequence[str] | None = None) -> Means:
    """Mean of each metric over the queries of ``per_query`` (the output of ``evaluate``).

    ``metrics`` defaults to those of the first query. With no queries each mean is NaN, the
    mean of nothing, rather than 0, so an empty qrels file cannot pass for a bad system.
    """
    metrics = list(next(iter(per_query.values()), {})) if metrics is None else _names(metrics)
    if not per_query:
        return {name: math.nan for name in metrics}
    return {name: float(np.mean([scores[name] for scores in per_query.values()])) for name in metrics}


def evaluate_mean(qrels: QrelsLike, run: RunLike, metrics: Sequence[str]) -> Means:
    """Mean of each metric over every judged query: ``mean_scores(evaluate(...), metrics)``."""
    return mean_scores(evaluate(qrels, run, metrics), metrics)
