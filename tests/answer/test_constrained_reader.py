"""The LLM reader constrained to JSON: an answer and the numbers of the sources it used, checked, attributed
over whole sentences, never a fragment cut at a chunk boundary; short answers for factoids; plain text when
the backend takes no schema. A fake model (``llm_fakes.FakeLLM``) drives the parsing; one test marked
``models`` runs the grammar end to end with the packaged SmolLM2."""

from __future__ import annotations

import json

import pytest

from llm_fakes import FakeLLM
from ragline.answer.citations import ends_at_cut, whole_sentences
from ragline.answer.context import build_context
from ragline.answer.pipeline import LLMReader
from ragline.answer.prompt import ANSWER_CHARS, answer_schema, with_dashes, with_unit
from ragline.answer.questions import FULL, answer_kind
from ragline.errors import ConfigError
from ragline.models.llm.json_schema import JSONReplyError, check_value, parse_reply
from ragline.types import Hit

MEALS = "Meal allowances. The daily meal limit is $70 per person. Alcohol is not reimbursed."
TRAVEL = "Economy class is booked for flights under six hours."


def context():
    return build_context([Hit("travel#0", 2.0, 1, "Travel", TRAVEL), Hit("meals#1", 1.0, 2, "Meals", MEALS)])


def reply(answer: str, sources: list[int]) -> str:
    return json.dumps({"answer": answer, "sources": sources})


def test_the_constrained_reader_returns_the_sources_the_model_named() -> None:
    """Planted fault: reading only ``[n]`` markers in the answer text (ignoring the ``sources`` field) leaves
    this answer uncited by the model, and the citation would carry ``attributed``."""
    llm = FakeLLM([reply("The daily meal limit is $70 per person.", [2])], structured=True)
    answer = LLMReader(llm=llm, short="off").read("What is the daily meal limit?", context())
    assert answer.text == "The daily meal limit is $70 per person."
    assert [(c.n, c.chunk_id, c.supported) for c in answer.citations] == [(2, "meals#1", True)]
    assert answer.details["model_sources"] == [2] and "attributed" not in answer.details


def test_the_schema_allows_exactly_the_source_numbers_and_requires_one() -> None:
    """Planted fault: a schema without ``minItems`` (an answer may cite nothing) or with numbers past the
    last source fails here."""
    llm = FakeLLM([reply("The daily meal limit is $70 per person.", [2])], structured=True)
    LLMReader(llm=llm, short="off").read("What is the daily meal limit?", context())
    sources = llm.schemas[0]["properties"]["sources"]
    assert sources["items"]["enum"] == [1, 2] and sources["minItems"] == 1
    assert check_value({"answer": "x", "sources": []}, llm.schemas[0])  # no source: rejected
    assert check_value({"answer": "x", "sources": [3]}, llm.schemas[0])  # no such source: rejected
    assert check_value({"answer": "x", "sources": [1]}, llm.schemas[0]) == ""


def test_a_wrong_source_number_is_replaced_by_whole_sentence_attribution() -> None:
    """Planted fault: keeping the model's unsupported citation (no attribution) leaves source 1 cited."""
    llm = FakeLLM([reply("The daily meal limit is $70 per person.", [1])], structured=True)
    answer = LLMReader(llm=llm, short="off").read("What is the daily meal limit?", context())
    assert [(c.n, c.supported) for c in answer.citations] == [(2, True)]
    assert answer.details["attribution"] == [{"answer": "The daily meal limit is $70 per person.", "source": 2,
                                              "sentence": "The daily meal limit is $70 per person."}]  # fmt: skip


def test_an_answer_that_stops_where_a_chunk_cut_a_sentence_is_flagged_and_never_supported() -> None:
    """Planted fault: without the cut check the fragment "a memory leak in the report" is marked supported
    by the chunk it was copied from (its terms are all there)."""
    text = "Incident E-1896. The root cause was a memory leak in the report"
    cut = Hit("incident#0", 1.0, 1, "Incident E-1896", text, {"start": 0})
    ctx = build_context([cut])
    assert whole_sentences(ctx.sources[0]) == ["Incident E-1896."]
    assert ends_at_cut("A memory leak in the report.", ctx) == 1
    llm = FakeLLM([reply("A memory leak in the report.", [1])], structured=True)
    answer = LLMReader(llm=llm, short="off").read("What was the root cause of incident E-1896?", ctx)
    assert answer.details["cut"] == 1
    assert answer.citations and not any(c.supported for c in answer.citations)


