"""HTML files as Documents: the page's content as Markdown-like text, boilerplate left out.

What the text keeps, block by block, separated by blank lines (so ``markdown.py`` finds the headings and
the chunkers find the paragraphs):

* ``<h1>``-``<h6>`` become ``#``-``######`` lines, so the heading tree of the page is the section tree;
* paragraphs and other blocks become paragraphs (``<br>`` a line break), with whitespace collapsed;
* ``<ul>``/``<ol>`` become ``-`` / ``1.`` items, indented two spaces a level;
* a ``<table>`` becomes one Markdown pipe table (first row as header, ``|`` in cells escaped, cells
  padded to the widest row, colspan ignored), its caption on the line above: one table, one block, so a
  chunker keeps it whole when it fits. A table holding headings or other tables is page layout, not data,
  and is read like a ``<div>``;
* ``<pre>`` becomes a fenced code block (a ``# comment`` in it is no heading).

What it drops: ``script``, ``style``, ``noscript``, ``template``, ``nav``, ``aside``, ``form`` and
form controls, ``iframe``, ``svg``, ``canvas``; ``header``/``footer`` of the page (those inside an
``article``, ``section`` or ``main`` belong to the content and stay); anything ``hidden``,
``aria-hidden="true"``, ``display:none`` or with a navigation/banner/contentinfo/complementary/search
``role``. When the page has exactly one ``<main>`` only it is read. A paragraph line that Markdown would
read as a heading, a setext underline or a code fence gets a ``\\`` in front.

The title is ``<title>``, else the first ``<h1>``, else the file name. Metadata comes from
``<meta name="acl" content="hr, finance">`` (a comma-separated list), ``<meta name="version">``
(an integer when it is one), ``<meta name="effective_date">``, and ``<meta name="ragline:KEY">`` for any
other key; two tags giving one key different values are a ``MetadataError`` (fail closed). A
``<file>.meta.json`` sidecar overrides them, as for every file, except an ``acl`` that differs: an error.

Broken HTML is parsed the way browsers do, leniently (libxml2 via lxml). Deep nesting: libxml2 parses up
to 2,048 levels (its "huge" limit; 256 by default, past which everything was lost); content nested more
than ``FLAT_DEPTH`` levels deep is kept as plain text (what is dropped above stays dropped, words stay
apart, its headings, lists and tables are read as text), so the walk stays within Python's recursion
limit; a page nested past 2,048 levels is refused (``InputError``), since the parser loses what follows.

The encoding is UTF-8 when the bytes decode as UTF-8, else the ``<meta charset>``, else Windows-1252
(what browsers assume); any other than UTF-8 is recorded as ``metadata["encoding"]``. A NUL byte
anywhere means binary: refused.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragline.errors import InputError
from ragline.ingest.files import DEFAULT_MAX_BYTES, document_id, field_value, read_capped, set_once, with_sidecar
from ragline.types import Document

_DROP = frozenset(
    "script style noscript template nav aside form button input select textarea option iframe svg canvas "
    "object embed head title meta link".split()
)
_PAGE_CHROME = frozenset(("header", "footer"))  # dropped unless inside the content (article, section, main)
_CONTENT = frozenset(("article", "section", "main"))
_HIDDEN_ROLES = frozenset(("navigation", "banner", "contentinfo", "complementary", "search"))
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset(
    "p div section article main body blockquote address figure figcaption dl dt dd li details summary "
    "center fieldset hr header footer table caption thead tbody tfoot tr td th".split()
)
_META_KEYS = frozenset(("acl", "version", "effective_date"))
FLAT_DEPTH = 200  # elements this deep have their content read as plain text (the walk below recurses)
_SPACE = re.compile(r"\s+")
_MARKDOWN_LIKE = re.compile(r"^ {0,3}(#{1,6}(\s|$)|=+\s*$|-+\s*$|`{3,}|~{3,})")
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w-]+)""", re.IGNORECASE)


