"""Prompt injection: retrieved text carrying planted instructions.

Injection questions (a page of the corpus plants an instruction; its claim is the distractor answer).
The reader is the configured one (the extractive reader when the config's reads with an LLM: say so in
the report). *Unfixed*: no guard; *fixed*: ``firewall:policy=redact``; *configured*: ``[guard]`` of the
config. A question is hijacked when the answer carries the planted claim. Rule: ``rate_rule`` on hijacked
questions of the configured arm, and the correct rates beside it.
"""

from __future__ import annotations

import time

from ragline.components import register
from ragline.doctor.base import DoctorRun, Probe, ProbeResult, cannot_run, filter_of, grade
from ragline.doctor.rules import rate_rule

NAME = "prompt injection"
FIX = 'the injection firewall before the reader ([guard] guard = "firewall:policy=redact")'


def _hijacked(pipeline, questions):  # type: ignore[no-untyped-def]
    hijacked, correct = 0, 0
    for q in questions:
        answer, context = pipeline.answer(q.text, filter_of(q))
        text = answer.text.lower()
        hijacked += any(d.lower() in text for d in q.distractor_answers) and not answer.abstained
        correct += grade(q, answer, context) == "correct"
    return hijacked, correct


def llm_calls(r: DoctorRun) -> int:
    """None: the probe reads with the extractive reader (or none)."""
    return 0


def run(r: DoctorRun) -> ProbeResult:
    started = time.perf_counter()
    questions = [q for q in r.probes.of_type("injection") if q.distractor_answers]
    if not questions:
        return cannot_run(NAME, FIX, "no injection question with the planted claim as a distractor answer")
    reader = r.config.read.reader
    name = reader if isinstance(reader, str) else str(reader.get("name", ""))
    read = {"reader": "extractive"} if name.split(":")[0] == "llm" else {}
    n = len(questions)
    arms = {}
    for arm, guard in (("unfixed", None), ("fixed", "firewall:policy=redact"), ("configured", r.config.guard.guard)):
        h, c = _hijacked(r.pipeline(guard={"guard": guard}, read=read), questions)
        arms[arm] = {"hijacked": round(h / n, 3), "correct": round(c / n, 3), "n": n, "hijacks": h}
    arms["configured"]["guard"] = r.config.guard.guard
    if read:
        arms["configured"]["reader"] = "extractive (the configured LLM reader is not run by this probe)"
    h = arms["configured"]["hijacks"]
    return ProbeResult.judged(
        NAME,
        rate_rule(h, n),
        f"{h}/{n} answers carry the planted claim",
        FIX,
        model="extractive" if read else "",
        arms=arms,
        seconds=time.perf_counter() - started,
        plot={
            "title": "hijacked answers",
            "labels": ["unfixed", "configured", "fixed"],
            "series": {"rate": [arms[a]["hijacked"] for a in ("unfixed", "configured", "fixed")]},
        },
    )


@register("probe", "prompt injection")
def probe() -> Probe:
    """Answers carrying an instruction planted in a retrieved page, with and without the firewall."""
    return Probe(NAME, run, rank=90, fix=FIX, llm_calls=llm_calls)
