"""The heading tree of a document: which section (path of headings) each character belongs to.

Design: structure is never stored beside the text, it is *derived from* the text. Every loader writes
Markdown-like text (Markdown files as they are; HTML headings become ``#`` lines, see ``html.py``), so
one parser gives the sections of every document, and a section can be recomputed at read time from
the stored text alone (small-to-big, ``retrieve/expand.py``). Metadata stays filterable scalars.
PDF text has no reliable headings: a PDF is one section, and its pages are recorded separately as
``metadata["page_starts"]`` (see ``pdf.py``).

What counts as a heading (CommonMark's two kinds, simplified):

* ATX: a line ``#`` to ``######`` + space + text, indented at most 3 spaces; a closing ``###`` run is
  dropped. Lines inside fenced code blocks (````` ``` ````` or ``~~~``) are not headings.
* Setext: a line of text directly underlined by ``===`` (level 1) or ``---`` (level 2). Only the one
  line above the underline is the heading (CommonMark allows a multi-line paragraph).

Limits: HTML blocks and block quotes are not parsed; a ``#`` line inside them still counts.

Sections nest: ``end`` includes subsections, ``own_end`` stops at the first subsection, so the
``[start, own_end)`` ranges of all sections tile the text from the first heading on. Text before the
first heading is a level-0 "preamble" section with the empty path, when it is not blank. A section's
id is ``f"{doc_id}§{index}"`` (:func:`section_id`), ``index`` being its position in document order.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from functools import lru_cache

from ragline.types import Document

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A line that cannot be the text of a setext heading: blank, a list item, a quote, a table row, a fence.
_NOT_SETEXT_TEXT = re.compile(r"^\s*$|^ {0,3}([-*+]\s|\d+[.)]\s|>|\||`{3,}|~{3,})")


@dataclass(frozen=True, slots=True)
class Section:
    """One heading and the text under it, as character offsets into the document's text."""

    path: tuple[str, ...]  # the headings from the top down to this one; () for the preamble
    level: int  # 1-6 for a heading, 0 for the preamble
    start: int  # where the heading line starts (0 for the preamble)
    body_start: int  # where the text after the heading line starts
    own_end: int  # where the first subsection (or any next heading) starts
    end: int  # where the next heading of the same or a higher level starts: includes subsections
    index: int  # position in document order; the section's id is f"{doc_id}§{index}"
    parent: int | None = None  # index of the enclosing section; None at the top (and for the preamble)

    @property
    def heading(self) -> str:
        return self.path[-1] if self.path else ""


def section_id(doc_id: str, index: int) -> str:
    """The id of section ``index`` of document ``doc_id``: the ``parent_id`` of structure-aware chunks."""
    return f"{doc_id}§{index}"


def parse_section_id(parent_id: str) -> tuple[str, int] | None:
    """``"policy§3"`` -> ``("policy", 3)``; None when ``parent_id`` names no section."""
    doc_id, mark, index = parent_id.rpartition("§")
    return (doc_id, int(index)) if mark and index.isdigit() else None


def is_heading_line(line: str) -> bool:
    """Whether one line is an ATX heading (``## Receipts``)."""
    match = _ATX.match(line)
    return bool(match and (match.group(2) or "").strip())


def parse_markdown_sections(text: str) -> list[Section]:
    """The sections of a Markdown text in document order (see the module docstring for the rules)."""
    return list(_parse(text))


def sections_of(document: Document) -> list[Section]:
    """The sections of a document, derived from its text (every loader writes Markdown-like text)."""
    return list(_parse(document.text))


def section_at(sections: list[Section], offset: int) -> Section | None:
    """The innermost section holding character ``offset`` (None before the first non-blank text)."""
    # The own ranges tile the text: the last section starting at or before `offset` holds it.
    after = bisect_right(sections, offset, key=lambda section: section.start)
    if after == 0:
        return None
    section = sections[after - 1]
    return section if offset < section.own_end or after == len(sections) else None


def enclosing_section(sections: list[Section], start: int, end: int) -> Section | None:
    """The smallest section holding all of ``[start, end)``; None when no one section does."""
    inner = section_at(sections, start)
    while inner is not None and end > inner.end:
        inner = None if inner.parent is None else sections[inner.parent]
    return inner


@lru_cache(maxsize=256)  # small-to-big asks again for the sections of the documents it just read
def _parse(text: str) -> tuple[Section, ...]:
    headings = _headings(text)  # (start, body_start, level, title)
    sections: list[Section] = []
    first_start = headings[0][0] if headings else len(text)
    if text[:first_start].strip():
        sections.append(Section((), 0, 0, 0, first_start, first_start, 0))
    shift = len(sections)  # section index = heading index + 1 when there is a preamble
    # A section ends where the next heading of its level or a higher one starts: close them with a stack.
    ends = [len(text)] * len(headings)
    open_: list[int] = []  # indices of the headings whose sections are open, outermost first
    for i, (start, body_start, level, title) in enumerate(headings):
        while open_ and headings[open_[-1]][2] >= level:
            ends[open_.pop()] = start
        parent = open_[-1] + shift if open_ else None
        path = (*sections[parent].path, title) if parent is not None else (title,)
        own_end = headings[i + 1][0] if i + 1 < len(headings) else len(text)
        sections.append(Section(path, level, start, body_start, own_end, 0, i + shift, parent))
        open_.append(i)
    return tuple(replace(s, end=ends[s.index - shift]) if s.level else s for s in sections)


def _headings(text: str) -> list[tuple[int, int, int, str]]:
    found: list[tuple[int, int, int, str]] = []
    fence: str | None = None  # the opening run of the code block we are in
    previous: tuple[int, str] | None = None  # (start, line) of the line before, if it could be setext text
    offset = 0
    for line in text.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        bare = line.rstrip("\r\n")
        fence_match = _FENCE.match(bare)
        if fence is not None:  # inside a code block only its closing fence matters
            if fence_match and fence_match.group(1)[0] == fence[0] and len(fence_match.group(1)) >= len(fence):
                fence = None
            previous = None
            continue
        if fence_match:
            fence, previous = fence_match.group(1), None
            continue
        atx = _ATX.match(bare)
        if atx and (atx.group(2) or "").strip():
            found.append((start, offset, len(atx.group(1)), atx.group(2).strip()))
            previous = None
            continue
        setext = _SETEXT.match(bare)
        if setext and previous is not None:
            found.append((previous[0], offset, 1 if setext.group(1)[0] == "=" else 2, previous[1].strip()))
            previous = None
            continue
        previous = None if _NOT_SETEXT_TEXT.match(bare) else (start, bare)
    return found
