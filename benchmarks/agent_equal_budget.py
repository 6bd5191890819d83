"""Single-shot vs iterative retrieval at an equal passage budget: all-gold recall on HotpotQA.

Questions 51-100 of ``hotpotqa_train_hipporag_100`` in file order (1-50 are for calibration). For a
budget B, single-shot hands on the top B passages; the agent hands on ``hop_k`` passages per hop
(B = 10: 5 + 5; B = 5: 3 + 2), never more than B. A question counts 1 when every gold passage is
among them. Paired randomization test from ``ragline.eval.stats.compare``. Prints JSON.

    PYTHONPATH=src python benchmarks/agent_equal_budget.py [DATASET_DIR] [--retriever bm25]
"""

from __future__ import annotations

import argparse
import json
import time

from ragline.agent.loop import AgentSettings, MultiHopAgent
from ragline.answer.context import document_id
from ragline.eval.datasets import load_dataset
from ragline.eval.stats import compare
from ragline.index import Index
from ragline.retrieve.registry import build_retriever


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", nargs="?", default="/work/shared/bench/hotpotqa_train_hipporag_100")
    parser.add_argument("--retriever", default="bm25")
    parser.add_argument("--first", type=int, default=50, help="questions held out for calibration")
    args = parser.parse_args()
    dataset = load_dataset(args.dataset)
    index = Index.create(None)
    index.add(dataset.corpus)
    index.commit()
    questions = dataset.questions[args.first : args.first + 50]
    single = build_retriever(args.retriever, index)
    report = {"dataset": str(args.dataset), "questions": len(questions), "retriever": args.retriever, "budgets": {}}
    for budget, split in ((10, (5, 5)), (5, (3, 2))):
        agent = MultiHopAgent(index, AgentSettings(ladder=(args.retriever,), hop_k=split, budget_passages=budget,
                                                   max_hops=len(split), retries=0))  # fmt: skip
        one, many, seconds = {}, {}, 0.0
        for q in questions:
            gold = set(q["supporting_ids"])
            got = {document_id(h) for h in single.search(q["question"], budget)}
            one[q["id"]] = float(gold <= got)
            started = time.perf_counter()
            _, context = agent.answer(q["question"])
            seconds += time.perf_counter() - started
            many[q["id"]] = float(gold <= {s.doc_id for s in context.sources})
        test = compare(one, many)
        report["budgets"][budget] = {"single_all_gold": sum(one.values()) / len(one),
                                     "iterative_all_gold": sum(many.values()) / len(many), "split": list(split),
                                     "delta": test["delta"], "p_randomization": test["p_randomization"],
                                     "agent_seconds_per_question": round(seconds / len(questions), 4)}  # fmt: skip
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
