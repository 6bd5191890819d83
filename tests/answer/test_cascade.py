"""Reader ``cascade``: stages in the given order over the same sources, the first non-abstention returned, the
stage that answered recorded, later stages built only when reached. A fake model (``llm_fakes.FakeLLM``) stands
in for the LLM stage and counts its calls."""

from __future__ import annotations

import json

import pytest

from llm_fakes import FakeLLM
from ragline.answer.cascade import CascadeReader
from ragline.answer.context import build_context
from ragline.components import build
from ragline.errors import ConfigError
from ragline.eval.answers import grade_question
from ragline.eval.qa import QAQuestion, QAResult
from ragline.types import Hit

MEALS = "Meal allowances. The daily meal limit is $70 per person. Alcohol is not reimbursed."
TRAVEL = "Economy class is booked for flights under six hours."
LITERAL = "What is the daily meal limit?"  # the rule reader answers it ($70)
PARAPHRASE = "How much may a traveller spend on food in a day?"  # the rule reader declines it


def context():
    return build_context([Hit("travel#0", 2.0, 1, "Travel", TRAVEL), Hit("meals#1", 1.0, 2, "Meals", MEALS)])


def llm_says(answer: str, sources: list[int]) -> FakeLLM:
    return FakeLLM(lambda *args: json.dumps({"answer": answer, "sources": sources}), structured=True)


def test_the_first_stage_that_answers_wins_and_later_stages_are_not_built() -> None:
    """Planted faults: reading every stage and keeping the last answer (the LLM's "seventy dollars") fails the
    text and the stage; building every stage up front puts the LLM stage in ``built``."""
    llm = llm_says("seventy dollars", [2])
    reader = build("reader", "cascade:readers=extractive+llm", llm=llm)
    answer = reader.read(LITERAL, context())
    assert answer.text == "$70" and not answer.abstained
    assert answer.details["stage"] == "extractive" and answer.details["declined"] == []
    assert [c.chunk_id for c in answer.citations] == ["meals#1"]
    assert llm.calls == [] and 1 not in reader.built  # the LLM stage was never built, never asked


def test_an_abstention_falls_through_to_the_next_stage() -> None:
    """Planted fault: returning the first stage's answer whether or not it abstained leaves this unanswered."""
    llm = llm_says("$70 per person", [2])
    reader = build("reader", "cascade:readers=extractive+llm", llm=llm)
    answer = reader.read(PARAPHRASE, context())
    assert not answer.abstained and "$70" in answer.text
    assert answer.details["stage"] == "llm" and answer.details["declined"] == ["extractive"]
    assert len(llm.calls) == 1 and [c.n for c in answer.citations] == [2]


def test_stages_run_in_the_order_given() -> None:
    """Planted fault: sorting the stages (or always trying the rule reader first) answers "$70" from extractive."""
    llm = llm_says("seventy dollars a day", [2])
    reader = build("reader", "cascade:readers=llm+extractive", llm=llm)
    answer = reader.read(LITERAL, context())
    assert answer.text.startswith("seventy dollars") and answer.details["stage"] == "llm"


def test_when_every_stage_declines_the_answer_abstains_and_names_no_stage() -> None:
    """Planted fault: marking the last stage as the one that answered even when it declined (stage "extractive#2")."""
    reader = build("reader", "cascade:readers=extractive+extractive:threshold=0.99")
    answer = reader.read(PARAPHRASE, context())
    assert answer.abstained and answer.text == "" and not answer.citations
    assert answer.details["stage"] is None and answer.details["declined"] == ["extractive", "extractive#2"]
    assert answer.details["reason"]  # the last stage's reason is kept


def test_streaming_yields_pieces_then_the_marked_answer() -> None:
    """The last stage streams; the final ``Answer`` carries the stage like ``read`` does."""
    reader = build("reader", "cascade:readers=extractive+llm", llm=llm_says("$70 per person", [2]))
    *pieces, last = reader.stream(PARAPHRASE, context())
    assert all(isinstance(p, str) for p in pieces) and pieces
    assert last.details["stage"] == "llm" and not last.abstained
    *pieces, last = reader.stream(LITERAL, context())
    assert pieces == ["$70"] and last.details["stage"] == "extractive"


