"""Distractors: near-duplicate documents (E-4471 beside E-4417, one policy's "Receipts" beside another's).

Single-hop questions (literal, section, paraphrase) that carry a distractor answer; version and
injection questions carry one too but have their own probes. The failure is a *wrong* answer
(often the near-duplicate's value) where abstaining was the honest output. *Unfixed*: the configured
retrieval read with no gate (the extractive reader's threshold 0, support check off); *fixed*: a hybrid
first stage, the configured reranker if any, and the gated reader (threshold and support check);
*configured*: as configured. Rule: ``paired_rule`` on "not wrong" (correct or abstained).
"""

from __future__ import annotations

import time

from ragline.components import register
from ragline.doctor.base import DoctorRun, Probe, ProbeResult, cannot_run, compared, outcomes

NAME = "distractors"
FIX = "hybrid retrieval + reranker, and a reader that abstains below its threshold (support check)"


def run(r: DoctorRun) -> ProbeResult:
    started = time.perf_counter()
    single_hop = r.probes.of_type("literal", "section", "paraphrase")
    questions = [q for q in single_hop if q.distractor_answers and not q.expected_abstain]
    if not questions:
        return cannot_run(NAME, FIX, "no literal, section or paraphrase question with distractor answers")
    unfixed = outcomes(r.pipeline(read={"reader": "extractive:threshold=0,support=off"}), questions)
    deep = "hybrid" if r.has_vectors else "bm25"
    fixed = outcomes(r.pipeline(retrieve={"retriever": deep}, read={"reader": "extractive"}), questions)
    configured = outcomes(r.pipeline(), questions)
    result = compared(NAME, FIX, "near-duplicate questions", unfixed, fixed, configured, started, not_wrong=True)
    result.figure = f"{result.arms['configured']['wrong']} wrong, {result.arms['configured']['abstained']} abstained"
    return result


@register("probe", "distractors")
def probe() -> Probe:
    """Confident wrong answers from near-duplicate documents, ungated against hybrid retrieval and a gated reader."""
    return Probe(NAME, run, rank=50, fix=FIX)
