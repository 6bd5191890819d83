"""Single-shot vs iterative retrieval and reading (the lecture's table) on three multi-hop sets.

Sets: Orrin multi-hop (evaluation world, 14 questions), countries multi-hop (evaluation world, 40) and
``hotpotqa_train_hipporag_100`` questions 51-100 in file order (1-50 calibrated the agent), over the
pooled corpus of 994 passages. The worlds are chunked as ``pipelines/agent.toml`` says; every index
also holds MiniLM vectors (flat, from the embedding cache) for the hybrid arms.

Arms (``build_arms``): single-shot top k (k = 5, 10, 20) and the multi-hop agent, each with BM25 and
with hybrid (BM25 + MiniLM), the agent at an equal passage budget B: at most B passages handed to the
reader over all hops (B = 10: 5 + 5, B = 5: 3 + 2; HotpotQA 6 + 4 and 3 + 2 with ``first_hop =
"question"``, as calibrated on its questions 1-50, ``agent_equal_budget.py``). Every other agent
setting is the shipped ``pipelines/agent.toml``'s; the context has no token budget, so B alone bounds
what the reader sees. Single-shot top B and the agent at budget B are paired (``equal_budget_pairs``)
with a paired randomization test (``ragline.eval.stats.compare``) on all-gold recall and on correct.

Columns: all-gold recall (every gold document among the passages handed to the reader), SQuAD EM and
token F1 (``ragline.eval.answers``; the worlds' gold answers and aliases, HotpotQA's answers),
correct / wrong / abstained (``grade_question``: the string matches and a citation is a gold document;
the LLM reader answers in a sentence, so its string rule is "contains a gold answer"), and per question
retrievals, model calls and seconds (the agent's trace; reader calls counted at the model).

Readers: the extractive reader on every question; the local LLM (``ragline.models.llm``, default
qwen2.5-coder-0.5b) on a fixed seeded sample (``--llm-questions``, default 8 a set) and only the arms of
``--llm-arms``, since one call reads a 600-token prompt in ~25 s on a shared 2-core machine. Also with
the LLM: a closed-book baseline (the bare question, ``readers.CLOSED_BOOK_PROMPT``) on the same sample,
and calculator vs the model's own arithmetic on a seeded sample of the countries ``arithmetic``
questions: both see the same BM25 top ``--calc-k`` passages; the model either answers from them
(the LLM reader) or runs the ReAct tool loop (``ToolAgent``) whose first action is that search and
whose ``calculate`` tool does the arithmetic. LLM replies are cached on disk (``CachedLLM``), so an
interrupted run resumes where it stopped; seconds of cached calls are not model time (``cached_calls``).

    PYTHONPATH=src python benchmarks/agent_single_vs_iterative.py [--llm none] [--llm-questions 8]
        [--llm-arms single-bm25-k5,iter-bm25-B5] [--sets orrin,countries,hotpotqa]
        [--out benchmarks/results/agent_single_vs_iterative.json]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import bench_root
from ragline.agent.loop import AgentSettings, MultiHopAgent
from ragline.agent.tools import ToolAgent, llm_policy
from ragline.answer.context import Context, build_context, document_id
from ragline.config import load_config
from ragline.corpora import countries, orrin
from ragline.errors import ConfigError
from ragline.eval.answers import OUTCOMES, grade_answer, grade_question
from ragline.eval.experiments.readers import CLOSED_BOOK_PROMPT, dataset_corpus
from ragline.eval.stats import compare
from ragline.index import Index, IndexSettings
from ragline.index.filters import acl_filter
from ragline.ingest.pipeline import IngestConfig, chunk_documents
from ragline.retrieve.registry import build_retriever
from ragline.types import Answer

ROOT = Path(__file__).resolve().parents[1]
HOTPOTQA = str(bench_root() / "hotpotqa_train_hipporag_100")
EMBEDDER = "minilm"
NO_TOKEN_BUDGET = 100_000  # the passage budget alone bounds the context
WORLD_SPLITS = {10: (5, 5), 5: (3, 2)}  # the shipped hop_k, and the 3 + 2
HOTPOTQA_SPLITS = {10: (6, 4), 5: (3, 2)}  # chosen on questions 1-50 (BENCHMARKS.md "Agent")
SINGLE_KS = (5, 10, 20)
RETRIEVERS = ("bm25", "hybrid")
DEFAULT_LLM_ARMS = ("single-bm25-k5", "iter-bm25-B5")


@dataclass(frozen=True)
class Arm:
    """One row of the table: ``hops`` empty is single-shot top ``passages``; else the agent, ``hops``
    passages per hop and never more than ``passages`` in all."""

    name: str
    retriever: str
    passages: int
    hops: tuple[int, ...] = ()

    @property
    def iterative(self) -> bool:
        return bool(self.hops)


def build_arms(
    splits: Mapping[int, Sequence[int]], retrievers: Sequence[str] = RETRIEVERS, single_ks: Sequence[int] = SINGLE_KS
) -> list[Arm]:
    """Single-shot top k for each k, and the agent at each budget B with its per-hop split, per retriever.

    A split must spend exactly its budget (``3 + 2`` for B = 5): a split below B would compare the agent
    with fewer passages than single-shot gets, one above it is cut by the agent's passage cap anyway.
    Every budget needs a single-shot k equal to it, its equal-budget partner.
    """
    for budget, split in splits.items():
        if not split or any(not isinstance(k, int) or k < 1 for k in split) or sum(split) != budget:
            raise ConfigError(f"equal budget {budget}: the hops' passages {list(split)} must be whole numbers "
                              f">= 1 that sum to {budget} (e.g. 3 + 2 for 5)")  # fmt: skip
        if budget not in single_ks:
            raise ConfigError(f"equal budget {budget}: no single-shot arm with k = {budget} to compare with; "
                              f"add {budget} to the single-shot ks {list(single_ks)}")  # fmt: skip
    arms = [Arm(f"single-{r}-k{k}", r, k) for r in retrievers for k in single_ks]
    arms += [Arm(f"iter-{r}-B{b}", r, b, tuple(split)) for r in retrievers for b, split in splits.items()]
    return arms


def equal_budget_pairs(arms: Sequence[Arm]) -> list[tuple[Arm, Arm]]:
    """(single-shot top B, agent at budget B) with the same retriever, for every agent arm."""
    single = {(a.retriever, a.passages): a for a in arms if not a.iterative}
    return [(single[(a.retriever, a.passages)], a) for a in arms if a.iterative and (a.retriever, a.passages) in single]


def agent_for(arm: Arm, index: Any, base: Mapping[str, Any], reader: str, llm: Any = None) -> MultiHopAgent:
    """The agent of ``arm``: the ``base`` settings with the arm's retriever, split and budget, and ``reader``."""
    params = {**base, "ladder": [arm.retriever], "hop_k": list(arm.hops), "budget_passages": arm.passages,
              "max_hops": max(int(base.get("max_hops", 1)), len(arm.hops)), "budget": NO_TOKEN_BUDGET,
              "reader": reader}  # fmt: skip
    return MultiHopAgent(index, AgentSettings.from_params(params), llm=llm)


