"""Deciding when and how to retrieve (issue 29): always-retrieve vs Self-RAG vs CRAG vs routed vs the agent.

Every arm answers the same stratified sample of a world's questions (``per_type`` of each type, drawn with
``seed``) plus every closed-book question of that world (``ragline.corpora.closed_book``: arithmetic,
general knowledge, definitions, none of it in the corpus), as each question's user, over the world's
BM25 index, with the extractive reader (or ``reader``) wherever passages are read:

* ``always-retrieve``: one BM25 retrieval of 5 passages, read;
* ``always-retrieve (llm)`` (only when named): the same passages read by the LLM reader (the default pipeline's
  reader, answering from numbered sources), to see whether a model reading the corpus answers what it knows;
* ``self-rag``: ``ragline.reflect.self_rag`` (per segment);
* ``crag``: ``ragline.reflect.crag`` (per segment), the wider search BM25 over 10 passages;
* ``routed``: ``ragline.reflect.router``, the agent as its multi-hop route;
* ``agent``: the agent of ``pipelines/agent.toml`` on BM25 (the most expensive path);
* ``agent (own chunks)``: the same agent over the world indexed as ``pipelines/agent.toml`` chunks it (100-word
  windows with a breadcrumb), where it was tuned: on the shared sentence-pack chunks its first hop often grades
  below its threshold and the interleaved hop's passages, read first, crowd out the answer.

``--dataset DIR`` asks a QA dataset's questions instead (HotpotQA train-100, say: ``reflect.worlds.dataset_world``,
every passage pooled in one index, no closed-book questions), with the critics trained on the built-in worlds.

Closed-book routes answer arithmetic with the calculator and anything else with the LLM (cached).
Reported per arm: correct / wrong / abstained (all questions, closed-book ones, the rest), retrievals,
model calls and seconds per question, and paired tests on correctness against always-retrieve and
against the agent (``ragline.eval.stats.compare``). An extractive answer is graded by exact match, a
LLM reply by containment (``eval.answers.answer_matches``).
"""

from __future__ import annotations

import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from rich.table import Table

from ragline.components import register
from ragline.corpora.base import Question
from ragline.corpora.closed_book import CLOSED_BOOK
from ragline.eval.experiments import Experiment, llm_of
from ragline.reflect.worlds import World, user_filter

ARMS = ("always-retrieve", "self-rag", "crag", "routed", "agent", "agent (own chunks)")
LLM_ARM = "always-retrieve (llm)"
DEFAULT_PER_TYPE = 6
K = 5


def stratified(questions: Sequence[Question], per_type: int, seed: int = 0) -> list[Question]:
    """``per_type`` questions of each type (all of a smaller type) drawn with ``seed``, every closed-book one."""
    rng = random.Random(seed)
    by_type: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_type[q.type].append(q)
    keep = {q.id for q in by_type.pop(CLOSED_BOOK, [])}
    for _, group in sorted(by_type.items()):
        keep.update(q.id for q in rng.sample(group, min(per_type, len(group))))
    return [q for q in questions if q.id in keep]


