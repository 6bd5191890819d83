"""reStructuredText files as Documents: the text with its section titles as Markdown ``#`` headings.

Every loader writes Markdown-like text (see ``markdown.py``), so the structure chunker and the breadcrumbs
work on ``.rst`` files too. What the conversion does, line by line (no docutils: a small reader of the
parts that matter for retrieval):

* A section title is a line of text underlined, or over- and underlined, by one repeated punctuation
  character (at least as long as the title, or 3). Levels follow the order in which the adornment styles
  first appear (a style is the character plus whether there is an overline), as in docutils; a level
  deeper than 6 stays 6. The title becomes ``#`` * level + the title; the adornment lines go.
* A field list at the top (before any other text, after the title if there is one), such as
  ``:acl: hr, finance`` or ``:version: 3``, becomes metadata (docutils' "docinfo"): ``acl`` a list split on
  commas, integers as integers, keys lower-cased. A field given twice with different values is a
  ``MetadataError``. A ``<file>.meta.json`` sidecar overrides it, except an ``acl`` that differs: an error.
* Roles and hyperlink references keep their text (``:ref:`Billing <billing>``` -> ``Billing``), a
  directive line keeps its name and argument (``.. note:: Read this`` -> ``note: Read this``), link
  targets (``.. _label:``) go. Everything else, literal blocks and tables included, stays as written;
  a line Markdown would read as a heading or a code fence gets a ``\\`` in front.

The title is the first section title, else the file name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragline.errors import InputError
from ragline.ingest.files import (
    DEFAULT_MAX_BYTES,
    decode_text,
    document_id,
    field_value,
    read_capped,
    set_once,
    with_sidecar,
)
from ragline.types import Document

# An adornment line: one punctuation character repeated (RST allows any non-alphanumeric printable ASCII).
_ADORNMENT = re.compile(r"""^([!-/:-@\[-`{-~])\1{2,}[ \t]*$""")
_FIELD = re.compile(r"^:([A-Za-z][\w -]*?):(?:[ \t]+(.*?))?[ \t]*$")
_ROLE = re.compile(r":[\w.+-]+:`([^`]+)`")
_REFERENCE = re.compile(r"`([^`<]+?)\s*(?:<[^>`]*>)?`__?")
_LINK_TARGET = re.compile(r"^\s*\.\. _[^:]*:.*$")
_DIRECTIVE = re.compile(r"^(\s*)\.\. ([\w:.+-]+)::[ \t]*(.*)$")
_MARKDOWN_LIKE = re.compile(r"^ {0,3}(#{1,6}(\s|$)|`{3,}|~{3,})")


def load_rst(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One reStructuredText file as a Document; raises ``InputError`` saying what is wrong with it."""
    text, encoding = decode_text(read_capped(path, max_bytes), str(path))
    body, title, metadata = rst_to_markdown(text, str(path))
    del text
    with_sidecar(metadata, path, "field list")
    if encoding:
        metadata["encoding"] = encoding
    if not body.strip():
        raise InputError(str(path), "empty: no text to index")
    title = str(metadata.pop("title", "") or title or path.stem)
    return Document(document_id(relative), body, title, metadata, source=relative.as_posix())


def rst_to_markdown(text: str, where: str = "<text>") -> tuple[str, str, dict[str, Any]]:
    """``(markdown_text, title, docinfo_metadata)`` of a reStructuredText text (see the module docstring).

    A field given twice with different values is a ``MetadataError`` naming ``where`` (never the last wins).
    """
    lines = text.splitlines()
    out: list[str] = []
    styles: list[tuple[str, bool]] = []  # adornment styles in order of first appearance: index + 1 = level
    title = ""
    metadata: dict[str, Any] = {}
    seen_text = False  # any body text yet (a docinfo field list must come before it)
    i = 0
    while i < len(lines):
        heading = _heading_at(lines, i)
        if heading is not None:
            heading_text, style, used = heading
            if style not in styles:
                styles.append(style)
            level = min(styles.index(style) + 1, 6)
            out.append("#" * level + " " + heading_text)
            title = title or heading_text
            i += used
            continue
        line = lines[i]
        if not seen_text and _FIELD.match(line):
            fields, used = _field_list(lines, i, where)
            if fields is not None:
                metadata.update(fields)
                i += used
                seen_text = True
                continue
        if line.strip():
            seen_text = True
        out.append(_inline(line))
        i += 1
    return "\n".join(out), title, metadata


def _heading_at(lines: list[str], i: int) -> tuple[str, tuple[str, bool], int] | None:
    """``(title, style, lines used)`` when a section title starts at line ``i``."""
    line = lines[i]
    if i > 0 and lines[i - 1].strip() and not _ADORNMENT.match(lines[i - 1]):
        return None  # a title follows a blank line (or starts the text)
    overline = _ADORNMENT.match(line)
    if overline and i + 2 < len(lines):
        text, under = lines[i + 1].strip(), _ADORNMENT.match(lines[i + 2])
        if text and not _ADORNMENT.match(lines[i + 1]) and under and under.group(1) == overline.group(1):
            return text, (overline.group(1), True), 3
    if overline or not line.strip() or line[0] in " \t" or i + 1 >= len(lines):
        return None
    under = _ADORNMENT.match(lines[i + 1])
    if under and len(lines[i + 1].rstrip()) >= min(len(line.rstrip()), 3):
        return line.strip(), (under.group(1), False), 2
    return None


def _field_list(lines: list[str], i: int, where: str) -> tuple[dict[str, Any] | None, int]:
    """The fields of the block of ``:name: value`` lines at ``i`` (None unless every line of it is one)."""
    fields: dict[str, Any] = {}
    j = i
    while j < len(lines) and lines[j].strip():
        match = _FIELD.match(lines[j])
        if not match:
            return None, 0
        key, value = match.group(1).strip().lower(), (match.group(2) or "").strip()
        set_once(fields, key, field_value(key, value), where, f"field :{key}:")
        j += 1
    return fields, j - i


def _inline(line: str) -> str:
    if _LINK_TARGET.match(line):
        return ""
    directive = _DIRECTIVE.match(line)
    if directive:
        indent, name, argument = directive.groups()
        line = f"{indent}{name}:" + (f" {argument}" if argument else "")
    line = _REFERENCE.sub(r"\1", _ROLE.sub(lambda m: re.sub(r"\s*<[^>]*>$", "", m.group(1)), line))
    if _MARKDOWN_LIKE.match(line):
        indent = len(line) - len(line.lstrip(" "))
        line = line[:indent] + "\\" + line[indent:]
    return line