def test_each_stage_takes_its_own_parameters() -> None:
    """A list of specs: each stage built with its own parameters (the rule reader's threshold here)."""
    reader = build("reader", "cascade:readers=[extractive:threshold=0.99; llm:max_tokens=7,short=off]", llm=FakeLLM([]))
    assert reader.labels == ["extractive", "llm"]
    assert reader.stage(0).config()["threshold"] == 0.99
    assert reader.stage(1).max_tokens == 7 and reader.stage(1).short == "off"
    assert reader.config() == {
        "name": "cascade",
        "readers": ["extractive:threshold=0.99", "llm:max_tokens=7,short=off"],
        "unsupported": "answer",
    }


@pytest.mark.parametrize(
    ("readers", "message"),
    [
        ("extractive+nope", "unknown reader 'nope'"),
        ("extractive+agent", "stage 'agent' cannot be a stage"),
        ("extractive+cascade", "stage 'cascade' cannot be a stage"),
        ("extractive+", "empty stage"),
        ("extractive:bogus=1", "bogus"),
        ("extractive+llm:bogus=1", "unknown parameter"),
    ],
)
def test_a_bad_stage_is_refused_when_the_cascade_is_built(readers: str, message: str) -> None:
    """Checked at configuration, not at the first question that reaches the stage."""
    with pytest.raises(ConfigError, match=message):
        CascadeReader(readers)


def test_the_saved_answer_names_the_stage() -> None:
    """``--save-answers`` lines carry ``stage`` (what the cascade's measurements count per stage)."""
    reader = build("reader", "cascade:readers=extractive+llm", llm=llm_says("$70 per person", [2]))
    question = QAQuestion("q1", PARAPHRASE, ["$70"], ["meals#1"], False, "factoid")
    answer = reader.read(PARAPHRASE, context())
    record = QAResult(question, answer, context(), grade_question(question, answer, context(), "contains"), None)
    assert record.to_record()["stage"] == "llm"


def test_a_stage_whose_model_is_missing_is_skipped_and_noted() -> None:
    """A trained reader not trained on this machine: the other stages answer, and the answer says the stage was
    skipped. Planted fault: letting the ``ModelError`` through fails the question (the default pipeline's span
    stage on a fresh install)."""
    reader = build(
        "reader", "cascade:readers=extractive+span:model=trained:no-such-reader+llm", llm=llm_says("$70", [2])
    )
    answer = reader.read(PARAPHRASE, context())
    assert answer.details["stage"] == "llm" and answer.text == "$70"
    assert any("span skipped" in note and "no-such-reader" in note for note in answer.details["notes"])
    assert reader.read(LITERAL, context()).details["notes"]  # said on every answer, not tried again
    alone = build("reader", "cascade:readers=extractive+span:model=trained:no-such-reader")
    declined = alone.read(PARAPHRASE, context())
    assert declined.abstained and declined.details["stage"] is None and declined.details["notes"]


def test_unsupported_decline_treats_an_answer_without_a_supported_citation_as_declined() -> None:
    """The LLM cites the travel source for the meal limit: that sentence does not carry the question, so with
    ``unsupported=decline`` the cascade declines and keeps the answer in ``details``. Planted fault: ignoring the
    flag (or checking ``abstained`` only) returns the unsupported answer."""
    spec = "cascade:readers=extractive+llm,unsupported=decline"
    answer = build("reader", spec, llm=llm_says("$70 per person", [1])).read(PARAPHRASE, context())
    assert answer.abstained and answer.text == "" and answer.details["stage"] is None
    assert answer.details["unsupported"] == [{"stage": "llm", "answer": "$70 per person"}]
    given = build("reader", "cascade:readers=extractive+llm", llm=llm_says("$70 per person", [1]))
    assert not given.read(PARAPHRASE, context()).abstained  # the default answers whatever its support
    with pytest.raises(ConfigError, match="unsupported"):
        build("reader", "cascade:readers=extractive,unsupported=maybe")
