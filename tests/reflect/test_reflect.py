"""The reflection readers (Self-RAG, CRAG, routed) and their critics on the Orrin worlds' BM25 indexes.

The critics are the checked-in ``critics.json`` (trained on the training worlds); the facts below are read on
the *evaluation* world, whose questions and closed-book half none of them saw.
"""

from __future__ import annotations

import json

import pytest

from ragline.components import build, names
from ragline.corpora.closed_book import CLOSED_BOOK, closed_book_questions, orrin_closed_book
from ragline.corpora.orrin import DEFAULT_SEED, TRAIN_SEED, build_orrin
from ragline.errors import InputError
from ragline.eval.answers import grade_question
from ragline.reflect.critics import LogisticCritic, load_critics
from ragline.reflect.features import arithmetic_expression
from ragline.reflect.worlds import orrin_world, user_filter

pytestmark = pytest.mark.slow  # builds (once, cached) the BM25 index of a world


@pytest.fixture(scope="module")
def world():
    return orrin_world(DEFAULT_SEED)


def question(world, qid):
    return next(q for q in world.questions if q.id == qid)


def test_closed_book_questions_are_a_separate_addition_with_disjoint_halves() -> None:
    """Planted fault checked: drawing both halves from the same rows makes the halves share questions."""
    train, evaluation = orrin_closed_book(TRAIN_SEED), orrin_closed_book(DEFAULT_SEED)
    assert {q.text for q in train}.isdisjoint({q.text for q in evaluation if not arithmetic_expression(q.text)})
    assert orrin_closed_book(TRAIN_SEED) == train  # deterministic
    assert all(q.type == CLOSED_BOOK and not q.gold_doc_ids for q in train + evaluation)
    assert all(q.id not in {c.id for c in train} for q in build_orrin(TRAIN_SEED).questions)


def test_arithmetic_questions_hold_their_value_and_parse() -> None:
    """Planted fault checked: mapping "minus" to "+" makes the generated answers disagree with the calculator."""
    from ragline.agent.calculator import calculate

    arithmetic = [q for q in closed_book_questions(7, evaluation=True) if arithmetic_expression(q.text)]
    assert arithmetic
    for q in arithmetic:
        expression = arithmetic_expression(q.text)
        assert expression is not None and str(calculate(expression)) == q.answer
    assert arithmetic_expression("What is the capital of France?") is None
    assert arithmetic_expression("What is the cap per person?") is None


def test_critic_file_errors_name_the_file_and_field(tmp_path) -> None:
    bad = tmp_path / "critics.json"
    bad.write_text(json.dumps({"retrieve": {"name": "retrieve"}}), encoding="utf-8")
    with pytest.raises(InputError, match="relevance"):
        load_critics(str(bad))
    assert set(load_critics()) == {"retrieve", "relevance", "retrieval", "route"}  # the built-in file loads
    with pytest.raises(InputError, match="features"):
        LogisticCritic.from_dict({"name": "x"}, "critics.json: x")


def test_readers_are_registered() -> None:
    assert {"self-rag", "crag", "routed"} <= set(names("reader"))
    assert "learned" in names("grader")


def test_retrieve_critic_separates_closed_book_from_corpus_questions(world) -> None:
    """On the evaluation world every closed-book question scores below every corpus question but a few.

    Planted fault checked: a critic trained with the labels swapped scores them the other way round."""
    from ragline.reflect.critics import Critics

    critics = Critics(world.index)
    closed = [critics.needs_retrieval(q.text) for q in world.questions if q.type == CLOSED_BOOK]
    corpus = [critics.needs_retrieval(q.text) for q in world.questions if q.type != CLOSED_BOOK]
    assert sum(p < 0.5 for p in closed) >= 0.6 * len(closed)
    assert sum(p >= 0.5 for p in corpus) >= 0.95 * len(corpus)


