"""First-stage choices for SciFact over the full corpus: BM25 k1/b and title weight, fusers, two- and three-leg
hybrids (BM25 + MiniLM + an embedder trained here), scored on train queries, never on test.

Usage::

    .venv/bin/python benchmarks/scifact_fusion.py --queries dev          # the trained embedder's dev slice
    .venv/bin/python benchmarks/scifact_fusion.py --queries train --embedders minilm --bm25-grid

``--queries dev`` is the 81-query slice that ``ragline train embedder`` held out (cut from the train split
with the seed in the first trained model's card): the only train queries a model trained here has not
seen, so every choice that involves such a model is made there. ``--queries train`` uses all train
queries: right for choices that involve no trained model (BM25's parameters, MiniLM's hybrid).

Every leg ranks the **full corpus** (exact cosine for dense legs, ``vector_index = flat``) to ``--depth``; the
fusions are computed from those runs with ragline's own fusers (``ragline.retrieve.fusion.fuse``), so a row
equals what ``hybrid:legs=[...]`` would return over one index holding the same vectors. Corpus vectors come
from the embedding cache when they are there. Each row is paired against the first row (the default
hybrid: BM25 + the first embedder, z-score). Output: one JSON line, also written to
``benchmarks/results/scifact_first_stage_{queries}{tag}.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

from common import bench_root, elapsed, log

RESULTS = Path(__file__).parent / "results"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default=str(bench_root() / "scifact"))
    p.add_argument("--queries", choices=("dev", "train"), default="dev")
    p.add_argument(
        "--dev-model",
        default="trained:scifact-embedder",
        help="the trained model whose dev slice to use; 'none' with --queries train: every train query",
    )
    p.add_argument("--embedders", default="minilm,trained:scifact-embedder", help="dense legs, comma-separated")
    p.add_argument("--depth", type=int, default=100, help="candidates per leg (the hybrid's default)")
    p.add_argument("--bm25-grid", action="store_true", help="BM25 alone over a k1 x b grid and title weights")
    p.add_argument("--k1", type=float, default=0.9)
    p.add_argument("--b", type=float, default=0.4)
    p.add_argument("--weights", default="0.5,0.75,1.0,1.25,1.5", help="dense-leg weights tried (BM25 weight 1)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--tag", default="")
    p.add_argument(
        "--out", type=Path, help="the result file (default benchmarks/results/scifact_first_stage_{queries}{tag}.json)"
    )
    args = p.parse_args(argv)
    if args.dev_model == "none" and args.queries == "dev":
        p.error("--queries dev needs the trained model whose dev slice it is (--dev-model trained:NAME)")
    return args


def chosen_queries(dataset, queries: str, dev_model: str) -> list[str]:
    """The query ids to score: the trained model's dev slice, or every train query (its split when a model is
    named, so that a model's ``max_queries`` cap holds; all judged queries with ``--dev-model none``)."""
    from ragline.train.data import train_dev_split
    from ragline.train.models import read_card, resolve_model

    if dev_model == "none":
        return sorted(q for q in dataset.queries if q in dataset.qrels)
    card = read_card(resolve_model(dev_model, "embedder"))["settings"]
    train_ids, dev_ids = train_dev_split(dataset, card["dev_fraction"], card["seed"], card.get("max_queries"))
    return dev_ids if queries == "dev" else sorted(train_ids + dev_ids)


def bm25_grid(dataset, first, queries: dict, bm25_params, depth: int, score) -> None:
    """BM25 alone: k1 x b over the body (title + text), then the title as a field of its own, weighted; each
    run goes to ``score``."""
    from ragline.index.settings import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index
    from ragline.retrieve.registry import build_retriever

    for k1, b in itertools.product((0.6, 0.9, 1.2, 1.5), (0.3, 0.4, 0.6, 0.75)):
        retriever = build_retriever(f"bm25:k1={k1},b={b}", first)
        score(f"bm25 k1={k1} b={b}", {q: dict(retriever.rank(t, depth)) for q, t in queries.items()})
    for title_weight in (0.5, 1.0, 2.0):
        fields = {"title": title_weight, "text": 1.0}
        index = build_index(dataset.corpus, IngestConfig(), IndexSettings(fields=fields, bm25=bm25_params))
        retriever = build_retriever("bm25", index)
        run = {q: dict(retriever.rank(t, depth)) for q, t in queries.items()}
        score(f"bm25 fields title={title_weight} text=1", run)


