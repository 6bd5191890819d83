"""Lost in the middle: does the configured context order put a relevant source where the reader misses it?

Single-document answerable questions; each has the gold chunk and hard distractors
(``ragline.eval.position``) from the configured index. Two measurements:

* **Order arm** (the judged one), on a fixed seeded sample (``order_questions`` of the probe file,
  stratified by type, seed 0; asked in turn, it stops once the rest is unlikely to change the verdict,
  ``rules.settled``, after ``MIN_SETTLED`` questions; not read at all when the configured order is the
  fix's, since then every difference is 0) with ``ORDER_SOURCES`` sources: the failure needs a long context,
  so at least 10 sources (more than ``k`` when ``k`` is smaller). Each sampled question's gold source is
  given a retrieval rank 2..n in turn (the ranks cycle over the sample; at rank 1 every order shows it
  first, so the order cannot matter there), and the same ranked sources are read in three orders: *unfixed*
  ``rank``, *fixed* ``ends`` (the best sources at both ends), *configured* the config's order. The reader
  must see order: the configured reader when it is an LLM, else the probe file's ``order_reader`` (the local
  LLM by default; its replies are cached, so a rerun costs no model call). The extractive reader and the
  agent weigh a source by its retrieval rank, not its place, so they cannot show the failure. Score: the
  answer states the gold value (``found_answer``: Liu et al.'s accuracy; does the reader find the fact where
  the order put it?), with the strict grade (cited from the gold document) beside it. Rule: ``paired_rule``
  on that score, fixed order against configured order. An interval that touches zero reads "not confirmed"
  (the sample cannot tell the orders apart), never "absent".
* **Position curve** (the plot): accuracy by the gold's position 1..k with the configured reader (the
  extractive one for an LLM or agent reader: it costs no model call), and how often the order arm's
  reader found the answer by the position the gold was shown at.

``order_reader = "none"`` in the probe file skips the order arm: the probe then judges the position
curve's reader on the real top-k, as before, and says it cannot see order.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from ragline.components import register
from ragline.doctor.base import DoctorRun, Probe, ProbeResult, cannot_run, grade
from ragline.doctor.rules import Verdict, paired_rule, settled

NAME = "lost in the middle"
EMBEDDED_ONLY = (
    "it ranks every chunk of the collection with the embedded index's BM25 to build its contexts; "
    "what it measures (the reader and the context order) is not the store's"
)
FIX = 'best sources at the ends of the context ([order] order = "ends")'
ORDER_SOURCES = 10  # sources in each order-arm context (at least; k when k is larger)
SEED = 0
ORDERS = (("unfixed", "rank"), ("fixed", "ends"))
FIXED_ORDER = dict(ORDERS)["fixed"]
MIN_SETTLED = 8  # asked before it may stop once the rest is unlikely to change the verdict (``rules.settled``)


def reader_name(spec: Any) -> str:
    return (spec if isinstance(spec, str) else str(spec.get("name", ""))).split(":")[0]


def order_reader_spec(r: DoctorRun) -> Any:
    """The reader the order arm reads with: the configured one when it is an LLM, else the probe file's."""
    spec = r.config.read.reader
    return spec if reader_name(spec) == "llm" else r.probes.order_reader


def llm_calls(r: DoctorRun) -> int:
    """At most how many LLM calls: one per sampled question and distinct order, when the order reader is an LLM
    (none when the configured order is the fix's: the arm is not read then)."""
    spec = order_reader_spec(r)
    if spec == "none" or not r.reader_calls_llm(spec) or r.config.order.order == FIXED_ORDER:
        return 0
    return r.probes.order_questions * len({*dict(ORDERS).values(), r.config.order.order})


def order_ranks(n_items: int, n_sources: int) -> list[int]:
    """The gold source's retrieval rank for each of ``n_items`` questions: 2..n_sources in turn."""
    if n_sources < 2:
        raise ValueError("an order arm needs at least 2 sources")
    return [2 + i % (n_sources - 1) for i in range(n_items)]


def order_contexts(item: Any, rank: int, orders: tuple[str, ...]) -> dict[str, Any]:
    """``item``'s sources with the gold ranked ``rank``, as one context per order (all sources kept)."""
    from ragline.answer.context import build_context
    from ragline.eval.position.items import UNLIMITED

    hits = item.hits(rank)
    return {o: build_context(hits, budget=UNLIMITED, order=o, near_duplicate=None) for o in orders}  # type: ignore[arg-type]


