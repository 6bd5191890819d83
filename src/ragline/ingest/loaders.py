"""Loaders: files and JSON Lines records in, ``Document``s out, bad input reported and skipped.

A folder load never stops at a bad file: each unreadable, binary, empty, non-UTF-8 or oversized file
becomes an ``InputError`` naming it in the ``LoadReport``, and the other files load. A document's id
is its path relative to the folder without the extension (stable across runs and machines), so
re-indexing a folder updates documents in place.

HTML (``.html``, ``.htm``) and PDF files go to their own loaders (``html.py``, ``pdf.py``).

Markdown and text files may begin with YAML front matter (``---`` lines); its keys become metadata
(``title`` sets the title; ``acl``, ``version``, ``effective_date`` ... are filterable). A sidecar
``<file>.meta.json`` does the same for any file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ragline.errors import InputError
from ragline.types import Document

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
TEXT_SUFFIXES = (".txt", ".md", ".markdown")
DOCUMENT_SUFFIXES = (*TEXT_SUFFIXES, ".html", ".htm", ".pdf")
_FRONT_MATTER = "---"


@dataclass
class LoadReport:
    """What a load produced: the documents, and each file or record it had to skip, with why."""

    documents: list[Document] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)


def iter_jsonl(path: str | Path, errors: list[InputError] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``("path:line", object)`` for each non-blank line.

    A bad line raises ``InputError`` naming ``path:line``; with an ``errors`` list it is appended
    there instead and the reading goes on.
    """
    path = Path(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed by the with below; open errors reported first)
    except OSError as error:
        raise InputError(str(path), f"cannot open: {error.strerror or error}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            where = f"{path}:{number}"
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise InputError(where, f"expected a JSON object, got {type(record).__name__}")
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                bad = InputError(where, f"not valid JSON: {error}")
            except InputError as error:
                bad = error
            else:
                yield where, record
                continue
            if errors is None:
                raise bad
            errors.append(bad)


def load_jsonl_corpus(path: str | Path) -> LoadReport:
    """A BEIR-style ``corpus.jsonl`` (``_id``, ``text``, optional ``title``, ``metadata``).

    A malformed line or record is reported with its line number and skipped.
    """
    report = LoadReport()
    try:
        for where, record in iter_jsonl(path, report.errors):
            try:
                report.documents.append(document_from_record(record, where))
            except InputError as error:
                report.errors.append(error)
    except InputError as error:  # the file itself could not be opened
        report.errors.append(error)
    return report


def document_from_record(record: dict[str, Any], where: str) -> Document:
    doc_id = record.get("_id", record.get("id"))
    if not isinstance(doc_id, (str, int)) or str(doc_id) == "":
        raise InputError(where, "field '_id' is missing or empty")
    text, title = record.get("text", ""), record.get("title") or ""
    if not isinstance(text, str) or not isinstance(title, str):
        raise InputError(where, "fields 'text' and 'title' must be strings")
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InputError(where, f"field 'metadata' must be an object, got {type(metadata).__name__}")
    return Document(str(doc_id), text, title, metadata)


def load_folder(
    root: str | Path,
    suffixes: tuple[str, ...] = DOCUMENT_SUFFIXES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    on_file: Callable[[Path], None] | None = None,
) -> LoadReport:
    """Every non-hidden file under ``root`` with one of ``suffixes``, in path order."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(str(root), "no such directory")
    report = LoadReport()
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.suffix.lower() not in suffixes or any(p.startswith(".") for p in relative.parts):
            continue
        if not path.is_file():
            continue
        if on_file:
            on_file(path)
        try:
            report.documents.append(load_file(path, relative, max_bytes))
        except InputError as error:
            report.errors.append(error)
    return report


def load_file(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One file as a Document, by its suffix: HTML, PDF, else text or Markdown."""
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        from ragline.ingest.html import load_html  # imported here: they import this module (and lxml is slow)

        return load_html(path, relative, max_bytes)
    if suffix == ".pdf":
        from ragline.ingest.pdf import load_pdf

        return load_pdf(path, relative, max_bytes)
    return load_text_file(path, relative, max_bytes)


def read_capped(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of a file, or ``InputError`` when it is over ``max_bytes`` or cannot be read."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(str(path), f"{size:,} bytes is over the size cap of {max_bytes:,} (raise --max-file-mb)")
        return path.read_bytes()
    except OSError as error:
        raise InputError(str(path), f"cannot read: {error.strerror or error}") from None


def load_text_file(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One text or Markdown file as a Document; raises ``InputError`` saying what is wrong with it."""
    data = read_capped(path, max_bytes)
    if b"\x00" in data[:8192]:
        raise InputError(str(path), "looks binary (contains NUL bytes); skipped")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(str(path), f"not valid UTF-8 (byte {error.start}); convert it to UTF-8") from None
    metadata, body = split_front_matter(text, str(path))
    metadata.update(sidecar_metadata(path))
    if not body.strip():
        raise InputError(str(path), "empty: no text to index")
    title = str(metadata.pop("title", "") or _markdown_title(body) or path.stem)
    return Document(document_id(relative), body, title, metadata, source=relative.as_posix())


def document_id(relative: Path) -> str:
    """A file's document id: its path under the indexed folder, without the extension (``a/b.md`` -> ``a/b``)."""
    return relative.with_suffix("").as_posix()


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    """YAML front matter (between two ``---`` lines at the top) and the rest of the text."""
    if not text.startswith(_FRONT_MATTER + "\n"):
        return {}, text
    end = text.find("\n" + _FRONT_MATTER, len(_FRONT_MATTER))
    if end < 0:
        return {}, text
    try:
        meta = yaml.safe_load(text[len(_FRONT_MATTER) + 1 : end]) or {}
    except yaml.YAMLError as error:
        raise InputError(where, f"front matter is not valid YAML: {error}") from None
    if not isinstance(meta, dict):
        raise InputError(where, "front matter must be a mapping of keys to values")
    body_start = text.find("\n", end + 1)
    return {str(k): _plain(v) for k, v in meta.items()}, text[body_start + 1 :] if body_start >= 0 else ""


def _plain(value: Any) -> Any:
    """YAML dates become ISO strings, so metadata stays JSON and compares as text."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def sidecar_metadata(path: Path) -> dict[str, Any]:
    """Metadata from ``<file>.meta.json`` next to ``path`` (every loader honours it; {} when absent)."""
    sidecar = path.with_name(path.name + ".meta.json")
    if not sidecar.is_file():
        return {}
    try:
        meta = json.loads(sidecar.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(str(sidecar), f"cannot read sidecar metadata: {error}") from None
    if not isinstance(meta, dict):
        raise InputError(str(sidecar), "sidecar metadata must be a JSON object")
    return meta


def _markdown_title(text: str) -> str:
    for line in text.splitlines()[:20]:
        if line.startswith("# "):
            return line[2:].strip()
    return ""
