"""The condenser: a follow-up and its history become one standalone question (rules, and the LLM with the rules
standing in for a rewrite that drops what they carry)."""

from __future__ import annotations

import pytest

from llm_fakes import FakeLLM
from ragline.answer.conversation import condense, condense_rules, entities
from ragline.errors import InputError


def user(*texts: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": t} for t in texts]


@pytest.mark.parametrize(
    ("turns", "standalone"),
    [
        # an anaphor takes the previous question's noun phrase with that head, or the noun and its code
        (["What is the travel limit in the Quorn policy?", "When was that policy last changed?"],
         "When was the Quorn policy last changed?"),
        (["Under the meals policy, what is the daily cap?", "Who approves exceptions to that policy?"],
         "Who approves exceptions to the meals policy?"),
        (["What caused outage Q-17?", "How long did that outage last?"], "How long did outage Q-17 last?"),
        # a pronoun takes the previous question's first entity, or its definite noun phrase
        (["Where is the Vellmar depot?", "Who runs it?"], "Who runs Vellmar?"),
        (["How do I reset the printer?", "How often does it jam?"], "How often does the printer jam?"),
        # an elliptical turn keeps the previous question and swaps the entity of the same shape
        (["Who leads the team at site K-88?", "And site K-12?"], "Who leads the team at site K-12?"),
        (["What is the cap in the meals policy?", "What about the lodging policy?"],
         "What is the cap in the lodging policy?"),
        # a third turn leans on the first through the second
        (["What caused outage Q-17?", "How long did that outage last?", "And Q-40?"],
         "How long did outage Q-40 last?"),
        # a turn that names its own entity is a new topic
        (["What caused outage Q-17?", "Who founded Brellin Works?"], "Who founded Brellin Works?"),
    ],
)  # fmt: skip
def test_rules_make_a_standalone_question(turns: list[str], standalone: str) -> None:
    """Planted faults checked: ``_condense_one`` returning the message (every row but the last fails), and
    ``_swap_entity`` swapping regardless of shape (the K-12 row keeps K-88)."""
    assert condense_rules(turns) == standalone


def test_the_first_turn_stands_as_written() -> None:
    condensed = condense(user("How long did that outage last?"))
    assert (condensed.question, condensed.method) == ("How long did that outage last?", "none")


def test_assistant_turns_are_history_not_questions() -> None:
    messages = [*user("What caused outage Q-17?"), {"role": "assistant", "content": "A failed relay [1]."},
                *user("How long did that outage last?")]  # fmt: skip
    assert condense(messages).question == "How long did outage Q-17 last?"


def test_no_user_text_is_a_typed_error() -> None:
    with pytest.raises(InputError, match="messages"):
        condense([{"role": "assistant", "content": "hello"}])
    with pytest.raises(InputError, match=r"messages\[0\]"):
        condense([{"role": "user", "content": None}])  # type: ignore[dict-item]


def test_entities_are_codes_names_and_quotes() -> None:
    assert entities('Did Tarn Valley report "blue screen" on host HX-4?') == ["HX-4", "blue screen", "Tarn Valley"]


def test_the_llm_rewrite_is_used_when_it_keeps_the_entities() -> None:
    llm = FakeLLM(["How long did the Q-17 outage last?"])
    condensed = condense(user("What caused outage Q-17?", "How long did it last?"), llm, "llm")
    assert (condensed.question, condensed.method) == ("How long did the Q-17 outage last?", "llm")
    assert "What caused outage Q-17?" in llm.calls[0][0]["content"]


def test_a_rewrite_that_drops_the_entity_is_replaced_by_the_rules() -> None:
    """Planted fault checked: ``condense_llm`` returning the rewrite without the entity check (gets "outage")."""
    llm = FakeLLM(["How long did the outage last?"])
    condensed = condense(user("What caused outage Q-17?", "How long did that outage last?"), llm, "llm")
    assert (condensed.question, condensed.method) == ("How long did outage Q-17 last?", "rules")