def test_an_answer_stopped_by_the_length_limit_ends_at_its_last_whole_sentence() -> None:
    """Planted fault: without the trim the answer ends "... Alcohol is not reimb", a fragment the model never
    finished (the schema's maxLength stopped it)."""
    first = "The daily meal limit is $70 per person."
    filler = " It covers breakfast, lunch and dinner on each travel day, receipts attached." * 4
    stopped = (first + filler + " Alcohol is not reimbursed in any case whatsoever.")[: ANSWER_CHARS[FULL]]
    llm = FakeLLM([reply(stopped, [2])], structured=True)
    answer = LLMReader(llm=llm, short="off").read("What is the daily meal limit?", context())
    assert answer.text == first and answer.citations[0].supported
    assert answer.details["truncated"].endswith(stopped.rsplit(".", 1)[1].strip())
    whole = LLMReader(llm=FakeLLM([reply(first, [2])], structured=True), short="off")
    assert "truncated" not in whole.read("What is the daily meal limit?", context()).details


def test_a_chunk_that_starts_inside_a_sentence_does_not_offer_that_fragment() -> None:
    """Planted fault: treating a continuation ("scheduler on web-45.") as a whole sentence lets it support."""
    hit = Hit("incident#1", 1.0, 1, "Incident", "scheduler on web-45. It was fixed on Monday.", {"start": 120})
    assert whole_sentences(build_context([hit]).sources[0]) == ["It was fixed on Monday."]


def test_factoids_get_a_short_answer_and_its_whole_supporting_sentence() -> None:
    """Planted fault: asking every question for a sentence (kind ``full``) gives a 300-character schema and no
    ``details["sentence"]``."""
    llm = FakeLLM([reply("$70", [2])], structured=True)
    answer = LLMReader(llm=llm).read("What is the daily meal limit?", context())
    assert answer_kind("What is the daily meal limit?") == "short"
    assert llm.schemas[0]["properties"]["answer"]["maxLength"] == 80
    assert answer.text == "$70" and [(c.n, c.supported) for c in answer.citations] == [(2, True)]
    assert answer.details["sentence"] == "The daily meal limit is $70 per person."


def test_a_bare_number_is_given_as_its_sentence_writes_it() -> None:
    """The model's short answer "70" is the $70 of its supporting sentence; "six" stays a word, and a number the
    sentence writes without a unit stays as it is. Planted fault: answering the model's text unchanged gives
    "70", which a reader of the answer cannot tell from 70 euros or 70 minutes."""
    llm = FakeLLM([reply("70", [2])], structured=True)
    answer = LLMReader(llm=llm).read("What is the daily meal limit?", context())
    assert answer.text == "$70" and [(c.n, c.supported) for c in answer.citations] == [(2, True)]
    assert with_unit("7", "Flights shorter than 7 hours are booked in economy.") == "7 hours"
    assert with_unit("60", "Expenses above $600 need approval.") == "60"  # another number, not its digits
    assert with_unit("six", TRAVEL) == "six" and with_unit("4", "Band 4 is the top band.") == "4"


def test_a_short_option_is_given_with_its_dashes() -> None:
    """The model's "track-origins=yes" is the --track-origins=yes of its source, which a user can type. Planted
    fault: answering the model's text unchanged."""
    memcheck = "Use --track-origins=yes to see where uninitialised values come from, and -v for more."
    llm = FakeLLM([reply("track-origins=yes", [1])], structured=True)
    ctx = build_context([Hit("memcheck#0", 1.0, 1, "Memcheck options", memcheck)])
    answer = LLMReader(llm=llm).read("Which option shows where uninitialised values come from?", ctx)
    assert answer.details["kind"] == "short" and answer.text == "--track-origins=yes"
    assert with_dashes("v", memcheck) == "-v"
    # a word inside a longer option, after "=", or after a hyphen inside a word is left as it is
    assert with_dashes("origins=yes", memcheck) == "origins=yes" and with_dashes("yes", memcheck) == "yes"
    assert with_dashes("built", "A well-built tool.") == "built" and with_dashes("60", "Use -60.") == "60"


def test_a_full_answer_ends_at_its_first_supported_sentence() -> None:
    """The model asked for one sentence copies the source's next one too. Planted fault checked: without
    ``first_supported_sentences`` the answer keeps "Alcohol is not reimbursed."; trimming procedures drops a step."""
    llm = FakeLLM([reply("The daily meal limit is $70 per person. Alcohol is not reimbursed.", [2])], structured=True)
    answer = LLMReader(llm=llm, short="off").read("What is the daily meal limit?", context())
    assert answer.text == "The daily meal limit is $70 per person."
    assert answer.details["trimmed"] == "Alcohol is not reimbursed." and answer.citations[0].supported
    steps = "Book economy class for flights under six hours. The daily meal limit is $70 per person."
    llm = FakeLLM([reply(steps, [1, 2])], structured=True)
    assert LLMReader(llm=llm).read("How do I book a flight under six hours?", context()).text == steps


def test_yes_no_questions_are_constrained_to_yes_or_no() -> None:
    """Planted fault: without the yes/no kind the model may write any string; the schema must say yes/no."""
    llm = FakeLLM([reply("no", [2])], structured=True)
    answer = LLMReader(llm=llm).read("Is alcohol reimbursed under the meal policy?", context())
    assert answer_kind("Is alcohol reimbursed under the meal policy?") == "yesno"
    assert llm.schemas[0]["properties"]["answer"]["enum"] == ["yes", "no", "I don't know"]
    assert answer.text == "no" and not answer.abstained


