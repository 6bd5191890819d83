"""Permission leakage: restricted chunks reaching the reranker or the reader's context.

Questions whose asker may not see the answering document (``forbidden``). *Unfixed*: the ACL filter
after top-k (``ragline.doctor.unsafe.AfterTopK``, an arm only the doctor builds); *fixed*: the filter
inside retrieval; *configured*: ``[retrieve] filter`` of the config. A question leaks when any chunk
the filter would refuse reaches the reranker's candidates or the reader's context, or the restricted
answer appears in the output. Rule: ``rate_rule`` on leaking questions of the configured arm.
"""

from __future__ import annotations

import time

from ragline.components import register
from ragline.doctor.base import DoctorRun, Probe, ProbeResult, cannot_run, filter_of
from ragline.doctor.unsafe import AfterTopK, admits
from ragline.index.filters import parse_filter

NAME = "permission leakage"
FIX = 'the ACL filter inside retrieval ([retrieve] filter = "inside")'


def _leaks(question, hits, answer, flt) -> bool:  # type: ignore[no-untyped-def]
    node = parse_filter(flt)
    refused = any(not admits(node, h.metadata) for h in hits)
    said = bool(question.answer) and not answer.abstained and question.answer.lower() in answer.text.lower()
    return refused or said


def run(r: DoctorRun) -> ProbeResult:
    from ragline.doctor.rules import rate_rule

    started = time.perf_counter()
    questions = [q for q in r.probes.questions if q.forbidden_doc_ids]
    if not questions:
        return cannot_run(NAME, FIX, "the probe file has no question with forbidden documents")
    pipeline = r.pipeline()
    after = AfterTopK(pipeline)
    leaked = {"unfixed": 0, "fixed": 0}
    for q in questions:
        flt = filter_of(q)
        answer, _ = after.answer(q.text, flt)
        leaked["unfixed"] += _leaks(q, after.seen_by_reranker + after.seen_by_reader, answer, flt)
        answer, context = pipeline.answer(q.text, flt)
        leaked["fixed"] += _leaks(q, [s.hit for s in context.sources], answer, flt)
    n = len(questions)
    configured = leaked["unfixed"] if r.config.retrieve.filter == "after" else leaked["fixed"]
    arms = {arm: {"leak_rate": round(v / n, 3), "n": n} for arm, v in leaked.items()}
    arms["configured"] = {"leak_rate": round(configured / n, 3), "n": n, "filter": r.config.retrieve.filter}
    return ProbeResult.judged(
        NAME,
        rate_rule(configured, n),
        f"{configured}/{n} restricted questions leak to the reranker or reader",
        FIX,
        arms=arms,
        seconds=time.perf_counter() - started,
        plot={
            "title": "questions with restricted text past the filter",
            "labels": ["unfixed", "configured", "fixed"],
            "series": {
                "rate": [arms["unfixed"]["leak_rate"], arms["configured"]["leak_rate"], arms["fixed"]["leak_rate"]]
            },
        },
    )


@register("probe", "permission leakage")
def probe() -> Probe:
    """Restricted chunks reaching the reranker or the reader, the ACL filter after top-k against inside."""
    return Probe(NAME, run, rank=30, fix=FIX)
