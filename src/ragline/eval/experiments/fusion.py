"""RRF's k against min-max and z-score fusion (Lecture 3 §3.4), and the fusion-outlier probe.

The notes' claims: a small k rewards a document one retriever ranks first (an exclusive find), a large
k rewards documents both rank moderately (consensus): 1/(k+1) + 1/(k+500) vs 2/(k+30) flips between
k = 10 and k = 60; score normalization keeps "BM25 is sure" (literal questions), RRF loses it; and one
outlier score (a keyword-stuffed document) squeezes every other min-max / z-score normalized score,
while RRF only gives it one rank.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.table import Table

from ragline.components import register
from ragline.eval.experiments import Experiment, TypeScores, Workload, load_workload
from ragline.retrieve.fusion import fuse, min_max_normalize, rank, z_score_normalize

RRF_KS = (1, 10, 60, 100, 1000)
DEPTH = 100
OUTLIER_FACTOR = 10.0  # the stuffed document's BM25 score, as a multiple of the query's best


def _fusers() -> dict[str, tuple[str, dict[str, Any]]]:
    return {**{f"rrf k={k}": ("rrf", {"k": k}) for k in RRF_KS}, "min_max": ("min_max", {}), "z_score": ("z_score", {})}


def run(workload: Workload) -> dict[str, Any]:
    index = workload.index
    segments = index.segments
    fusers = _fusers()
    scores = {name: TypeScores() for name in ["bm25", "dense", *fusers]}
    outlier = {name: TypeScores() for name in fusers}
    # Which retriever alone has the gold document first, and how each fuser fares on those questions.
    cases: dict[str, dict[str, list[float]]] = {}
    literal_losses = dict.fromkeys(fusers, 0)
    squeeze: dict[str, list[float]] = {"min_max": [], "z_score": []}
    for q in workload.queries:
        lexical = dict(index.search_ids(q.text, DEPTH, q.filter))
        vector = index.embedder.embed_queries([q.text])[0]
        dense = {segments[s].ids[r]: v for s, r, v in index.search_vector(vector, DEPTH, q.filter)}
        rankings = {"bm25": workload.documents_of(rank(lexical)), "dense": workload.documents_of(rank(dense))}
        stuffed = {**lexical, "__stuffed__": OUTLIER_FACTOR * max(lexical.values(), default=1.0)}
        for name, (fuser, params) in fusers.items():
            rankings[name] = workload.documents_of(rank(fuse(fuser, [lexical, dense], **params)))
            outlier[name].add(q, workload.documents_of(rank(fuse(fuser, [stuffed, dense], **params))))
        for name, ranking in rankings.items():
            scores[name].add(q, ranking)
        top = {leg: bool(rankings[leg]) and rankings[leg][0] in q.gold for leg in ("bm25", "dense")}
        case = {(True, True): "both", (True, False): "bm25 only", (False, True): "dense only"}.get(
            (top["bm25"], top["dense"]), "neither"
        )
        for name in fusers:
            cases.setdefault(case, {}).setdefault(name, []).append(bool(rankings[name]) and rankings[name][0] in q.gold)
            if q.type == "literal" and top["bm25"] and not cases[case][name][-1]:
                literal_losses[name] += 1
        if len(lexical) >= 3:  # how far the other documents' normalized BM25 scores are pushed down
            for name, normalize in (("min_max", min_max_normalize), ("z_score", z_score_normalize)):
                before, after = normalize(lexical), normalize(stuffed)
                others = sorted(lexical, key=lexical.get, reverse=True)[1:10]
                squeeze[name].append(float(np.mean([before[d] - after[d] for d in others])))
    return {
        "experiment": "rrf-k",
        "corpus": workload.name,
        "queries": len(workload.queries),
        "depth": DEPTH,
        "by_fuser": {name: s.means() for name, s in scores.items()},
        "cases": {
            case: {"n": len(next(iter(v.values()))), **{n: round(float(np.mean(x)), 4) for n, x in v.items()}}
            for case, v in sorted(cases.items())
        },
        "literal_top1_lost_to_bm25": literal_losses,
        "outlier": {
            "factor": OUTLIER_FACTOR,
            "by_fuser": {name: s.means()["all"] for name, s in outlier.items()},
            # mean drop of the normalized BM25 score of ranks 2-10 when the outlier joins the run
            "normalized_drop": {n: round(float(np.mean(v)), 4) if v else None for n, v in squeeze.items()},
        },
        "consensus_arithmetic": {
            f"k={k}": {"exclusive 1 + 500": 1 / (k + 1) + 1 / (k + 500), "consensus 30 + 30": 2 / (k + 30)}
            for k in RRF_KS
        },
    }


def tables(payload: dict[str, Any]) -> list[Table]:
    fusers = payload["by_fuser"]
    types = list(fusers["bm25"])
    by_type = Table(
        title=f"Fusion on {payload['corpus']} ({payload['queries']} questions, depth "
        f"{payload['depth']}): Hit@1 (MRR@10) by type"
    )
    for column in ("retriever / fuser", *types):
        by_type.add_column(column, justify="left" if column == "retriever / fuser" else "right")
    for name, rows in fusers.items():
        by_type.add_row(name, *(f"{rows[t]['hit@1']:.2f} ({rows[t]['mrr@10']:.2f})" for t in types))
    cases = Table(title="Hit@1 of each fuser by which single retriever had the gold document first")
    names = [n for n in fusers if n not in ("bm25", "dense")]
    for column in ("case", "n", *names):
        cases.add_column(column, justify="left" if column == "case" else "right")
    for case, row in payload["cases"].items():
        cases.add_row(case, str(row["n"]), *(f"{row[n]:.2f}" for n in names))
    cases.add_row("literal lost to bm25", "", *(str(payload["literal_top1_lost_to_bm25"][n]) for n in names))
    out = payload["outlier"]
    probe = Table(title=f"Fusion outlier: a stuffed document at {out['factor']:g}x the best BM25 score, all questions")
    for column in ("fuser", "hit@1", "mrr@10", "hit@1 without outlier"):
        probe.add_column(column, justify="left" if column == "fuser" else "right")
    for name, row in out["by_fuser"].items():
        probe.add_row(name, f"{row['hit@1']:.2f}", f"{row['mrr@10']:.2f}", f"{fusers[name]['all']['hit@1']:.2f}")
    drop = out["normalized_drop"]
    probe.caption = (
        f"mean drop of ranks 2-10's normalized BM25 score: min-max {drop['min_max']}, z-score {drop['z_score']}"
    )
    return [by_type, cases, probe]


def plot(payload: dict[str, Any], path: str) -> None:
    """Hit@1 of RRF against k, with the score fusers and the single retrievers as reference lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fusers = payload["by_fuser"]
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, key in (("RRF", "all"),):
        ax.plot(RRF_KS, [fusers[f"rrf k={k}"][key]["hit@1"] for k in RRF_KS], marker="o", label=label)
    ax.plot(
        RRF_KS,
        [payload["outlier"]["by_fuser"][f"rrf k={k}"]["hit@1"] for k in RRF_KS],
        marker="x",
        linestyle=":",
        label="RRF with the outlier",
    )
    for name, style, color in (
        ("min_max", "--", "tab:green"),
        ("z_score", "-.", "tab:red"),
        ("bm25", ":", "grey"),
        ("dense", ":", "black"),
    ):
        ax.axhline(fusers[name]["all"]["hit@1"], linestyle=style, color=color, label=name)
    ax.set_xscale("log")
    ax.set_xlabel("RRF k")
    ax.set_ylabel("Hit@1, all questions")
    ax.set_title(f"Fusion on {payload['corpus']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


@register("experiment", "rrf-k")
def experiment() -> Experiment:
    """RRF k swept against min-max and z-score, exclusive finds vs consensus, and one outlier BM25 score."""
    return Experiment("rrf-k", lambda args: run(load_workload(args.dataset, args.embedder, args.limit)), tables, plot)
