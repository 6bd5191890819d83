"""Answer metrics: SQuAD normalization, EM and F1 (hand-computed values), outcomes and their summary."""

from __future__ import annotations

import pytest

from ragline.answer.context import build_context
from ragline.corpora import Question
from ragline.eval.answers import (
    answer_in_context,
    answer_matches,
    contains_answer,
    exact_match,
    f1,
    grade_answer,
    grade_question,
    grade_reason,
    match_for,
    normalize_answer,
    summarize,
)
from ragline.types import Answer, Citation, Hit


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The Normans", "normans"),
        ("  an   Apple, a  pear!  ", "apple pear"),
        ("$1,500.", "1500"),
        ("E-4471", "e4471"),
        ("theory of the atom", "theory of atom"),  # "the" only as a whole word
        ("Anthem", "anthem"),
        ("", ""),
    ],
)
def test_normalize_answer_follows_the_official_script(text: str, normalized: str) -> None:
    assert normalize_answer(text) == normalized


# Lecture 12, §2.2 (code 01, demo 1), and the SQuAD paper's "the Normans" example.
@pytest.mark.parametrize(
    ("prediction", "gold", "em", "f1_value"),
    [
        ("maryelvos", "maryelvos", 1.0, 1.0),
        ("the salt museum", "salt museum", 1.0, 1.0),
        ("88 million people", "88 million", 0.0, 0.8),
        ("88", "88 million", 0.0, 2 / 3),
        ("cotton", "88 million", 0.0, 0.0),
        ("the Normans", "Normans", 1.0, 1.0),
        ("Normans, in Normandy", "the Normans", 0.0, 0.5),  # p=1/3, r=1, F1=0.5
        ("b b x", "b b c", 0.0, 2 / 3),  # bags: two b's in common, p=r=2/3
        ("b b a", "b b c", 0.0, 0.8),  # "a" is an article, dropped: p=1, r=2/3
        ("b b b", "b c", 0.0, 0.4),  # one b counts once: p=1/3, r=1/2
    ],
)
def test_em_and_f1_hand_computed(prediction: str, gold: str, em: float, f1_value: float) -> None:
    assert exact_match(prediction, [gold]) == em
    assert f1(prediction, [gold]) == pytest.approx(f1_value)


def test_scores_take_the_best_alias() -> None:
    golds = ["$1,500", "1,500 dollars"]
    assert exact_match("1500 dollars", golds) == 1.0
    assert f1("about 1,500 dollars", golds) == pytest.approx(0.8)
    assert exact_match("$15", golds) == 0.0


@pytest.mark.parametrize("golds", [[], [""], ["the", " . "]])
def test_no_answer_questions_score_only_an_empty_prediction(golds: list[str]) -> None:
    assert exact_match("", golds) == 1.0 and f1("", golds) == 1.0
    assert exact_match("Normans", golds) == 0.0 and f1("Normans", golds) == 0.0


def test_an_empty_prediction_scores_zero_on_an_answerable_question() -> None:
    assert exact_match("", ["Normans"]) == 0.0 and f1("", ["Normans"]) == 0.0


def test_contains_answer_needs_whole_tokens() -> None:
    assert contains_answer("Receipts are due within 60 days.", ["60 days"]) == "60 days"
    assert contains_answer("The budget is $1,600.", ["$60", "600"]) is None
    assert contains_answer("anything", [""]) is None


def test_answer_in_context_reads_a_context_or_a_string() -> None:
    hits = [Hit("meals#1", 1.0, 1, "Meals", "The daily cap is $70 per person.", {})]
    assert answer_in_context(["$70"], build_context(hits, budget=1000))
    assert not answer_in_context(["$75"], build_context(hits, budget=1000))
    assert answer_in_context(["the Normans"], "It was the Normans.")
    assert not answer_in_context(["$70"], build_context([]))


def test_answer_matches_modes() -> None:
    assert answer_matches("the $70", ["$70"], "em")
    assert not answer_matches("The cap is $70.", ["$70"], "em")
    assert answer_matches("The cap is $70.", ["$70"], "contains")
    assert not answer_matches("It is $70, previously $55.", ["$70"], "contains", distractors=["$55"])
    assert answer_matches("It is $1,500.", ["$1,500"], "contains", distractors=["$500"])  # inside the gold: fine
    assert not answer_matches("", [""], "em")
    with pytest.raises(ValueError, match="match mode"):
        answer_matches("x", ["x"], "f1")  # type: ignore[arg-type]


# --- outcomes ------------------------------------------------------------------------------------

GOLD_DOC = "team-grid-ops-east"
SENTENCE = "The Grid Ops East team is led by Ravi Whitcombe."


def cited(text: str, doc_id: str = GOLD_DOC, source: str = SENTENCE) -> Answer:
    return Answer(text, False, [Citation(1, doc_id, f"{doc_id}#0", text=source)], "test")


