"""Rerank depth on SciFact test: the trained cross-encoder over the first stage's top N.

Usage::

    .venv/bin/python benchmarks/rerank_depth.py                       # hybrid first stage, N = 10/20/50/100
    .venv/bin/python benchmarks/rerank_depth.py --depths 10,20 --sample 50
    .venv/bin/python benchmarks/rerank_depth.py --first-stage-only    # embed the corpus (cached), no reranking
    .venv/bin/python benchmarks/rerank_depth.py --dev-slice --embedder trained:NAME --baseline-embedder minilm

For each N: the first stage's Recall@N (the ceiling no reranker of N candidates can pass), nDCG@10 with the
top N reordered by the cross-encoder (``interpolate`` 1: its score alone; and the ``--weights`` mixes with the
first stage's z-scored score), paired tests against the first stage, and the reranking latency per query
(the cross-encoder's time for N candidates, median and p90 over ``--latency-queries`` queries, on this
machine's threads). Every query's top ``max(N)`` is scored once; a smaller N reorders the first N of them
(a cross-encoder scores each pair alone, so that equals reranking N). Output: one JSON line on stdout, also
written to ``benchmarks/results/rerank_depth_scifact.json``, and the plot ``rerank_depth_scifact.png``.
The model must be trained first (``ragline train reranker``; see BENCHMARKS.md, "Second stage").

``--embedder`` is the index's embedder (the dense leg of the first stage), e.g. ``trained:NAME`` from
``ragline train embedder``, or ``none`` for a BM25 first stage with nothing embedded; with
``--baseline-embedder`` the same first stage over an index embedded by that model is the baseline of a
second paired test (``vs_baseline``) for the first stage and every row, since one ``ragline eval`` run has
one index and so one embedder.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from common import bench_root

RESULTS = Path(__file__).parent / "results"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default=str(bench_root() / "scifact"))
    p.add_argument("--split", default="test")
    p.add_argument("--first", default="hybrid", help="first-stage retriever spec (hybrid)")
    p.add_argument("--model", default="trained:scifact")
    p.add_argument(
        "--embedder",
        default="minilm",
        help="the index's embedder, e.g. trained:scifact-embedder; "
        "none: BM25 only, nothing embedded (a first stage without a dense leg)",
    )
    p.add_argument("--baseline-embedder", help="also compare with the first stage over this embedder's index")
    p.add_argument("--max-length", type=int, default=192)
    p.add_argument("--reranker", help="any reranker spec with a scores(query, hits) method, e.g. maxsim")
    p.add_argument("--depths", default="10,20,50,100")
    p.add_argument("--weights", default="1.0,0.7,0.5", help="interpolation weights of the cross-encoder")
    p.add_argument("--sample", type=int, help="a seeded sample of this many queries (default: all)")
    p.add_argument("--latency-queries", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--first-stage-only", action="store_true")
    p.add_argument("--tag", default="scifact")
    p.add_argument(
        "--out", help="the result file (default: benchmarks/results/rerank_depth_TAG.json; the plot beside it)"
    )
    p.add_argument(
        "--dev-slice",
        action="store_true",
        help="the trained model's dev queries (cut from train with its card's seed): for choosing N and w",
    )
    return p.parse_args(argv)


def main() -> int:
    import torch

    from ragline.components import build
    from ragline.eval.datasets import load_beir
    from ragline.eval.metrics import evaluate, mean_scores
    from ragline.index.store import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index

    args = parse_args()
    torch.set_num_threads(args.threads)
    depths = sorted(int(d) for d in args.depths.split(","))
    weights = [float(w) for w in args.weights.split(",")]

    dataset = load_beir(args.dataset, "train" if args.dev_slice else args.split)
    started = time.perf_counter()
    embedder = None if args.embedder == "none" else args.embedder
    index = build_index(dataset.corpus, IngestConfig(), IndexSettings(embedder=embedder))
    index_seconds = time.perf_counter() - started
    first = build("retriever", args.first, index=index)
    queries = dict(sorted(dataset.judged_queries.items()))
    if args.dev_slice:
        queries = {qid: queries[qid] for qid in _dev_ids(dataset, args.model)}
    if args.sample:
        queries = dict(sorted(random.Random(0).sample(sorted(queries.items()), args.sample)))
    first_run = {qid: dict(first.rank(text, 1000)) for qid, text in queries.items()}
    qrels = {qid: dataset.qrels[qid] for qid in queries}
    recall_metrics = [f"recall@{n}" for n in depths] + ["ndcg@10", "recall@1000"]
    first_per_query = evaluate(qrels, first_run, recall_metrics)
    out: dict = {
        "dataset": dataset.name,
        "split": "train (dev slice)" if args.dev_slice else args.split,
        "queries": len(queries),
        "first_stage": args.first,
        "embedder": args.embedder,
        "first_stage_metrics": mean_scores(first_per_query, recall_metrics),
        "index_seconds": round(index_seconds, 1),
    }
    first_ndcg = {qid: v["ndcg@10"] for qid, v in first_per_query.items()}
    baseline_ndcg = None
    if args.baseline_embedder:
        baseline_ndcg, out["baseline"] = _baseline(args, dataset, queries, qrels, recall_metrics, first_ndcg)
    if args.first_stage_only:
        print(json.dumps(out))
        return 0

    reranker = build("reranker", args.reranker or f"cross:model={args.model},max_length={args.max_length}")
    started = time.perf_counter()
    top, cross = _cross_scores(reranker, index, queries, first_run, depths[-1])
    scoring_seconds = time.perf_counter() - started
    rows = [
        _grid_row(n, weight, top, cross, first_run, qrels, out["first_stage_metrics"], first_ndcg, baseline_ndcg)
        for n in depths
        for weight in weights
    ]
    sample = list(queries.items())[: args.latency_queries]
    out.update(
        reranker=reranker.config(),
        rows=rows,
        latency_per_query=_latency(reranker, index, sample, top, depths),
        latency_queries=len(sample),
        threads=args.threads,
        scoring_seconds=round(scoring_seconds, 1),
        stored_bytes=reranker.stored_bytes() if hasattr(reranker, "stored_bytes") else None,
    )
    path = Path(args.out) if args.out else RESULTS / f"rerank_depth_{args.tag}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    _plot(out, path.with_suffix(".png"))
    print(json.dumps(out))
    return 0


def _baseline(args, dataset, queries: dict, qrels: dict, metrics: list[str], first_ndcg: dict) -> tuple[dict, dict]:
    """The same first stage over an index embedded with ``--baseline-embedder``: its nDCG@10 per query and a
    summary with the first stage compared against it."""
    from ragline.components import build
    from ragline.eval.metrics import evaluate, mean_scores
    from ragline.eval.stats import compare
    from ragline.index.store import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index

    baseline_index = build_index(dataset.corpus, IngestConfig(), IndexSettings(embedder=args.baseline_embedder))
    baseline = build("retriever", args.first, index=baseline_index)
    baseline_run = {qid: dict(baseline.rank(text, 1000)) for qid, text in queries.items()}
    per_query = evaluate(qrels, baseline_run, metrics)
    ndcg = {qid: v["ndcg@10"] for qid, v in per_query.items()}
    summary = {
        "embedder": args.baseline_embedder,
        "metrics": mean_scores(per_query, metrics),
        "first_stage_vs_baseline": compare(ndcg, first_ndcg),
    }
    return ndcg, summary


def _cross_scores(reranker, index, queries: dict, first_run: dict, deepest: int) -> tuple[dict, dict]:
    """Each query's first-stage top ``deepest`` and the reranker's score of each: scored once, every depth and
    weight of the grid reuses them."""
    from ragline.retrieve.base import hits_for

    top: dict[str, list[tuple[str, float]]] = {}
    cross: dict[str, np.ndarray] = {}
    for i, (qid, text) in enumerate(queries.items()):
        top[qid] = list(first_run[qid].items())[:deepest]
        cross[qid] = np.asarray(reranker.scores(text, hits_for(index, top[qid])), dtype=np.float64)
        if i % 25 == 0:
            print(f"scored {i}/{len(queries)} queries", file=sys.stderr, flush=True)
    return top, cross


def _grid_row(n, weight, top, cross, first_run, qrels, first_metrics, first_ndcg, baseline_ndcg) -> dict:
    """nDCG@10 with the top ``n`` reranked (interpolated with the first stage by ``weight``) above the rest of the
    first stage's ranking, compared with the first stage and the baseline."""
    from ragline.eval.metrics import evaluate
    from ragline.eval.stats import compare
    from ragline.retrieve.rerank import interpolated

    run = {}
    for qid in top:
        candidates = top[qid][:n]
        final = interpolated(cross[qid][:n], [s for _, s in candidates], weight)
        reranked = {doc: 1000.0 + float(score) for (doc, _), score in zip(candidates, final)}
        floor = min(reranked.values(), default=0.0)
        rest = [doc for doc in first_run[qid] if doc not in reranked]
        run[qid] = {**reranked, **{doc: floor - 1.0 - j for j, doc in enumerate(rest)}}
    per_query = evaluate(qrels, run, ["ndcg@10"])
    ndcg = {qid: v["ndcg@10"] for qid, v in per_query.items()}
    return {
        "depth": n,
        "interpolate": weight,
        "ndcg@10": float(np.mean(list(ndcg.values()))),
        "first_stage_recall": first_metrics[f"recall@{n}"],
        "vs_first_stage": compare(first_ndcg, ndcg),
        **({"vs_baseline": compare(baseline_ndcg, ndcg)} if baseline_ndcg is not None else {}),
    }


