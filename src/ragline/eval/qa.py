"""Answer evaluation over a questions file: retrieve, read, grade, summarize (``ragline eval --reader``).

Questions come from a dataset's ``questions.jsonl`` (SQuAD 2.0 subset, HotpotQA, Natural Questions,
exported Orrin or countries worlds): ``question``, ``answers``, ``supporting_ids`` (gold documents), and,
when present, ``is_impossible`` / ``expected_abstain``, ``type``, ``user_groups`` (asked as that user:
retrieval sees only documents whose ``acl`` holds one of the groups; an empty list sees nothing, no key
means no restriction), ``context_ids`` (or SQuAD's one ``context_id``: the passages given with the
question, HotpotQA's distractor setting) and ``distractor_answers`` (planted wrong answers, such as a
counterfactual passage's: an answer giving one is counted as *misled*, besides being wrong).

``answers`` holds strings, or lists of alias strings (Natural Questions, TriviaQA: ``[["JFK", "John
F. Kennedy"], ...]``): they are flattened, and a prediction matching any alias matches. A question with
no answers is unanswerable: abstaining is right. Where a full run would take hours (an LLM on 1,400
questions), ``sample`` draws that many answerable and that many unanswerable questions with a fixed
seed (on a set with no unanswerable question, HotpotQA or NQ, that many questions); the readers'
caches make interrupted runs resume.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ragline.answer.context import Context, document_id
from ragline.answer.judge import SupportJudge
from ragline.answer.pipeline import RAGPipeline
from ragline.errors import InputError
from ragline.eval.answers import AnswerGrade, MatchMode, answer_matches, grade_question, summarize
from ragline.index.filters import Compare, Node, acl_filter, restrict
from ragline.progress import track
from ragline.types import Answer


@dataclass
class QAQuestion:
    """The fields ``grade_question`` reads, from one ``questions.jsonl`` record."""

    id: str
    text: str
    answers: list[str]
    gold_doc_ids: list[str]
    expected_abstain: bool
    type: str
    user_groups: list[str] | None = None
    distractor_answers: list[str] = field(default_factory=list)
    context_ids: list[str] | None = None  # the question's own passages (None: it has none)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> QAQuestion:
        qid = record.get("id")
        answers = _aliases(record.get("answers"), qid, "answers")
        impossible = bool(record.get("is_impossible") or record.get("expected_abstain") or not answers)
        qtype = record.get("type") or ("unanswerable" if impossible else "answerable")
        groups = record.get("user_groups")
        if groups is not None and not (isinstance(groups, list) and all(isinstance(g, str) for g in groups)):
            raise InputError(
                f"question {qid!r}: user_groups",
                f'must be a list of group names such as ["hr", "all"], got {groups!r:.80}',
            )
        return cls(
            str(record["id"]),
            record["question"],
            [] if impossible else answers,
            [str(d) for d in record.get("supporting_ids") or []],
            impossible,
            qtype,
            groups,
            _aliases(record.get("distractor_answers"), qid, "distractor_answers"),
            _context_ids(record, qid),
        )

    def context_filter(self) -> Node | None:
        """Retrieval restricted to the question's own passages (None: it has none)."""
        return None if self.context_ids is None else Compare("doc_id", "in", tuple(self.context_ids))


