"""The span reader's ablations (the lecture's SQuAD reader, §3): what no-answer training, the window, the
number of passages and the span length limit each change.

On a questions folder with each question's own passage (``context_id``; SQuAD 2.0 by default), each row reads
the same questions with reader ``span`` and one setting changed from the model's stored ones:

- ``model``: every ``--span-model`` at its own settings (a model trained with ``--no-answer none`` beside one
  trained with no-answer examples is the with/without no-answer ablation);
- ``window W``: windows of W word pieces (stride W/4) at reading time;
- ``span limit L``: answers of at most L word pieces;
- ``k passages``: the BM25 top k of the pooled passages (every question's own passage among all), not the
  question's own: the open setting, where the reader must also pick the passage.

Per row: F1 and EM on the answerable questions (an abstention scores 0), the share of unanswerable ones
declined, and seconds per question.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from ragline.answer.context import build_context
from ragline.components import register
from ragline.errors import ConfigError
from ragline.eval.answers import exact_match, f1
from ragline.eval.experiments import Experiment
from ragline.types import Hit

WINDOWS = (128, 192, 256)
SPAN_LIMITS = (5, 10, 30)
KS = (1, 3, 5)
DEFAULT_LIMIT = 200


def _hit(doc: Any, rank: int) -> Hit:
    return Hit(doc.id, 1.0 / rank, rank, doc.title, doc.text, dict(doc.metadata), doc.parent)


def _score(reader: Any, items: Sequence[tuple[dict[str, Any], list[Hit]]]) -> dict[str, Any]:
    started = time.perf_counter()
    f1s, ems, declined, unanswerable = [], [], 0, 0
    for question, hits in items:
        answer = reader.read(question["question"], build_context(hits, budget=100_000))
        golds = question.get("answers") or []
        if golds:
            f1s.append(0.0 if answer.abstained else f1(answer.text, golds))
            ems.append(0.0 if answer.abstained else exact_match(answer.text, golds))
        else:
            unanswerable += 1
            declined += answer.abstained
    n = len(items)
    return {
        "n": n,
        "f1": round(sum(f1s) / max(1, len(f1s)), 4),
        "em": round(sum(ems) / max(1, len(ems)), 4),
        "declined": round(declined / unanswerable, 4) if unanswerable else None,
        "seconds_per_question": round((time.perf_counter() - started) / max(1, n), 3),
    }


def run(dataset: str, models: Sequence[str], limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """The rows above for the first ``limit`` questions of ``dataset`` (its ``questions.jsonl``)."""
    from ragline.answer.span_reader import SpanReader
    from ragline.eval.datasets import load_dataset
    from ragline.index.store import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index
    from ragline.retrieve.registry import build_retriever

    if not models:
        raise ConfigError("reader-ablations needs --span-model SPEC (e.g. trained:squad), repeatable")
    data = load_dataset(dataset)
    questions = [q for q in data.questions or [] if q.get("context_id") or q.get("context_ids")][:limit]
    if not questions:
        raise ConfigError(f"{dataset}: no question with its own passage (context_id or context_ids)")
    by_id = {doc.id: doc for doc in data.corpus}

    def own(q: dict[str, Any]) -> list[Hit]:
        ids = q.get("context_ids") or [q["context_id"]]
        return [_hit(by_id[i], rank) for rank, i in enumerate(ids, 1) if i in by_id]

    own_items = [(q, own(q)) for q in questions]
    rows: list[dict[str, Any]] = []
    for model in models:
        rows.append({"row": f"model {model}", **_score(SpanReader(model), own_items)})
    first = models[0]
    for window in WINDOWS:
        reader = SpanReader(first, max_length=window, stride=window // 4)
        rows.append({"row": f"window {window}", **_score(reader, own_items)})
    for span in SPAN_LIMITS:
        rows.append({"row": f"span limit {span}", **_score(SpanReader(first, max_answer_tokens=span), own_items)})
    index = build_index(data.corpus, IngestConfig(), IndexSettings())
    bm25 = build_retriever("bm25", index)
    for k in KS:
        reader = SpanReader(first, top_k=k)
        pooled = [(q, bm25.search(q["question"], k)) for q in questions]
        rows.append({"row": f"k={k} passages (BM25, pooled)", **_score(reader, pooled)})
    return {"experiment": "reader-ablations", "dataset": str(dataset), "models": list(models), "rows": rows}


def tables(payload: dict[str, Any]) -> list[Table]:
    table = Table(title=f"Span reader ablations on {payload['dataset']} (first model: {payload['models'][0]})")
    for column in ("row", "n", "F1 (answerable)", "EM", "declined (unanswerable)", "s / question"):
        table.add_column(column, justify="left" if column == "row" else "right")
    for row in payload["rows"]:
        declined = "—" if row["declined"] is None else f"{row['declined']:.2f}"
        table.add_row(
            row["row"],
            str(row["n"]),
            f"{row['f1']:.3f}",
            f"{row['em']:.3f}",
            declined,
            f"{row['seconds_per_question']:.2f}",
        )
    return [table]


def from_args(args: Any) -> dict[str, Any]:
    """--dataset (required: questions with their own passages), the --span-model readers, --limit questions."""
    if not args.dataset:
        raise ConfigError(
            "reader-ablations needs --dataset DIR: questions with their own passages "
            "(e.g. ../shared/bench/squad_v2_dev_subset)"
        )
    return run(args.dataset, args.span_model or [], args.limit or DEFAULT_LIMIT)


@register("experiment", "reader-ablations")
def experiment() -> Experiment:
    """The span reader with/without no-answer training, window size, span length limit, passages k."""
    return Experiment("reader-ablations", from_args, tables)
