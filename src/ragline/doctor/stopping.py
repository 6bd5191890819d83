"""Missing stopping rules: questions the visible collection cannot answer, from what each arm spends on them.

Questions: the probe file's unanswerable ones (``expected_abstain``, asked as their user), and its
multi-hop and single-document questions asked with their gold documents hidden (``doc_id not in
[gold]`` inside every retrieval, beside the user's ACL): the hops never reach the needed document, so
the answer is not in what the pipeline can see. Nothing here depends on a corpus's wording: any probe
file with such questions gives them.

*Unfixed*: the agent with only a hard safety cap (``SAFETY_CAP``: hops, retrievals, model calls,
tokens, seconds far above any question's need), its hop check off and an unsupported bridge carried on;
*fixed*: the agent of ``pipelines/agent.toml`` with its stopping limits; *configured*: the configured
pipeline. Each arm's spend per question is measured as retrievals, model calls, tokens and seconds
(an agent's trace; one retrieval and one call of an LLM reader otherwise), and whether it stops with a
reason (abstains, saying why).

Rule: a question **fails** when the configured pipeline answers it (there is nothing to answer from),
abstains without a reason, or spends past the budget: the fixed arm's limits on retrievals, model
calls and tokens (seconds are reported, not judged: they depend on the machine's load). ``rate_rule``
on the failures (tolerance 0: one failure flags). Sampling stops once the decision is clear: the first
failure decides a flag, so the arms stop there once ``MIN_QUESTIONS`` were asked; the unfixed and fixed
arms, shown beside the verdict but not judged, answer the first ``REFERENCE_QUESTIONS`` only (the unfixed
agent is the slow one: it runs to its cap).
"""

from __future__ import annotations

import random
import time
from typing import Any

from ragline.components import register
from ragline.doctor.base import DoctorRun, Probe, ProbeResult, cannot_run, filter_of
from ragline.doctor.rules import rate_rule
from ragline.index.filters import And, Compare, Not

NAME = "missing stopping rules"
FIX = "stopping limits and an abstain with its reason: the agent's caps on retrievals, model calls, tokens, seconds"
SAFETY_CAP = {
    "max_hops": 6,
    "budget_passages": 60,
    "max_retrievals": 60,
    "max_model_calls": 60,
    "max_tokens": 100_000,
    "max_seconds": 600.0,
}
BUDGET_KEYS = ("max_retrievals", "max_model_calls", "max_tokens")
MAX_QUESTIONS = 16  # questions asked at most (``--quick``: MIN_QUESTIONS)
MIN_QUESTIONS = 4  # asked before a failure may end the sampling
REFERENCE_QUESTIONS = 6  # the unfixed and fixed arms' sample: their figures are shown, not judged
SEED = 0
COSTS = ("retrievals", "model_calls", "tokens", "seconds")


def agent_reader(**settings: Any) -> dict[str, Any]:
    """The agent of ``pipelines/agent.toml`` with ``settings`` overriding its own."""
    from ragline.config import load_config

    base = load_config("agent").read.reader
    return {**(base if isinstance(base, dict) else {"name": "agent"}), **settings}


def unfixed_reader() -> dict[str, Any]:
    """The agent with no stopping limit but the hard safety cap (and no hop check to abstain on)."""
    return agent_reader(hop_check=False, unsupported_bridge="question", policy="read", **SAFETY_CAP)


def unanswerable(r: DoctorRun, limit: int) -> list[tuple[Any, Any]]:
    """Up to ``limit`` (question, filter) pairs whose answer the filter leaves out, kinds interleaved, seeded."""
    kinds: list[list[tuple[Any, Any]]] = [
        [(q, filter_of(q)) for q in r.probes.questions if q.expected_abstain],
        [(q, hidden(q)) for q in r.probes.of_type("multihop") if q.gold_doc_ids],
        [(q, hidden(q)) for q in r.probes.answerable() if len(q.gold_doc_ids) == 1 and q.type != "multihop"],
    ]
    rng = random.Random(SEED)
    for kind in kinds:
        rng.shuffle(kind)
    mixed = [pair for row in zip(*(k for k in kinds if k), strict=False) for pair in row] if any(kinds) else []
    rest = [pair for kind in kinds for pair in kind if pair not in mixed]
    return (mixed + rest)[:limit]


def hidden(question: Any) -> Any:
    """The question's user filter with its gold documents hidden: no hop can reach them."""
    return And((filter_of(question), Not(Compare("doc_id", "in", tuple(question.gold_doc_ids)))))


