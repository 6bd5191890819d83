"""Single-shot vs iterative retrieval at an equal passage budget: all-gold recall on HotpotQA.

Questions 51-100 of ``hotpotqa_train_hipporag_100`` in file order (1-50 are for calibration). For a
budget B, single-shot hands on the top B passages; the agent hands on ``hop_k`` passages per hop
(B = 10: 6 + 4; B = 5: 3 + 2, the splits best on questions 1-50 with ``--first-hop question``), never
more than B; a later hop first follows the titles of documents the previous hop's passages name, then
fills up with its sub-question (or, with ``--first-hop question``, the question plus the bridge).
The corpus is the pooled one (all 994 passages), not each question's ten. A question counts 1 when
every gold passage is among them. Paired randomization test from ``ragline.eval.stats.compare``.
Prints JSON (``--out`` also writes it).

``--first-hop`` (default ``question``, chosen on questions 1-50) asks hop 1 the whole question rather than
the rule decomposer's first sub-question.

    PYTHONPATH=src python benchmarks/agent_equal_budget.py [DATASET_DIR] [--retriever bm25] [--first 50]
        [--first-hop question|subquestion]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from common import bench_root
from ragline.agent.loop import AgentSettings, MultiHopAgent
from ragline.answer.context import document_id
from ragline.eval.datasets import load_dataset
from ragline.eval.stats import compare
from ragline.index import Index
from ragline.index.settings import IndexSettings
from ragline.retrieve.registry import build_retriever, needs_embeddings


def pooled_index(dataset: Any, specs: list[str]) -> Index:
    """The pooled corpus in memory; vectors (MiniLM) when one of the retrievers ``specs`` needs them."""
    index = Index.create(None, IndexSettings(embedder="minilm") if needs_embeddings(specs) else None)
    index.add(dataset.corpus)
    index.commit()
    return index


def question_split(dataset: Any, first: int, calibration: bool) -> list[dict[str, Any]]:
    """The first ``first`` questions (calibration) or the 50 after them (held out), in file order."""
    return list(dataset.questions[:first] if calibration else dataset.questions[first : first + 50])


def all_gold(question: Mapping[str, Any], hits: Iterable[Any]) -> float:
    """1.0 when every gold passage of ``question`` is among the documents of ``hits``, else 0.0."""
    return float(set(question["supporting_ids"]) <= {document_id(h) for h in hits})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", nargs="?", default=str(bench_root() / "hotpotqa_train_hipporag_100"))
    parser.add_argument("--retriever", default="bm25")
    parser.add_argument("--first", type=int, default=50, help="questions held out for calibration")
    parser.add_argument("--calibration", action="store_true", help="measure the first questions instead")
    parser.add_argument("--first-hop", default="question", choices=("subquestion", "question"),
                        help="hop 1 on the decomposer's first sub-question or on the whole question")  # fmt: skip
    parser.add_argument("--out", default=None, help="also write the JSON report here")
    args = parser.parse_args()
    dataset = load_dataset(args.dataset)
    index = pooled_index(dataset, [args.retriever])
    questions = question_split(dataset, args.first, args.calibration)
    single = build_retriever(args.retriever, index)
    report = {"dataset": str(args.dataset), "questions": len(questions), "retriever": args.retriever,
              "split": "calibration (first questions)" if args.calibration else "held out", "corpus": "pooled",
              "first_hop": args.first_hop,
              "budgets": {}}  # fmt: skip
    for budget, split in ((10, (6, 4)), (5, (3, 2))):
        agent = MultiHopAgent(index, AgentSettings(ladder=(args.retriever,), hop_k=split, budget_passages=budget,
                                                   max_hops=len(split), retries=0, budget=100_000,
                                                   first_hop=args.first_hop))  # fmt: skip
        one, many, seconds = {}, {}, 0.0
        for q in questions:
            one[q["id"]] = all_gold(q, single.search(q["question"], budget))
            started = time.perf_counter()
            _, context = agent.answer(q["question"])
            seconds += time.perf_counter() - started
            many[q["id"]] = float(set(q["supporting_ids"]) <= {s.doc_id for s in context.sources})
        test = compare(one, many)
        report["budgets"][budget] = {"single_all_gold": sum(one.values()) / len(one),
                                     "iterative_all_gold": sum(many.values()) / len(many), "split": list(split),
                                     "delta": test["delta"], "p_randomization": test["p_randomization"],
                                     "agent_seconds_per_question": round(seconds / len(questions), 4)}  # fmt: skip
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
