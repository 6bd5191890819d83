"""Answer latency on Orrin: time to the first token and to the whole answer, extractive reader vs local LLM.

The built-in Orrin index (``ragline.corpora.builtin.orrin_index()``, default settings: hybrid retrieval)
answers a fixed sample of questions (every n-th answerable question in id order, ``--questions``, default
10), each with the asking user's ACL filter. Per question, in one interleaved round so that the
machine's load falls on all alike, three readers answer from a context retrieved anew each time (the
timings include retrieval):

- ``extractive``: the span reader (no LLM); its whole answer is its first token;
- ``llm_batch1``: the local LLM with prompt reading on 1 thread (``n_batch_threads=1``, the old default);
- ``llm_batch_all``: the same model with prompt reading on every usable core (``default_batch_threads()``);
- ``llm_prefix_cache``: prompt reading on every core, and the shared part of the prompt (the system rules and
  the chat template's header) restored from one saved state per process instead of read again
  (``prefix_cache=True``, today's default; see ``ragline.models.llm.local``). ``--no-prefix-cache`` leaves it out.

With ``--compress SPEC`` (a registered compressor, ``ragline.answer.compress``: ``overlap``, ``cross``)
one more arm per ``--compress-budget`` (default 300 tokens): the ``llm_batch_all`` model over the same
pipeline with the sources compressed, ``llm_compressed_BUDGET``; ``--no-batch1`` leaves the 1-thread arm
out. ``--train`` samples the Orrin training world (``TRAIN_SEED``) instead of the evaluation world, for
choosing a budget; ``--kept-answers`` runs no reader and counts, per budget, the answerable questions
whose gold answer is still in the context, beside the context's tokens (p50, p90).

Every LLM generates on ``default_threads()`` threads, greedily, with no response cache and no prompt
cache (the first two arms with no prefix cache either), so the 1-thread and all-cores arms' answers must be
equal (``answers_equal`` per question and in total); ``prefix_answers_equal`` compares the prefix-cache arm
with the all-cores one.
Time to first token is from the question to the first streamed piece of text; total is to the final
``Answer``. Reported per reader: p50 and p90 of both, the prompt sizes in tokens, and correct / wrong /
abstained (``grade_question``, the gold answer contained in the reply, as ``ragline eval --match
contains`` grades an LLM); with compression, the first-token p50 ratio of ``llm_batch_all`` over each
compressed arm; ``prompt_parts_tokens``: the system message, the sources and the rest of the user message
(the question and its labels), p50 and mean, to see where the prompt's tokens go.

    PYTHONPATH=src python benchmarks/answer_latency.py [--questions 10] [--model local:qwen2.5-coder-0.5b]
    PYTHONPATH=src python benchmarks/answer_latency.py --no-batch1 --compress overlap --compress-budget 200
    PYTHONPATH=src python benchmarks/answer_latency.py --train --questions 20 --no-batch1
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import ragline
from ragline.answer.pipeline import LLMReader, RAGPipeline, Reader, build_reader
from ragline.answer.prompt import SYSTEM_PROMPT, build_messages
from ragline.config import PipelineConfig
from ragline.corpora.builtin import orrin_index
from ragline.corpora.orrin import DEFAULT_SEED, TRAIN_SEED
from ragline.eval.answers import grade_question
from ragline.index.filters import acl_filter
from ragline.models.llm import load_llm
from ragline.models.llm.local import default_batch_threads, default_threads

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import log, print_result  # noqa: E402


def sample(questions: list[Any], n: int) -> list[Any]:
    """Every n-th answerable question in id order: a fixed sample spread over all question types."""
    answerable = sorted((q for q in questions if not q.expected_abstain), key=lambda q: q.id)
    step = max(1, len(answerable) // n)
    return answerable[::step][:n]


def timed_answer(pipeline: RAGPipeline, reader: Reader, question: Any) -> dict[str, Any]:
    """Seconds to the first piece of text and to the final answer, from the question (retrieval included)."""
    start = time.perf_counter()
    context = pipeline.context(question.text, acl_filter(question.user_groups))
    retrieved = time.perf_counter()
    first, answer = None, None
    for piece in reader.stream(question.text, context):
        if isinstance(piece, str):
            if first is None and piece:
                first = time.perf_counter()
        else:
            answer = piece
    end = time.perf_counter()
    return {
        "retrieve_s": retrieved - start,
        "ttft_s": (first or end) - start,
        "total_s": end - start,
        "answer": answer.text if answer is not None else "",
        "answer_obj": answer,
        "context": context,
    }


def kept_answers(questions: list[Any], pipelines: dict[str, RAGPipeline], seed: int) -> dict[str, Any]:
    """Over every answerable question: is a gold answer (or alias) in the context, and how many tokens it has."""
    answerable = [q for q in questions if not q.expected_abstain]
    arms: dict[str, Any] = {}
    for tag, arm in pipelines.items():
        contexts = [arm.context(q.text, acl_filter(q.user_groups)) for q in answerable]
        found = sum(any(a.lower() in c.text.lower() for a in q.answers) for q, c in zip(answerable, contexts))
        arms[tag or "uncompressed"] = {"answer_in_context": found} | percentiles([c.tokens for c in contexts])
    return {"benchmark": "answer_latency --kept-answers", "seed": seed, "questions": len(answerable), "arms": arms}


def percentiles(values: list[float]) -> dict[str, float]:
    return {"p50": round(float(np.percentile(values, 50)), 3), "p90": round(float(np.percentile(values, 90)), 3)}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--model", default=None, help="LLM spec (default: the default local model)")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--output", choices=["json", "pretty"], default="json")
    parser.add_argument("--compress", metavar="SPEC", help="add compressed LLM arms with this compressor")
    parser.add_argument("--compress-budget", default="300", help="their budgets in tokens, comma-separated (300)")
    parser.add_argument("--no-batch1", action="store_true", help="leave out the 1-thread prompt-reading arm")
    parser.add_argument("--no-prefix-cache", action="store_true", help="leave out the prefix-cache arm")
    parser.add_argument("--train", action="store_true", help="the Orrin training world (for choosing settings)")
    parser.add_argument(
        "--kept-answers",
        action="store_true",
        help="no LLM: per budget, the answerable questions whose gold answer is still in the context, and its tokens",
    )
    return parser.parse_args(argv)


def run_arms(
    arms: dict[str, tuple[RAGPipeline, Reader]], questions: list[Any]
) -> tuple[dict[str, list[dict[str, Any]]], list[float]]:
    """Every arm answers every question, each arm going first in turn; the rows and the 1-minute load averages
    (before the first question and after each)."""
    for arm_pipeline, reader in arms.values():  # one warm-up answer each: model pages, the embedder, BM25
        timed_answer(arm_pipeline, reader, questions[0])
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in arms}
    loads = [os.getloadavg()[0]]
    for i, question in enumerate(questions, start=1):
        names = list(arms)
        for name in names[i % len(names) :] + names[: i % len(names)]:
            arm_pipeline, reader = arms[name]
            row = timed_answer(arm_pipeline, reader, question)
            row["outcome"] = grade_question(question, row["answer_obj"], row["context"], match="contains").outcome
            runs[name].append(row)
        loads.append(os.getloadavg()[0])
        latest = {name: rows[-1] for name, rows in runs.items()}
        log(
            f"question {i}/{len(questions)}: "
            + ", ".join(f"{n} {r['ttft_s']:.2f}/{r['total_s']:.2f}s {r['outcome']}" for n, r in latest.items())
            + f"; {len({r[-1]['answer'] for n, r in runs.items() if n.startswith('llm')})} distinct LLM answers"
        )
    return runs, loads


def prompt_token_counts(
    llm: Any, questions: list[Any], runs: dict[str, list[dict[str, Any]]]
) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Prompt tokens per LLM arm and question, and the default arm's prompt split into system, sources and the
    rest of the user message."""
    prompt_tokens = {
        name: [
            sum(llm.count_tokens(m["content"]) for m in build_messages(q.text, r["context"]))
            for q, r in zip(questions, rows)
        ]
        for name, rows in runs.items()
        if name.startswith("llm")
    }
    parts: dict[str, list[int]] = {"system": [], "sources": [], "question_and_labels": []}
    for q, r in zip(questions, runs["llm_batch_all"]):
        system, user = (llm.count_tokens(m["content"]) for m in build_messages(q.text, r["context"]))
        sources = llm.count_tokens(r["context"].text) if r["context"].sources else 0
        parts["system"].append(system)
        parts["sources"].append(sources)
        parts["question_and_labels"].append(user - sources)
    return prompt_tokens, parts


