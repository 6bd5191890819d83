"""The Search-R1 protocol and the JSON-schema tool loop with an untrained local model, on a stratified sample of
Orrin questions.

Arms (all under the question's user: the filter inside every search):
* ``search-r1``: ``pipelines/search-r1.toml``'s reader (``first_search`` as shipped, or both values with
  ``--first-search both``: chosen on the training world);
* ``search-r1-http``: the same reader over the OpenAI-compatible HTTP backend: ``HttpLLM`` talking to the local
  model's llama.cpp server on loopback (the server ``LocalLLM`` starts), without ``LocalLLM``'s prefix cache;
* ``tools-json``: the ReAct loop with the tools as JSON schemas (``ragline.agent.tool_calls.json_policy``): the
  local model through grammar-constrained JSON, and with ``--http`` the loopback server through function calling
  where it takes ``tools`` (else constrained JSON, ``response_format``); ``routes`` counts which.

Columns: correct / wrong / abstained (``grade_question``, "contains" string match as for any LLM reader, a
citation in a gold document), searches, model calls and generated tokens per question, seconds per question,
and protocol compliance: the share of model replies that held a tag (search-r1) or a well-formed call (tools).
The sample is stratified by question type (``--per-type`` each, seeded). Replies are cached on disk (a rerun is
instant; ``seconds`` then is not model time). Reinforcement-learning training of the policy (the paper's PPO/GRPO)
does not fit 2 CPU cores and is not attempted.

    PYTHONPATH=src nice -n 5 python benchmarks/search_r1.py --seed 224 --per-type 2 --first-search both \
        --out benchmarks/results/search_r1/train.json
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from ragline.agent.search_r1 import SearchR1Reader, SearchR1Settings
from ragline.agent.tool_calls import json_policy
from ragline.agent.tools import ToolAgent
from ragline.config import load_config
from ragline.corpora.orrin import DEFAULT_SEED, build_orrin
from ragline.eval.answers import grade_question
from ragline.eval.typed import acl_filter
from ragline.index import Index, IndexSettings
from ragline.ingest.pipeline import IngestConfig, chunk_documents


def sample(questions: list[Any], per_type: int, seed: int) -> list[Any]:
    by_type: dict[str, list[Any]] = defaultdict(list)
    for q in questions:
        by_type[q.type].append(q)
    rng = random.Random(seed)
    return [q for t in sorted(by_type) for q in rng.sample(by_type[t], min(per_type, len(by_type[t])))]


def run_arm(name: str, answer: Any, questions: list[Any]) -> dict[str, Any]:
    rows = []
    for q in questions:
        started = time.perf_counter()
        got, context, extra = answer(q)
        grade = grade_question(q, got, context, "contains")
        rows.append({"id": q.id, "type": q.type, "outcome": grade.outcome, "answer": got.text,
                     "seconds": round(time.perf_counter() - started, 2), **extra})  # fmt: skip
        print(f"{name} {q.type} {grade.outcome} {got.text[:50]!r}", flush=True)
    counts = {o: sum(r["outcome"] == o for r in rows) for o in ("correct", "wrong", "abstained")}
    mean = {k: round(sum(r[k] for r in rows) / len(rows), 2) for k in ("seconds", "searches", "model_calls")}
    compliant = sum(r["compliant"] for r in rows) / max(1, sum(r["model_calls"] for r in rows))
    return {"arm": name, "n": len(rows), **counts, "per_question": mean, "compliance": round(compliant, 3),
            "rows": rows}  # fmt: skip


def search_r1_answer(reader: SearchR1Reader) -> Any:
    def answer(q: Any) -> tuple[Any, Any, dict[str, Any]]:
        got, context = reader.answer(q.text, acl_filter(q))
        steps = got.details["trace"]["steps"]
        calls = sum(s["cost"]["model_calls"] for s in steps)
        malformed = sum(s.get("action") == "(malformed)" for s in steps)
        return got, context, {"searches": got.details["searches"], "model_calls": calls,
                              "compliant": calls - malformed}  # fmt: skip

    return answer


def tools_answer(index: Any, llm: Any, routes: dict[str, int]) -> Any:
    def answer(q: Any) -> tuple[Any, Any, dict[str, Any]]:
        policy = json_policy(llm)
        got = ToolAgent(index, policy, k=3, max_steps=5).run(q.text, acl_filter(q))
        for route, n in policy.routes.items():  # type: ignore[attr-defined]
            routes[route] = routes.get(route, 0) + n
        steps = got.details["trace"]["steps"]
        malformed = sum(s.get("action") == "(malformed)" for s in steps)
        searches = sum(str(s.get("action", "")).startswith("search[") for s in steps)
        return got, None, {"searches": searches, "model_calls": len(steps), "compliant": len(steps) - malformed}

    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="Orrin world (224: training, 329: evaluation)")
    parser.add_argument("--per-type", type=int, default=2)
    parser.add_argument("--sample-seed", type=int, default=0)
    parser.add_argument("--first-search", choices=("shipped", "both"), default="shipped")
    parser.add_argument("--bridge-search", choices=("shipped", "both"), default="shipped")
    parser.add_argument("--types", help="comma-separated question types to sample (default: every type)")
    parser.add_argument("--http", action="store_true", help="also the HTTP backend arms (loopback llama.cpp server)")
    parser.add_argument("--tools", action="store_true", help="also the JSON-schema tool loop")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    config = load_config("search-r1")
    corpus = build_orrin(args.seed)
    ingest = IngestConfig(config.ingest.chunker, config.ingest.context)
    index = Index.create(None, IndexSettings(chunker=ingest.chunker, context=ingest.context))
    index.add(chunk_documents(corpus.documents, ingest, None)[0])
    index.commit()
    shipped = {k: v for k, v in dict(config.read.reader).items() if k != "name"}
    from ragline.models.llm import CachedLLM, shared_llm

    local = shared_llm(shipped["model"])
    wanted = set(args.types.split(",")) if args.types else None
    questions = sample(
        [q for q in corpus.questions if wanted is None or q.type in wanted], args.per_type, args.sample_seed
    )
    started = time.perf_counter()
    arms = []
    values = (False, True) if args.first_search == "both" else (shipped.get("first_search", False),)
    bridges = (False, True) if args.bridge_search == "both" else (shipped.get("bridge_search", False),)
    for first in values:
        for bridge in bridges:
            settings = SearchR1Settings(**{**shipped, "first_search": first, "bridge_search": bridge})
            name = f"search-r1 first_search={first}" + (f" bridge_search={bridge}" if len(bridges) > 1 else "")
            arms.append(run_arm(name, search_r1_answer(SearchR1Reader(index, settings, local)), questions))
    http = None
    if args.http:
        http = CachedLLM(local.llm._http)  # the same server, reached as any OpenAI-compatible one
        settings = SearchR1Settings(**{**shipped, "first_search": values[-1], "bridge_search": bridges[-1]})
        arms.append(run_arm("search-r1-http", search_r1_answer(SearchR1Reader(index, settings, http)), questions))
    routes: dict[str, dict[str, int]] = {}
    if args.tools:
        for name, llm in (("tools-json", local), ("tools-json-http", http)):
            if llm is not None:
                routes[name] = {}
                arms.append(run_arm(name, tools_answer(index, llm, routes[name]), questions))
    result = {"benchmark": "search_r1", "corpus": corpus.name, "model": local.id, "reader": shipped,
              "sample": {"per_type": args.per_type, "seed": args.sample_seed, "n": len(questions)},
              "arms": arms, "tool_routes": routes, "wall_s": round(time.perf_counter() - started, 1)}  # fmt: skip
    text = json.dumps(result, indent=1, ensure_ascii=False)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
