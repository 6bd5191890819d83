from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.errors import ConfigError
from ragline.ingest.chunkers import build_chunker
from ragline.retrieve.expand import expand_hits
from ragline.types import Document, Hit

RECEIPTS = (
    "Itemised receipts are required above $60. A card slip is not a receipt. Upload a photo of each receipt. "
    "Receipts must be submitted within 30 days. Late claims are returned unpaid. Lost receipts need a declaration."
)
POLICY = f"""# Travel Policy

## Limits

Flights under 6 hours are economy. Rail is standard class.

## Receipts

{RECEIPTS}

### Lost receipts

Use the missing-receipt form.
"""
DOCUMENTS = {
    "travel": Document("travel", POLICY, "Travel Policy", {"acl": ["all"]}),
    "meals": Document("meals", "# Meals\n\nLunch up to $25. Dinner up to $60.", "Meals Policy"),
}


def hits_for(chunks: list[Document]) -> list[Hit]:
    return [Hit(c.id, 1.0 - i / 10, i + 1, c.title, c.text, c.metadata) for i, c in enumerate(chunks)]


def chunk_with(doc_id: str, words: str, spec: str = "sentences:window=1") -> Document:
    return next(c for c in build_chunker(spec).chunk(DOCUMENTS[doc_id]) if words in c.text)


def assert_holds_its_chunks(passage, document: Document) -> None:  # noqa: ANN001
    assert passage.text == document.text[passage.start : passage.end]
    for hit, (start, end) in zip(passage.hits, passage.spans):
        assert passage.text[start:end] == hit.text


def test_a_sentence_hit_expands_to_its_whole_section() -> None:
    chunk = chunk_with("travel", "30 days")
    [passage] = expand_hits(hits_for([chunk]), DOCUMENTS.get, mode="section")
    assert passage.text == "## Receipts\n\n" + RECEIPTS + "\n\n### Lost receipts\n\nUse the missing-receipt form.\n"
    assert passage.section == ["Travel Policy", "Receipts"] and passage.title == "Travel Policy"
    assert passage.rank == 1 and passage.doc_id == "travel"
    assert_holds_its_chunks(passage, DOCUMENTS["travel"])


def test_over_budget_a_window_centred_on_the_chunk_is_cut_at_sentence_edges() -> None:
    chunk = chunk_with("travel", "30 days")
    for budget in (60, 120, 200):
        [passage] = expand_hits(hits_for([chunk]), DOCUMENTS.get, mode="section", max_chars=budget)
        assert len(passage.text) <= budget
        assert_holds_its_chunks(passage, DOCUMENTS["travel"])
        assert passage.text[0].isupper() and passage.text.endswith(".")  # whole sentences
    [tiny] = expand_hits(hits_for([chunk]), DOCUMENTS.get, mode="section", max_chars=10)
    assert tiny.text == chunk.text  # a chunk longer than the budget stays whole


def test_sentence_window() -> None:
    chunk = chunk_with("travel", "30 days")
    [passage] = expand_hits(hits_for([chunk]), DOCUMENTS.get, mode="sentences", window=1)
    assert (
        passage.text
        == "Upload a photo of each receipt. Receipts must be submitted within 30 days. Late claims are returned unpaid."
    )
    [first] = expand_hits(hits_for([chunk_with("travel", "Itemised")]), DOCUMENTS.get, mode="sentences", window=1)
    assert first.text.startswith("## Receipts")  # the heading joined the first sentence: it never crosses up
    [none] = expand_hits(hits_for([chunk]), DOCUMENTS.get, mode="chunk")
    assert none.text == chunk.text