def arm_comparisons(
    args: argparse.Namespace, runs: dict[str, list[dict[str, Any]]], compressed_tags: list[str]
) -> dict[str, Any]:
    """Whether the batch-thread and prefix-cache arms give the default arm's answers, and the median time to the
    first token of each arm against the default's."""

    def ttft_p50(name: str) -> float:
        return float(np.percentile([r["ttft_s"] for r in runs[name]], 50))

    found: dict[str, Any] = {}
    if not args.no_batch1:
        equal = [a["answer"] == b["answer"] for a, b in zip(runs["llm_batch1"], runs["llm_batch_all"])]
        found |= {
            "answers_equal": all(equal),
            "answers_equal_per_question": equal,
            "ttft_p50_ratio_batch1_over_all": round(ttft_p50("llm_batch1") / ttft_p50("llm_batch_all"), 3),
        }
    if not args.no_prefix_cache:
        equal = [a["answer"] == b["answer"] for a, b in zip(runs["llm_prefix_cache"], runs["llm_batch_all"])]
        found |= {
            "prefix_answers_equal": all(equal),
            "prefix_answers_equal_per_question": equal,
            "ttft_p50_ratio_all_over_prefix_cache": round(ttft_p50("llm_batch_all") / ttft_p50("llm_prefix_cache"), 3),
        }
        if not args.no_batch1:
            found["ttft_p50_ratio_batch1_over_prefix_cache"] = round(
                ttft_p50("llm_batch1") / ttft_p50("llm_prefix_cache"), 3
            )
    for tag in compressed_tags:
        found[f"ttft_p50_ratio_all_over{tag}"] = round(ttft_p50("llm_batch_all") / ttft_p50(f"llm{tag}"), 3)
    return found