def _aliases(value: Any, qid: Any, key: str) -> list[str]:
    """``answers`` as a flat list of non-empty strings: each item a string or a list of alias strings."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"question {qid!r}: {key}", f'must be a list such as ["Paris"], got {value!r:.80}')
    flat: list[str] = []
    for item in value:
        aliases = item if isinstance(item, list) else [item]
        if not all(isinstance(a, str) for a in aliases):
            raise InputError(
                f"question {qid!r}: {key}",
                f'items must be strings or lists of alias strings such as ["JFK", "John F. Kennedy"], got {item!r:.80}',
            )
        flat.extend(a for a in aliases if a and a not in flat)
    return flat


def _context_ids(record: dict[str, Any], qid: Any) -> list[str] | None:
    if "context_ids" in record:
        ids = record["context_ids"]
        if not (isinstance(ids, list) and all(isinstance(i, str) for i in ids)):
            raise InputError(f"question {qid!r}: context_ids", f"must be a list of document ids, got {ids!r:.80}")
        return list(ids)
    single = record.get("context_id")  # SQuAD: the one paragraph the question was written on
    if single is None:
        return None
    if not isinstance(single, str):
        raise InputError(f"question {qid!r}: context_id", f"must be a document id, got {single!r:.80}")
    return [single]


def sample_questions(questions: list[QAQuestion], per_class: int | None, seed: int = 0) -> list[QAQuestion]:
    """Up to ``per_class`` answerable and ``per_class`` unanswerable questions (None: all), in file order."""
    if per_class is None:
        return questions
    rng = random.Random(seed)
    keep: set[str] = set()
    for unanswerable in (False, True):
        group = [q.id for q in questions if q.expected_abstain == unanswerable]
        keep.update(rng.sample(group, min(per_class, len(group))))
    return [q for q in questions if q.id in keep]


def missing_context_ids(questions: Iterable[QAQuestion], doc_ids: set[str]) -> dict[str, list[str]]:
    """Question id -> its ``context_ids`` that name no document of the corpus (only questions with some)."""
    missing = {q.id: [i for i in q.context_ids or [] if i not in doc_ids] for q in questions}
    return {qid: ids for qid, ids in missing.items() if ids}


_WHY = ("stage", "declined", "unsupported", "reason")


@dataclass
class QAResult:
    """One question answered and graded. ``misled``: the answer gives one of the question's planted
    ``distractor_answers`` (None: the question has none)."""

    question: QAQuestion
    answer: Answer
    context: Context
    grade: AnswerGrade
    misled: bool | None

    def to_record(self) -> dict[str, Any]:
        """One line of ``--save-answers``: the question, the answer and its grade, what was retrieved, the gold."""
        q = self.question
        return {
            "id": q.id,
            "question": q.text,
            "type": q.type,
            "answer": self.answer.text,
            "abstained": self.answer.abstained,
            "outcome": "misled" if self.misled else self.grade.outcome,
            "grade": self.grade.to_dict(),
            "citations": [
                {"n": c.n, "doc_id": c.doc_id, "chunk_id": c.chunk_id, "supported": c.supported, "judged": c.judged}
                for c in self.answer.citations
            ],
            "retrieved_ids": [document_id(hit) for hit in self.context.hits],
            "gold_ids": q.gold_doc_ids,
            "gold_answers": q.answers,
            "distractor_answers": q.distractor_answers,
            "misled": self.misled,
            "reader": self.answer.reader,
            # why a cascade answered with this stage or declined: the stages that declined, the answers it
            # declined as unsupported, the reason for an abstention
            **{key: self.answer.details[key] for key in _WHY if key in self.answer.details},
        }


def answer_questions(
    pipeline: RAGPipeline,
    questions: list[QAQuestion],
    match: MatchMode = "em",
    judge: SupportJudge | None = None,
    per_question_context: bool = False,
) -> Iterator[QAResult]:
    """Answer and grade each question in turn (a generator: a caller can save each result as it comes).

    ``per_question_context`` retrieves, for a question with ``context_ids``, among those passages only.
    """
    for q in track(questions, f"answering ({pipeline.reader.name})", total=len(questions)):
        restriction = acl_filter(q.user_groups) if q.user_groups is not None else None
        own = q.context_filter() if per_question_context else None
        answer, context = pipeline.answer(q.text, restrict(own, restriction))
        if judge is not None:
            answer = judge.judge(q.text, answer)
        grade = grade_question(q, answer, context, match=match)
        misled = None
        if q.distractor_answers:
            misled = not answer.abstained and not grade.answer_match
            misled = misled and answer_matches(answer.text, q.distractor_answers, match)
        yield QAResult(q, answer, context, grade, misled)


def summarize_results(results: Iterable[QAResult]) -> dict[str, Any]:
    """``eval.answers.summarize`` of the grades, plus the distractor counts: of the questions with
    planted wrong answers, how many answers gave one (``misled``, also by type)."""
    results = list(results)
    summary = summarize(r.grade for r in results).to_dict()
    planted = [r for r in results if r.misled is not None]
    misled = [r for r in planted if r.misled]
    summary["n_with_distractors"] = len(planted)
    summary["misled"] = len(misled)
    summary["misled_rate"] = len(misled) / len(planted) if planted else None
    by_type = Counter(r.question.type for r in misled)
    for qtype, row in summary["by_type"].items():
        row["misled"] = by_type.get(qtype, 0)
    return summary


def evaluate_answers(
    pipeline: RAGPipeline,
    questions: list[QAQuestion],
    match: MatchMode = "em",
    judge: SupportJudge | None = None,
    per_question_context: bool = False,
) -> tuple[dict[str, Any], list[AnswerGrade]]:
    """The summary (correct / wrong / abstained, by type, EM, F1, abstention, citations, misled) and each grade.

    ``judge`` also asks an LLM whether each citation supports its answer (``judge_*`` in the summary).
    """
    results = list(answer_questions(pipeline, questions, match, judge, per_question_context))
    return summarize_results(results), [r.grade for r in results]