def test_hits_in_the_same_parent_become_one_passage_in_rank_order() -> None:
    a, b = chunk_with("travel", "30 days"), chunk_with("travel", "card slip")
    meals = chunk_with("meals", "Lunch")
    hits = hits_for([a, meals, b])
    passages = expand_hits(hits, DOCUMENTS.get, mode="section")
    assert [p.doc_id for p in passages] == ["travel", "meals"]
    assert [h.doc_id for h in passages[0].hits] == [a.id, b.id]
    assert_holds_its_chunks(passages[0], DOCUMENTS["travel"])
    # overlapping sentence windows merge while their union fits the budget
    merged = expand_hits(hits_for([a, b]), DOCUMENTS.get, mode="sentences", window=1)
    assert len(merged) == 1 and len(merged[0].hits) == 2
    assert merged[0].text.startswith("Itemised") and merged[0].text.endswith("returned unpaid.")
    assert_holds_its_chunks(merged[0], DOCUMENTS["travel"])
    apart = expand_hits(hits_for([a, b]), DOCUMENTS.get, mode="sentences", window=1, max_chars=150)
    assert [len(p.hits) for p in apart] == [1, 1] and apart[0].end > apart[1].start  # they overlap


def test_total_budget_skips_passages_that_do_not_fit() -> None:
    hits = hits_for([chunk_with("travel", "30 days"), chunk_with("meals", "Lunch")])
    passages = expand_hits(hits, DOCUMENTS.get, mode="section", total_chars=100)
    assert [p.doc_id for p in passages] == ["meals"]  # the whole Receipts section would not fit
    assert sum(len(p.text) for p in passages) <= 100


def test_missing_documents_and_stale_offsets() -> None:
    chunk = chunk_with("travel", "30 days")
    [kept] = expand_hits(hits_for([chunk]), lambda doc_id: None)
    assert kept.text == chunk.text and kept.spans == [(0, len(chunk.text))]
    moved = Document("travel", "New intro paragraph.\n\n" + POLICY, "Travel Policy")
    [found] = expand_hits(hits_for([chunk]), {"travel": moved}.get, mode="sentences", window=0)
    assert found.text == chunk.text and found.start == moved.text.index(chunk.text)
    whole = Hit("meals", 1.0, 1, "Meals Policy", DOCUMENTS["meals"].text)  # an index without chunking
    [doc] = expand_hits([whole], DOCUMENTS.get, mode="section")
    assert doc.text == DOCUMENTS["meals"].text


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="unknown expansion"):
        expand_hits([], DOCUMENTS.get, mode="paragraph")
    with pytest.raises(ConfigError, match="max_chars"):
        expand_hits([], DOCUMENTS.get, max_chars=0)


@settings(max_examples=40, deadline=None)
@given(
    spec=st.sampled_from(["fixed:size=5", "fixed:size=9,overlap=3", "sentences:window=1", "structure:max_words=12"]),
    mode=st.sampled_from(["section", "sentences", "chunk"]),
    budget=st.integers(20, 400),
    window=st.integers(0, 3),
    picks=st.lists(st.integers(0, 50), min_size=1, max_size=6),
)
def test_every_passage_holds_its_chunks_within_budget(
    spec: str, mode: str, budget: int, window: int, picks: list[int]
) -> None:
    document = DOCUMENTS["travel"]
    chunks = build_chunker(spec).chunk(document)
    hits = hits_for([chunks[i % len(chunks)] for i in picks])
    passages = expand_hits(hits, DOCUMENTS.get, mode=mode, max_chars=budget, window=window)
    assert sum(len(p.hits) for p in passages) == len(hits)
    for passage in passages:
        assert_holds_its_chunks(passage, document)
        assert len(passage.text) <= max(budget, *(len(h.text) for h in passage.hits))
    spans = sorted((p.start, p.end) for p in passages)
    # passages do not overlap, unless merging them would break the budget
    assert all(a[1] <= b[0] or max(a[1], b[1]) - a[0] > budget for a, b in zip(spans, spans[1:]))


def test_hit_order_decides_passage_order() -> None:
    a, b = chunk_with("meals", "Lunch"), chunk_with("travel", "30 days")
    hits = hits_for([a, b])
    hits[1] = replace(hits[1], rank=2)
    assert [p.doc_id for p in expand_hits(hits, DOCUMENTS.get)] == ["meals", "travel"]