def _order_arm(r: DoctorRun, questions: list[Any], reader: Any) -> dict[str, Any] | None:
    """Correct answers per question in each order, and by shown position (None: no question qualifies)."""
    from ragline.eval.position.items import build_items, gold_position, sample

    n_sources = max(ORDER_SOURCES, r.config.retrieve.k)
    items, _ = build_items(r.index, questions, n_sources)
    items = sample(items, r.probes.order_questions, SEED)
    if not items:
        return None
    arms = dict(ORDERS) | {"configured": r.config.order.order}
    found: dict[str, dict[str, float]] = {arm: {} for arm in arms}
    strict: dict[str, dict[str, float]] = {arm: {} for arm in arms}
    by_position: dict[int, list[float]] = {}
    for i, (item, rank) in enumerate(zip(items, order_ranks(len(items), n_sources)), start=1):
        contexts = order_contexts(item, rank, tuple(sorted(set(arms.values()))))
        graded = {}
        for order, context in contexts.items():
            answer = reader.read(item.question.text, context)
            correct = float(grade(item.question, answer, context) == "correct")
            graded[order] = (found_answer(item.question, answer), correct)
            by_position.setdefault(gold_position(context, item.question) or 0, []).append(graded[order][0])
        for arm, order in arms.items():
            found[arm][item.question.id], strict[arm][item.question.id] = graded[order]
        # Stop once the remaining questions are unlikely to change the verdict, after ``MIN_SETTLED`` questions.
        if i >= MIN_SETTLED and settled(found["fixed"], found["configured"], len(items) - i):
            break
    curve = [round(sum(v) / len(v), 3) if (v := by_position.get(p)) else None for p in range(1, n_sources + 1)]
    return {
        "scores": found,
        "strict": strict,
        "orders": arms,
        "n_sources": n_sources,
        "by_position": curve,
        "sampled": len(items),
    }


def found_answer(question: Any, answer: Any) -> float:
    """1.0 when the answer states a gold answer and no known wrong value (Liu et al.'s accuracy).

    The order arm asks whether the reader found the gold source's fact where the order put it; the
    strict grade (cited from the gold document, the citation supporting it) is reported beside it.
    """
    from ragline.answer.versions import reader_answer
    from ragline.eval.answers import answer_matches

    own = reader_answer(answer)
    return float(
        not own.abstained and answer_matches(own.text, question.answers, "contains", question.distractor_answers)
    )


def _position_curve(r: DoctorRun, questions: list[Any], reader: Any) -> tuple[list[float], int]:
    from ragline.eval.position.items import build_items, position_context

    k = max(2, r.config.retrieve.k)
    items, _ = build_items(r.index, questions, k)
    curve = []
    for p in range(1, k + 1):
        right = [
            grade(i.question, reader.read(i.question.text, c := position_context(i, p)), c) == "correct" for i in items
        ]
        curve.append(round(sum(right) / len(right), 3) if right else 0.0)
    return curve, len(items)


def _rank_order_arm(r: DoctorRun, questions: list[Any], reader: Any) -> dict[str, dict[str, float]]:
    """Correct answers on the real top-k in each order, read by ``reader`` (no order-sensitive reader)."""
    from ragline.eval.position.items import build_ordering_items, ordering_context

    ordered = build_ordering_items(r.index, questions, max(2, r.config.retrieve.k))
    arms: dict[str, dict[str, float]] = {}
    for arm, order in (*ORDERS, ("configured", r.config.order.order)):
        arms[arm] = {}
        for item in ordered:
            context = ordering_context(item, order)  # type: ignore[arg-type]
            arms[arm][item.question.id] = float(
                grade(item.question, reader.read(item.question.text, context), context) == "correct"
            )
    return arms


def with_evidence(questions: list[Any], documents: list[Any]) -> list[Any]:
    """``questions`` with their evidence sentence: a probe file gives none, so it is the gold document's
    first sentence that holds the answer (questions whose gold document states no answer are left out)."""
    from ragline.eval.answers import contains_answer
    from ragline.text.sentences import split_sentences

    texts = {d.id: d.text for d in documents}
    out = []
    for q in questions:
        if q.evidence:
            out.append(q)
            continue
        doc = q.gold_doc_ids[0]
        text = texts.get(doc, "")
        sentences = (text[a:b] for a, b in split_sentences(text))
        sentence = next((s for s in sentences if contains_answer(s, q.answers)), None)
        if sentence is not None:
            out.append(replace(q, evidence=[(doc, sentence.strip())]))
    return out


