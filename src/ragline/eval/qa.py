"""Answer evaluation over a questions file: retrieve, read, grade, summarize (``ragline eval --reader``).

Questions come from a dataset's ``questions.jsonl`` (SQuAD 2.0 subset, HotpotQA, exported Orrin or
countries worlds): ``question``, ``answers``, ``supporting_ids`` (gold documents), and, when present,
``is_impossible`` / ``expected_abstain``, ``type`` and ``user_groups`` (asked as that user: retrieval sees
only documents whose ``acl`` holds one of the groups; an empty list sees nothing, no key means no restriction).
A question with no answers is unanswerable: abstaining is right. Where a full run would take hours
(an LLM on 1,400 questions), ``sample`` draws that many answerable and that many unanswerable
questions with a fixed seed; the readers' caches make interrupted runs resume.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ragline.answer.judge import SupportJudge
from ragline.answer.pipeline import RAGPipeline
from ragline.errors import InputError
from ragline.eval.answers import AnswerGrade, MatchMode, grade_question, summarize
from ragline.index.filters import acl_filter
from ragline.progress import track


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

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> QAQuestion:
        answers = [a for a in record.get("answers") or [] if a]
        impossible = bool(record.get("is_impossible") or record.get("expected_abstain") or not answers)
        qtype = record.get("type") or ("unanswerable" if impossible else "answerable")
        groups = record.get("user_groups")
        if groups is not None and not (isinstance(groups, list) and all(isinstance(g, str) for g in groups)):
            raise InputError(f"question {record.get('id')!r}: user_groups",
                             f'must be a list of group names such as ["hr", "all"], got {groups!r:.80}')  # fmt: skip
        return cls(str(record["id"]), record["question"], [] if impossible else answers,
                   [str(d) for d in record.get("supporting_ids") or []], impossible, qtype, groups)  # fmt: skip


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


def evaluate_answers(
    pipeline: RAGPipeline, questions: list[QAQuestion], match: MatchMode = "em", judge: SupportJudge | None = None
) -> tuple[dict[str, Any], list[AnswerGrade]]:
    """The summary (correct / wrong / abstained, by type, EM, F1, abstention, citations) and each grade.

    ``judge`` also asks an LLM whether each citation supports its answer (``judge_*`` in the summary).
    """
    grades = []
    for q in track(questions, f"answering ({pipeline.reader.name})", total=len(questions)):
        flt = acl_filter(q.user_groups) if q.user_groups is not None else None
        answer, context = pipeline.answer(q.text, flt)
        if judge is not None:
            answer = judge.judge(q.text, answer)
        grades.append(grade_question(q, answer, context, match=match))
    return summarize(grades).to_dict(), grades