def test_self_rag_answers_arithmetic_without_retrieving_and_retrieves_for_corpus_questions(world) -> None:
    """Planted fault checked: a threshold of 0 (always retrieve) retrieves for the arithmetic question."""
    reader = build("reader", {"name": "self-rag", "segments": True}, index=world.index)
    arithmetic = next(q for q in world.questions if q.type == CLOSED_BOOK and arithmetic_expression(q.text))
    answer, context = reader.answer(arithmetic.text)
    assert answer.details["cost"]["retrievals"] == 0 and not context.sources
    assert answer.text == arithmetic.answer
    literal = question(world, "literal-001")
    answer, context = reader.answer(literal.text, user_filter(literal))
    assert answer.details["cost"]["retrievals"] >= 1 and answer.details["self_rag"]["decision"] == "retrieve"
    assert grade_question(literal, answer, context).outcome == "correct"
    drafts = answer.details["self_rag"]["drafts"]
    assert max(d.get("score", 0) for d in drafts) == max(d.get("score", -1) for d in drafts if d["draft"] is not None)


def test_self_rag_answers_a_multi_hop_question_segment_by_segment(world) -> None:
    """Planted fault checked: without ``segments`` the same question is abstained on (no passage holds both hops)."""
    multihop = question(world, "multihop-001")
    reader = build("reader", {"name": "self-rag", "segments": True}, index=world.index)
    answer, context = reader.answer(multihop.text, user_filter(multihop))
    assert len(answer.details["segments"]) == 2
    assert grade_question(multihop, answer, context).outcome == "correct"


def test_crag_refines_a_good_retrieval_and_abstains_when_nothing_passes(world) -> None:
    """Planted fault checked: skipping the rewritten wider search outside the correct band (one retrieval)."""
    reader = build("reader", {"name": "crag", "strip_threshold": 0.3}, index=world.index)
    literal = question(world, "literal-001")
    answer, context = reader.answer(literal.text, user_filter(literal))
    info = answer.details["crag"]
    assert info["band"] == "correct" and info["internal"]["strips_kept"] < info["internal"]["strips"]
    assert grade_question(literal, answer, context).outcome == "correct"
    bands = []
    for q in world.questions:
        if q.type == CLOSED_BOOK and not arithmetic_expression(q.text):  # the corpus holds no answer
            answer, _ = reader.answer(q.text)
            assert answer.abstained, q.text
            assert answer.details["cost"]["retrievals"] == 2  # the first search and the wider one
            bands.append(answer.details["crag"]["band"])
    assert "correct" not in bands and "incorrect" in bands


def test_readers_retrieve_as_the_caller(world) -> None:
    """A permission question asked by a user outside HR: no reader's answer holds the restricted value.

    Planted fault checked: dropping the filter from ``RetrievingReader.search`` leaks the pay band."""
    permission = next(q for q in world.questions if q.type == "permission" and q.expected_abstain)
    for name in ("self-rag", "crag", "routed"):
        reader = build("reader", {"name": name}, index=world.index)
        answer, context = reader.answer(permission.text, user_filter(permission))
        assert not grade_question(permission, answer, context).leaked, name
        assert all("hr" not in str(s.hit.metadata.get("acl", "")).lower() for s in context.sources), name


def test_router_sends_each_kind_of_question_down_its_route(world) -> None:
    """Planted fault checked: taking the least probable route sends the multi-hop question to no retrieval."""
    reader = build("reader", {"name": "routed"}, index=world.index)
    arithmetic = next(q for q in world.questions if q.type == CLOSED_BOOK and arithmetic_expression(q.text))
    routes = {}
    for q in (arithmetic, question(world, "multihop-001"), question(world, "literal-001")):
        answer, _ = reader.answer(q.text, user_filter(q))
        routes[q.type] = answer.details["route"]["route"]
    assert routes == {CLOSED_BOOK: "none", "multihop": "agent", "literal": "single"}


def test_an_unknown_reader_setting_is_a_config_error_naming_the_accepted_ones(world) -> None:
    """Planted fault checked: passing the settings through unchecked raises a TypeError instead."""
    from ragline.errors import ConfigError

    for name in ("self-rag", "crag", "routed"):
        with pytest.raises(ConfigError, match="unknown setting.*typo.*it takes.*retriever"):
            build("reader", {"name": name, "typo": 1}, index=world.index)
