"""Lost in the middle: accuracy by the gold source's position in the context.

Single-document answerable questions; the gold chunk and k-1 hard distractors (``ragline.eval.position``)
with the gold at each position 1..k give the accuracy curve (the plot). Arms on the real top-k of the
same questions: *unfixed* orders the context by rank, *fixed* puts the best sources at the ends
(``[order] order = "ends"``), *configured* uses the config's order. The reader is the configured one
unless it calls an LLM or is an agent; then the extractive reader reads (no model calls; said in the
figures). Rule: ``paired_rule`` on correct answers, fixed order against configured order. The extractive
reader weighs a source by its retrieval rank, not its place in the context, so with it the order
cannot matter: an interval at zero then reads "not confirmed" (the failure is not measurable with this
reader), never "absent".
"""

from __future__ import annotations

import time

from ragline.doctor.base import DoctorRun, ProbeResult, cannot_run, grade
from ragline.doctor.rules import paired_rule

NAME = "lost in the middle"
FIX = 'best sources at the ends of the context ([order] order = "ends")'


def run(r: DoctorRun) -> ProbeResult:
    from ragline.answer.pipeline import build_reader
    from ragline.eval.position.items import build_items, build_ordering_items, ordering_context, position_context

    started = time.perf_counter()
    questions = [q for q in r.probes.answerable() if len(q.gold_doc_ids) == 1]
    spec = r.config.read.reader
    name = (spec if isinstance(spec, str) else str(spec.get("name", ""))).split(":")[0]
    reader = build_reader(spec if name == "extractive" else "extractive")
    k = max(2, r.config.retrieve.k)
    items, _ = build_items(r.index, questions, k)
    ordered = build_ordering_items(r.index, questions, k)
    if not items or not ordered:
        return cannot_run(NAME, FIX, "no question has a whole gold chunk and enough distractors in this index")
    curve = []
    for p in range(1, k + 1):
        right = [
            grade(i.question, reader.read(i.question.text, c := position_context(i, p)), c) == "correct" for i in items
        ]
        curve.append(round(sum(right) / len(right), 3))
    arms: dict[str, dict[str, float]] = {}
    for arm, order in (("unfixed", "rank"), ("fixed", "ends"), ("configured", r.config.order.order)):
        arms[arm] = {}
        for item in ordered:
            context = ordering_context(item, order)  # type: ignore[arg-type]
            arms[arm][item.question.id] = float(
                grade(item.question, reader.read(item.question.text, context), context) == "correct"
            )
    verdict = paired_rule(arms["fixed"], arms["configured"])
    figures = {a: {"correct": round(sum(v.values()) / len(v), 3), "n": len(v)} for a, v in arms.items()}
    figures["configured"].update(
        {"order": r.config.order.order, "reader": reader.name, "accuracy_by_position": curve, "n_positions": len(items)}
    )
    middle = min(curve[1:-1]) if k > 2 else curve[-1]
    confirmed = "" if verdict.status == "flag" else "; not confirmed: this reader reads by rank, not position"
    return ProbeResult.judged(
        NAME,
        verdict,
        f"accuracy {curve[0]} at position 1, {middle} in the middle ({reader.name} reader){confirmed}",
        FIX,
        arms=figures,
        seconds=time.perf_counter() - started,
        plot={
            "title": "accuracy by gold position",
            "labels": [str(p) for p in range(1, k + 1)],
            "series": {"accuracy": curve},
        },
    )