def spend(pipeline: Any, question: Any, where: Any) -> dict[str, Any]:
    """What ``pipeline`` spent on ``question`` (asked under ``where``) and whether it stopped with a reason."""
    started = time.perf_counter()
    answer, context = pipeline.answer(question.text, where)
    seconds = time.perf_counter() - started
    trace = answer.details.get("trace") or {}
    cost = trace.get("cost")
    if cost is None:
        cost = {
            "retrievals": 1,
            "model_calls": int(getattr(pipeline.reader, "llm", None) is not None),
            "tokens": context.tokens,
        }
    reason = answer.details.get("reason") or answer.details.get("support") or trace.get("stop_reason") or ""
    return {
        **{k: cost.get(k, 0) for k in COSTS[:3]},
        "seconds": round(seconds, 3),
        "abstained": bool(answer.abstained),
        "reason": str(reason) if answer.abstained else "",
    }


def failed(row: dict[str, Any], budget: dict[str, int]) -> str:
    """Why ``row`` fails the rule ('' when it stopped with a reason inside the budget)."""
    if not row["abstained"]:
        return "answered"
    if not row["reason"]:
        return "abstained without a reason"
    over = [k for k in BUDGET_KEYS if row[k.removeprefix("max_")] > budget[k]]
    return f"past the {', '.join(over)} budget" if over else ""


def summary(rows: list[dict[str, Any]], budget: dict[str, int]) -> dict[str, Any]:
    n = len(rows)
    out: dict[str, Any] = {f"{k}_per_question": round(sum(r[k] for r in rows) / n, 2) for k in COSTS}
    out["max_retrievals_seen"] = max(r["retrievals"] for r in rows)
    out["abstained_with_reason"] = round(sum(bool(r["abstained"] and r["reason"]) for r in rows) / n, 3)
    out["within_budget"] = round(sum(not failed({**r, "abstained": True, "reason": "-"}, budget) for r in rows) / n, 3)
    out["failures"] = sum(bool(failed(r, budget)) for r in rows)
    out["n"] = n
    return out


def llm_calls(r: DoctorRun) -> int:
    """At most how many LLM calls the probe makes: one per question for a configured reader that calls one."""
    return (MIN_QUESTIONS if r.quick else MAX_QUESTIONS) * r.reader_calls_llm(r.config.read.reader)


def run(r: DoctorRun) -> ProbeResult:
    started = time.perf_counter()
    asked = unanswerable(r, MIN_QUESTIONS if r.quick else MAX_QUESTIONS)
    if not asked:
        return cannot_run(NAME, FIX, "no unanswerable, multihop or single-document question in the probe file")
    fixed_spec = agent_reader()
    budget = {k: int(fixed_spec[k]) for k in BUDGET_KEYS}
    pipelines = {
        "unfixed": r.pipeline(read={"reader": unfixed_reader()}),
        "fixed": r.pipeline(read={"reader": fixed_spec}),
        "configured": r.pipeline(),
    }
    rows: dict[str, list[dict[str, Any]]] = {arm: [] for arm in pipelines}
    why: dict[str, str] = {}
    for i, (question, where) in enumerate(asked, start=1):
        for arm, pipeline in pipelines.items():
            if arm == "configured" or i <= REFERENCE_QUESTIONS:  # the reference arms judge nothing
                rows[arm].append(spend(pipeline, question, where))
        if reason := failed(rows["configured"][-1], budget):
            why[question.id] = reason
        if why and i >= MIN_QUESTIONS:  # one failure flags (rate_rule, tolerance 0): the decision is clear
            break
    arms = {arm: summary(arm_rows, budget) for arm, arm_rows in rows.items()}
    configured = arms["configured"]
    verdict = rate_rule(configured["failures"], configured["n"])
    rule = (
        f"a question fails when the pipeline answers it, abstains without a reason, or spends past "
        f"{budget['max_retrievals']} retrievals, {budget['max_model_calls']} model calls or "
        f"{budget['max_tokens']} tokens; " + verdict.rule
    )
    configured["why"] = why
    figure = (
        f"{configured['retrievals_per_question']} retrievals, {configured['model_calls_per_question']} model calls "
        f"and {configured['seconds_per_question']} s per unanswerable question; abstained with a reason on "
        f"{configured['abstained_with_reason']} (unfixed agent: {arms['unfixed']['retrievals_per_question']} "
        f"retrievals, up to {arms['unfixed']['max_retrievals_seen']})"
    )
    shown = ("unfixed", "configured", "fixed")
    plot = {
        "title": "unanswerable questions: stopped in time, with a reason",
        "labels": list(shown),
        "series": {
            "within the budget": [arms[a]["within_budget"] for a in shown],
            "abstained with a reason": [arms[a]["abstained_with_reason"] for a in shown],
        },
    }
    return ProbeResult(
        NAME, verdict.status, figure, FIX, rule=rule, arms=arms, plot=plot, seconds=time.perf_counter() - started
    )


@register("probe", "missing stopping rules")
def probe() -> Probe:
    """What each arm spends on unanswerable questions and whether it stops with a reason."""
    return Probe(NAME, run, rank=80, fix=FIX, llm_calls=llm_calls)