def run_arm(arm: Arm, question: str, filter: Any, retriever: Any, agent: MultiHopAgent | None,
            reader: Any) -> tuple[Answer, Context, dict[str, float]]:  # fmt: skip
    """One question through one arm: the answer, the context the reader saw, and its cost."""
    started = time.perf_counter()
    if arm.iterative:
        assert agent is not None
        answer, context = agent.answer(question, filter)
        cost = answer.details["trace"]["cost"]
        retrievals, model_calls = cost["retrievals"], cost["model_calls"]
    else:
        context = build_context(retriever.search(question, arm.passages, filter), NO_TOKEN_BUDGET)
        answer = reader.read(question, context)
        retrievals, model_calls = 1, 0
    return answer, context, {"retrievals": retrievals, "model_calls": model_calls,
                             "seconds": time.perf_counter() - started}  # fmt: skip


# --- the sets ------------------------------------------------------------------------------------


@dataclass
class QASet:
    name: str
    questions: list[Any]
    index: Any
    splits: Mapping[int, Sequence[int]]
    agent_overrides: dict[str, Any]
    use_acl: bool  # the worlds' documents carry ACLs; the HotpotQA passages none


def world_set(name: str, corpus: Any, config: Any) -> QASet:
    chunks, _ = chunk_documents(corpus.documents, IngestConfig(config.ingest.chunker, config.ingest.context))
    index = Index.create(None, IndexSettings(embedder=EMBEDDER, vector_index="flat"))
    index.add(chunks)
    index.commit()
    return QASet(name, corpus.questions_of_type("multihop"), index, WORLD_SPLITS, {}, True)


