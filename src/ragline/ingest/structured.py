"""What the Office and mail loaders share: a builder of Markdown-like text, and opening an Office file safely.

Every loader writes the text ``markdown.py`` parses (see its docstring): headings as ``#`` lines (so the heading
tree gives each chunk its breadcrumb), paragraphs and list items as blocks separated by blank lines, tables as
Markdown tables with their header (``tables.py``). :class:`Blocks` builds that text and records, as it goes,
where each page, slide or sheet starts (the anchors of ``ragline.anchors``), and refuses to grow past a cap: a small
compressed file can expand to a huge text (a zip bomb, or a sheet of a million rows), and a load must stay
bounded in memory.

:func:`office_bytes` reads an Office Open XML file (``.docx``, ``.pptx``, ``.xlsx``) and says what is wrong with
one that cannot be read, by name: encrypted (a password-protected Office file is an OLE container, not a zip),
a legacy binary ``.doc``/``.xls``/``.ppt`` renamed, or truncated/corrupt (no zip directory at the end).
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any

from ragline.errors import InputError
from ragline.ingest.files import DEFAULT_MAX_BYTES, document_id, read_capped, sidecar_metadata
from ragline.types import Document

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
TEXT_PER_BYTE = 8  # a document's text may be this many times its file's size cap (Office files are zipped)
_MARKDOWN_LIKE = re.compile(r"^ {0,3}(#{1,6}(\s|$)|=+\s*$|-+\s*$|`{3,}|~{3,}|\|)")
_SPACE = re.compile(r"[ \t\u00a0]+")


class Blocks:
    """Markdown-like text built block by block, with anchors and a size cap (``InputError`` past it)."""

    def __init__(self, where: str, max_chars: int) -> None:
        self.where, self.max_chars = where, max_chars
        self.parts: list[str] = []
        self.length = 0
        self.starts: dict[str, list[int]] = {}
        self.names: list[str] = []
        self.shift = 0  # added to heading levels: an attachment's headings sit under its own
        self.anchoring = True  # False inside an attachment: its pages are not the document's

    def mark(self, kind: str, name: str | None = None) -> None:
        """A new page, slide or sheet (``kind`` = ``page_starts``, ...) starts at the next block."""
        if not self.anchoring:
            return
        self.starts.setdefault(kind, []).append(self.length + (2 if self.parts else 0))
        if name is not None:
            self.names.append(name)

    def add(self, block: str) -> None:
        block = block.strip("\n")
        if not block.strip():
            return
        if self.parts:
            self.length += 2
        self.parts.append(block)
        self.length += len(block)
        if self.length > self.max_chars:
            raise InputError(
                self.where, f"its text is over {self.max_chars:,} characters (raise --max-file-mb to index it)"
            )

    def heading(self, level: int, text: str) -> None:
        text = _SPACE.sub(" ", text).strip()
        if text:
            self.add("#" * min(max(level + self.shift, 1), 6) + " " + text)

    def paragraph(self, text: str) -> None:
        """A paragraph; a line Markdown would read as a heading, rule, fence or table row gets a ``\\``."""
        lines = [_SPACE.sub(" ", line).strip() for line in text.replace("\r", "\n").split("\n")]
        self.add("\n".join("\\" + line if _MARKDOWN_LIKE.match(line) else line for line in lines if line))

    def item(self, text: str, level: int = 0, ordered: bool = False) -> None:
        text = _SPACE.sub(" ", text).strip()
        if text:
            self.add("  " * level + ("1. " if ordered else "- ") + text)

    def text(self) -> str:
        return "\n\n".join(self.parts)

    def anchors(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.starts)
        if self.names:
            out["sheet_names"] = self.names
        return out


def office_bytes(path: Path, max_bytes: int, kind: str) -> bytes:
    """The bytes of an Office Open XML file, or an ``InputError`` saying why it cannot be read."""
    data = read_capped(path, max_bytes)
    check_office(data, str(path), kind)
    return data


def check_office(data: bytes, where: str, kind: str) -> None:
    if data.startswith(OLE_MAGIC):
        raise InputError(
            where,
            f"encrypted (password-protected) or legacy binary {kind} file: save it unprotected as {kind} first",
        )
    if not data.startswith(b"PK"):
        raise InputError(where, f"not a {kind} file (no zip header)")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise InputError(where, f"truncated or corrupt {kind} file ({error}): export it again") from None


def text_cap(max_bytes: int) -> int:
    return max(max_bytes, DEFAULT_MAX_BYTES) * TEXT_PER_BYTE


def structured_document(
    path: Path, relative: Path, blocks: Blocks, metadata: dict[str, Any], title: str = ""
) -> Document:
    """The Document of a loaded file: its text, anchors, the file's own metadata, then the sidecar's."""
    text = blocks.text()
    if not text.strip():
        raise InputError(str(path), "empty: no text to index")
    metadata = {k: v for k, v in metadata.items() if v not in (None, "", [])}
    metadata.update(blocks.anchors())
    metadata.update(sidecar_metadata(path))
    title = str(metadata.pop("title", "") or title or path.stem)
    return Document(document_id(relative), text, title, metadata, source=relative.as_posix())


def core_metadata(properties: Any) -> dict[str, Any]:
    """Author, title and dates of an Office file's core properties (python-docx, python-pptx, openpyxl)."""
    out: dict[str, Any] = {}
    for key, attribute in (("author", "author"), ("title", "title"), ("created", "created"), ("modified", "modified")):
        value = getattr(properties, attribute, None)
        if value:
            out[key] = value.isoformat() if hasattr(value, "isoformat") else str(value).strip()
    return out
