"""Two readers' answers to the same questions, side by side: outcomes, citation and support rates, a paired test.

Reads the ``--save-answers`` files of two ``ragline eval`` runs (the first is the baseline) and prints JSON:
for each run correct / wrong / abstained, EM/F1 means, the **citation rate** (the share of answers, abstentions
left out, with at least one citation) and the **supported rate** (with at least one citation marked supported),
then the paired randomization tests over the questions both runs answered (``ragline.eval.stats.compare``) on
"correct" and on correct minus wrong (+1 / 0 / -1 a question: the objective the default reader is chosen by).

    PYTHONPATH=src python benchmarks/llm_reader_compare.py BASELINE.jsonl NEW.jsonl [--out FILE]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ragline.eval.stats import compare


def load(path: str) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["id"]: row for row in rows}


SCORE = {"correct": 1.0, "abstained": 0.0, "wrong": -1.0}  # correct minus wrong: a cited wrong answer misleads


def paired(base: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]], score: dict[str, float]) -> dict[str, Any]:
    """The paired randomization test on each question's ``score[outcome]`` over the questions both runs answered."""
    shared = sorted(set(base) & set(new))
    test = compare({q: score.get(base[q]["outcome"], 0.0) for q in shared},
                   {q: score.get(new[q]["outcome"], 0.0) for q in shared})  # fmt: skip
    return dict(test)


def summary(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    outcomes = [row["outcome"] for row in rows.values()]
    answered = [row for row in rows.values() if not row["abstained"]]
    cited = sum(bool(row["citations"]) for row in answered)
    supported = sum(any(c.get("supported") for c in row["citations"]) for row in answered)
    grades = [row["grade"] for row in rows.values()]
    return {
        "n": len(rows),
        "correct": outcomes.count("correct"),
        "wrong": sum(o not in ("correct", "abstained") for o in outcomes),  # "misled" is a wrong answer too
        "abstained": outcomes.count("abstained"),
        "em": round(sum(g["em"] for g in grades) / max(len(grades), 1), 4),
        "f1": round(sum(g["f1"] for g in grades) / max(len(grades), 1), 4),
        "answered": len(answered),
        "citation_rate": round(cited / len(answered), 4) if answered else None,
        "supported_rate": round(supported / len(answered), 4) if answered else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("baseline")
    parser.add_argument("new")
    parser.add_argument("--out", default=None, help="also write the JSON report here")
    args = parser.parse_args()
    base, new = load(args.baseline), load(args.new)
    report = {"baseline": {"file": args.baseline, **summary(base)}, "new": {"file": args.new, **summary(new)},
              "paired_correct": paired(base, new, {"correct": 1.0}),
              "paired_correct_minus_wrong": paired(base, new, SCORE)}  # fmt: skip
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
