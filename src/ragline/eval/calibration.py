"""Calibration of the extractive reader on training data: its abstention threshold and its support check.

``calibrate_threshold`` sets the threshold below which the reader abstains, the way the official
SQuAD v2.0 script's ``find_best_thresh`` does for the no-answer probability. ``calibrate_support``
sets the thresholds and policy of the support check (``ragline.answer.support``). Both score the
reader's answers with the SQuAD metrics of ``ragline.eval.answers``. Never calibrate on the test
questions.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ragline.answer.context import Context, document_id
from ragline.answer.extractive import Candidate, ExtractiveReader
from ragline.answer.support import SupportCheck
from ragline.eval.answers import exact_match, f1
from ragline.text.normalize import normalize_answer
from ragline.types import Hit


@dataclass(slots=True)
class CalibrationExample:
    """A training question: its contexts, gold answers (empty: unanswerable) and gold documents."""

    question: str
    contexts: Context | Sequence[Hit]
    answers: Sequence[str] = ()
    gold_doc_ids: Sequence[str] = ()


@dataclass(slots=True)
class Calibration:
    """The chosen threshold, its outcome counts, and the whole sweep (threshold, correct, wrong, abstained)."""

    threshold: float
    objective: str
    value: float
    correct: int
    wrong: int
    abstained: int
    curve: list[tuple[float, int, int, int]] = field(default_factory=list)


def calibrate_threshold(
    examples: Iterable[CalibrationExample],
    reader: ExtractiveReader | None = None,
    objective: Literal["net", "f1"] = "net",
) -> Calibration:
    """The abstention threshold that maximizes ``objective`` on TRAINING examples.

    ``net``: correct - wrong, where correct needs the right string from a gold document and, on an
    unanswerable question, abstaining is correct (Lecture 3, §4: a wrong answer costs as much as a
    right one earns). ``f1``: mean SQuAD v2.0 F1 (no answer scores 1 on unanswerable questions),
    the objective of the official script's ``find_best_thresh``. Thresholds are the midpoints
    between consecutive best-candidate scores; ties go to fewer wrong answers. Never calibrate on
    the test questions.
    """
    reader = reader or ExtractiveReader()
    outcomes = [_best_outcome(reader, example) for example in examples]
    scores = sorted({s for s, _, _ in outcomes if s is not None})
    cuts = [0.0] + [(a + b) / 2 for a, b in zip(scores, scores[1:])] + ([scores[-1] + 0.01] if scores else [])
    best: Calibration | None = None
    curve = []
    for cut in cuts:
        correct = wrong = abstained = 0
        total_f1 = 0.0
        for score, answerable, (is_right, pred_f1) in outcomes:
            answered = score is not None and score >= cut
            if answerable and answered:
                correct, wrong = correct + is_right, wrong + (not is_right)
                total_f1 += pred_f1
            elif answerable:
                abstained += 1
            elif answered:
                wrong += 1
            else:
                correct += 1
                total_f1 += 1.0
        value = correct - wrong if objective == "net" else total_f1 / max(len(outcomes), 1)
        curve.append((round(cut, 6), correct, wrong, abstained))
        if best is None or (value, -wrong) > (best.value, -best.wrong):
            best = Calibration(round(cut, 6), objective, value, correct, wrong, abstained)
    assert best is not None
    best.curve = curve
    return best


def _best_outcome(
    reader: ExtractiveReader, example: CalibrationExample
) -> tuple[float | None, bool, tuple[bool, float]]:
    """(best score or None, answerable, (right string from a gold doc, F1)) of one example."""
    answerable = any(normalize_answer(a) for a in example.answers)
    candidate = reader.best(example.question, example.contexts)
    if candidate is None:
        return None, answerable, (False, 0.0)
    if not answerable:
        return candidate.score, False, (False, 0.0)
    right = exact_match(candidate.text, list(example.answers)) == 1.0
    if example.gold_doc_ids:
        right = right and document_id(candidate.hit) in set(example.gold_doc_ids)
    return candidate.score, True, (right, f1(candidate.text, list(example.answers)))


@dataclass(slots=True)
class SupportCalibration:
    """The chosen support check and policy, its objective per set, and the whole grid (best first)."""

    support: str  # the reader's policy: "best" (abstain when the best span fails) or "next"
    check: SupportCheck
    objective: float  # mean over sets of (correct - wrong) / n
    per_set: dict[str, float]
    without_check: dict[str, float]  # the same objective for the reader without the check
    grid: list[dict[str, Any]] = field(default_factory=list)


_COVERAGE_STEPS = [x / 20 for x in range(21)]  # 0.05 apart: 3/4 and 4/5 of a question's terms are different cuts


def calibrate_support(
    sets: Mapping[str, Sequence[CalibrationExample]], reader: ExtractiveReader | None = None
) -> SupportCalibration:
    """The support thresholds and policy that maximize the mean over ``sets`` of (correct - wrong) / n.

    Correct as in ``calibrate_threshold`` (right string from a gold document; abstaining on an
    unanswerable question). Every candidate at or above the reader's threshold is measured once (the
    coverage and entity and literal shares of its windows); each grid point then replays the reader's
    choice. Each set weighs the same, whatever its size, so no corpus dominates. Ties go to the
    stricter check, then to abstaining. Calibration data only: never the reported questions.
    """
    reader = reader or ExtractiveReader()
    check = reader.support_check
    measured: dict[str, list[tuple[bool, list[tuple[bool, list[tuple[float, float | None, float | None]]]]]]] = {}
    for name, examples in sets.items():
        rows = []
        for example in examples:
            candidates = []
            for c in reader.candidates(example.question, example.contexts):
                if c.score < reader.threshold:
                    break
                title = f"{c.hit.title} {c.hit.metadata.get('section', '')}".strip()
                windows = check.windows(example.question, c.text, c.hit.text, title, at=c.start)
                candidates.append((_is_right(c, example), [w[:3] for w in windows]))
            rows.append((any(normalize_answer(a) for a in example.answers), candidates))
        measured[name] = rows
    grid = []
    steps = _COVERAGE_STEPS
    for policy, t, te, tl in itertools.product(("best", "next"), steps[6:], steps[::2], steps[::2]):
        if te > t or tl > t:
            continue  # an entity or literal rule stricter than the term rule would never decide
        trial = SupportCheck(t, te, tl, check.neighbours, check.analyzer)
        per_set = {name: _net(rows, trial, policy) for name, rows in measured.items()}
        grid.append(
            {
                "support": policy,
                "min_coverage": t,
                "entity_coverage": te,
                "literal_coverage": tl,
                "objective": sum(per_set.values()) / max(len(per_set), 1),
                "per_set": per_set,
            }
        )
    grid.sort(
        key=lambda g: (
            round(g["objective"], 9),
            g["min_coverage"],
            g["entity_coverage"],
            g["literal_coverage"],
            g["support"] == "best",
        ),
        reverse=True,
    )
    best = grid[0]
    chosen = SupportCheck(
        best["min_coverage"], best["entity_coverage"], best["literal_coverage"], check.neighbours, check.analyzer
    )
    off = {name: _net(rows, None, "off") for name, rows in measured.items()}
    return SupportCalibration(best["support"], chosen, best["objective"], best["per_set"], off, grid)


def _is_right(candidate: Candidate, example: CalibrationExample) -> bool:
    """The right string from a gold document (an unanswerable question has no right answer)."""
    if not any(normalize_answer(a) for a in example.answers):
        return False
    right = exact_match(candidate.text, list(example.answers)) == 1.0
    return right and (not example.gold_doc_ids or document_id(candidate.hit) in set(example.gold_doc_ids))


def _net(rows: list, check: SupportCheck | None, policy: str) -> float:
    """(correct - wrong) / n when the reader answers as ``policy`` says with ``check`` (None: no check)."""
    correct = wrong = 0
    for answerable, candidates in rows:
        passes = [check is None or any(check.decide(*w).supported for w in ws) for _, ws in candidates]
        if policy == "next":
            chosen = next((right for (right, _), ok in zip(candidates, passes) if ok), None)
        else:
            chosen = candidates[0][0] if candidates and passes[0] else None
        if chosen is None:
            correct += not answerable
        else:
            correct, wrong = correct + chosen, wrong + (not chosen)
    return (correct - wrong) / max(len(rows), 1)