def test_right_string_from_a_gold_document_is_correct() -> None:
    grade = grade_answer(cited("Ravi Whitcombe"), ["Ravi Whitcombe"], [GOLD_DOC], qid="q1", qtype="multihop")
    assert (grade.outcome, grade.em, grade.f1, grade.answer_match, grade.source_match) == (
        "correct",
        1.0,
        1.0,
        True,
        True,
    )
    assert (grade.qid, grade.qtype, grade.answerable) == ("q1", "multihop", True)
    assert grade.citation_precision == 1.0


def test_right_string_from_another_document_is_wrong() -> None:
    answer = cited("Ravi Whitcombe", doc_id="team-grid-ops-west", source="Ravi Whitcombe visited.")
    grade = grade_answer(answer, ["Ravi Whitcombe"], [GOLD_DOC])
    assert (grade.outcome, grade.answer_match, grade.source_match, grade.em) == ("wrong", True, False, 1.0)


def test_right_string_without_citations_is_wrong_when_gold_documents_are_known() -> None:
    grade = grade_answer(Answer("Ravi Whitcombe", False, []), ["Ravi Whitcombe"], [GOLD_DOC])
    assert grade.outcome == "wrong" and grade.citation_precision is None


def test_without_gold_documents_the_string_decides() -> None:
    assert grade_answer(Answer("Normans", False), ["the Normans"]).outcome == "correct"
    assert grade_answer(Answer("Vikings", False), ["the Normans"]).outcome == "wrong"


def test_abstaining_on_an_answerable_question_is_abstained() -> None:
    grade = grade_answer(Answer("", True), ["Ravi Whitcombe"], [GOLD_DOC])
    assert (grade.outcome, grade.em, grade.f1, grade.citation_precision) == ("abstained", 0.0, 0.0, None)


@pytest.mark.parametrize(("answers", "expected_abstain"), [([], False), ([""], False), (["$93,000 to $116,000"], True)])
def test_unanswerable_questions_reward_abstaining(answers: list[str], expected_abstain: bool) -> None:
    declined = grade_answer(Answer("", True), answers, expected_abstain=expected_abstain)
    assert (declined.outcome, declined.answerable, declined.em, declined.f1) == ("correct", False, 1.0, 1.0)
    answered = grade_answer(cited("$50,000"), answers, expected_abstain=expected_abstain)
    assert (answered.outcome, answered.em, answered.leaked) == ("wrong", 0.0, False)


def test_answering_a_restricted_question_with_its_value_is_a_leak() -> None:
    answer = cited("$93,000 to $116,000", doc_id="hr-salary-bands")
    grade = grade_answer(answer, ["$93,000 to $116,000"], [], expected_abstain=True)
    assert grade.outcome == "wrong" and grade.leaked


def test_context_adds_answer_in_context_and_citation_recall() -> None:
    hits = [
        Hit("team-grid-ops-west#0", 2.0, 1, "West", "The Grid Ops West team is led by Ana Ruiz.", {}),
        Hit(f"{GOLD_DOC}#0", 1.0, 2, "East", SENTENCE, {"doc_id": GOLD_DOC}),
    ]
    context = build_context(hits, budget=1000)
    wrong_source = Answer("Ravi Whitcombe", False, [Citation(1, "team-grid-ops-west", "team-grid-ops-west#0")])
    grade = grade_answer(wrong_source, ["Ravi Whitcombe"], [GOLD_DOC], context=context)
    assert grade.answer_in_context is True and grade.citation_recall == 0.0 and grade.outcome == "wrong"
    right = Answer("Ravi Whitcombe", False, [Citation(2, GOLD_DOC, f"{GOLD_DOC}#0", text=SENTENCE)])
    grade = grade_answer(right, ["Ravi Whitcombe"], [GOLD_DOC], context=context)
    assert grade.citation_recall == 1.0 and grade.outcome == "correct"


def test_grade_question_reads_a_corpus_question() -> None:
    question = Question(
        id="version-002",
        text="How many days per week can employees work remotely?",
        type="version",
        answer="3 days",
        gold_doc_ids=["policy-remote-work-2026"],
        distractor_answers=["2 days"],
    )
    hedged = Answer("3 days (it used to be 2 days)", False, [Citation(1, "policy-remote-work-2026", "x#1")])
    assert grade_question(question, hedged, match="contains").outcome == "wrong"
    plain = Answer("Up to 3 days per week.", False, [Citation(1, "policy-remote-work-2026", "x#1")])
    assert grade_question(question, plain, match="contains").outcome == "correct"
    assert grade_question(question, plain).outcome == "wrong"  # EM by default


# --- summary ---------------------------------------------------------------------------------------