def test_a_yes_or_no_to_a_question_that_asks_for_something_else_is_no_answer() -> None:
    """The 0.5B model answered "Yes" to "... located in what Australian city?". Planted fault checked: without
    ``answers_no_question`` the reader gives "Yes" with a citation; a polar question keeps its "no"."""
    for output in ("json", "text"):
        raw = reply("Yes", [2]) if output == "json" else "Yes [2]"
        llm = FakeLLM([raw], structured=output == "json")
        answer = LLMReader(llm=llm, output=output).read("In what city is the meal policy applied?", context())
        assert answer.abstained and answer.text == ""
    llm = FakeLLM([reply("no", [2])], structured=True)
    assert LLMReader(llm=llm).read("Meals are capped. Is alcohol reimbursed?", context()).text == "no"


def test_an_abstention_in_json_is_an_abstention() -> None:
    """Planted fault: taking the abstention text as an answer."""
    llm = FakeLLM([reply("I don't know", [1])], structured=True)
    answer = LLMReader(llm=llm, short="off").read("Who is the CEO?", context())
    assert answer.abstained and answer.citations == []


def test_a_reply_cut_by_the_token_limit_is_an_abstention_that_says_why() -> None:
    """Planted fault: a crash (JSONDecodeError) instead of an abstention with the reason."""
    llm = FakeLLM(['{"answer": "The daily meal lim'], structured=True)
    answer = LLMReader(llm=llm, short="off").read("Meal limit?", context())
    assert answer.abstained and "malformed JSON" in answer.details["error"]
    with pytest.raises(JSONReplyError, match="does not match the schema"):
        parse_reply('{"answer": 3}', answer_schema(2))


def test_a_backend_without_schemas_falls_back_to_the_plain_text_prompt() -> None:
    """Planted fault: without the fallback the reader raises StructuredOutputUnsupported."""
    llm = FakeLLM(["The daily meal limit is $70 per person [2].", "Economy class [1]."])
    reader = LLMReader(llm=llm)
    answer = reader.read("What is the daily meal limit?", context())
    assert [(c.n, c.supported) for c in answer.citations] == [(2, True)]
    assert "Reply with JSON" not in llm.calls[0][0]["content"]
    reader.read("Which class for short flights?", context())  # remembered: no second schema attempt
    assert len(llm.calls) == 2 and llm.schemas == []


def test_bad_reader_options_name_the_field() -> None:
    with pytest.raises(ConfigError, match="output must be one of json, text"):
        LLMReader(llm=FakeLLM([], structured=True), output="xml")


def test_the_text_output_keeps_todays_prompt() -> None:
    """Planted fault: output=text still sending a schema."""
    llm = FakeLLM(["The daily meal limit is $70 per person [2]."])
    answer = LLMReader(llm=llm, output="text").read("What is the daily meal limit?", context())
    assert llm.schemas == [] and [c.n for c in answer.citations] == [2]


@pytest.mark.models
def test_the_grammar_path_end_to_end_with_smollm2() -> None:
    """The packaged SmolLM2 under llama.cpp's grammar: the reply parses and names a real source. Planted
    fault: dropping ``response_format`` from the request lets the model write free text, which does not parse
    (the reader then abstains with ``details["error"]``)."""
    from ragline.models.llm import load_llm

    llm = load_llm("local:smollm2-135m", n_ctx=2048)
    try:
        answer = LLMReader(llm=llm, max_tokens=64, short="off").read("What is the daily meal limit?", context())
    finally:
        llm.close()
    assert "error" not in answer.details, answer.details
    value = json.loads(answer.details["raw"])
    assert set(value) == {"answer", "sources"} and value["sources"] and set(value["sources"]) <= {1, 2}


def test_free_text_from_a_server_that_ignored_the_schema_is_read_as_text() -> None:
    """Planted fault: treating any unparsable reply as a cut one abstains on a right, cited answer."""
    llm = FakeLLM(["The daily meal limit is $70 per person [2]."], structured=True)
    answer = LLMReader(llm=llm, short="off").read("What is the daily meal limit?", context())
    assert answer.details["unconstrained"] and [(c.n, c.supported) for c in answer.citations] == [(2, True)]


def test_the_constrained_reader_streams_the_answer_text_then_the_answer() -> None:
    """Planted fault: streaming the raw JSON (braces, keys, source numbers) instead of the answer's text."""
    llm = FakeLLM([reply("The daily meal limit is $70 per person.", [2])], structured=True)
    *pieces, answer = LLMReader(llm=llm, short="off").stream("What is the daily meal limit?", context())
    assert "".join(pieces) == answer.text == "The daily meal limit is $70 per person."
    assert [c.n for c in answer.citations] == [2]