def main() -> None:
    args = parse_args()
    seed = TRAIN_SEED if args.train else DEFAULT_SEED
    index, corpus = orrin_index(seed=seed)
    questions = sample(corpus.questions, args.questions)
    pipeline = RAGPipeline.from_config(PipelineConfig(), index, reader=False)
    pipelines = {"": pipeline}
    for budget in [int(b) for b in args.compress_budget.split(",")] if args.compress else []:
        compress = {"compressor": args.compress, "budget": budget}
        pipelines[f"_compressed_{budget}"] = RAGPipeline.from_config(
            PipelineConfig().with_overrides(compress=compress), index, reader=False
        )
    if args.kept_answers:
        print_result(kept_answers(corpus.questions, pipelines, seed), args.output)
        return
    all_cores = default_batch_threads()
    llms = {"llm_batch_all": load_llm(args.model, n_batch_threads=all_cores, prefix_cache=False)}
    if not args.no_batch1:
        llms["llm_batch1"] = load_llm(args.model, n_batch_threads=1, prefix_cache=False)
    if not args.no_prefix_cache:
        llms["llm_prefix_cache"] = load_llm(args.model, n_batch_threads=all_cores, prefix_cache=True)
    readers: dict[str, Reader] = {"extractive": build_reader("extractive")}
    readers |= {name: LLMReader(llm=llm, max_tokens=args.max_tokens) for name, llm in llms.items()}
    # arm name -> (pipeline, reader): the compressed arms share today's default model (all cores)
    arms = {name: (pipeline, reader) for name, reader in readers.items()}
    arms |= {f"llm{tag}": (p, readers["llm_batch_all"]) for tag, p in pipelines.items() if tag}
    try:
        runs, loads = run_arms(arms, questions)
        prompt_tokens, parts = prompt_token_counts(llms["llm_batch_all"], questions, runs)
        model_id = llms["llm_batch_all"].id
    finally:
        for llm in llms.values():
            llm.close()

    result = {
        "benchmark": "answer_latency",
        "corpus": "orrin" + (" (training world)" if args.train else ""),
        "seed": seed,
        "questions": [q.id for q in questions],
        "model": model_id,
        "max_tokens": args.max_tokens,
        "generation_threads": default_threads(),
        "batch_threads": {"llm_batch_all": all_cores}
        | ({} if args.no_batch1 else {"llm_batch1": 1})
        | ({} if args.no_prefix_cache else {"llm_prefix_cache": all_cores}),
        "compressor": args.compress,
        "prompt_tokens": {
            name: percentiles(tokens) | {"mean": round(float(np.mean(tokens)), 1)}
            for name, tokens in prompt_tokens.items()
        },
        "prompt_parts_tokens": {
            name: percentiles(tokens) | {"mean": round(float(np.mean(tokens)), 1)} for name, tokens in parts.items()
        },
        "system_prompt_chars": len(SYSTEM_PROMPT),
        "readers": {
            name: {
                "ttft_s": percentiles([r["ttft_s"] for r in rows]),
                "total_s": percentiles([r["total_s"] for r in rows]),
                "retrieve_s": percentiles([r["retrieve_s"] for r in rows]),
                "outcomes": {o: sum(r["outcome"] == o for r in rows) for o in ("correct", "wrong", "abstained")},
            }
            for name, rows in runs.items()
        },
        "outcomes_per_question": {name: [r["outcome"] for r in rows] for name, rows in runs.items()},
    }
    result |= arm_comparisons(args, runs, [tag for tag in pipelines if tag])
    result |= {
        "ragline": ragline.__version__,
        "python": platform.python_version(),
        "cores": len(os.sched_getaffinity(0)),
        "load_average": os.getloadavg(),
        "load_average_1min_during": {"min": round(min(loads), 2), "max": round(max(loads), 2)},
    }
    print_result(result, args.output)


if __name__ == "__main__":
    main()
