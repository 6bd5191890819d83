"""The layout reading of a PDF (pdfplumber): tables, headings, page furniture and hyphens (see ``pdf.py``)."""

from __future__ import annotations

import io
import re
from collections import Counter
from typing import Any

from ragline.errors import InputError
from ragline.ingest.tables import table_from_grid

HEADING_RATIO = 1.15  # a line at least this much larger than the body text is a heading
HEADING_WORDS = 12
FURNITURE_LINES = 2  # lines at the top and at the bottom of a page that may be a running header or footer
_HYPHEN = re.compile(r"([a-z])-\n([a-z])")
_DIGITS = re.compile(r"\d+")

MARGIN = 0.08  # the top and bottom share of a page where running headers and footers are looked for
# A page item: (top, kind, text, size, bottom): kind "line", "margin" (a line in the top or bottom margin band:
# perhaps a running header or footer) or "table"; size the line's main font size.
Item = tuple[float, str, str, float, float]
Box = tuple[float, float, float, float]  # x0, top, x1, bottom


def read_layout(data: bytes, where: str) -> tuple[list[str], list[int]]:
    """Each page's text (Markdown-like) and the 1-based numbers of scanned pages (images, no text)."""
    import pdfplumber

    pages: list[list[Item]] = []
    ocr: list[int] = []
    sizes: Counter[float] = Counter()
    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            for number, page in enumerate(pdf.pages, start=1):
                items = _page_items(page)
                if not items and page.images:
                    ocr.append(number)
                for _, kind, text, size, _ in items:
                    if kind != "table":
                        sizes[size] += len(text)
                pages.append(items)
                page.close()  # drops the page's parsed objects: memory follows the text, not the page count
    except InputError:
        raise
    except Exception as error:  # noqa: BLE001 (pdfminer raises many kinds on damaged content streams)
        raise InputError(where, f"corrupt PDF, its layout cannot be read ({type(error).__name__}: {error})") from None
    _drop_furniture(pages)
    levels = _heading_levels(sizes)
    return [_page_text(items, levels) for items in pages], ocr


def _page_items(page: Any) -> list[Item]:
    tables = page.find_tables()
    boxes: list[Box] = [t.bbox for t in tables]
    items: list[Item] = []
    for i, table in enumerate(tables):
        grid = [[cell or "" for cell in row] for row in table.extract()]
        if sum(1 for row in grid if any(c.strip() for c in row)) >= 2:
            wider = _beyond_rules(page, table.bbox, grid)
            if wider is not None:
                grid, boxes[i] = wider
            items.append((table.bbox[1], "table", table_from_grid(grid), 0.0, table.bbox[3]))
        else:
            boxes[i] = (0.0, 0.0, 0.0, 0.0)  # a one-row "table" is a box around text: read it as text
    rest = page.filter(lambda obj: not _inside(obj, boxes)) if boxes else page
    for line in rest.extract_text_lines(strip=True, return_chars=True):
        text = line["text"].strip()
        if not text:
            continue
        chars = Counter(round(float(c.get("size", 0.0)), 1) for c in line["chars"] if c.get("text", " ").strip())
        size = chars.most_common(1)[0][0] if chars else 0.0
        top, bottom = float(line["top"]), float(line["bottom"])
        margin = top < page.height * MARGIN or bottom > page.height * (1 - MARGIN)
        items.append((top, "margin" if margin else "line", text, size, bottom))
    items.sort(key=lambda item: item[0])
    return items


def _beyond_rules(page: Any, bbox: Box, grid: list[list[str]]) -> tuple[list[list[str]], Box] | None:
    """A ruled table whose rows go on past its rules (row names in an unruled first column, a last column
    outside the frame, as LaTeX and R print tables): the table's band of the page read by text alignment, when
    there is text beside the frame and the band reads as one table with the same rows and more columns."""
    x0, top, x1, bottom = bbox
    band = page.crop((0, max(top - 1, 0), page.width, min(bottom + 1, page.height)))
    if not any(c["text"].strip() and (c["x1"] <= x0 or c["x0"] >= x1) for c in band.chars):
        return None
    found = band.find_tables({"vertical_strategy": "text", "horizontal_strategy": "text"})
    if len(found) != 1:
        return None
    wider = [[cell or "" for cell in row] for row in found[0].extract()]
    wider = [row for row in wider if any(c.strip() for c in row)]  # text alignment reads a row gap as a row
    filled = sum(1 for row in grid if any(c.strip() for c in row))
    if len(wider) != filled or max(map(len, wider)) <= max(map(len, grid)):
        return None
    a = found[0].bbox
    return wider, (min(a[0], x0), min(a[1], top), max(a[2], x1), max(a[3], bottom))


def _inside(obj: dict[str, Any], boxes: list[Box]) -> bool:
    x = (float(obj.get("x0", 0)) + float(obj.get("x1", 0))) / 2
    y = (float(obj.get("top", 0)) + float(obj.get("bottom", 0))) / 2
    return any(x0 <= x <= x1 and top <= y <= bottom for x0, top, x1, bottom in boxes)


def _furniture_key(text: str) -> str:
    return _DIGITS.sub("#", text.lower()).strip()


def _drop_furniture(pages: list[list[Item]]) -> None:
    """Remove lines in the margin bands repeated at the top or bottom of at least half the pages (and 3)."""
    if len(pages) < 3:
        return
    seen: Counter[str] = Counter()
    for items in pages:
        lines = [item for item in items if item[1] == "margin"]
        edge = {_furniture_key(item[2]) for item in lines[:FURNITURE_LINES] + lines[-FURNITURE_LINES:]}
        seen.update(edge)
    repeated = {key for key, count in seen.items() if count >= max(3, len(pages) / 2)}
    if not repeated:
        return
    for items in pages:
        lines = [item for item in items if item[1] == "margin"]
        edge = {id(item) for item in lines[:FURNITURE_LINES] + lines[-FURNITURE_LINES:]}
        items[:] = [item for item in items if not (id(item) in edge and _furniture_key(item[2]) in repeated)]


def _heading_levels(sizes: Counter[float]) -> dict[float, int]:
    """Font size -> heading level, for sizes clearly above the body's (the size most text is set in)."""
    if not sizes:
        return {}
    body = sizes.most_common(1)[0][0]
    larger = sorted((s for s in sizes if s >= body * HEADING_RATIO), reverse=True)[:3]
    return {size: level for level, size in enumerate(larger, start=1)}


def _page_text(items: list[Item], levels: dict[float, int]) -> str:
    blocks: list[list[str]] = []
    previous_bottom: float | None = None
    previous_height = 0.0
    for item in items:
        top, kind, text, size, bottom = item
        if kind == "table":
            blocks.append([text])
            previous_bottom = None
            continue
        level = levels.get(size)
        if level is not None and len(text.split()) <= HEADING_WORDS:
            blocks.append(["#" * level + " " + text])
            previous_bottom = None
            continue
        height = bottom - top
        gap = top - previous_bottom if previous_bottom is not None else None
        paragraph_break = gap is None or gap > max(previous_height, height) * 0.9
        if paragraph_break or not blocks or blocks[-1][0].startswith(("#", "|")):
            blocks.append([text])
        else:
            blocks[-1].append(text)
        previous_bottom, previous_height = bottom, height
    text = "\n\n".join("\n".join(lines) for lines in blocks)
    return _HYPHEN.sub(r"\1\2", text)
