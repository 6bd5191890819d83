"""Question-answering support: the extractive reader with and without the support check, and calibration.

Sets (retrieval once per question, then every reader reads the same contexts):

- calibration: ``orrin-train`` (Orrin training world, ``TRAIN_SEED``), ``squad-1-3`` (SQuAD 2.0 subset,
  articles 1-3 in file order of their ``context_id``), ``hotpotqa-1-50`` (file order),
  ``realdocs-calibration`` (the real-document set's calibration half);
- reported: ``orrin`` (the evaluation world), ``squad-4-5``, ``hotpotqa-51-100``, ``realdocs-report``.

Retrieval: Orrin as in BENCHMARKS.md (hybrid, fixed:size=100,overlap=30 chunks, breadcrumb context, flat
vectors); SQuAD and HotpotQA BM25 over whole passages; the real documents BM25 over the same chunks; top 5.

For each set and reader: correct / wrong / abstained (``ragline.eval.answers``), and **support
precision**: of the questions the reader answered with a citation marked ``supported``, the share
graded correct (right string from a gold document; on an unanswerable question any answer is wrong).
``check`` also reports, for the spans the reader gives without the check, the precision and recall of
the check as a classifier of correct answers.

    .venv/bin/python benchmarks/qa_support.py --output json > benchmarks/results/support.json
    .venv/bin/python benchmarks/qa_support.py --calibrate      # the grid search that set the thresholds
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragline.answer.context import Context, document_id
from ragline.answer.extractive import Candidate, ExtractiveReader
from ragline.answer.pipeline import ExtractiveAnswerReader, RAGPipeline
from ragline.answer.support import SupportCheck
from ragline.eval.answers import exact_match, grade_question, normalize_answer, summarize
from ragline.eval.calibration import CalibrationExample, calibrate_support
from ragline.eval.datasets import load_dataset
from ragline.eval.qa import QAQuestion
from ragline.index.filters import acl_filter
from ragline.index.store import IndexSettings
from ragline.ingest.pipeline import IngestConfig, build_index

sys.path.insert(0, str(Path(__file__).parent))
import realdocs  # noqa: E402  (the builder beside this script)
from common import bench_root, print_result  # noqa: E402

BENCH = bench_root()
CALIBRATION = ("orrin-train", "squad-1-3", "hotpotqa-1-50", "realdocs-calibration")
REPORTED = ("orrin", "squad-4-5", "hotpotqa-51-100", "realdocs-report")


@dataclass
class Setup:
    folder: Path
    keep: Any  # record list -> the records of this set
    retriever: str = "bm25"
    chunker: str = "none"
    context: str = "none"
    embedder: str | None = None


def _articles(first: int, last: int) -> Any:
    def keep(records: list[dict]) -> list[dict]:
        order = list(dict.fromkeys(r["context_id"].rsplit("_", 1)[0] for r in records))
        wanted = set(order[first - 1 : last])
        return [r for r in records if r["context_id"].rsplit("_", 1)[0] in wanted]

    return keep


def setups(bench: Path, work: Path) -> dict[str, Setup]:
    from ragline.corpora.export import export_beir
    from ragline.corpora.orrin import DEFAULT_SEED, TRAIN_SEED, build_orrin

    def orrin(seed: int, name: str) -> Setup:
        folder = export_beir(build_orrin(seed), work / name)
        return Setup(folder, lambda rs: rs, "hybrid", "fixed:size=100,overlap=30", "breadcrumb", "minilm")

    # The METADATA collection only: the corpus these halves were calibrated and reported on.
    docs = realdocs.build(work / "realdocs", collections=("pypi-metadata",))

    def half(split: str) -> Any:
        return lambda rs: [r for r in rs if r["split"] == split]

    return {
        "orrin-train": orrin(TRAIN_SEED, "orrin-train"),
        "orrin": orrin(DEFAULT_SEED, "orrin"),
        "squad-1-3": Setup(bench / "squad_v2_dev_subset", _articles(1, 3)),
        "squad-4-5": Setup(bench / "squad_v2_dev_subset", _articles(4, 5)),
        "hotpotqa-1-50": Setup(bench / "hotpotqa_train_hipporag_100", lambda rs: rs[:50]),
        "hotpotqa-51-100": Setup(bench / "hotpotqa_train_hipporag_100", lambda rs: rs[50:]),
        "realdocs-calibration": Setup(docs, half("calibration"), chunker="fixed:size=100,overlap=30"),
        "realdocs-report": Setup(docs, half("report"), chunker="fixed:size=100,overlap=30"),
    }


def contexts(setup: Setup, indexes: dict[tuple, Any]) -> list[tuple[QAQuestion, Context]]:
    """Each question of the set with the context retrieval gives it (the index is shared per folder)."""
    dataset = load_dataset(setup.folder)
    key = (str(setup.folder), setup.chunker, setup.context, setup.embedder)
    if key not in indexes:
        settings = IndexSettings(embedder=setup.embedder, vector_index="flat")
        indexes[key] = build_index(dataset.corpus, IngestConfig(setup.chunker, setup.context), settings)
    pipeline = RAGPipeline(indexes[key], ExtractiveAnswerReader(), retriever=setup.retriever, k=5)
    questions = [QAQuestion.from_record(r) for r in setup.keep(dataset.questions or [])]
    return [(q, pipeline.context(q.text, acl_filter(q.user_groups) if q.user_groups else None)) for q in questions]


def evaluate(reader: ExtractiveReader, items: list[tuple[QAQuestion, Context]]) -> dict[str, Any]:
    """Outcomes, EM/F1, support precision of ``reader`` on ``items``, and the per-type table."""
    grades, supported = [], []
    for q, context in items:
        answer = reader.read(q.text, context)
        grade = grade_question(q, answer, context)
        grades.append(grade)
        if not answer.abstained and any(c.supported for c in answer.citations):
            supported.append(grade.outcome == "correct")
    summary = summarize(grades)
    return {
        "counts": summary.counts,
        "n": summary.n,
        "em": summary.em,
        "f1": summary.f1,
        "abstention_rate": summary.abstention_rate,
        "supported": len(supported),
        "support_precision": sum(supported) / len(supported) if supported else None,
        "by_type": {t: {k: r[k] for k in ("n", "correct", "wrong", "abstained")} for t, r in summary.by_type.items()},
    }


def _right(candidate: Candidate, q: QAQuestion) -> bool:
    if q.expected_abstain:
        return False
    right = exact_match(candidate.text, q.answers) == 1.0 and bool(normalize_answer(candidate.text))
    return right and (not q.gold_doc_ids or document_id(candidate.hit) in set(q.gold_doc_ids))


def check_quality(items: list[tuple[QAQuestion, Context]], check: SupportCheck) -> dict[str, Any]:
    """The check as a classifier of the spans the reader gives without it: precision and recall of "supported"."""
    reader = ExtractiveReader(support="off")
    tp = fp = fn = answered = 0
    for q, context in items:
        answer = reader.read(q.text, context)
        if answer.abstained:
            continue
        answered += 1
        d = answer.details
        hit = next(s.hit for s in context.sources if s.hit.doc_id == answer.citations[0].chunk_id)
        title = f"{hit.title} {hit.metadata.get('section', '')}".strip()
        ok = check(q.text, answer.text, hit.text, title, at=d["start"])
        right = _right(Candidate(answer.text, d["score"], hit, 0, "", d["start"], d["end"], ()), q)
        tp, fp, fn = tp + (ok and right), fp + (ok and not right), fn + (right and not ok)
    return {"answered": answered, "precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / (tp + fn) if tp + fn else None}  # fmt: skip


# --- calibration --------------------------------------------------------------------------------------


def calibrate(sets: dict[str, list[tuple[QAQuestion, Context]]]) -> dict[str, Any]:
    """``calibrate_support`` on the sets' questions and contexts, as JSON (the grid best first)."""
    examples = {name: [CalibrationExample(q.text, ctx, q.answers, q.gold_doc_ids) for q, ctx in items]
                for name, items in sets.items()}  # fmt: skip
    result = calibrate_support(examples)
    best = {"support": result.support, **result.check.config(), "objective": result.objective,
            "per_set": result.per_set}  # fmt: skip
    return {"best": best, "without_check": result.without_check, "grid": result.grid[:20]}  # the top of the grid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", type=Path, default=BENCH, help="the shared benchmark folder")
    parser.add_argument("--sets", help="comma-separated sets (default: the reported ones; --calibrate: calibration)")
    parser.add_argument("--calibrate", action="store_true", help="grid-search the support thresholds")
    parser.add_argument("--output", choices=("json", "pretty"), default="pretty")
    args = parser.parse_args()
    names = args.sets.split(",") if args.sets else list(CALIBRATION if args.calibrate else REPORTED)
    indexes: dict[tuple, Any] = {}
    with tempfile.TemporaryDirectory() as work:
        all_setups = setups(args.bench, Path(work))
        items = {name: contexts(all_setups[name], indexes) for name in names}
    if args.calibrate:
        result: dict[str, Any] = calibrate(items)
    else:
        before, after = ExtractiveReader(support="off"), ExtractiveReader()
        result = {name: {"before": evaluate(before, rows), "after": evaluate(after, rows),
                         "check": check_quality(rows, after.support_check)}
                  for name, rows in items.items()}  # fmt: skip
        result["support_check"] = ExtractiveReader().support_check.config()
    print_result(result, args.output)


if __name__ == "__main__":
    main()