def _latency(reranker, index, sample: list, top: dict, depths: list[int]) -> dict:
    """Seconds per query to rerank the top ``n`` hits, per depth (median and 90th percentile)."""
    from ragline.retrieve.base import hits_for

    latency = {}
    for n in depths:
        times = []
        for qid, text in sample:
            hits = hits_for(index, top[qid][:n])
            t = time.perf_counter()
            reranker.rerank(text, hits, 10)
            times.append(time.perf_counter() - t)
        latency[n] = {"median_s": float(np.median(times)), "p90_s": float(np.percentile(times, 90))}
    return latency


def _dev_ids(dataset, model: str) -> list[str]:
    """The dev slice the training held out (the same rule and seed as ``train_reranker``)."""
    from ragline.train.data import train_dev_split
    from ragline.train.models import read_card, resolve_model

    settings = read_card(resolve_model(model))["settings"]
    return train_dev_split(dataset, settings["dev_fraction"], settings["seed"], settings.get("max_queries"))[1]


def _plot(out: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    depths = sorted({row["depth"] for row in out["rows"]})
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(depths, [out["first_stage_metrics"][f"recall@{n}"] for n in depths], "k--", label="first stage Recall@N")
    left.axhline(out["first_stage_metrics"]["ndcg@10"], color="grey", lw=0.8, label="first stage nDCG@10")
    for weight in sorted({row["interpolate"] for row in out["rows"]}, reverse=True):
        values = [
            row["ndcg@10"] for n in depths for row in out["rows"] if row["depth"] == n and row["interpolate"] == weight
        ]
        left.plot(depths, values, "o-", label=f"reranked nDCG@10 (w={weight})")
    left.set_xscale("log")
    left.set_xticks(depths, [str(n) for n in depths])
    left.set_xlabel("candidates reranked (N)")
    left.legend(fontsize=7)
    left.set_title(f"{out['dataset']} {out['split']} ({out['queries']} queries)")
    right.plot(depths, [out["latency_per_query"][n]["median_s"] for n in depths], "o-")
    right.set_xlabel("candidates reranked (N)")
    right.set_ylabel(f"reranking latency per query, s (median, {out['threads']} threads)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
