"""Anchors: the page of a PDF, the slide of a deck, the sheet of a workbook that a chunk comes from.

A loader records where each page, slide or sheet starts in the document's text, as offsets:
``metadata["page_starts"]`` (PDF; page 1 first), ``metadata["slide_starts"]`` (a deck; slide 1 first),
``metadata["sheet_starts"]`` with ``metadata["sheet_names"]`` (a workbook). The text holds no markers of its
own for them. A chunker turns the offsets into the chunk's anchor, ``page`` / ``slide`` (1-based numbers) or
``sheet`` (the sheet's name), from where the chunk starts (:func:`anchors_at`); the lists themselves are not
copied to chunks (``ANCHOR_LISTS``). A citation and a JSON source carry the anchor (:func:`anchor_of`).

A chunk never spans two pages, slides or sheets (:func:`split_at_anchors` cuts it at the boundary, whatever the
chunker), so its anchor names all of it: a citation of a cell of sheet "Contacts" says "Contacts", not the sheet
before it, and a table on page 2 is cited as page 2. The price: a paragraph running on to the next page is two
passages.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import Any

# list of start offsets -> the chunk key it gives
_NUMBERED = (("page_starts", "page"), ("slide_starts", "slide"))
ANCHOR_LISTS = frozenset(("page_starts", "slide_starts", "sheet_starts", "sheet_names"))
ANCHOR_KEYS = ("page", "slide", "sheet")


def _position(starts: object, offset: int) -> int | None:
    """The 1-based index of the last start at or before ``offset`` (1 before the first)."""
    if not isinstance(starts, list) or not starts:
        return None
    return max(bisect_right(starts, offset), 1)


def anchors_at(metadata: Mapping[str, Any], offset: int) -> dict[str, int | str]:
    """The page, slide or sheet holding character ``offset`` of a document with these metadata ({} if none)."""
    out: dict[str, int | str] = {}
    for starts, key in _NUMBERED:
        at = _position(metadata.get(starts), offset)
        if at is not None:
            out[key] = at
    at = _position(metadata.get("sheet_starts"), offset)
    names = metadata.get("sheet_names")
    if at is not None and isinstance(names, list) and at <= len(names):
        out["sheet"] = str(names[at - 1])
    return out


def split_at_anchors(text: str, metadata: Mapping[str, Any], spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` cut where a page, slide or sheet starts (each piece stripped of surrounding whitespace); a piece
    inside one kept before is dropped. Spans of documents without anchors come back as they were."""
    keys = ("page_starts", "slide_starts", "sheet_starts")
    cuts = sorted({x for key in keys for x in metadata.get(key) or [] if x > 0})
    if not cuts:
        return list(spans)
    out: list[tuple[int, int]] = []
    for start, end in spans:
        edges = [start, *(x for x in cuts if start < x < end), end]
        for a, b in zip(edges, edges[1:]):
            while a < b and text[a].isspace():
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            if a < b and not any(s <= a and b <= e for s, e in out[-3:]):
                out.append((a, b))
    return out


def anchor_of(metadata: Mapping[str, Any] | None) -> dict[str, int | str]:
    """The anchor keys a chunk's metadata holds (``page``, ``slide``, ``sheet``), for a JSON source."""
    if not metadata:
        return {}
    return {key: metadata[key] for key in ANCHOR_KEYS if isinstance(metadata.get(key), (int, str))}


def anchor_label(metadata: Mapping[str, Any] | None) -> str:
    """ "p. 3", "slide 2", "sheet Rates" ("" when the chunk has no anchor), for people."""
    anchor = anchor_of(metadata)
    parts = []
    if "page" in anchor:
        parts.append(f"p. {anchor['page']}")
    if "slide" in anchor:
        parts.append(f"slide {anchor['slide']}")
    if "sheet" in anchor:
        parts.append(f"sheet {anchor['sheet']}")
    return ", ".join(parts)
