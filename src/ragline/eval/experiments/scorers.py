"""Word overlap vs TF-IDF vs BM25 (Lecture 3 §3.1): Hit@1 / MRR by question type, a k1 x b grid, and
the keyword-stuffing probe that shows BM25's term-frequency saturation.

The notes' claims: on a small, even corpus the three scorers are nearly equal and all nine (k1, b)
points give the same Hit@1 (0.603 on their 78 single-hop questions), because the failures there
(paraphrase, missing context) are no matter of tuning; and saturation defends against stuffing: a
document repeating one query term 40 times beats a normal one under linear tf x idf, not under BM25.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.table import Table

from ragline.components import register
from ragline.eval.experiments import Experiment, Query, Workload, load_workload, score_by_type
from ragline.index import BM25Params
from ragline.index.bm25 import tf_weight
from ragline.index.segment import FIELD_TEXT
from ragline.types import Document

LECTURE_GRID = (
    (0.5, 0.25),
    (0.5, 0.5),
    (0.5, 0.75),
    (1.2, 0.25),
    (1.2, 0.5),
    (1.2, 0.75),
    (2.0, 0.25),
    (2.0, 0.5),
    (2.0, 0.75),
)
FINE_K1 = (0.0, 0.3, 0.6, 0.9, 1.2, 1.5, 2.0, 3.0, 5.0, 10.0)
FINE_B = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
STUFFING_REPEATS = 40
TF_POINTS = (1, 2, 3, 5, 10, 20, 40)


def overlap_ranker(workload: Workload) -> Any:
    """Count of distinct query terms a chunk contains (the lecture's baseline), ties by index order.

    Candidates are the rows any query term reaches under the query's filter (a TF-IDF search of all of
    them), so the overlap scorer sees exactly the documents the others may return.
    """
    index = workload.index
    analyzer = index.settings.analyzer
    terms_of = {d.id: set(analyzer(FIELD_TEXT["body"](d))) for d in index.documents()}
    everything = BM25Params(variant="tfidf")

    def rank(query: str, k: int, flt: Any) -> list[tuple[str, float]]:
        wanted = set(analyzer(query))
        candidates = index.search_ids(query, len(index), flt, everything)
        scored = [(doc_id, float(len(wanted & terms_of[doc_id]))) for doc_id, _ in candidates]
        scored.sort(key=lambda item: -item[1])  # stable: TF-IDF order among equal overlaps
        return scored[:k]

    return rank


def bm25_ranker(workload: Workload, params: BM25Params) -> Any:
    return lambda query, k, flt: workload.index.search_ids(query, k, flt, params)


def stuffing_probe(workload: Workload, scorers: dict[str, BM25Params | None], n_queries: int = 20) -> dict[str, Any]:
    """Add, for each probed query, a document repeating its rarest term 40 times (and nothing else of
    it); report where each scorer ranks the stuffed document and the gold one."""
    index = workload.index
    analyzer, stats = index.settings.analyzer, index.bm25_scorer(index.settings.bm25)
    probed: list[tuple[Query, str]] = []
    for q in workload.queries:
        known = [t for t in dict.fromkeys(analyzer(q.text)) if t in stats["vocab"]]
        if len(known) >= 2:
            rarest = min(known, key=lambda t: stats["df"]["body"][stats["vocab"][t]] if "body" in stats["df"] else 0)
            probed.append((q, rarest))
        if len(probed) == n_queries:
            break
    groups = sorted({g for d in index.documents() for g in (d.metadata.get("acl") or [])})
    stuffed = [
        Document(f"stuffed-{i}", " ".join([term] * STUFFING_REPEATS), metadata={"acl": groups} if groups else {})
        for i, (_, term) in enumerate(probed)
    ]
    index.add(stuffed)
    index.commit()
    try:
        rankers = {
            name: overlap_ranker(workload) if p is None else bm25_ranker(workload, p) for name, p in scorers.items()
        }
        out: dict[str, Any] = {"queries": len(probed), "repeats": STUFFING_REPEATS}
        for name, ranker in rankers.items():
            stuffed_ranks, first = [], 0
            for i, (q, _) in enumerate(probed):
                ranked = [d for d, _ in ranker(q.text, 50, q.filter)]
                position = ranked.index(f"stuffed-{i}") + 1 if f"stuffed-{i}" in ranked else 51
                stuffed_ranks.append(position)
                first += position == 1
            out[name] = {
                "stuffed_rank_1": round(first / max(len(probed), 1), 4),
                "stuffed_median_rank": float(np.median(stuffed_ranks)) if stuffed_ranks else None,
            }
    finally:
        index.delete(d.id for d in stuffed)
        index.commit()
    return out


def saturation() -> dict[str, list[float]]:
    """Term weight at tf = 1, 2, ... 40 relative to tf = 1 (document of average length)."""
    tf = np.asarray(TF_POINTS, dtype=np.float64)
    ones = np.ones_like(tf)
    curves = {"linear tf": tf.tolist(), "tfidf 1+ln tf": (1 + np.log(tf)).tolist()}
    for k1 in (0.5, 1.2, 2.0, 5.0):
        w = tf_weight(BM25Params(variant="okapi", k1=k1, b=0.75), tf, ones, 1.0)
        curves[f"bm25 k1={k1:g}"] = np.round(w / w[0], 4).tolist()
    return {"tf": list(TF_POINTS), **{k: [round(x, 4) for x in v] for k, v in curves.items()}}


def run(workload: Workload, fine: bool = True) -> dict[str, Any]:
    scorers: dict[str, BM25Params | None] = {
        "overlap": None,
        "tfidf": BM25Params(variant="tfidf"),
        "bm25 (okapi k1=1.2 b=0.75)": BM25Params(variant="okapi", k1=1.2, b=0.75),
        "bm25 (lucene k1=0.9 b=0.4)": BM25Params(),
    }
    by_scorer = {
        name: score_by_type(workload, overlap_ranker(workload) if p is None else bm25_ranker(workload, p))
        for name, p in scorers.items()
    }
    grid = [
        {"k1": k1, "b": b, **score_by_type(workload, bm25_ranker(workload, BM25Params("okapi", k1, b)))["all"]}
        for k1, b in LECTURE_GRID
    ]
    fine_grid = []
    if fine:
        fine_grid = [
            {"k1": k1, "b": b, **score_by_type(workload, bm25_ranker(workload, BM25Params("okapi", k1, b)))["all"]}
            for k1 in FINE_K1
            for b in FINE_B
        ]
    return {
        "experiment": "scorers",
        "corpus": workload.name,
        "queries": len(workload.queries),
        "chunks": len(workload.index),
        "by_scorer": by_scorer,
        "lecture_grid": grid,
        "fine_grid": fine_grid,
        # Linear tf x idf, the notes' foil for saturation: okapi with k1 -> infinity and b = 0.
        "stuffing": stuffing_probe(workload, {**scorers, "linear tf x idf": BM25Params("okapi", 1e6, 0.0)}),
        "saturation": saturation(),
    }


def tables(payload: dict[str, Any]) -> list[Table]:
    types = list(next(iter(payload["by_scorer"].values())))
    by_type = Table(title=f"Scorers on {payload['corpus']} ({payload['queries']} questions): Hit@1 (MRR@10) by type")
    for column in ("scorer", *types):
        by_type.add_column(column, justify="left" if column == "scorer" else "right")
    for name, rows in payload["by_scorer"].items():
        by_type.add_row(name, *(f"{rows[t]['hit@1']:.2f} ({rows[t]['mrr@10']:.2f})" for t in types))
    grid = Table(title="BM25 (okapi) k1 x b, all questions: Hit@1 / MRR@10 (the lecture's nine points)")
    for column in ("k1", "b", "hit@1", "mrr@10"):
        grid.add_column(column, justify="right")
    for row in payload["lecture_grid"]:
        grid.add_row(f"{row['k1']:g}", f"{row['b']:g}", f"{row['hit@1']:.3f}", f"{row['mrr@10']:.3f}")
    out = [by_type, grid]
    if payload["fine_grid"]:
        hits = {(r["k1"], r["b"]): r["hit@1"] for r in payload["fine_grid"]}
        bs = sorted({b for _, b in hits})
        fine = Table(title="finer grid: Hit@1 (rows k1, columns b)")
        for column in ("k1", *map(str, bs)):
            fine.add_column(column, justify="right")
        for k1 in sorted({k for k, _ in hits}):
            fine.add_row(f"{k1:g}", *(f"{hits[(k1, b)]:.3f}" for b in bs))
        out.append(fine)
    stuffing = payload["stuffing"]
    probe = Table(
        title=f"Stuffing probe: a chunk repeating the query's rarest term {stuffing['repeats']}x "
        f"({stuffing['queries']} queries)"
    )
    for column in ("scorer", "stuffed at rank 1", "median rank"):
        probe.add_column(column, justify="left" if column == "scorer" else "right")
    for name, row in stuffing.items():
        if isinstance(row, dict):
            probe.add_row(name, f"{row['stuffed_rank_1']:.0%}", f"{row['stuffed_median_rank']:g}")
    curve = payload["saturation"]
    sat = Table(title="Term weight relative to tf = 1 (average-length document)")
    for column in ("weight", *map(str, curve["tf"])):
        sat.add_column(column, justify="left" if column == "weight" else "right")
    for name, values in curve.items():
        if name != "tf":
            sat.add_row(name, *(f"{v:.2f}" for v in values))
    return [*out, probe, sat]


def plot(payload: dict[str, Any], path: str) -> None:
    """Term-frequency saturation curves and the finer k1 x b grid's Hit@1."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = payload["saturation"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name, values in curve.items():
        if name != "tf":
            left.plot(curve["tf"], values, marker="o", label=name)
    # Log axes: linear tf (40x at tf 40) would flatten the saturating curves into one line.
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xticks(curve["tf"], [str(t) for t in curve["tf"]])
    left.set_yticks([1, 2, 5, 10, 20, 40], ["1", "2", "5", "10", "20", "40"])
    left.set_xlabel("term frequency")
    left.set_ylabel("weight / weight at tf = 1")
    left.set_title("saturation")
    left.legend(fontsize=8)
    grid = payload["fine_grid"] or payload["lecture_grid"]
    k1s, bs = sorted({r["k1"] for r in grid}), sorted({r["b"] for r in grid})
    hits = {(r["k1"], r["b"]): r["hit@1"] for r in grid}
    image = right.imshow([[hits[(k, b)] for b in bs] for k in k1s], aspect="auto", origin="lower", cmap="viridis")
    right.set_xticks(range(len(bs)), [f"{b:g}" for b in bs])
    right.set_yticks(range(len(k1s)), [f"{k:g}" for k in k1s])
    right.set_xlabel("b")
    right.set_ylabel("k1")
    right.set_title(f"BM25 okapi Hit@1 on {payload['corpus']}")
    fig.colorbar(image, ax=right)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


@register("experiment", "scorers")
def experiment() -> Experiment:
    """Word overlap vs TF-IDF vs BM25 by question type, k1 x b grids, keyword stuffing."""
    return Experiment("scorers", lambda args: run(load_workload(args.dataset, None, args.limit)), tables, plot)
