"""The question-answering support check: the cited sentence must answer this question, not just hold the words."""

from __future__ import annotations

from ragline.answer.citations import check_support, supports
from ragline.answer.extractive import ExtractiveReader
from ragline.answer.support import SupportCheck, contains_answer_terms, default_check, focus_word
from ragline.eval.calibration import CalibrationExample, calibrate_support
from ragline.text.opposites import lower_words, turned_word
from ragline.types import Citation, Hit

# Package metadata as pip writes it: the words of a wrong answer are everywhere in it.
METADATA = (
    "Name: gridkit\n"
    "Summary: Tools for reading substation telemetry\n"
    "Classifier: License :: OSI Approved :: MIT License\n"
    "Classifier: Operating System :: OS Independent\n"
    "Classifier: Programming Language :: Python :: 3\n"
    "Classifier: Topic :: Internet :: WWW/HTTP\n"
    "Requires-Python: >=3.10\n"
    "Maintainer: Oksana Hall\n"
    "Maintainer-email: oksana@example.org\n"
)
INCIDENT = (
    "# Incident Report E-4417: Billing outage\n\n## Summary\n\n"
    "On 3 March 2025, the billing portal returned error E-4417 to users for 62 minutes.\n\n"
    "## Root cause\n\nThe root cause was an expired TLS certificate on host mq-38."
)


def test_the_answer_words_in_a_sentence_about_something_else_are_no_support() -> None:
    # The failure: "OSI Approved" occurs in the cited text, but its line is about the license.
    question = "Who maintains gridkit?"
    assert not supports("OSI Approved", METADATA, question=question, title="gridkit 1.0")
    assert not supports("HTTP", METADATA, question=question, title="gridkit 1.0")
    # Without the question, only the lexical half can be checked: the words are there.
    assert supports("OSI Approved", METADATA)


def test_the_sentence_that_answers_the_question_is_support() -> None:
    check = default_check()
    verdict = check.check("Who maintains gridkit?", "Oksana Hall", METADATA, "gridkit 1.0")
    assert verdict.supported and verdict.coverage == 1.0 and "Maintainer: Oksana Hall" in verdict.window


def test_a_neighbouring_sentence_may_carry_the_question() -> None:
    passage = "The depot runs two shifts.\nIts shift lead is Ravi Whitcombe.\nParking is free."
    assert default_check()("Who leads the shifts at the depot?", "Ravi Whitcombe", passage)
    far = "The depot runs two shifts.\nParking is free.\nVisitors sign in.\nThe canteen opens at 7.\nRavi Whitcombe."
    assert not default_check()("Who leads the shifts at the depot?", "Ravi Whitcombe", far)


def test_literals_of_the_question_must_be_there() -> None:
    # "E-4417" and "E-4471": the same words, another incident.
    assert supports("expired TLS certificate", INCIDENT, question="What caused error E-4417?")
    assert not supports("expired TLS certificate", INCIDENT, question="What caused error E-4471?")


def test_the_offset_of_a_span_decides_which_sentence_counts() -> None:
    passage = "The meals cap is $25 a day.\nVisitors sign in.\nThe canteen opens at 7.\nParking costs $25."
    question = "What is the meals cap?"
    check = SupportCheck()
    assert check(question, "$25", passage, at=passage.index("$25"))
    assert not check(question, "$25", passage, at=passage.rindex("$25"))  # the span the reader took is on parking


def test_check_support_marks_each_citation_for_the_question() -> None:
    cited = [Citation(1, "gridkit", "gridkit#1", "gridkit 1.0", METADATA)]
    assert [c.supported for c in check_support("OSI Approved", cited, "Who maintains gridkit?")] == [False]
    assert [c.supported for c in check_support("Oksana Hall", cited, "Who maintains gridkit?")] == [True]


def test_the_extractive_reader_abstains_when_its_span_does_not_answer() -> None:
    hits = [Hit("gridkit", 1.0, 1, "gridkit 1.0", METADATA, {"doc_id": "gridkit"})]
    question = "Under which license is gridkit distributed?"  # "OSI Approved" sits on the license line
    unchecked = ExtractiveReader(support="off").read(question, hits)
    checked = ExtractiveReader().read(question, hits)
    assert not unchecked.abstained and unchecked.citations[0].supported  # the old reader: a span, "supported"
    assert checked.abstained and "answers the question" in checked.details["reason"]
    answered = ExtractiveReader().read("Who maintains gridkit?", hits)
    assert answered.text == "Oksana Hall" and answered.citations[0].supported


