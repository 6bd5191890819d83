"""Trained span readers compared on the dev slice of their training file (never on evaluation data).

The trainer checks a reader on 100 dev questions; this reads more of the held-out articles (``--dev-questions``,
the same article split and seed as ``ragline train reader``) with no-answer examples made the ``--no-answer``
way, and reports per model and window length: answerable F1 when the reader must answer, how well the
no-answer margin (``null - best``) separates the two kinds (AUC: the share of (answerable, no-answer) pairs the
margin orders right; also per way the no-answer examples were made, ``margin_auc_by_way``), and what a
threshold calibrated two ways gives: ``mean`` (the mean F1 over the examples, what the trainer stores) and
``balanced`` (both kinds weighed equally, whatever their share here). ``--passages K`` reads each question with
K-1 other paragraphs of its article (without its answer text) beside its own, as a reader reads several
sources, and ``--select`` compares the ways windows are decoded (``ragline.answer.span_decode``). Settings for
evaluation sets are chosen from this table, not from the sets themselves:

    PYTHONPATH=src python benchmarks/reader_dev_slice.py --model trained:squad-r2 --model trained:squad-r3 \
        --dev-questions 400 --no-answer adversarial --out benchmarks/results/reader_dev_slice.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import bench_root, log, print_result, write_result  # noqa: E402


def figures(
    model: str,
    network: Any,
    tokenizer: Any,
    dev: list[Any],
    max_length: int,
    stride: int,
    distractors: list[list[str]] | None = None,
    select: str = "score",
) -> dict[str, Any]:
    """One model (loaded: ``network``, ``tokenizer``) at one window length on the dev examples."""
    import torch

    from ragline.reflect.train import auc
    from ragline.train.reader import ReaderTraining, dev_margins, threshold_figures

    settings = ReaderTraining(max_length=max_length, stride=stride)
    with torch.no_grad():
        margins, f1s, answerable = dev_margins(network, tokenizer, dev, settings, distractors, select)
    return {
        "model": model,
        "max_length": max_length,
        "passages": 1 + (len(distractors[0]) if distractors else 0),
        "select": select,
        "answerable": sum(answerable),
        "no_answer": len(answerable) - sum(answerable),
        # a no-answer example should have the larger margin: label 1 for it, the margin as its score
        "margin_auc": round(auc(margins, [0 if a else 1 for a in answerable]) or 0.0, 4),
        "margin_auc_by_way": auc_by_way(dev, margins),
        "mean": threshold_figures(margins, f1s, answerable),
        "balanced": threshold_figures(margins, f1s, answerable, balanced=True),
    }


def auc_by_way(dev: list[Any], margins: list[float]) -> dict[str, dict[str, float]]:
    """The margin AUC of the answerable examples against each way's no-answer examples alone (a made example's
    id ends ``-no-WAY``): which kinds a reader has learned to decline."""
    from ragline.reflect.train import auc
    from ragline.train.reader_data import made_from

    has = [m for qa, m in zip(dev, margins) if qa.answer is not None]
    ways: dict[str, list[float]] = {}
    for qa, margin in zip(dev, margins):
        if qa.answer is None:
            ways.setdefault(str(made_from(qa.id)[1]), []).append(margin)
    return {
        way: {"n": len(ms), "auc": round(auc(has + ms, [0] * len(has) + [1] * len(ms)) or 0.0, 4)}
        for way, ms in sorted(ways.items())
    }


def same_article_distractors(dev: list[Any], count: int, seed: int) -> list[list[str]]:
    """Per dev example, ``count`` other paragraphs of its article (seeded) without its question's answer text: the
    sources a reader sees beside the right one. A made no-answer example keeps its question's answers out too."""
    import random

    from ragline.train.reader_data import made_from

    rng = random.Random(seed)
    answers = {qa.id: qa.answers for qa in dev if qa.answer is not None}
    by_title: dict[str, list[str]] = {}
    for qa in dev:
        if qa.answer is not None and qa.context not in by_title.setdefault(qa.title, []):
            by_title[qa.title].append(qa.context)
    chosen = []
    for qa in dev:
        texts = [a.lower() for a in answers.get(made_from(qa.id)[0], ())]
        pool = [c for c in by_title.get(qa.title, []) if c != qa.context and not any(t in c.lower() for t in texts)]
        chosen.append(rng.sample(pool, min(count, len(pool))))
    return chosen


def main() -> None:
    import torch

    from ragline.answer.span_reader import load_qa_model
    from ragline.train.reader import ReaderTraining, training_examples

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=bench_root() / "reader_train" / "squad_v1.1_train.jsonl.gz")
    parser.add_argument("--model", action="append", required=True, help="trained:NAME (repeat to compare)")
    parser.add_argument("--max-length", type=int, action="append", help="window pieces (repeat; 128)")
    parser.add_argument("--stride", type=int, default=32)
    parser.add_argument("--dev-questions", type=int, default=400)
    parser.add_argument("--no-answer", default="adversarial", help="how the dev no-answer examples are made")
    parser.add_argument(
        "--passages", type=int, default=1, help="passages read per question: its own + other paragraphs of its article"
    )
    parser.add_argument("--select", action="append", help="how windows are compared: score, margin (repeat; score)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = ReaderTraining(dev_questions=args.dev_questions, dev_no_answer=args.no_answer, max_questions=1)
    _, dev, counts = training_examples(args.data, settings, log)
    torch.set_num_threads(2)
    distractors = same_article_distractors(dev, args.passages - 1, seed=0) if args.passages > 1 else None
    rows = []
    for model in args.model:
        network, tokenizer, _ = load_qa_model(model)
        network.eval()
        for max_length in args.max_length or [128]:
            for select in args.select or ["score"]:
                log(f"{model}, windows of {max_length}, {args.passages} passage(s), select {select}")
                rows.append(figures(model, network, tokenizer, dev, max_length, args.stride, distractors, select))
    result = {
        "data": args.data.name,
        "dev_articles": counts["dev_articles"],
        "dev_questions": counts["dev_questions"],
        "dev_no_answer": counts["dev_no_answer"],
        "no_answer": args.no_answer,
        "passages": args.passages,
        "rows": rows,
    }
    if args.out:
        write_result(args.out, result)
    print_result(result)


if __name__ == "__main__":
    main()
