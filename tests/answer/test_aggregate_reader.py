"""The aggregate reader: lists, counts, extremes and the most common value, one reading per document."""

from __future__ import annotations

from ragline.answer.aggregate import AggregateReader, quantity, question_form
from ragline.answer.context import build_context
from ragline.components import names
from ragline.index import Index
from ragline.types import Document

CREWS = [
    Document(
        "crew-kestrel", "The Kestrel crew is led by Mira Olsen. The crew is based at the Dunmore yard.", "Kestrel"
    ),
    Document("crew-heron", "The Heron crew is led by Tomas Reyes. The crew is based at the Dunmore yard.", "Heron"),
    Document("crew-plover", "The Plover crew is led by Ana Lutz. The crew is based at the Ashby yard.", "Plover"),
    Document("crew-wren", "The Wren crew is led by Jon Vale. The crew is based at the Dunmore yard.", "Wren"),
]
ROUTES = [
    Document("route-a", "The Northline route is 42 km long and was opened in 1990.", "Northline route"),
    Document("route-b", "The Coastal route is 118 km long and was opened in 2004.", "Coastal route"),
    Document("route-c", "The Valley route is 67 km long and was opened in 1978.", "Valley route"),
]


def _context(docs, question, k=10):
    index = Index.create(None, None)
    index.add(docs)
    index.commit()
    return build_context(index.search(question, k))


def test_question_forms():
    """Planted fault: the count pattern dropped ("how many" read as a list) fails the first assert."""
    assert question_form("How many crews are based at the Dunmore yard?") == (
        "count",
        "Which crews are based at the Dunmore yard?",
    )
    assert question_form("List every crew based at the Dunmore yard.")[0] == "list"
    assert question_form("Which crews are based at the Dunmore yard?")[0] == "list"
    assert question_form("Which route is the longest?")[0] == "extreme"
    assert question_form("Which yard are the most crews based at?")[0] == "most"
    assert question_form("Who leads the Heron crew?")[0] == "single"
    assert quantity("3 weeks") == 3 * 10080 and quantity("$2,500") == 2500 and quantity("five") is None
    assert "aggregate" in names("reader")


def test_lists_and_counts_every_document_that_answers_and_no_other():
    """Each crew page that says the crew is based at Dunmore gives one item (its title); Plover (Ashby) does not.
    Planted fault: one reading over the whole context (the single best span) lists one crew and fails."""
    reader = AggregateReader()
    question = "Which crews are based at the Dunmore yard?"
    answer = reader.read(question, _context(CREWS, question))
    assert not answer.abstained
    assert set(answer.details["items"]) == {"Kestrel", "Heron", "Wren"}
    assert {c.doc_id for c in answer.citations} == {"crew-kestrel", "crew-heron", "crew-wren"}
    count = reader.read("How many crews are based at the Dunmore yard?", _context(CREWS, question))
    assert count.text.startswith("3 ")


def test_extreme_picks_the_document_with_the_largest_or_smallest_value():
    """Planted fault: max and min swapped fails both asserts."""
    reader = AggregateReader()
    longest = reader.read("Which route is the longest?", _context(ROUTES, "route km long"))
    assert longest.text.startswith("Coastal route") and longest.citations[0].doc_id == "route-b"
    shortest = reader.read("Which route is the shortest?", _context(ROUTES, "route km long"))
    assert shortest.text.startswith("Northline route")


def test_most_names_the_value_most_documents_give():
    """Planted fault: the fewest votes taken for "most" answers Ashby and fails."""
    reader = AggregateReader()
    question = "Which yard are the most crews based at?"
    answer = reader.read(question, _context(CREWS, question))
    assert answer.text.startswith("Dunmore")
