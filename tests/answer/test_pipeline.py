"""The answer pipeline on the Orrin Grid corpus: users' views, superseded versions, citations."""

from __future__ import annotations

import pytest

from ragline.answer.pipeline import RAGPipeline, build_reader
from ragline.answer.versions import drop_superseded
from ragline.corpora.orrin import build_orrin
from ragline.errors import ConfigError
from ragline.eval.answers import grade_question
from ragline.eval.typed import acl_filter
from ragline.index import Index
from ragline.types import Hit


@pytest.fixture(scope="module")
def orrin():
    corpus = build_orrin()
    index = Index.create(None)
    index.add(corpus.documents)
    index.commit()
    return corpus, RAGPipeline(index, build_reader("extractive"), retriever="bm25")


def test_literal_answers_cite_the_gold_document(orrin) -> None:
    corpus, pipeline = orrin
    for question in [q for q in corpus.questions if q.type == "literal"][:5]:
        answer, context = pipeline.answer(question.text, acl_filter(question))
        grade = grade_question(question, answer, context)
        assert grade.outcome == "correct", (question.text, answer.text)
        assert answer.citations and answer.citations[0].doc_id in question.gold_doc_ids


def test_a_user_without_the_group_never_sees_the_restricted_document(orrin) -> None:
    corpus, pipeline = orrin
    for question in [q for q in corpus.questions if q.expected_abstain]:
        answer, context = pipeline.answer(question.text, acl_filter(question))
        assert not {s.doc_id for s in context.sources} & set(question.forbidden_doc_ids)
        assert question.answer not in answer.text
        assert grade_question(question, answer, context).outcome == "correct"  # abstaining is right


def test_version_questions_are_answered_from_the_newest_version(orrin) -> None:
    """Never the superseded value; an answer sentence without the question's terms may abstain (support)."""
    corpus, pipeline = orrin
    outcomes = []
    for question in [q for q in corpus.questions if q.type == "version"]:
        answer, context = pipeline.answer(question.text, acl_filter(question))
        shown = {x.doc_id for x in context.sources}
        assert not any(s.hit.metadata.get("superseded_by") in shown for s in context.sources)
        outcomes.append(grade_question(question, answer, context).outcome)
        assert outcomes[-1] != "wrong", (question.text, answer.text)
    assert outcomes.count("correct") >= 0.75 * len(outcomes), outcomes


def test_drop_superseded_keeps_an_old_version_retrieved_alone() -> None:
    old = Hit("policy-2024", 1.0, 1, metadata={"superseded_by": "policy-2026"})
    new = Hit("policy-2026", 0.9, 2)
    assert [h.doc_id for h in drop_superseded([old, new])] == ["policy-2026"]
    assert [h.doc_id for h in drop_superseded([old])] == ["policy-2024"]
    assert drop_superseded([]) == []


def test_unknown_reader_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown reader"):
        build_reader("oracle")