def hotpotqa_set(path: str) -> QASet:
    corpus, index = dataset_corpus(path, EMBEDDER, limit=100)
    held_out = corpus.questions[50:100]  # dataset_corpus keeps file order; 1-50 are calibration
    # 1-50 calibrated first_hop and the splits, with no retries (agent_equal_budget.py)
    return QASet("hotpotqa", held_out, index, HOTPOTQA_SPLITS, {"first_hop": "question", "retries": 0}, False)


def load_sets(names: Sequence[str], config: Any, hotpotqa: str) -> list[QASet]:
    sets = []
    for name in names:
        if name == "orrin":
            sets.append(world_set("orrin", orrin.build_orrin(), config))
        elif name == "countries":
            sets.append(world_set("countries", countries.build_countries(), config))
        elif name == "hotpotqa":
            sets.append(hotpotqa_set(hotpotqa))
        else:
            raise ConfigError(f"--sets: unknown set {name!r}; choose from orrin, countries, hotpotqa")
    return sets


def sample(questions: Sequence[Any], n: int, seed: int = 0) -> list[Any]:
    """A fixed seeded sample of ``n`` questions, in the set's order: the first ``n`` of one seeded shuffle,
    so a larger ``n`` extends a smaller one and the cached replies of the smaller run are reused."""
    order = list(range(len(questions)))
    random.Random(seed).shuffle(order)
    chosen = set(order[:n])
    return [q for i, q in enumerate(questions) if i in chosen]


# --- measuring -----------------------------------------------------------------------------------


def measure(qa: QASet, arms: Sequence[Arm], questions: Sequence[Any], base: Mapping[str, Any], reader_spec: str,
            llm: Any = None) -> dict[str, Any]:  # fmt: skip
    """Every arm on every question: per-question rows, per-arm summary, equal-budget tests."""
    from ragline.answer.pipeline import build_reader

    reader = build_reader(reader_spec, llm=llm)
    match = "contains" if reader_spec == "llm" else "em"
    per_arm: dict[str, Any] = {}
    for arm in arms:
        retriever = build_retriever(arm.retriever, qa.index)
        agent = agent_for(arm, qa.index, {**base, **qa.agent_overrides}, reader_spec, llm) if arm.iterative else None
        rows = []
        for q in questions:
            calls_before = _llm_calls(llm)
            hits_before = getattr(llm, "hits", 0)
            flt = acl_filter(q.user_groups) if qa.use_acl else None
            answer, context, cost = run_arm(arm, q.text, flt, retriever, agent, reader)
            reader_calls = _llm_calls(llm) - calls_before
            handed = {document_id(s.hit) for s in context.sources}
            grade = grade_question(q, answer, context, match=match)
            rows.append({"id": q.id, "all_gold": float(set(q.gold_doc_ids) <= handed), "passages": len(handed),
                         "outcome": grade.outcome, "em": grade.em, "f1": grade.f1, "answer": answer.text,
                         "retrievals": cost["retrievals"], "model_calls": cost["model_calls"] + reader_calls,
                         "cached_calls": getattr(llm, "hits", 0) - hits_before,
                         "seconds": round(cost["seconds"], 4)})  # fmt: skip
        per_arm[arm.name] = {"arm": {"retriever": arm.retriever, "passages": arm.passages, "hops": list(arm.hops)},
                             "summary": summarize_rows(rows), "questions": rows}  # fmt: skip
    tests = {}
    for single, iterative in equal_budget_pairs(arms):
        a, b = per_arm[single.name]["questions"], per_arm[iterative.name]["questions"]
        tests[f"{iterative.name} vs {single.name}"] = {
            metric: {k: v for k, v in compare({r["id"]: value(r) for r in a}, {r["id"]: value(r) for r in b}).items()
                     if k in ("delta", "p_randomization")}
            for metric, value in (("all_gold", lambda r: r["all_gold"]),
                                  ("correct", lambda r: float(r["outcome"] == "correct")))
        }  # fmt: skip
    return {"reader": reader_spec, "match": match, "questions": len(questions), "arms": per_arm,
            "equal_budget_tests": tests}  # fmt: skip