def test_summarize_counts_rates_and_means() -> None:
    grades = [
        grade_answer(cited("Ravi Whitcombe"), ["Ravi Whitcombe"], [GOLD_DOC], qtype="multihop"),
        grade_answer(cited("Ana Ruiz", source="Ana Ruiz."), ["Ravi Whitcombe"], [GOLD_DOC], qtype="multihop"),
        grade_answer(Answer("", True), ["SS-339"], ["site"], qtype="literal"),
        grade_answer(Answer("", True), ["$93,000"], expected_abstain=True, qtype="permission"),
        grade_answer(cited("$93,000", source="$93,000"), ["$93,000"], expected_abstain=True, qtype="permission"),
    ]
    summary = summarize(grades)
    assert summary.n == 5 and (summary.n_answerable, summary.n_unanswerable) == (3, 2)
    assert summary.counts == {"correct": 2, "wrong": 2, "abstained": 1}
    assert summary.rates == {"correct": 0.4, "wrong": 0.4, "abstained": 0.2}
    assert summary.by_type["multihop"]["correct"] == 1 and summary.by_type["multihop"]["wrong_rate"] == 0.5
    assert summary.by_type["permission"]["n"] == 2
    assert summary.abstention_rate == 0.5
    assert summary.em == pytest.approx(1 / 3)  # answerable only: 1, 0, 0
    assert summary.citation_precision == 1.0  # three answers with citations, all supported
    assert summary.citation_recall is None  # no context given
    assert summary.leaks == 1
    assert summary.to_dict()["counts"] == summary.counts


def test_summarize_nothing() -> None:
    summary = summarize([])
    assert summary.n == 0 and summary.counts == {"correct": 0, "wrong": 0, "abstained": 0}
    assert summary.em is None and summary.abstention_rate is None


def test_a_conflict_note_is_not_graded_as_part_of_the_answer() -> None:
    note = "Note: [2] (2024-05-01, older version) states $400; [1] (2026-02-01, current) states $650."
    cited = [Citation(1, "policy-2026", "policy-2026#0"), Citation(2, "policy-2024", "policy-2024#0")]
    answer = Answer(f"$650\n\n{note}", False, cited, "test", {"note": note, "note_citations": [2]})
    grade = grade_answer(answer, ["$650"], ["policy-2026"], match="em")
    assert (grade.outcome, grade.em) == ("correct", 1.0)


def test_the_grade_reason_says_why_an_answer_is_wrong() -> None:
    """Planted faults checked: a cut test that ignores whether the source ends mid-sentence calls the
    wrong value from a whole sentence "cut"; a reason that skips the string check calls "uncited" a wrong value."""
    cut = Hit("e-1896#0", 1.0, 1, "E-1896", "The root cause was a memory leak in the report", {"doc_id": "e-1896"})
    whole = Hit("e-2000#0", 1.0, 1, "E-2000", "The root cause was a faulty disk.", {"doc_id": "e-2000"})
    gold = ["report scheduler on web-45"]

    def why(text: str, hits: list[Hit], cites: bool = True, answers: list[str] = gold, docs=("e-1896",)) -> str:  # type: ignore[no-untyped-def]
        context = build_context(hits, budget=1000)
        citations = [Citation(1, hits[0].metadata["doc_id"], hits[0].doc_id)] if cites and text else []
        answer = Answer(text, not text, citations)
        grade = grade_answer(answer, answers, list(docs), context=context, match="contains")
        return grade_reason(grade, answer, context)

    assert why("a memory leak in the report.", [cut]) == "cut"
    assert why("a faulty disk", [whole], docs=("e-2000",)) == "wrong value"
    assert why("the report scheduler on web-45", [cut], cites=False) == "uncited"
    assert why("the report scheduler on web-45", [whole], docs=("e-1896",)) == "wrong source"
    assert why("the report scheduler on web-45", [cut]) == "correct"
    assert why("", [cut]) == "abstained"
    assert why("", [cut], answers=[]) == "declined"
    assert why("a faulty disk", [whole], answers=[]) == "answered, should decline"
    assert match_for("extractive:threshold=0.4") == "em" and match_for("llm:max_tokens=64") == "contains"


def test_a_list_answer_is_right_in_any_order_and_with_any_conjunction() -> None:
    """Type ``list`` with ``contains``: "pytest, hypothesis" gives "pytest and hypothesis"; a missing item, another
    type, or exact matching do not match, and EM/F1 are the string metrics as before."""
    gold = ["pytest and hypothesis"]
    right = grade_answer(cited("hypothesis, pytest"), gold, [GOLD_DOC], match="contains", qtype="list")
    assert right.outcome == "correct" and right.em == 0.0
    assert grade_answer(cited("pytest"), gold, [GOLD_DOC], match="contains", qtype="list").outcome == "wrong"
    assert grade_answer(cited("hypothesis, pytest"), gold, [GOLD_DOC], match="contains").outcome == "wrong"
    assert grade_answer(cited("hypothesis, pytest"), gold, [GOLD_DOC], match="em", qtype="list").outcome == "wrong"
    three = grade_answer(
        cited(".zst, .gz and .lz4, also .xz"), [".zst, .gz, .xz and .lz4"], [GOLD_DOC], match="contains", qtype="list"
    )
    assert three.outcome == "correct"
