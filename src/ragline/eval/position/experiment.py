"""Running the position experiment: each reader reads every item at every position, and is graded.

``run`` builds the index and the items of a corpus, then for each ``ReaderRun`` measures the
accuracy curve over gold positions (``run_positions``, with the gold-source-alone oracle) and the
comparison of context orders on the real top-k (``run_orderings``). The result is a JSON-ready dict.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragline.answer.context import ORDERS, Context, Order
from ragline.answer.pipeline import Reader, build_reader
from ragline.corpora.base import Corpus, Question
from ragline.eval.answers import MatchMode, grade_question
from ragline.eval.position.items import (
    DEFAULT_CHUNKER,
    DEFAULT_K,
    DEFAULT_SEED,
    DEFAULT_TYPES,
    OrderingItem,
    PositionItem,
    build_items,
    build_ordering_items,
    build_position_index,
    eligible_questions,
    gold_position,
    oracle_context,
    ordering_context,
    position_context,
    sample,
)

DEFAULT_LLM = "llm:model=local:qwen2.5-coder-0.5b,max_tokens=64"
# Measured on the 2 shared cores (load ~5): ~24 s per 5-source prompt (~880 tokens) with Qwen2.5-Coder-0.5B.
# 9 questions are 45 position calls, 9 short oracle calls (~8 s) and 24 ordering calls (8 of the 9 have
# their gold chunk in the BM25 top 5): ~29 minutes. Liu et al. used ~2,600 questions; 40 (--questions 40,
# ~2 hours here) is the size to run on an idle machine.
DEFAULT_LLM_QUESTIONS = 9

Log = Callable[[str], None]


def _rate(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


_LETTER = {"correct": "C", "wrong": "W", "abstained": "A"}


def _read(reader: Reader, question: Question, context: Context, match: MatchMode) -> str:
    """The outcome letter (C / W / A) of ``reader`` on ``question`` over ``context``; W for a string-only
    match is told apart as ``w`` (right value, no gold citation)."""
    grade = grade_question(question, reader.read(question.text, context), context, match=match)
    if grade.outcome == "wrong" and grade.answer_match:
        return "w"
    return _LETTER[grade.outcome]


def _summary(outcomes: Sequence[str], questions: Sequence[Question]) -> dict[str, Any]:
    """Rates of one condition from its outcome letters, overall and by question type."""
    by_type: dict[str, list[str]] = defaultdict(list)
    for letter, question in zip(outcomes, questions):
        by_type[question.type].append(letter)
    return {
        "n": len(outcomes),
        "accuracy": _rate([o == "C" for o in outcomes]),
        "answer_match": _rate([o in "Cw" for o in outcomes]),
        "abstained": _rate([o == "A" for o in outcomes]),
        "accuracy_by_type": {t: _rate([o == "C" for o in rows]) for t, rows in sorted(by_type.items())},
    }


def run_positions(
    items: Sequence[PositionItem], reader: Reader, match: MatchMode = "em", log: Log | None = None
) -> dict[str, Any]:
    """Accuracy with the gold source at each position 1..k, and with the gold source alone.

    Questions are read one at a time through all positions, so an interrupted LLM run leaves whole
    curves in the cache. ``outcomes`` keeps one letter per position and question (C correct, W wrong,
    w right value without a gold citation, A abstained) for paired comparisons.
    """
    k = items[0].k if items else 0
    rows: list[str] = []
    oracle: list[str] = []
    started = time.perf_counter()
    for i, item in enumerate(items, start=1):
        q = item.question
        rows.append("".join(_read(reader, q, position_context(item, p), match) for p in range(1, k + 1)))
        oracle.append(_read(reader, q, oracle_context(item), match))
        if log is not None:
            elapsed = time.perf_counter() - started
            log(f"positions {i}/{len(items)} {q.id}: {rows[-1]} oracle {oracle[-1]} ({elapsed:.0f} s)")
    questions = [item.question for item in items]
    positions = [_summary([row[p] for row in rows], questions) for p in range(k)]
    return {
        "k": k,
        "n": len(items),
        "accuracy": [p["accuracy"] for p in positions],
        "answer_match": [p["answer_match"] for p in positions],
        "abstained": [p["abstained"] for p in positions],
        "accuracy_by_type": {t: [p["accuracy_by_type"].get(t) for p in positions] for t in _types(questions)},
        "oracle": _summary(oracle, questions),
        "outcomes": {q.id: row for q, row in zip(questions, rows)},
        "seconds": round(time.perf_counter() - started, 1),
    }


def run_orderings(
    items: Sequence[OrderingItem],
    reader: Reader,
    match: MatchMode = "em",
    orders: Sequence[Order] = ORDERS,
    log: Log | None = None,
) -> dict[str, Any]:
    """Accuracy of each context order on the same retrieved top-k, and where the gold source ended up."""
    out: dict[str, Any] = {"n": len(items), "gold_rank": _histogram(item.gold_rank for item in items)}
    questions = [item.question for item in items]
    started = time.perf_counter()
    letters: dict[str, list[str]] = {order: [] for order in orders}
    placed: dict[str, list[int]] = {order: [] for order in orders}
    for i, item in enumerate(items, start=1):
        for order in orders:
            context = ordering_context(item, order)
            letters[order].append(_read(reader, item.question, context, match))
            placed[order].append(gold_position(context, item.question) or 0)
        if log is not None:
            row = " ".join(f"{order}={letters[order][-1]}" for order in orders)
            log(f"orderings {i}/{len(items)} {item.question.id}: {row} ({time.perf_counter() - started:.0f} s)")
    for order in orders:
        summary = _summary(letters[order], questions)
        summary["gold_position"] = _histogram(placed[order])
        out[order] = summary
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def _types(questions: Iterable[Question]) -> list[str]:
    return sorted({q.type for q in questions})


def _histogram(values: Iterable[int]) -> dict[str, int]:
    counts: dict[int, int] = defaultdict(int)
    for value in values:
        counts[value] += 1
    return {str(v): counts[v] for v in sorted(counts)}


# --- the whole experiment ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReaderRun:
    """One reader of the experiment: its spec (``build_reader``), how many questions, how to match.

    ``questions`` None reads every eligible question; a number draws that many with the run's seed.
    """

    spec: str
    questions: int | None = None
    match: MatchMode = "em"
    orderings: bool = True


def default_readers(
    k: int = DEFAULT_K, llm_questions: int | None = DEFAULT_LLM_QUESTIONS, llm: str | None = DEFAULT_LLM
) -> list[ReaderRun]:
    """The extractive reader on every question, and the LLM (``llm``; None: none) on a sample.

    The extractive reader reads its ``top_k`` best-ranked sources only (5 by default); it is given
    ``top_k=k`` so that no position is out of its sight. Its score has a rank prior (a source further
    down counts a little less), the only position bias it has.
    """
    runs = [ReaderRun(f"extractive:top_k={k}", None, "em")]
    if llm:
        runs.append(ReaderRun(llm, llm_questions, "contains"))
    return runs


def run(
    corpus: Corpus,
    readers: Sequence[ReaderRun] | None = None,
    *,
    k: int = DEFAULT_K,
    seed: int = DEFAULT_SEED,
    chunker: str = DEFAULT_CHUNKER,
    types: Sequence[str] = DEFAULT_TYPES,
    log: Log | None = None,
    built: dict[str, Reader] | None = None,
) -> dict[str, Any]:
    """The position curve (and the ordering comparison) of each reader; a JSON-ready dict.

    ``built`` maps a spec to an already built reader (tests; sharing one LLM between runs).
    """
    readers = list(readers) if readers is not None else default_readers(k)
    index = build_position_index(corpus, chunker)
    eligible = eligible_questions(corpus, types)
    items, skipped = build_items(index, eligible, k)
    ordering_all = build_ordering_items(index, eligible, k)
    results: dict[str, Any] = {}
    for plan in readers:
        reader = (built or {}).get(plan.spec) or build_reader(plan.spec)
        chosen = sample(items, plan.questions, seed)
        chosen_ids = {item.question.id for item in chosen}
        # The same sampled questions in both measurements, so the two can be read side by side.
        ordering = [item for item in ordering_all if item.question.id in chosen_ids]
        say = (lambda message, name=plan.spec: log(f"[{name}] {message}")) if log is not None else None
        started = time.perf_counter()
        result: dict[str, Any] = {"spec": plan.spec, "reader": reader.config(), "match": plan.match}
        result["positions"] = run_positions(chosen, reader, plan.match, say)
        if plan.orderings:
            result["orderings"] = run_orderings(ordering, reader, plan.match, log=say)
        result["seconds"] = round(time.perf_counter() - started, 1)
        result.update(_llm_calls(reader))
        results[plan.spec] = result
        if (built or {}).get(plan.spec) is None:
            _close(reader)
    return {
        "experiment": "lost-in-the-middle",
        "corpus": corpus.name,
        "corpus_fingerprint": corpus.fingerprint(),
        "k": k,
        "seed": seed,
        "chunker": chunker,
        "types": list(types),
        "eligible": len(eligible),
        "items": len(items),
        "skipped": skipped,
        "ordering_items": len(ordering_all),
        "readers": results,
    }


def _llm_calls(reader: Reader) -> dict[str, Any]:
    """Cache hits and model calls of an LLM reader (CachedLLM counts them): how much a rerun reused."""
    llm = getattr(reader, "llm", None)
    if llm is None or not hasattr(llm, "misses"):
        return {}
    return {"llm_calls": {"cached": llm.hits, "model": llm.misses}}


def _close(reader: Reader) -> None:
    close = getattr(getattr(reader, "llm", None), "close", None)
    if callable(close):
        close()
