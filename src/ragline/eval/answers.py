"""Answer metrics: SQuAD exact match and token F1, answer-in-context, and the end-to-end outcome.

String metrics follow the official SQuAD v2.0 evaluation script (Rajpurkar et al., "Know What You
Don't Know", ACL 2018; the normalization is that of SQuAD v1.1, Rajpurkar et al., EMNLP 2016):
lowercase, drop punctuation, drop the articles a / an / the, collapse whitespace; EM and F1 are the
maximum over the gold aliases; a gold list with no non-empty answer means "no answer", and then
only an empty prediction scores 1.

The end-to-end outcome of a question is one of ``correct`` / ``wrong`` / ``abstained`` (Lecture 3,
§4), with the lecture's rule (§0.5): an answer is correct only if its string matches *and* one of
its citations (for the extractive reader: the chunk the span came from) belongs to a gold document.
A team name copied from another substation's page is wrong even when the string is right. For an
unanswerable question (no gold answer, or ``expected_abstain``) abstaining is correct and any
answer is wrong. With ``contains`` matching, a question of type ``list`` whose gold answer is a list
("pytest and hypothesis") is also matched by an answer holding every item in any order, with any
commas or conjunctions ("pytest, hypothesis"; ``gives_every_item``); EM and F1 are as above.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from ragline.answer.versions import reader_answer
from ragline.eval.citations import citation_precision, citation_recall, judge_agreement, judge_precision
from ragline.text.normalize import normalize_answer
from ragline.types import Answer

Outcome = Literal["correct", "wrong", "abstained"]
OUTCOMES: tuple[Outcome, ...] = ("correct", "wrong", "abstained")
MatchMode = Literal["em", "contains"]


# --- SQuAD string metrics ----------------------------------------------------------------------


def answer_tokens(text: str) -> list[str]:
    """The tokens EM and F1 compare: the normalized text split on whitespace."""
    return normalize_answer(text).split() if text else []


def _golds(answers: Iterable[str]) -> list[str]:
    """Gold answers that survive normalization; none means "no answer" ([""]), as in SQuAD v2.0."""
    golds = [a for a in answers if normalize_answer(a)]
    return golds or [""]


def _exact(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def _f1(prediction: str, gold: str) -> float:
    pred, ref = answer_tokens(prediction), answer_tokens(gold)
    if not pred or not ref:
        return float(pred == ref)  # both empty: a correct "no answer"
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    """1.0 when the normalized prediction equals a normalized gold answer (max over aliases)."""
    return max(_exact(prediction, gold) for gold in _golds(answers))


def f1(prediction: str, answers: Sequence[str]) -> float:
    """Token-bag F1 between prediction and gold, max over aliases ("88" vs "88 million": 0.67)."""
    return max(_f1(prediction, gold) for gold in _golds(answers))


def contains_answer(text: str, answers: Sequence[str]) -> str | None:
    """The first gold answer whose normalized tokens occur contiguously in ``text``, else None.

    Whole tokens only: "60" is in "within 60 days" but not in "1600".
    """
    haystack = f" {normalize_answer(text)} "
    for gold in answers:
        needle = normalize_answer(gold)
        if needle and f" {needle} " in haystack:
            return gold
    return None


_LIST_SEPARATOR = re.compile(r"\s*(?:,|;)\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", re.IGNORECASE)


def gives_every_item(text: str, gold: str) -> bool:
    """Does ``text`` hold every item of the gold list ``gold``, in any order and with any conjunction?
    ("pytest, hypothesis" gives "pytest and hypothesis".) A gold answer of one item is not a list: False."""
    items = [item for item in _LIST_SEPARATOR.split(gold) if normalize_answer(item)]
    return len(items) > 1 and all(contains_answer(text, [item]) is not None for item in items)


def answer_in_context(answers: Sequence[str], context: Any) -> bool:
    """Is a gold answer in the context the reader saw? (the ceiling a reader cannot pass, Lecture 3, §4).

    ``context`` is a string or anything with a ``text`` attribute, such as ``ragline.answer.Context``.
    """
    return contains_answer(getattr(context, "text", context) or "", answers) is not None


def answer_matches(
    prediction: str, answers: Sequence[str], mode: MatchMode = "em", distractors: Sequence[str] = ()
) -> bool:
    """Does the prediction give a gold answer?

    ``em``: SQuAD exact match, right for span readers. ``contains``: a gold answer occurs in the
    prediction, for readers that answer in a sentence ("The cap is $70 per person."); an answer that
    also states a known wrong value (``distractors``: the superseded value, the planted claim) is not a
    match, so hedging between the right and the wrong value does not count.
    """
    if mode == "em":
        return exact_match(prediction, answers) == 1.0 and bool(normalize_answer(prediction))
    if mode != "contains":
        raise ValueError(f"unknown match mode {mode!r}; choose 'em' or 'contains'")
    gold = contains_answer(prediction, answers)
    if gold is None:
        return False
    inside_gold = f" {normalize_answer(gold)} "
    wrong = [d for d in distractors if normalize_answer(d) and f" {normalize_answer(d)} " not in inside_gold]
    return contains_answer(prediction, wrong) is None


# --- one question ------------------------------------------------------------------------------


@dataclass(slots=True)
class AnswerGrade:
    """How one answer fares. ``em`` / ``f1`` follow SQuAD v2.0 (abstaining on "no answer" scores 1)."""

    qid: str
    qtype: str
    answerable: bool
    outcome: Outcome
    em: float
    f1: float
    answer_match: bool  # the string is right, whatever its source
    source_match: bool | None  # a citation is in a gold document (None: no gold documents to check)
    answer_in_context: bool | None = None  # None: no context given
    citation_precision: float | None = None  # None: undefined (abstained, or no citations)
    citation_recall: float | None = None  # None: undefined (abstained, or no supporting source in context)
    judge_precision: float | None = None  # share of citations an LLM judge accepted (None: no judge)
    judge_agreement: float | None = None  # share of citations where the judge and the lexical check agree
    judge_undecided: int = 0  # citations whose judge reply was neither yes nor no
    leaked: bool = False  # unanswerable question whose restricted answer appears in the output

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def grade_answer(
    answer: Answer,
    answers: Sequence[str],
    gold_doc_ids: Sequence[str] = (),
    *,
    expected_abstain: bool = False,
    context: Any = None,
    match: MatchMode = "em",
    distractors: Sequence[str] = (),
    qid: str = "",
    qtype: str = "",
) -> AnswerGrade:
    """Grade ``answer`` against gold ``answers`` and ``gold_doc_ids`` (Lecture 3, §0.5 and §4).

    ``context`` (a ``ragline.answer.Context``) adds answer-in-context and citation recall. Without
    gold documents the source rule cannot be applied and only the string decides.
    """
    answer = reader_answer(answer)  # a conflict note names the other value on purpose: grade the reader's answer
    answerable = not expected_abstain and any(normalize_answer(a) for a in answers)
    text = "" if answer.abstained else answer.text
    grade = AnswerGrade(
        qid=qid,
        qtype=qtype,
        answerable=answerable,
        outcome="abstained",
        em=exact_match(text, answers if answerable else []),
        f1=f1(text, answers if answerable else []),
        answer_match=False,
        source_match=None,
    )
    if context is not None and answerable:
        grade.answer_in_context = answer_in_context(answers, context)
    if not answer.abstained:
        _grade_citations(grade, answer, context)
    if not answerable:
        grade.outcome = "correct" if answer.abstained else "wrong"
        grade.leaked = expected_abstain and contains_answer(answer.text, answers) is not None
        return grade
    if answer.abstained:
        return grade
    grade.answer_match = answer_matches(text, answers, match, distractors)
    if not grade.answer_match and match == "contains" and qtype == "list" and not distractors:
        grade.answer_match = any(gives_every_item(text, gold) for gold in answers)
    if gold_doc_ids:
        gold = set(gold_doc_ids)
        grade.source_match = any(c.doc_id in gold for c in answer.citations)
    grade.outcome = "correct" if grade.answer_match and grade.source_match is not False else "wrong"
    return grade


def _grade_citations(grade: AnswerGrade, answer: Answer, context: Any) -> None:
    grade.citation_precision = citation_precision(answer)
    grade.judge_precision, grade.judge_agreement = judge_precision(answer), judge_agreement(answer)
    if answer.details.get("judge"):  # set by ragline.eval.qa when an LLM judge checked the citations
        grade.judge_undecided = sum(c.judged is None for c in answer.citations)
    if context is not None:
        grade.citation_recall = citation_recall(answer, context)


def match_for(reader: str) -> MatchMode:
    """The match mode a reader's answers are graded with: ``em`` for span readers (``extractive``,
    ``span``), ``contains`` for readers that answer in a sentence (an LLM, the agent)."""
    return "em" if reader.split(":")[0] in ("extractive", "span") else "contains"


_SENTENCE_FINAL = tuple(".!?。！？:;)]\"'`”’")


def grade_reason(grade: AnswerGrade, answer: Answer, context: Any = None) -> str:
    """Why an answer got its outcome, in a few words (``make demo``'s grade column).

    ``correct``, ``declined`` (a right abstention), ``abstained`` (on an answerable question), or why
    it is wrong: ``answered, should decline``; ``cut`` (the wrong string ends where a source's text
    ends mid-sentence: the reader copied a chunk boundary); ``wrong value``; ``uncited`` (the right
    value with no citation); ``wrong source`` (the right value cited from no gold document).
    """
    if grade.outcome == "correct":
        return "declined" if answer.abstained else "correct"
    if grade.outcome == "abstained":
        return "abstained"
    if not grade.answerable:
        return "answered, should decline"
    if not grade.answer_match:
        return "cut" if _copies_a_cut(reader_answer(answer).text, context) else "wrong value"
    return "uncited" if not answer.citations else "wrong source"


def _copies_a_cut(text: str, context: Any) -> bool:
    """Does ``text`` end as a source ends, where that source's text stops mid-sentence?"""
    tail = answer_tokens(text)[-3:]
    for source in getattr(context, "sources", None) or []:
        body = source.text.rstrip()
        if tail and body and not body.endswith(_SENTENCE_FINAL) and answer_tokens(body)[-len(tail) :] == tail:
            return True
    return False


def grade_question(question: Any, answer: Answer, context: Any = None, match: MatchMode = "em") -> AnswerGrade:
    """``grade_answer`` with the gold fields of a question (``ragline.corpora.Question`` or alike).

    Reads ``answers`` (else ``answer``), ``gold_doc_ids``, ``expected_abstain``, ``distractor_answers``,
    ``id`` and ``type`` when present.
    """
    answers = getattr(question, "answers", None)
    if answers is None:
        single = getattr(question, "answer", "")
        answers = [single] if single else []
    return grade_answer(
        answer,
        list(answers),
        list(getattr(question, "gold_doc_ids", []) or []),
        expected_abstain=bool(getattr(question, "expected_abstain", False)),
        context=context,
        match=match,
        distractors=list(getattr(question, "distractor_answers", []) or []),
        qid=str(getattr(question, "id", "")),
        qtype=str(getattr(question, "type", "")),
    )


# --- a set of questions -------------------------------------------------------------------------


@dataclass(slots=True)
class AnswerSummary:
    """Aggregates of a list of grades: the correct / wrong / abstained table and the means behind it.

    ``em`` / ``f1`` / ``answer_in_context`` average answerable questions only; ``abstention_rate``
    is the share of unanswerable questions the reader declined (higher is better); citation means
    skip the undefined values.
    """

    n: int
    counts: dict[str, int]
    rates: dict[str, float]
    by_type: dict[str, dict[str, float]]
    n_answerable: int
    n_unanswerable: int
    abstention_rate: float | None
    em: float | None
    f1: float | None
    answer_in_context: float | None
    citation_precision: float | None
    citation_recall: float | None
    leaks: int = 0
    judge_precision: float | None = None  # with an LLM judge (``ragline eval --judge``), else None
    judge_agreement: float | None = None
    judge_undecided: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _mean(values: Iterable[float | bool | None]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _table(grades: Sequence[AnswerGrade]) -> dict[str, float]:
    counts = Counter(g.outcome for g in grades)
    row: dict[str, float] = {o: counts.get(o, 0) for o in OUTCOMES}
    row.update({f"{o}_rate": counts.get(o, 0) / len(grades) if grades else 0.0 for o in OUTCOMES})
    row["n"] = len(grades)
    return row


def summarize(grades: Iterable[AnswerGrade]) -> AnswerSummary:
    """Counts and rates overall and by question type, abstention on unanswerable, EM/F1, citations."""
    grades = list(grades)
    answerable = [g for g in grades if g.answerable]
    unanswerable = [g for g in grades if not g.answerable]
    per_type: dict[str, list[AnswerGrade]] = defaultdict(list)
    for g in grades:
        per_type[g.qtype].append(g)
    total = _table(grades)
    return AnswerSummary(
        n=len(grades),
        counts={o: int(total[o]) for o in OUTCOMES},
        rates={o: total[f"{o}_rate"] for o in OUTCOMES},
        by_type={qtype: _table(rows) for qtype, rows in per_type.items()},
        n_answerable=len(answerable),
        n_unanswerable=len(unanswerable),
        abstention_rate=_mean(g.outcome == "correct" for g in unanswerable),
        em=_mean(g.em for g in answerable),
        f1=_mean(g.f1 for g in answerable),
        answer_in_context=_mean(g.answer_in_context for g in answerable),
        citation_precision=_mean(g.citation_precision for g in grades),
        citation_recall=_mean(g.citation_recall for g in grades),
        leaks=sum(g.leaked for g in grades),
        judge_precision=_mean(g.judge_precision for g in grades),
        judge_agreement=_mean(g.judge_agreement for g in grades),
        judge_undecided=sum(g.judge_undecided for g in grades),
    )
