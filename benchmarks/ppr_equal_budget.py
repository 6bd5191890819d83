"""Graph retrieval (``ppr``) vs single-shot hybrid at an equal passage budget: all-gold recall on HotpotQA.

The same data, split and metric as ``agent_equal_budget.py`` (its helpers): ``hotpotqa_train_hipporag_100``
in file order, the pooled corpus of 994 passages; a question counts 1 when every gold passage is among the
top B. Questions 1-50 choose the settings (``--calibration`` with several ``--ppr`` specs: each is measured),
questions 51-100 are run once with the chosen one. Paired randomization test (``ragline.eval.stats.compare``)
of each ``--ppr`` spec against ``--baseline``. Prints JSON (``--out`` also writes it).

    PYTHONPATH=src python benchmarks/ppr_equal_budget.py [DATASET_DIR] [--baseline hybrid] [--ppr SPEC ...]
        [--budget 5 --budget 10] [--calibration] [--out FILE]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agent_equal_budget import all_gold, pooled_index, question_split
from common import bench_root, print_result, write_result
from ragline.eval.datasets import load_dataset
from ragline.eval.stats import compare
from ragline.retrieve.registry import build_retriever


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", nargs="?", default=str(bench_root() / "hotpotqa_train_hipporag_100"))
    parser.add_argument("--baseline", default="hybrid")
    parser.add_argument("--ppr", action="append", default=None, help="a ppr retriever spec (repeatable)")
    parser.add_argument("--budget", action="append", type=int, default=None)
    parser.add_argument("--first", type=int, default=50, help="questions held out for calibration")
    parser.add_argument("--calibration", action="store_true", help="measure the first questions instead")
    parser.add_argument("--out", default=None, help="also write the JSON report here")
    args = parser.parse_args()
    specs, budgets = args.ppr or ["ppr"], args.budget or [5, 10]
    dataset = load_dataset(args.dataset)
    index = pooled_index(dataset, [args.baseline, *specs])
    questions = question_split(dataset, args.first, args.calibration)
    baseline = build_retriever(args.baseline, index)
    report: dict = {"dataset": str(args.dataset), "questions": len(questions), "baseline": args.baseline,
                    "split": "calibration (first questions)" if args.calibration else "held out",
                    "corpus": "pooled", "budgets": {}}  # fmt: skip
    base = {b: {q["id"]: all_gold(q, baseline.search(q["question"], b)) for q in questions} for b in budgets}
    for b in budgets:
        report["budgets"][b] = {"baseline_all_gold": sum(base[b].values()) / len(questions), "ppr": {}}
    for spec in specs:
        retriever = build_retriever(spec, index)
        retriever.search(questions[0]["question"], 1)  # builds the graph: not part of the per-question time
        for b in budgets:
            started = time.perf_counter()
            got = {q["id"]: all_gold(q, retriever.search(q["question"], b)) for q in questions}
            seconds = (time.perf_counter() - started) / len(questions)
            test = compare(base[b], got)
            report["budgets"][b]["ppr"][spec] = {"all_gold": sum(got.values()) / len(questions),
                                                 "delta": test["delta"], "p_randomization": test["p_randomization"],
                                                 "seconds_per_question": round(seconds, 4)}  # fmt: skip
    print_result(report, "pretty")
    if args.out:
        write_result(Path(args.out), report)


if __name__ == "__main__":
    main()
