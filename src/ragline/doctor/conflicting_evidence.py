"""Conflicting evidence: a superseded version is as relevant as the current one.

Version questions (the current value is right, the superseded one a distractor) and change questions
("what changed between ...": right when both versions are cited). *Unfixed*: ``[retrieve] versions =
"all"`` (version handling off); *fixed*: ``versions = "current"`` (superseded documents filtered inside
retrieval; change questions answered from both versions); *configured*: as configured.
Rule: ``paired_rule`` on correct answers.
"""

from __future__ import annotations

import time

from ragline.doctor.base import DoctorRun, ProbeResult, cannot_run, compared, document_of, filter_of, grade

NAME = "conflicting evidence"
FIX = 'version handling: [retrieve] versions = "current" (change questions read both versions)'


def _outcomes(pipeline, questions):  # type: ignore[no-untyped-def]
    out = {}
    for q in questions:
        answer, context = pipeline.answer(q.text, filter_of(q))
        if q.type == "change":  # right when it cites every version it compares
            cited = {
                document_of(s.hit) for s in context.sources if s.hit.doc_id in {c.chunk_id for c in answer.citations}
            }
            out[q.id] = "correct" if set(q.gold_doc_ids) <= cited else "abstained" if answer.abstained else "wrong"
        else:
            out[q.id] = grade(q, answer, context)
    return out


def run(r: DoctorRun) -> ProbeResult:
    started = time.perf_counter()
    questions = r.probes.of_type("version", "change")
    if not questions:
        return cannot_run(NAME, FIX, "no version or change question in the probe file")
    unfixed = _outcomes(r.pipeline(retrieve={"versions": "all"}), questions)
    fixed = _outcomes(r.pipeline(retrieve={"versions": "current"}), questions)
    configured = _outcomes(r.pipeline(), questions)
    return compared(
        NAME,
        FIX,
        "version and change questions",
        unfixed,
        fixed,
        configured,
        started,
        extra={"versions": r.config.retrieve.versions},
    )