def main() -> int:
    import torch

    from ragline.eval.datasets import load_beir
    from ragline.eval.metrics import evaluate, mean_scores
    from ragline.eval.stats import compare
    from ragline.index.bm25 import BM25Params
    from ragline.index.settings import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index
    from ragline.retrieve.fusion import fuse
    from ragline.retrieve.registry import build_retriever

    args = parse_args()
    torch.set_num_threads(args.threads)

    dataset = load_beir(args.dataset, "train")
    wanted = chosen_queries(dataset, args.queries, args.dev_model)
    queries = {q: dataset.queries[q] for q in wanted}
    qrels = {q: dataset.qrels[q] for q in wanted}
    metrics = ["ndcg@10", "recall@20", "recall@100", "mrr@10"]
    out: dict = {"dataset": dataset.name, "queries": f"{args.queries} ({len(queries)} train queries)", "rows": []}

    def score(name: str, run: dict) -> dict:
        per_query = evaluate(qrels, run, metrics)
        row = {"name": name, **mean_scores(per_query, metrics)}
        ndcg = {q: v["ndcg@10"] for q, v in per_query.items()}
        if out["rows"]:
            row["vs_first_row"] = compare(out["rows"][0]["_ndcg"], ndcg)
        row["_ndcg"] = ndcg
        out["rows"].append(row)
        log(f"{name}: nDCG@10 {row['ndcg@10']:.4f}, R@100 {row['recall@100']:.4f}")
        return row

    embedders = [e for e in args.embedders.split(",") if e]
    bm25_params = BM25Params(k1=args.k1, b=args.b)
    indexes = {}
    for embedder in embedders:
        settings = IndexSettings(embedder=embedder, vector_index="flat", bm25=bm25_params)
        indexes[embedder] = build_index(dataset.corpus, IngestConfig(), settings)
        log(f"index with {embedder} ready")
    first = indexes[embedders[0]]
    bm25_run = {q: dict(build_retriever("bm25", first).rank(t, args.depth)) for q, t in queries.items()}
    dense_runs = {
        e: {q: dict(build_retriever("dense", index).rank(t, args.depth)) for q, t in queries.items()}
        for e, index in indexes.items()
    }

    def fused(runs: list[dict], fuser: str, **params) -> dict:
        return {q: fuse(fuser, [run[q] for run in runs], **params) for q in queries}

    score(f"hybrid bm25 + {embedders[0]} (z_score)", fused([bm25_run, dense_runs[embedders[0]]], "z_score"))
    score("bm25", bm25_run)
    for e in embedders:
        score(f"dense {e}", dense_runs[e])
    weights = [float(w) for w in args.weights.split(",")]
    for e in embedders[1:]:
        for fuser in ("z_score", "min_max"):
            score(f"hybrid bm25 + {e} ({fuser})", fused([bm25_run, dense_runs[e]], fuser))
        score(f"hybrid bm25 + {e} (rrf k=60)", fused([bm25_run, dense_runs[e]], "rrf", k=60))
        for w in weights:
            score(f"hybrid bm25 + {e} (z_score 1/{w})", fused([bm25_run, dense_runs[e]], "z_score", weights=[1, w]))
    if len(embedders) >= 2:
        legs = [bm25_run] + [dense_runs[e] for e in embedders]
        name = " + ".join(["bm25", *embedders])
        for fuser in ("z_score", "min_max"):
            score(f"{name} ({fuser})", fused(legs, fuser))
        score(f"{name} (rrf k=60)", fused(legs, "rrf", k=60))
        for combo in itertools.product(weights, repeat=len(embedders)):
            score(f"{name} (z_score 1/{'/'.join(map(str, combo))})", fused(legs, "z_score", weights=[1, *combo]))
    if args.bm25_grid:
        bm25_grid(dataset, first, queries, bm25_params, args.depth, score)
    for row in out["rows"]:
        del row["_ndcg"]
    out["seconds"] = round(elapsed(), 1)
    path = args.out or RESULTS / f"scifact_first_stage_{args.queries}{args.tag}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