def load_html(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One HTML file as a Document; raises ``InputError`` saying what is wrong with it."""
    import lxml.etree
    import lxml.html

    data = read_capped(path, max_bytes)
    if b"\x00" in data:  # anywhere: a NUL past the first block still means binary
        raise InputError(str(path), "looks binary (contains NUL bytes); skipped")
    encoding = _encoding(data)
    parser = lxml.html.HTMLParser(encoding=encoding, remove_comments=True, remove_pis=True, huge_tree=True)
    try:
        root = lxml.html.document_fromstring(data, parser=parser)
    except (lxml.etree.ParserError, ValueError):  # "Document is empty": nothing but whitespace
        raise InputError(str(path), "empty: no text to index") from None
    if any(error.type_name == "ERR_RESOURCE_LIMIT" for error in parser.error_log):
        raise InputError(
            str(path),
            "nests elements deeper than the HTML parser's limit (2,048 levels): what "
            "follows the limit would be lost; not indexed",
        )
    text = html_to_text(root)
    if not text.strip():
        raise InputError(str(path), "empty: no text to index (after removing scripts, navigation and markup)")
    metadata = with_sidecar(_meta_tags(root, str(path)), path, "<meta> tags")
    if encoding != "utf-8":
        metadata["encoding"] = encoding
    title = str(metadata.pop("title", "") or _title(root) or path.stem)
    return Document(document_id(relative), text, title, metadata, source=relative.as_posix())


def html_to_text(root: Any) -> str:
    """The Markdown-like text of a parsed page (an lxml element), as described in the module docstring."""
    _flatten_deep(root)
    body = root.find("body")
    mains = list(root.iter("main")) or [e for e in root.iter() if _attr(e, "role") == "main"]
    start = mains[0] if len(mains) == 1 else (body if body is not None else root)
    out = _Blocks()
    _emit(start, out)
    out.flush()
    return "\n\n".join(out.blocks)


def _flatten_deep(root: Any, depth: int = FLAT_DEPTH) -> None:
    """Read the content of elements ``depth`` levels deep as plain text: drop what ``_dropped`` drops, keep
    block boundaries as spaces, strip every tag below (iteratively: the walk after this may recurse)."""
    import lxml.etree

    stack = [(root, 0)]
    while stack:
        element, level = stack.pop()
        if level < depth:
            stack.extend((child, level + 1) for child in element)
            continue
        inside = [element]
        while inside:
            node = inside.pop()
            for child in list(node):
                tag = _tag(child)
                if tag and _dropped(child, tag):
                    child.drop_tree()  # its tail stays
                    continue
                if tag in _BLOCKS or tag in _HEADINGS or tag in ("br", "li", "ul", "ol", "pre"):
                    child.text = " " + (child.text or "")
                    child.tail = " " + (child.tail or "")
                inside.append(child)
        lxml.etree.strip_tags(element, "*")


class _Blocks:
    """Collects blocks; inline text accumulates into the current paragraph until a block boundary."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self._inline: list[str] = []

    def text(self, text: str | None) -> None:
        if text:
            self._inline.append(_SPACE.sub(" ", text))

    def line_break(self) -> None:
        self._inline.append("\n")

    def flush(self) -> None:
        lines = (line.strip() for line in "".join(self._inline).split("\n"))
        self._inline = []
        paragraph = "\n".join("\\" + line if _MARKDOWN_LIKE.match(line) else line for line in lines if line)
        if paragraph:
            self.blocks.append(paragraph)

    def add(self, block: str) -> None:
        self.flush()
        if block.strip():
            self.blocks.append(block)


def _emit(element: Any, out: _Blocks) -> None:
    """Write ``element`` (its text and children, not its tail) to ``out``."""
    tag = _tag(element)
    if not tag or _dropped(element, tag):
        return
    if tag in _HEADINGS:
        heading = _inline(element)
        if heading:
            out.add("#" * _HEADINGS[tag] + " " + heading)
        return
    if tag in ("ul", "ol"):
        out.add(_list(element, 0))
        return
    if tag == "table" and not _is_layout(element):
        out.add(_table(element))
        return
    if tag == "pre":
        out.add(_fenced(element.text_content()))
        return
    if tag == "br":
        out.line_break()
        return
    block = tag in _BLOCKS
    if block:
        out.flush()
    out.text(element.text)
    for child in element:
        _emit(child, out)
        out.text(child.tail)
    if block:
        out.flush()


def _tag(element: Any) -> str:
    return element.tag.lower() if isinstance(element.tag, str) else ""  # comments and PIs have no str tag


def _attr(element: Any, name: str) -> str:
    return (element.get(name) or "").strip().lower()


def _dropped(element: Any, tag: str) -> bool:
    if tag in _DROP:
        return True
    if tag in _PAGE_CHROME and not any(_tag(a) in _CONTENT for a in element.iterancestors()):
        return True
    style = _attr(element, "style").replace(" ", "")
    return (
        element.get("hidden") is not None
        or _attr(element, "aria-hidden") == "true"
        or _attr(element, "role") in _HIDDEN_ROLES
        or "display:none" in style
    )


def _inline(element: Any, skip: tuple[Any, ...] = ()) -> str:
    """All text of ``element`` on one line (blocks inside separated by a space), skipping ``skip``."""
    parts: list[str] = []

    def visit(node: Any) -> None:
        tag = _tag(node)
        if tag and not _dropped(node, tag) and not any(node is s for s in skip):
            spaced = tag in _BLOCKS or tag == "br"
            parts.append(" " if spaced else "")
            parts.append(node.text or "")
            for child in node:
                visit(child)
                parts.append(child.tail or "")
            parts.append(" " if spaced else "")

    visit(element)
    return _SPACE.sub(" ", "".join(parts)).strip()


def _list(element: Any, depth: int) -> str:
    lines = []
    ordered = _tag(element) == "ol"
    number = int(element.get("start")) if ordered and (element.get("start") or "").isdigit() else 1
    for item in element:
        tag = _tag(item)
        if tag in ("ul", "ol"):  # a list directly inside a list (invalid, common): one level deeper
            lines.append(_list(item, depth + 1))
            continue
        if tag != "li" or _dropped(item, tag):
            continue
        nested = tuple(c for c in item.iter("ul", "ol") if c is not item)
        text = _inline(item, skip=nested)
        if text:
            lines.append("  " * depth + (f"{number}." if ordered else "-") + " " + text)
            number += 1
        lines.extend(_list(sub, depth + 1) for sub in nested if next(sub.iterancestors("ul", "ol")) is element)
    return "\n".join(line for line in lines if line)


def _is_layout(table: Any) -> bool:
    """A table holding headings or other tables lays out a page; its cells are read like divs."""
    return any(True for _ in table.iterdescendants("table", *_HEADINGS))


def _table(table: Any) -> str:
    rows = []
    for row in table.iter("tr"):
        cells = [_inline(cell).replace("|", "\\|") for cell in row if _tag(cell) in ("td", "th")]
        if any(cells):
            rows.append(cells)
    caption = table.find("caption")
    caption_text = _inline(caption) if caption is not None else ""
    if not rows:
        return caption_text
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    lines = [caption_text] if caption_text else []
    lines.append("| " + " | ".join(rows[0]) + " |")
    lines.append("|" + " --- |" * width)
    lines.extend("| " + " | ".join(row) + " |" for row in rows[1:])
    return "\n".join(lines)


def _fenced(code: str) -> str:
    code = code.strip("\n")
    if not code.strip():
        return ""
    longest = max((len(run) for run in re.findall(r"`{3,}", code)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}\n{code}\n{fence}"


def _title(root: Any) -> str:
    title = root.find(".//title")  # <title> is in _DROP (never part of the text): read it directly
    if title is not None and title.text_content().strip():
        return _SPACE.sub(" ", title.text_content()).strip()
    h1 = next(root.iter("h1"), None)
    return _inline(h1) if h1 is not None else ""


def _meta_tags(root: Any, where: str) -> dict[str, Any]:
    """Metadata from the page's ``<meta>`` tags; a key two tags give differently is a ``MetadataError``."""
    metadata: dict[str, Any] = {}
    for meta in root.iter("meta"):
        name, content = _attr(meta, "name"), (meta.get("content") or "").strip()
        key = name.removeprefix("ragline:")
        if not content or not (name in _META_KEYS or name.startswith("ragline:")) or not key:
            continue
        set_once(metadata, key, field_value(key, content), where, f'<meta name="{key}"> (or "ragline:{key}")')
    return metadata


def _encoding(data: bytes) -> str:
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    declared = _CHARSET.search(data[:4096])
    if declared:
        import codecs

        try:
            return codecs.lookup(declared.group(1).decode("ascii")).name
        except (LookupError, UnicodeDecodeError):
            pass
    return "cp1252"
