"""Questions asked as a user (``user_groups`` from a data file) see only that user's documents, whatever
the group names hold."""

from __future__ import annotations

import pytest

from ragline.answer.pipeline import RAGPipeline, build_reader
from ragline.corpora import Question
from ragline.errors import InputError
from ragline.eval.qa import QAQuestion, evaluate_answers
from ragline.eval.typed import document_ranking, hit_by_type
from ragline.index import Index, IndexSettings
from ragline.types import Document

SECRET = "E-4471"
HOSTILE = ["all] or acl in [hr", "x) or (acl = hr", 'all", "hr', "hr ", "not", "[hr]"]


@pytest.fixture(scope="module")
def index() -> Index:
    index = Index.create(None, IndexSettings())
    index.add(
        [
            Document("salary", f"The approval code for the executive salary is {SECRET}.", "Salary", {"acl": ["hr"]}),
            Document("travel", "The approval code for travel is the trip number.", "Travel", {"acl": ["all"]}),
            Document("desk", "The approval code for a desk is D-1.", "Desk", {"acl": ['o"neil']}),
        ]
    )
    index.commit()
    return index


QUESTION = "What is the approval code for the executive salary?"


def qa_question(groups: list[str] | None) -> QAQuestion:
    record = {"id": "q1", "question": QUESTION, "answers": [SECRET], "supporting_ids": ["salary"]}
    return QAQuestion.from_record({**record, "user_groups": groups} if groups is not None else record)


@pytest.mark.parametrize("group", HOSTILE)
def test_qa_questions_with_hostile_groups_see_no_hr_document(index: Index, group: str) -> None:
    pipeline = RAGPipeline(index, build_reader("extractive"), retriever="bm25", k=3)
    _, grades = evaluate_answers(pipeline, [qa_question([group, "all"])])
    assert grades[0].answer_in_context is False and not grades[0].answer_match


def test_qa_groups_none_and_empty(index: Index) -> None:
    pipeline = RAGPipeline(index, build_reader("extractive"), retriever="bm25", k=3)
    _, grades = evaluate_answers(pipeline, [qa_question(None), qa_question([]), qa_question(["hr"])])
    assert [g.answer_in_context for g in grades] == [True, False, True]  # no key: no restriction; []: nothing


@pytest.mark.parametrize("groups", ["hr", [2024], {"hr": 1}])
def test_qa_user_groups_must_be_a_list_of_names(groups: object) -> None:
    with pytest.raises(InputError, match="user_groups"):
        QAQuestion.from_record({"id": "q1", "question": "?", "answers": ["a"], "user_groups": groups})


@pytest.mark.parametrize("group", HOSTILE)
def test_typed_questions_with_hostile_groups_see_no_hr_document(index: Index, group: str) -> None:
    from ragline.retrieve.registry import build_retriever

    retriever = build_retriever("bm25", index)
    question = Question("q1", QUESTION, "permission", SECRET, user_groups=[group, "all"], expected_abstain=True,
                        forbidden_doc_ids=["salary"])  # fmt: skip
    assert "salary" not in document_ranking(retriever, question, 10)
    assert hit_by_type(retriever, [question])["all"]["leaks"] == 0
    exact = Question("q2", "approval code desk", "literal", "D-1", gold_doc_ids=["desk"], user_groups=['o"neil'])
    assert document_ranking(retriever, exact, 10) == ["desk"]