def arms(
    world: World,
    llm: Any = None,
    names: Sequence[str] = ARMS,
    settings: dict[str, dict[str, Any]] | None = None,
    reader: str = "extractive",
) -> dict[str, Callable[[Question], Any]]:
    """Each arm as a function of a question: ``(answer, context, cost)``; ``settings``: reader keys per arm
    (``{"self-rag": {"min_score": 0.8}}``) over the arm's own; ``reader``: the reader of every arm's passages."""
    settings = settings or {}
    from ragline.answer.context import build_context
    from ragline.components import build
    from ragline.reflect.base import agent_cost
    from ragline.reflect.train import agent_spec
    from ragline.retrieve.registry import build_retriever

    retriever = build_retriever("bm25", world.index)
    passages_reader = build("reader", reader)
    common = {"retriever": "bm25", "k": K, "reader": reader}
    agent = {**agent_spec(), "reader": reader}
    built: dict[str, Any] = {}

    def own_chunks() -> Any:
        from ragline.config import load_config
        from ragline.ingest.pipeline import IngestConfig

        ingest = load_config("agent").ingest
        assert world.reindex is not None, "the agent's own chunks need a world that can be indexed again"
        return world.reindex(IngestConfig(ingest.chunker, ingest.context))

    def always(q: Question) -> Any:
        context = build_context(retriever.search(q.text, K, user_filter(q)))
        return passages_reader.read(q.text, context), context, {"retrievals": 1, "model_calls": 0}

    def always_llm(q: Question) -> Any:
        if LLM_ARM not in built:
            built[LLM_ARM] = build("reader", {"name": "llm", "max_tokens": 64, **settings.get(LLM_ARM, {})}, llm=llm)
        context = build_context(retriever.search(q.text, K, user_filter(q)))
        answer = built[LLM_ARM].read(q.text, context)
        answer.details["graded_by"] = "contains"
        return answer, context, {"retrievals": 1, "model_calls": 1}

    def reflective(name: str, spec: dict[str, Any], index: Callable[[], Any] = lambda: world.index) -> Any:
        def run(q: Question) -> Any:
            if name not in built:
                built[name] = build("reader", {**spec, **settings.get(name, {})}, index=index(), llm=llm)
            answer, context = built[name].answer(q.text, user_filter(q))
            cost = answer.details.get("cost") or agent_cost(answer)
            return answer, context, cost

        return run

    table = {
        "always-retrieve": always,
        LLM_ARM: always_llm,
        "self-rag": reflective("self-rag", {"name": "self-rag", "segments": True, **common}),
        "crag": reflective("crag", {"name": "crag", "segments": True, "fallback": "bm25", "fallback_k": 10, **common}),
        "routed": reflective("routed", {"name": "routed", "agent": agent, **common}),
        "agent": reflective("agent", agent),
        "agent (own chunks)": reflective("agent (own chunks)", agent, own_chunks),
    }
    return {name: table[name] for name in names}


def _match(answer: Any) -> str:
    """An LLM's reply is graded by containment, a span or the calculator's value exactly."""
    if answer.details.get("graded_by") == "contains":
        return "contains"
    return "contains" if answer.details.get("closed_book") not in (None, "calculator") else "em"


def run(
    world: World,
    llm: Any = None,
    per_type: int = DEFAULT_PER_TYPE,
    seed: int = 0,
    names: Sequence[str] = ARMS,
    log: Callable[[str], None] | None = None,
    settings: dict[str, dict[str, Any]] | None = None,
    reader: str = "extractive",
) -> dict[str, Any]:
    """Every arm on the sample of ``world`` (see the module's docstring)."""
    from ragline.eval.answers import grade_question
    from ragline.eval.stats import compare

    sample = stratified(world.questions, per_type, seed)
    results: dict[str, Any] = {}
    for name, answer_with in arms(world, llm, names, settings, reader).items():
        per_question: dict[str, dict[str, Any]] = {}
        started = time.perf_counter()
        for q in sample:
            t0 = time.perf_counter()
            answer, context, cost = answer_with(q)
            grade = grade_question(q, answer, context, _match(answer))  # type: ignore[arg-type]
            per_question[q.id] = {
                "type": q.type,
                "outcome": grade.outcome,
                "f1": round(grade.f1, 4),
                "answer": answer.text,
                "retrievals": int(cost.get("retrievals", 0)),
                "model_calls": int(cost.get("model_calls", 0)),
                "seconds": round(time.perf_counter() - t0, 4),
                "route": answer.details.get("route", {}).get("route"),
            }
        results[name] = {"questions": per_question, "seconds": round(time.perf_counter() - started, 2)}
        if log:
            log(f"{name}: {Counter(r['outcome'] for r in per_question.values())}")
    for result in results.values():
        result["summary"] = {part: _summary(result["questions"], part) for part in ("all", CLOSED_BOOK, "retrieval")}
    paired: dict[str, dict[str, Any]] = {}
    for base in ("always-retrieve", "agent", "agent (own chunks)"):
        if base not in results:
            continue
        a, a_f1 = _per_question(results[base])
        for name in results:
            if name != base and (base == "always-retrieve" or name in ("self-rag", "crag", "routed", LLM_ARM)):
                b, b_f1 = _per_question(results[name])
                paired[f"{name} vs {base}"] = {**compare(a, b), "f1": dict(compare(a_f1, b_f1))}
    return {
        "experiment": "reflection",
        "world": world.name,
        "per_type": per_type,
        "seed": seed,
        "questions": len(sample),
        "types": dict(Counter(q.type for q in sample)),
        "arms": results,
        "paired": paired,
        "settings": settings or {},
        "reader": reader,
    }


