"""Conflicting evidence: a superseded version is as relevant as the current one.

Version questions (the current value is right, the superseded one its distractor). The failure, per
question: the answer states the superseded value, or the answer is given from a context that holds
the superseded value in a superseded source (metadata ``superseded_by``) and its text does not say so
(the note of ``ragline.answer.versions.annotate_conflicts``, citing both): the reader was handed two
contradicting values and the user is not told. Change questions ("what changed between ...") are
reported beside it (right when the answer cites every version it compares) and not judged: they test
the change answer, not the version filter.
*Unfixed*: ``[retrieve] versions = "all"`` (version handling off); *fixed*: ``versions = "current"``
(superseded documents filtered inside retrieval); *configured*: as configured. Rule: ``rate_rule`` on
failing version questions of the configured arm.
"""

from __future__ import annotations

import time
from typing import Any

from ragline.answer.versions import reader_answer
from ragline.components import register
from ragline.corpora.base import Question
from ragline.doctor.base import DoctorRun, Probe, ProbeResult, cannot_run, filter_of, grade
from ragline.doctor.rules import rate_rule

NAME = "conflicting evidence"
FIX = 'version handling: [retrieve] versions = "current" (change questions read both versions)'


def _says(texts: list[str], values: list[str]) -> bool:
    return any(v.lower() in t.lower() for t in texts for v in values if v)


def failure(question: Question, answer: Any, context: Any) -> str | None:
    """Why ``answer`` fails ``question`` on conflicting evidence (None: it does not)."""
    if question.type == "change":
        cited = {c.chunk_id for c in answer.citations}
        if not set(question.gold_doc_ids) <= {s.hit.document_id for s in context.sources if s.hit.doc_id in cited}:
            return "change not cited from both versions"
        return None
    if answer.abstained:
        return None
    if _says([reader_answer(answer).text], question.distractor_answers):  # the conflict note names it on purpose
        return "answered from the superseded version"
    superseded = [s.text for s in context.sources if s.hit.metadata.get("superseded_by")]
    note = str(answer.details.get("note") or "")
    if _says(superseded, question.distractor_answers) and not (note and note in answer.text):
        return "conflict in the context not said in the answer"
    return None


def _measure(pipeline: Any, questions: list[Question]) -> dict[str, Any]:
    failures: dict[str, str] = {}
    correct, changes = 0, []
    for q in questions:
        answer, context = pipeline.answer(q.text, filter_of(q))
        why = failure(q, answer, context)
        if q.type == "change":
            changes.append(why is None)
            continue
        if why:
            failures[q.id] = why
        correct += grade(q, answer, context) == "correct"
    n = len(questions) - len(changes)
    kinds = sorted(set(failures.values()))
    return {
        "failure_rate": round(len(failures) / n, 3),
        "failures": len(failures),
        "correct": round(correct / n, 3),
        "n": n,
        "by_kind": {k: sum(v == k for v in failures.values()) for k in kinds},
        "change_questions_cited_both": f"{sum(changes)}/{len(changes)}",
    }


def run(r: DoctorRun) -> ProbeResult:
    started = time.perf_counter()
    questions = r.probes.of_type("version", "change")
    if not r.probes.of_type("version"):
        return cannot_run(NAME, FIX, "no version question in the probe file")
    arms = {
        "unfixed": _measure(r.pipeline(retrieve={"versions": "all"}), questions),
        "fixed": _measure(r.pipeline(retrieve={"versions": "current"}), questions),
        "configured": _measure(r.pipeline(), questions) | {"versions": r.config.retrieve.versions},
    }
    failures, n = arms["configured"]["failures"], arms["configured"]["n"]
    kinds = ", ".join(f"{k} {v}" for k, v in arms["configured"]["by_kind"].items()) or "none"
    return ProbeResult.judged(
        NAME,
        rate_rule(failures, n),
        f"{failures}/{n} version questions fail ({kinds})",
        FIX,
        arms=arms,
        seconds=time.perf_counter() - started,
        plot={
            "title": "version questions failed",
            "labels": ["unfixed", "configured", "fixed"],
            "series": {
                "failure rate": [arms[a]["failure_rate"] for a in ("unfixed", "configured", "fixed")],
                "correct": [arms[a]["correct"] for a in ("unfixed", "configured", "fixed")],
            },
        },
    )


@register("probe", "conflicting evidence")
def probe() -> Probe:
    """Answers from a superseded version, or a conflict in the context not said, by version handling."""
    return Probe(NAME, run, rank=60, fix=FIX)