def test_support_calibration_is_reproducible_and_separates_right_from_wrong() -> None:
    # Two right answers whose sentences carry the whole question, one wrong answer ("OSI Approved") whose
    # sentence carries two thirds of it: any cut above 2/3 is best; ties go to the strictest.
    hit = Hit("gridkit", 1.0, 1, "gridkit 1.0", METADATA, {"doc_id": "gridkit"})
    examples = {
        "metadata": [
            CalibrationExample("Who maintains gridkit?", [hit], ["Oksana Hall"], ["gridkit"]),
            CalibrationExample("Under which license is gridkit distributed?", [hit], ["MIT License"], ["gridkit"]),
        ],
        "incident": [
            CalibrationExample(
                "What caused error E-4417?",
                [Hit("e4417", 1.0, 1, "", INCIDENT, {"doc_id": "e4417"})],
                ["expired TLS certificate", "expired TLS certificate on host mq-38"],
                ["e4417"],
            )
        ],
    }
    first, second = calibrate_support(examples), calibrate_support(examples)
    assert first.check.config() == second.check.config() and first.grid == second.grid
    assert first.per_set == {"metadata": 0.5, "incident": 1.0} and first.objective == 0.75
    assert first.without_check == {"metadata": 0.0, "incident": 1.0}  # without the check: one right, one wrong
    assert first.check.min_coverage == 1.0 and first.support == "best"


def test_inflections_of_a_question_word_are_the_same_word() -> None:
    # "led" (an irregular past) and "leader" (an agent noun) carry "leads"; the stemmer alone joins neither.
    check = default_check()
    passage = "Peranos is led by president Felald Hawenine. The council meets in spring."
    verdict = check.check("Who leads Peranos?", "Felald Hawenine", passage, "Peranos: Government")
    assert verdict.supported and verdict.coverage == 1.0
    assert check("Who leads Peranos?", "Felald Hawenine", "The leader of Peranos is Felald Hawenine.")
    assert check("Who ruled Peranos?", "Felald Hawenine", "Felald Hawenine was the ruler of Peranos.")
    # A different verb is still not the question's: the check does not match any word to any word.
    assert not check("Who leads Peranos?", "Felald Hawenine", "Peranos was visited by Felald Hawenine.")


def test_the_extractive_reader_answers_from_an_irregular_past_form() -> None:
    hits = [Hit("peranos#1", 1.0, 1, "Peranos: Government", "Peranos is led by president Felald Hawenine.")]
    answer = ExtractiveReader().read("Who leads Peranos?", hits)
    assert not answer.abstained and answer.text == "Felald Hawenine"


def test_the_noun_naming_the_answer_type_need_not_be_in_the_sentence() -> None:
    # "which year" asks for a year as "when" does: the year in the sentence answers it.
    hits = [Hit("kelithine#1", 1.0, 1, "", "Kelithine was founded in 1723. Its founder was Taum Dorqarun.")]
    answer = ExtractiveReader().read("In which year was Kelithine founded?", hits)
    assert not answer.abstained and answer.text == "1723"
    assert default_check().check("In which year was Kelithine founded?", "1723", hits[0].text).coverage == 1.0


def test_a_generated_answer_need_not_find_the_questions_type_word_in_its_sentence() -> None:
    """The word after "which"/"what" names the answer's type: an LLM's answer (``supports``) needs it only where the
    sentence has it; a span picked by rules still needs it, since nothing else says the span is of that type."""
    numba = "Numba is an open source, NumPy-aware optimizing compiler for Python sponsored by Anaconda, Inc."
    question = "Which company sponsors Numba?"
    assert focus_word(question) == "company" and focus_word("In which format are patches sent?") == "format"
    assert focus_word("What kind of editor is GNU ed?") == "kind" and focus_word("Who wrote jieba?") == ""
    assert supports("Anaconda, Inc.", numba, question=question, title="numba")
    assert not default_check().check(question, "Anaconda, Inc.", numba, "numba").supported
    # the other terms are still needed: a sentence that does not say who sponsors it is no support
    assert not supports("Anaconda, Inc.", "Numba is used by Anaconda, Inc.", question=question, title="numba")
    ed = "GNU ed is a line-oriented text editor."
    assert supports("a line-oriented text editor", ed, question="What kind of editor is GNU ed?", title="ed")


def test_a_number_answers_the_value_noun_it_is() -> None:
    # "above $25" is the receipt threshold though "threshold" is not in the sentence; a word answer is not a value
    receipts = "## Receipts\n\nItemised receipts are required for any single expense above $25."
    question = "What is the receipt threshold in the meals policy?"
    check = default_check()
    assert check.check(question, "$25", receipts, "Meals Policy").supported
    assert not check.check(question, "Itemised", receipts, "Meals Policy").supported
    answer = ExtractiveReader().read(question, [Hit("meals#1", 1.0, 1, "Meals Policy", receipts)])
    assert not answer.abstained and answer.text == "$25" and answer.citations[0].supported
    # "3.8+" is the version asked for; "HTTPX" is no version (planted fault: "version" not a value noun)
    readme = "HTTPX is a fully featured HTTP client.\n\nHTTPX requires Python 3.8+."
    assert check("What is the minimum Python version httpx requires?", "3.8+", readme, "httpx")
    assert not check("What is the minimum Python version httpx requires?", "HTTPX", readme, "httpx")


