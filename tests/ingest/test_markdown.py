from __future__ import annotations

from ragline.ingest.markdown import (
    enclosing_section,
    parse_markdown_sections,
    parse_section_id,
    section_at,
    section_id,
    sections_of,
)
from ragline.types import Document

POLICIES = """Handbook intro.

# Travel Policy

Applies to trips.

## Receipts

Submit within 30 days.

## Limits ##

Economy class.

# Meals Policy

## Receipts

Submit within 14 days.

```
# not a heading inside code
```

## Limits

Lunch up to $25.
"""


def test_the_heading_tree_gives_paths_that_tell_shared_section_names_apart() -> None:
    sections = parse_markdown_sections(POLICIES)
    assert [s.path for s in sections] == [
        (),
        ("Travel Policy",),
        ("Travel Policy", "Receipts"),
        ("Travel Policy", "Limits"),
        ("Meals Policy",),
        ("Meals Policy", "Receipts"),
        ("Meals Policy", "Limits"),
    ]
    assert [s.level for s in sections] == [0, 1, 2, 2, 1, 2, 2]
    assert [s.index for s in sections] == list(range(7))
    assert [s.parent for s in sections] == [None, None, 1, 1, None, 4, 4]


def test_section_offsets_cover_the_heading_and_body_and_nest() -> None:
    sections = parse_markdown_sections(POLICIES)
    preamble, travel, receipts, limits, meals = sections[:5]
    assert POLICIES[preamble.start : preamble.end].strip() == "Handbook intro."
    assert POLICIES[receipts.start : receipts.end] == "## Receipts\n\nSubmit within 30 days.\n\n"
    assert POLICIES[receipts.body_start : receipts.own_end].strip() == "Submit within 30 days."
    assert travel.end == meals.start and travel.own_end == receipts.start  # includes its subsections
    assert limits.end == meals.start
    assert sections[-1].end == len(POLICIES)
    # the own ranges tile the text from the start
    assert [s.own_end for s in sections[:-1]] == [s.start for s in sections[1:]]


def test_lookups_by_offset() -> None:
    sections = parse_markdown_sections(POLICIES)
    at = POLICIES.index("14 days")
    assert section_at(sections, at).path == ("Meals Policy", "Receipts")
    assert section_at(sections, len(POLICIES)).path == ("Meals Policy", "Limits")
    across = enclosing_section(sections, POLICIES.index("30 days"), POLICIES.index("Economy"))
    assert across.path == ("Travel Policy",)
    assert enclosing_section(sections, 0, POLICIES.index("Applies")) is None  # preamble + a section


def test_setext_headings_closing_hashes_and_what_is_not_a_heading() -> None:
    text = "Title\n=====\n\nintro\n\nPart two\n--------\nbody\n\n#hashtag is text\n#\n- item\n---\n"
    sections = parse_markdown_sections(text)
    assert [(s.path, s.level) for s in sections] == [(("Title",), 1), (("Title", "Part two"), 2)]
    assert parse_markdown_sections("# A #\n## B ###\n")[1].path == ("A", "B")
    assert parse_markdown_sections("~~~\n# x\n~~~\n# y\n")[1].path == ("y",)


def test_no_headings_is_one_preamble_section_and_blank_text_none() -> None:
    assert [(s.path, s.start, s.end) for s in parse_markdown_sections("just text\n")] == [((), 0, 10)]
    assert parse_markdown_sections("  \n\n") == []
    assert parse_markdown_sections("\n\n# Top\nx")[0].path == ("Top",)  # a blank preamble is no section


def test_section_ids_and_sections_of_a_document() -> None:
    document = Document("handbook", POLICIES, "Handbook")
    assert sections_of(document) == parse_markdown_sections(POLICIES)
    assert section_id("handbook", 5) == "handbook§5"
    assert parse_section_id("handbook§5") == ("handbook", 5)
    assert parse_section_id("a§b§12") == ("a§b", 12)
    assert parse_section_id("handbook") is None and parse_section_id("x§") is None