def _per_question(result: dict[str, Any]) -> tuple[dict[str, float], dict[str, float]]:
    """Correctness (1/0) and F1 of each question, for the paired tests."""
    rows = result["questions"].items()
    return {q: float(r["outcome"] == "correct") for q, r in rows}, {q: r.get("f1", 0.0) for q, r in rows}


def _summary(questions: dict[str, dict[str, Any]], part: str) -> dict[str, Any]:
    rows = [r for r in questions.values() if part == "all" or (r["type"] == CLOSED_BOOK) == (part == CLOSED_BOOK)]
    n = len(rows) or 1
    counts = Counter(r["outcome"] for r in rows)
    return {
        "n": len(rows),
        **{o: counts.get(o, 0) for o in ("correct", "wrong", "abstained")},
        "f1": round(sum(r.get("f1", 0.0) for r in rows) / n, 4),
        "retrievals": round(sum(r["retrievals"] for r in rows) / n, 3),
        "model_calls": round(sum(r["model_calls"] for r in rows) / n, 3),
        "seconds": round(sum(r["seconds"] for r in rows) / n, 4),
    }


def tables(payload: dict[str, Any]) -> list[Table]:
    out = []
    for part, label in (("all", "all questions"), (CLOSED_BOOK, "closed-book questions"), ("retrieval", "the rest")):
        per_type = payload["per_type"]
        sample = "every question" if per_type >= max(payload["types"].values()) else f"{per_type} per type"
        table = Table(
            title=f"Reflection on {payload['world']}, {label} ({sample}, seed {payload['seed']}): "
            "outcomes and cost per question"
        )
        for column in ("arm", "n", "correct", "wrong", "abstained", "F1", "retrievals", "model calls", "seconds"):
            table.add_column(column, justify="left" if column == "arm" else "right")
        for name, result in payload["arms"].items():
            s = result["summary"][part]
            table.add_row(
                name,
                str(s["n"]),
                str(s["correct"]),
                str(s["wrong"]),
                str(s["abstained"]),
                f"{s.get('f1', 0.0):.3f}",
                f"{s['retrievals']:.2f}",
                f"{s['model_calls']:.2f}",
                f"{s['seconds']:.3f}",
            )
        out.append(table)
    tests = Table(title="Paired tests on correctness (1/0 per question) and F1")
    for column in ("comparison", "n", "delta", "95% CI", "p (randomization)", "F1 delta", "p (F1)"):
        tests.add_column(column, justify="left" if column == "comparison" else "right")
    for name, c in payload["paired"].items():
        f1 = c.get("f1")  # absent from payloads written before F1 was paired
        tests.add_row(
            name,
            str(c["n"]),
            f"{c['delta']:+.3f}",
            f"{c['ci'][0]:+.3f}..{c['ci'][1]:+.3f}",
            f"{c['p_randomization']:.3f}",
            f"{f1['delta']:+.3f}" if f1 else "-",
            f"{f1['p_randomization']:.3f}" if f1 else "-",
        )
    out.append(tests)
    return out


def from_args(args: Any) -> dict[str, Any]:
    """The --world (seeded by --seed) or --dataset, --questions per type, --sample-seed, the --arm arms, the
    first --reader, the --llm."""
    from ragline.corpora import countries, orrin
    from ragline.progress import stderr
    from ragline.reflect.worlds import countries_world, dataset_world, orrin_world

    if args.dataset:
        world = dataset_world(args.dataset)
    elif args.world == "countries":
        world = countries_world(args.seed if args.seed is not None else countries.DEFAULT_SEED)
    else:
        world = orrin_world(args.seed if args.seed is not None else orrin.DEFAULT_SEED)
    per_type = DEFAULT_PER_TYPE if args.questions is None else args.questions  # 0: closed-book only
    names = tuple(args.arm or ARMS)
    log = lambda m: stderr.print(m, highlight=False, markup=False)  # noqa: E731
    reader = args.reader[0] if args.reader else "extractive"
    return run(world, llm_of(args), per_type, args.sample_seed, names, log, reader=reader)


@register("experiment", "reflection")
def experiment() -> Experiment:
    """Always-retrieve vs Self-RAG vs CRAG vs routed vs the agent on a stratified sample (--questions per type,
    --sample-seed) and every closed-book question: outcomes, retrievals, model calls, seconds, paired tests."""
    return Experiment("reflection", from_args, tables)