def test_a_sentence_about_the_bridge_does_not_answer_what_is_asked_of_it() -> None:
    # "Who leads the team that maintains SS-833?" reaches its answer through the team: the sentence naming the
    # team holds the question's literal and most of its terms, yet says nothing of who leads it.
    check = default_check()
    question = "Who leads the team that maintains substation SS-833?"
    bridge = "Substation SS-833 is maintained by Network Care North. It was commissioned in 1998."
    verdict = check.check(question, "Network Care North", bridge)
    assert not verdict.supported and verdict.bridge
    # Without the relative clause the same sentence answers the question it does carry.
    assert check("Which team maintains substation SS-833?", "Network Care North", bridge)
    # The sentence that names the lead holds what is asked ("led" is "leads") and is no bridge.
    answer = check.check(question, "Johanna Thorne", "Substation SS-833: Network Care North, led by Johanna Thorne.")
    assert answer.supported and not answer.bridge
    # "the lead of the team responsible for ..." asks for the lead as well
    lead = "Who is the lead of the team responsible for maintaining SS-833?"
    assert not check.check(lead, "Network Care North", bridge).supported


def test_the_value_of_a_field_the_question_names_is_support() -> None:
    """A "Label: value" line is a record: its label stands for the question's predicate, so the question's verb
    ("distributed") may be missing from it; nothing else may (a name the question qualifies it with)."""
    check = default_check()
    metadata = METADATA + "License: BSD-3-Clause\nVersion: 2.4.1\n"
    verdict = check.check("Under which license is gridkit distributed?", "BSD-3-Clause", metadata, "gridkit 1.0")
    assert verdict.supported and verdict.reason == "the answer is the value of a field the question names"
    # the label must be one of the question's terms, the answer its value, and a named qualifier must be there
    assert not check("Under which terms is gridkit distributed?", "BSD-3-Clause", metadata, "gridkit 1.0")
    assert not check("Under which license is gridkit distributed?", "License", metadata, "gridkit 1.0")
    assert not check("What is the minimum Python version for gridkit?", "2.4.1", metadata, "gridkit 1.0")
    # a pronoun is no content term: "its" does not count as a term the field lacks
    summary = "What does gridkit do, according to its summary?"
    assert check(summary, "Tools for reading substation telemetry", metadata, "gridkit 1.0")
    # the answer is the value (or its start), not a word further in: prose with a colon is no record
    operators = "Major operators include: Metro Trains, which runs the suburban lines; V/Line, run by the Government."
    assert not check("Which rail line operates in Melbourne?", "Government", operators, "Melbourne")
    # a generated answer need not find the question's type word ("kind"): the verb is then the one term missing,
    # counted over the terms coverage counts (planted fault: counting over all terms, "kind" included)
    generated = default_check(True).check("What kind of license governs it?", "BSD-3-Clause", metadata, "gridkit 1.0")
    assert generated.supported and generated.coverage == 0.5
    # prose is no field: the missing verb is still a missing term there
    prose = "The license of gridkit is BSD-3-Clause, see the notes."
    assert not check("Under which license is gridkit distributed?", "BSD-3-Clause", prose, "gridkit 1.0")


def test_an_answer_that_quotes_code_is_its_code() -> None:
    """The words around a quoted command ("you can use the ... command") frame it; the command must be there,
    all of it. Planted faults: requiring the framing words leaves this answer unsupported; taking most of the
    code's terms (5 of 6) lets a command with an option the source never gives through."""
    command = "zstd --train FullPathToTrainingSet/* -o dictionaryName --dictID custom"
    readme = f"Create a dictionary from a set of training files:\n\n    {command}\n"
    question = "How do I create a zstd dictionary from a set of training files?"
    answer = f"To create it, you can use the `{command}` command."
    assert contains_answer_terms(answer, readme, question=question)
    assert supports(answer, readme, question=question, title="zstd")
    other = f"To create it, you can use the `{command} --maxdict` command."
    assert not contains_answer_terms(other, readme, question=question)
    # without code spans an answer's words are checked as before
    assert not contains_answer_terms("Run the trainer on every sample folder you have.", readme, question=question)


def test_a_sentence_that_says_the_opposite_of_the_question_is_no_support() -> None:
    """ "before" answers no question about "after", however many terms the two share. Planted fault: without the
    opposites the first check passes (every content term of the question is in the sentence)."""
    readme = "Run catman to rebuild the index caches before upgrading the man-db package."
    check = default_check()
    verdict = check.check("What should I run after upgrading the man-db package?", "catman", readme, "man-db")
    assert not verdict.supported and "opposite" in verdict.reason and "'after'" in verdict.reason
    assert check("What should I run before upgrading the man-db package?", "catman", readme, "man-db")
    # a question that offers both words turns nothing, and a sentence with both words is not turned
    offered = lower_words("Should I run catman before or after upgrading the man-db package?")
    assert turned_word(offered, readme) == "" and turned_word(lower_words("after"), readme) == "after"
    both = "Run catman to rebuild the index caches before and after upgrading the man-db package."
    assert check("What should I run after upgrading the man-db package?", "catman", both, "man-db")
    # the answer's own sentence says "before": a neighbour saying "after" does not make it the answer
    neighbour = readme + " Run mandb after upgrading."
    assert not check("What should I run after upgrading the man-db package?", "catman", neighbour, "man-db")
