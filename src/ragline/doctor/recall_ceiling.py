"""Recall ceiling: the final top-k can hold only what the first stage found.

Arms, on every answerable question, over the same index: *unfixed* is the configured first stage cut
at k; *fixed* is the first stage at depth N (``DEPTH``) reranked to k by the configured reranker, or, with
no reranker configured, a deeper hybrid first stage (BM25 + dense fused) cut at k; *configured* is the
pipeline as configured. Figures: the configured first stage's Recall@N (the ceiling) against each arm's
Hit@k. Rule: ``paired_rule`` on Hit@k, fixed against configured.
"""

from __future__ import annotations

import time

from ragline.components import register
from ragline.doctor.base import DoctorRun, Probe, ProbeResult, filter_of, hit_at, rate
from ragline.doctor.rules import paired_rule

NAME = "recall ceiling"
DEPTH = 50


def llm_calls(r: DoctorRun) -> int:
    """None: the probe reads with the extractive reader (or none)."""
    return 0


def run(r: DoctorRun) -> ProbeResult:
    started = time.perf_counter()
    questions = r.probes.answerable()
    configured = r.pipeline(reader=False)
    unfixed = r.pipeline(reader=False, rerank={"reranker": None})
    if r.config.rerank.reranker:
        fixed = r.pipeline(reader=False, rerank={"depth": max(DEPTH, r.config.rerank.depth)})
        fix = f"first stage at N={max(DEPTH, r.config.rerank.depth)} + the reranker"
    else:
        deep = "hybrid" if r.has_vectors else "bm25"
        fixed = r.pipeline(reader=False, retrieve={"retriever": deep}, rerank={"reranker": None})
        fix = f"a deeper {deep} first stage (N={DEPTH}); a reranker over it when one is configured"
    arms: dict[str, dict[str, float]] = {"unfixed": {}, "fixed": {}, "configured": {}}
    ceiling: dict[str, float] = {}
    for q in questions:
        flt = filter_of(q)
        ceiling[q.id] = hit_at(configured._first_stage(q.text, DEPTH, flt), q.gold_doc_ids)
        for arm, pipeline in (("unfixed", unfixed), ("fixed", fixed), ("configured", configured)):
            arms[arm][q.id] = hit_at(pipeline.retrieve(q.text, flt), q.gold_doc_ids)
    k = r.config.retrieve.k
    verdict = paired_rule(arms["fixed"], arms["configured"])
    figures = {arm: {f"hit@{k}": rate(values), "n": len(values)} for arm, values in arms.items()}
    figures["configured"][f"recall@{DEPTH} (first stage)"] = rate(ceiling)
    return ProbeResult.judged(
        NAME,
        verdict,
        f"Hit@{k} {rate(arms['configured'])} under a first-stage Recall@{DEPTH} of {rate(ceiling)}",
        fix,
        model="none (retrieval only)",
        arms=figures,
        seconds=time.perf_counter() - started,
        plot={
            "title": f"Hit@{k} by arm (first-stage Recall@{DEPTH} = ceiling)",
            "labels": ["unfixed", "configured", "fixed", f"ceiling R@{DEPTH}"],
            "series": {"rate": [rate(arms["unfixed"]), rate(arms["configured"]), rate(arms["fixed"]), rate(ceiling)]},
        },
    )


@register("probe", "recall ceiling")
def probe() -> Probe:
    """The configured top-k against a deeper first stage or a reranker (what the first stage never found)."""
    return Probe(NAME, run, rank=10, llm_calls=llm_calls)
