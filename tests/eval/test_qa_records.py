"""Question records of public QA sets as ``QAQuestion``: aliases, own passages, planted answers, sampling."""

from __future__ import annotations

import pytest

from ragline.errors import InputError
from ragline.eval.qa import QAQuestion, missing_context_ids, sample_questions


def test_nested_alias_lists_are_flattened_without_repeats() -> None:
    record = {"id": "nq1", "question": "who is jfk", "answers": [["JFK", "John F. Kennedy"], "JFK", ""]}
    q = QAQuestion.from_record(record)
    assert q.answers == ["JFK", "John F. Kennedy"] and not q.expected_abstain


@pytest.mark.parametrize("answers", [[["JFK", 35]], [{"text": "JFK"}], "JFK"])
def test_answers_that_are_neither_strings_nor_alias_lists_name_the_question(answers: object) -> None:
    with pytest.raises(InputError, match="'nq1'.*answers"):
        QAQuestion.from_record({"id": "nq1", "question": "?", "answers": answers})


def test_context_ids_distractors_and_squad_context_id() -> None:
    hotpot = QAQuestion.from_record({"id": "h", "question": "?", "answers": ["yes"], "context_ids": ["A b", "C"],
                                     "distractor_answers": [["no", "No."]]})  # fmt: skip
    assert hotpot.context_ids == ["A b", "C"] and hotpot.distractor_answers == ["no", "No."]
    squad = QAQuestion.from_record({"id": "s", "question": "?", "answers": [], "context_id": "Normans_0"})
    assert squad.context_ids == ["Normans_0"] and squad.expected_abstain
    plain = QAQuestion.from_record({"id": "p", "question": "?", "answers": ["x"]})
    assert plain.context_ids is None and plain.context_filter() is None
    assert missing_context_ids([hotpot, squad, plain], {"C", "Normans_0"}) == {"h": ["A b"]}


def test_sample_on_an_all_answerable_set_draws_n_questions() -> None:
    questions = [QAQuestion.from_record({"id": str(i), "question": "?", "answers": ["x"]}) for i in range(10)]
    sampled = sample_questions(questions, 4, seed=1)
    assert len(sampled) == 4 and sampled == sample_questions(questions, 4, seed=1)
    assert [q.id for q in sampled] == sorted((q.id for q in sampled), key=int)  # file order