def summarize_rows(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    mean = lambda key: round(sum(r[key] for r in rows) / n, 4) if n else None  # noqa: E731
    return {"n": n, "all_gold_recall": mean("all_gold"), "em": mean("em"), "f1": mean("f1"),
            **{o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES},
            "retrievals_per_question": mean("retrievals"), "model_calls_per_question": mean("model_calls"),
            "seconds_per_question": mean("seconds"), "cached_calls": sum(r["cached_calls"] for r in rows)}  # fmt: skip


def _llm_calls(llm: Any) -> int:
    return getattr(llm, "hits", 0) + getattr(llm, "misses", 0)


def closed_book(llm: Any, questions: Sequence[Any]) -> dict[str, Any]:
    """The LLM asked each bare question (the prompt of the readers experiment, so replies are shared)."""
    rows = []
    for q in questions:
        started = time.perf_counter()
        messages = [{"role": "system", "content": CLOSED_BOOK_PROMPT}, {"role": "user", "content": q.text}]
        lines = llm.chat(messages, max_tokens=24).strip().splitlines()
        text = lines[0].strip().rstrip(".") if lines else ""
        # no sources, so only the string can decide (contains: the model may still write a sentence)
        grade = grade_answer(Answer(text, not text), [q.answer, *q.aliases], match="contains")
        rows.append({"id": q.id, "all_gold": 0.0, "outcome": grade.outcome, "em": grade.em, "f1": grade.f1,
                     "answer": text, "retrievals": 0, "model_calls": 1, "cached_calls": 0,
                     "seconds": round(time.perf_counter() - started, 4)})  # fmt: skip
    return {"summary": summarize_rows(rows), "questions": rows}


def calculator_vs_own(llm: Any, index: Any, questions: Sequence[Any], k: int) -> dict[str, Any]:
    """The same BM25 top-k passages: the LLM reader computing itself vs the ReAct loop with ``calculate``."""
    from ragline.answer.pipeline import build_reader

    reader = build_reader("llm", llm=llm)
    retriever = build_retriever("bm25", index)
    own, tool = [], []
    for q in questions:
        flt = acl_filter(q.user_groups)
        context = build_context(retriever.search(q.text, k, flt), NO_TOKEN_BUDGET)
        recall = float(set(q.gold_doc_ids) <= {document_id(s.hit) for s in context.sources})
        answer = reader.read(q.text, context)
        grade = grade_question(q, answer, context, match="contains")
        own.append({"id": q.id, "all_gold": recall, "outcome": grade.outcome, "em": grade.em, "f1": grade.f1,
                    "answer": answer.text})  # fmt: skip
        # the loop's first action is the same search, so both arms read the same passages
        agent = ToolAgent(index, searched_first(llm_policy(llm)), retriever="bm25", k=k, max_steps=5)
        answer = agent.run(q.text, flt)
        grade = grade_question(q, answer, None, match="contains")
        actions = [s.get("action", "") for s in answer.details["trace"]["steps"]]
        tool.append({"id": q.id, "all_gold": recall, "outcome": grade.outcome, "em": grade.em, "f1": grade.f1,
                     "answer": answer.text, "calculated": any(a.startswith("calculate[") for a in actions),
                     "steps": len(actions), "stop": answer.details["trace"]["stop_reason"]})  # fmt: skip
    tally = lambda rows: {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}  # noqa: E731
    correct = lambda rows: {r["id"]: float(r["outcome"] == "correct") for r in rows}  # noqa: E731
    test = compare(correct(own), correct(tool))
    return {"questions": len(questions), "k": k, "all_gold_recall": sum(r["all_gold"] for r in own) / len(own),
            "own_arithmetic": {**tally(own), "rows": own},
            "calculator": {**tally(tool), "used_calculate": sum(r["calculated"] for r in tool), "rows": tool},
            "test_correct": {"delta": test["delta"], "p_randomization": test["p_randomization"]}}  # fmt: skip


def searched_first(policy: Any) -> Any:
    """A ReAct policy whose first action is a search for the question itself, then ``policy``'s."""

    def next_step(question: str, transcript: list[dict[str, str]]) -> str:
        if not transcript:
            return f"Thought: I need the facts the question names.\nAction: search[{question}]"
        return policy(question, transcript)

    return next_step


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(ROOT / "pipelines" / "agent.toml"))
    parser.add_argument("--hotpotqa", default=HOTPOTQA)
    parser.add_argument("--sets", default="orrin,countries,hotpotqa")
    parser.add_argument("--llm", default="local:qwen2.5-coder-0.5b", help="an LLM spec, or none")
    parser.add_argument("--llm-questions", type=int, default=8, help="seeded sample per set for the LLM")
    parser.add_argument("--llm-arms", default=",".join(DEFAULT_LLM_ARMS))
    parser.add_argument("--calc-questions", type=int, default=10)
    parser.add_argument("--calc-k", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "agent_single_vs_iterative.json"))
    args = parser.parse_args()
    config = load_config(args.config)
    base = {k: v for k, v in dict(config.read.reader).items() if k != "name"}
    out = Path(args.out)
    report: dict[str, Any] = {"config": args.config, "embedder": EMBEDDER, "llm": args.llm,
                              "llm_questions": args.llm_questions, "seed": args.seed, "sets": {}}  # fmt: skip

    def save() -> None:
        out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")

    sets = load_sets(args.sets.split(","), config, args.hotpotqa)
    for qa in sets:
        arms = build_arms(qa.splits)
        report["sets"][qa.name] = {"questions": len(qa.questions), "splits": {b: list(s) for b, s in qa.splits.items()},
                                   "agent_overrides": qa.agent_overrides,
                                   "extractive": measure(qa, arms, qa.questions, base, "extractive")}  # fmt: skip
        print(f"{qa.name}: extractive done", flush=True)
        save()
    if args.llm == "none":
        return
    from ragline.models.llm import CachedLLM, load_llm

    llm = CachedLLM(load_llm(args.llm))
    try:
        for qa in sets:
            picked = sample(qa.questions, args.llm_questions, args.seed)
            report["sets"][qa.name]["llm_sample"] = [q.id for q in picked]
            report["sets"][qa.name]["closed_book"] = closed_book(llm, picked)
            save()
        print("closed book done", flush=True)
        world = next((qa for qa in sets if qa.name == "countries"), None)
        if world is not None:
            arithmetic = sample(countries.build_countries().questions_of_type("arithmetic"), args.calc_questions,
                                args.seed)  # fmt: skip
            report["calculator_vs_own_arithmetic"] = calculator_vs_own(llm, world.index, arithmetic, args.calc_k)
            save()
            print("calculator done", flush=True)
        wanted = set(args.llm_arms.split(","))
        for qa in sets:
            arms = [a for a in build_arms(qa.splits) if a.name in wanted]
            picked = sample(qa.questions, args.llm_questions, args.seed)
            report["sets"][qa.name]["llm"] = measure(qa, arms, picked, base, "llm", llm)
            save()
            print(f"{qa.name}: llm done", flush=True)
    finally:
        llm.close()


if __name__ == "__main__":
    main()