def run(r: DoctorRun) -> ProbeResult:
    from ragline.answer.pipeline import build_reader

    started = time.perf_counter()
    single = [q for q in r.probes.answerable() if len(q.gold_doc_ids) == 1]
    questions = with_evidence(single, r.documents() if any(not q.evidence for q in single) else [])
    spec = r.config.read.reader
    configured = reader_name(spec)
    curve_reader = build_reader(spec if configured == "extractive" else "extractive")
    curve, n_curve = _position_curve(r, questions, curve_reader)
    if not n_curve:
        return cannot_run(NAME, FIX, "no question has a whole gold chunk and enough distractors in this index")
    k = len(curve)
    middle = min(curve[1:-1]) if k > 2 else curve[-1]
    plot = {
        "title": "accuracy by gold position",
        "labels": [str(p) for p in range(1, k + 1)],
        "series": {f"{curve_reader.name} (k = {k})": curve},
    }
    figures: dict[str, dict[str, Any]]
    order_spec = order_reader_spec(r)
    if order_spec == "none":
        arms = _rank_order_arm(r, questions, curve_reader)
        verdict = paired_rule(arms["fixed"], arms["configured"])
        figures = {a: {"correct": round(sum(v.values()) / len(v), 3), "n": len(v)} for a, v in arms.items() if v}
        note = "" if verdict.status == "flag" else f"; not confirmed: the {curve_reader.name} reader reads by rank"
        figure = f"accuracy {curve[0]} at position 1, {middle} in the middle ({curve_reader.name} reader){note}"
        reader_label = curve_reader.name
    elif r.config.order.order == FIXED_ORDER:
        # fixed - configured is 0 on every question by construction: the decision is clear before any reading.
        verdict = Verdict(
            "pass",
            f"the configured order is the fix's ({FIXED_ORDER}): fixed - configured = 0 on "
            "every question, so no sample can flag it; the order arm was not read",
        )
        figures = {}
        figure = (
            f"the configured order is the fix ({FIXED_ORDER}); accuracy {curve[0]} at position 1, {middle} "
            f"in the middle ({curve_reader.name} reader)"
        )
        reader_label = curve_reader.name
    else:
        order_reader = build_reader(order_spec)
        try:
            measured = _order_arm(r, questions, order_reader)
        finally:
            close = getattr(getattr(order_reader, "llm", None), "close", None)
            if close is not None:
                close()
        if measured is None:
            return cannot_run(NAME, FIX, f"no question has a whole gold chunk and {ORDER_SOURCES - 1} distractors")
        arms, strict = measured["scores"], measured["strict"]
        verdict = paired_rule(arms["fixed"], arms["configured"])
        verdict = Verdict(verdict.status, "answer found (states the gold value): " + verdict.rule)
        figures = {
            a: {
                "found": round(sum(v.values()) / len(v), 3),
                "n": len(v),
                "correct": round(sum(strict[a].values()) / len(v), 3),
            }
            for a, v in arms.items()
        }
        reader_label = str(order_reader.config().get("model") or order_reader.name)
        n_sources = measured["n_sources"]
        ends = figures["fixed"]["found"]
        note = (
            ""
            if verdict.status == "flag"
            else "; the configured order is the fix"
            if r.config.order.order == "ends"
            else "; not confirmed at this sample size"
        )
        why = "" if configured == "llm" else f", since the {configured} reader reads by rank, not position"
        model = reader_label.split("@")[0]
        order, found = r.config.order.order, figures["configured"]["found"]
        compared = (
            f"{ends} in ends order (configured) vs {figures['unfixed']['found']} in rank order"
            if order == "ends"
            else f"{found} in {order} order vs {ends} in ends order"
        )
        asked = f"{figures['fixed']['n']} of {measured['sampled']} questions, {n_sources} sources"
        figure = f"answer found {compared}, {asked}, gold ranked 2..{n_sources} ({model}{why}){note}"
        labels = [str(p) for p in range(1, n_sources + 1)]
        plot = {
            "title": "accuracy by gold position",
            "labels": labels[: max(k, n_sources)],
            "series": {
                f"{curve_reader.name} (k = {k})": curve + [None] * (n_sources - k),
                f"{model}, answer found ({n_sources} sources)": measured["by_position"],
            },
        }
        figures["configured"]["order_reader_accuracy_by_position"] = measured["by_position"]
        figures["configured"]["n_sources"] = n_sources
        figures["configured"]["order_sample"] = measured["sampled"]  # asked: n of these (``curtailed``)
    figures.setdefault("configured", {}).update(
        {"order": r.config.order.order, "reader": reader_label, "accuracy_by_position": curve, "n_positions": n_curve}
    )
    used = reader_label if reader_label == curve_reader.name else f"{reader_label}; the curve: {curve_reader.name}"
    return ProbeResult.judged(
        NAME, verdict, figure, FIX, arms=figures, seconds=time.perf_counter() - started, plot=plot, model=used
    )


@register("probe", "lost in the middle")
def probe() -> Probe:
    """The reader's accuracy by the gold source's place in the context, the configured order against ends."""
    return Probe(NAME, run, rank=40, fix=FIX, llm_calls=llm_calls, embedded_only=EMBEDDED_ONLY)
