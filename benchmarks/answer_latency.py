"""Answer latency on Orrin: time to the first token and to the whole answer, extractive reader vs local LLM.

The built-in Orrin index (``ragline.corpora.builtin.orrin_index()``, default settings: hybrid retrieval)
answers a fixed sample of questions (every n-th answerable question in id order, ``--questions``, default
10), each with the asking user's ACL filter. Per question, in one interleaved round so that the
machine's load falls on all alike, three readers answer from a context retrieved anew each time (the
timings include retrieval):

- ``extractive``: the span reader (no LLM); its whole answer is its first token;
- ``llm_batch1``: the local LLM with prompt reading on 1 thread (``n_batch_threads=1``, the old default);
- ``llm_batch_all``: the same model with prompt reading on every usable core (today's default,
  ``default_batch_threads()``).

Both LLMs generate on ``default_threads()`` threads, greedily, with no response cache and no prompt
cache, so their answers must be equal (``answers_equal`` per question and in total). Time to first
token is from the question to the first streamed piece of text; total is to the final ``Answer``.
Reported: p50 and p90 of both per reader, the answers' equality, and the prompt sizes in tokens.

    PYTHONPATH=src python benchmarks/answer_latency.py [--questions 10] [--model local:qwen2.5-coder-0.5b]
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
from ragline.answer.prompt import build_messages
from ragline.config import PipelineConfig
from ragline.corpora.builtin import orrin_index
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
        "context": context,
    }


def percentiles(values: list[float]) -> dict[str, float]:
    return {"p50": round(float(np.percentile(values, 50)), 3), "p90": round(float(np.percentile(values, 90)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--model", default=None, help="LLM spec (default: the default local model)")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--output", choices=["json", "pretty"], default="json")
    args = parser.parse_args()

    index, corpus = orrin_index()
    questions = sample(corpus.questions, args.questions)
    pipeline = RAGPipeline.from_config(PipelineConfig(), index, reader=False)
    all_cores = default_batch_threads()
    llms = {
        "llm_batch1": load_llm(args.model, n_batch_threads=1),
        "llm_batch_all": load_llm(args.model, n_batch_threads=all_cores),
    }
    readers: dict[str, Reader] = {"extractive": build_reader("extractive")}
    readers |= {name: LLMReader(llm=llm, max_tokens=args.max_tokens) for name, llm in llms.items()}
    try:
        # One warm-up answer each (model pages, the query embedder, the first BM25 queries).
        for reader in readers.values():
            timed_answer(pipeline, reader, questions[0])
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in readers}
        for i, question in enumerate(questions, start=1):
            for name, reader in readers.items():
                runs[name].append(timed_answer(pipeline, reader, question))
            log(
                f"question {i}/{len(questions)}: "
                + ", ".join(f"{n} {r[-1]['ttft_s']:.2f}/{r[-1]['total_s']:.2f}s" for n, r in runs.items())
            )
        llm = llms["llm_batch1"]
        prompt_tokens = [
            sum(llm.count_tokens(m["content"]) for m in build_messages(q.text, r["context"]))
            for q, r in zip(questions, runs["llm_batch1"])
        ]
        model_id = llm.id
    finally:
        for llm in llms.values():
            llm.close()

    equal = [a["answer"] == b["answer"] for a, b in zip(runs["llm_batch1"], runs["llm_batch_all"])]
    result = {
        "benchmark": "answer_latency",
        "corpus": "orrin",
        "questions": [q.id for q in questions],
        "model": model_id,
        "max_tokens": args.max_tokens,
        "generation_threads": default_threads(),
        "batch_threads": {"llm_batch1": 1, "llm_batch_all": all_cores},
        "prompt_tokens": percentiles(prompt_tokens) | {"mean": round(float(np.mean(prompt_tokens)), 1)},
        "readers": {
            name: {
                "ttft_s": percentiles([r["ttft_s"] for r in rows]),
                "total_s": percentiles([r["total_s"] for r in rows]),
                "retrieve_s": percentiles([r["retrieve_s"] for r in rows]),
            }
            for name, rows in runs.items()
        },
        "answers_equal": all(equal),
        "answers_equal_per_question": equal,
        "ttft_p50_ratio_batch1_over_all": round(
            float(np.percentile([r["ttft_s"] for r in runs["llm_batch1"]], 50))
            / float(np.percentile([r["ttft_s"] for r in runs["llm_batch_all"]], 50)),
            3,
        ),
        "ragline": ragline.__version__,
        "python": platform.python_version(),
        "cores": len(os.sched_getaffinity(0)),
        "load_average": os.getloadavg(),
    }
    print_result(result, args.output)


if __name__ == "__main__":
    main()
