"""Parity figures: ragline's fusion against ranx's and ragline's metrics against trec_eval's (pytrec_eval).

    .venv/bin/python benchmarks/parity.py --output json

Seeded random input, so the figures are deterministic:

- ``fusion``: for each fuser (RRF k=60, min-max, z-score, CombSUM, CombMNZ, weighted sum), ``--queries``
  queries each with 3 non-empty runs of 1-24 documents from a pool of 40 (no run with all scores equal:
  there ranx divides rounding error by 1e-9 and ties make RRF's order); fused by ragline's ``fuse`` and by
  ``ranx.fuse``. ``max_abs_diff``: the largest score difference over every fused document;
  ``same_ranking``: the share of queries whose fused ranking (by score, ties by id) is the same.
- ``metrics``: ``--metric-queries`` queries with graded judgments (-1..3) and a run with tied scores;
  ``max_abs_diff`` of each measure over the queries both score (pytrec_eval drops queries absent from the run),
  and ``queries`` compared.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from common import print_result
from ragline.eval.metrics import evaluate
from ragline.provenance import provenance
from ragline.retrieve.fusion import fuse

POOL = [f"d{i:02d}" for i in range(40)]
# ragline fuser -> (ranx norm, ranx method, weighted)
RANX_FUSERS = {
    "rrf": (None, "sum", False),
    "min_max": ("min-max", "sum", False),
    "z_score": ("zmuv", "sum", False),
    "sum": (None, "sum", False),
    "comb_mnz": ("min-max", "mnz", False),
    "weighted_sum": (None, "wsum", True),
}
# ragline metric -> trec_eval measure
TREC_EVAL = {"ndcg@10": "ndcg_cut_10", "map@100": "map_cut_100", "mrr": "recip_rank", "p@10": "P_10",
             "recall@100": "recall_100", "rprec": "Rprec"}  # fmt: skip


def random_queries(seed: int, n_queries: int, n_runs: int) -> list[list[dict[str, float]]]:
    """``n_queries`` queries, each ``n_runs`` non-empty runs with distinct continuous scores."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_queries):
        runs = []
        for _ in range(n_runs):
            docs = rng.choice(POOL, size=int(rng.integers(2, 25)), replace=False)
            runs.append({str(d): float(s) for d, s in zip(docs, rng.uniform(-5, 20, size=len(docs)))})
        out.append(runs)
    return out


def _order(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda d: (-round(scores[d], 9), d))


def fusion_parity(seed: int, n_queries: int, n_runs: int = 3) -> dict[str, dict[str, float]]:
    """Per fuser, the largest score difference from ranx and the share of identical rankings."""
    from ranx import Run
    from ranx import fuse as ranx_fuse
    from ranx.fusion import rrf

    queries = random_queries(seed, n_queries, n_runs)
    weights = [0.5 + 0.75 * i for i in range(n_runs)]
    out = {}
    for name, (norm, method, weighted) in RANX_FUSERS.items():
        runs = [Run({f"q{q}": runs[i] for q, runs in enumerate(queries)}) for i in range(n_runs)]
        if name == "rrf":
            runs = [rrf([run]) for run in runs]  # ranx's rrf fuses one run: sum the reciprocal ranks
        params = {"weights": weights} if weighted else {}
        theirs = ranx_fuse(runs, norm=norm, method=method, params=params).to_dict()
        diffs, same = [], 0
        for q, query_runs in enumerate(queries):
            ours = fuse(name, query_runs, **params)
            reference = theirs[f"q{q}"]
            same_docs = set(ours) == set(reference)
            diffs.append(max(abs(ours[d] - s) for d, s in reference.items()) if same_docs else np.inf)
            same += _order(ours) == _order(reference)
        out[name] = {"max_abs_diff": float(max(diffs)), "same_ranking": same / n_queries}
    return out


def random_judged_run(seed: int, n_queries: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Graded judgments and a run with many tied scores, over pools of 1-39 documents per query."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for i in range(n_queries):
        pool = [f"d{j}" for j in range(int(rng.integers(1, 40)))]
        judged = rng.choice(pool, size=int(rng.integers(0, len(pool) + 1)), replace=False)
        qrels[f"q{i}"] = {str(d): int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in judged}
        retrieved = rng.choice(pool, size=int(rng.integers(0, len(pool) + 1)), replace=False)
        if len(retrieved):
            run[f"q{i}"] = {str(d): float(s) for d, s in zip(retrieved, rng.integers(0, 4, len(retrieved)) / 4)}
    return qrels, run


def metric_parity(seed: int, n_queries: int) -> dict[str, Any]:
    """Per metric, the largest difference from trec_eval's over the queries both evaluate."""
    import pytrec_eval

    qrels, run = random_judged_run(seed, n_queries)
    measures = {"ndcg_cut.10", "map_cut.100", "recip_rank", "P.10", "recall.100", "Rprec"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    ours = evaluate(qrels, run, list(TREC_EVAL))
    compared = sorted(set(ours) & set(theirs))
    diffs = {name: max(abs(ours[q][name] - theirs[q][m]) for q in compared) for name, m in TREC_EVAL.items()}
    return {"queries": len(compared), "max_abs_diff": diffs, "max_abs_diff_all": max(diffs.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=300, help="queries per fuser")
    parser.add_argument("--metric-queries", type=int, default=1500, help="queries for the metric parity")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", choices=["json", "pretty"], default="json")
    args = parser.parse_args()
    fusion = fusion_parity(args.seed, args.queries)
    result = {
        "fusion": fusion,
        "fusion_max_abs_diff": max(f["max_abs_diff"] for f in fusion.values()),
        "fusion_same_ranking": min(f["same_ranking"] for f in fusion.values()),
        "metrics": metric_parity(args.seed + 1, args.metric_queries),
        "provenance": provenance(None, seed=args.seed),
    }
    print_result(result, args.output)


if __name__ == "__main__":
    main()
