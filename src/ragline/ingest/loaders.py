"""Loaders: files and JSON Lines records in, ``Document``s out, bad input reported and skipped.

A folder load never stops at a bad file: each unreadable, binary, empty, undecodable or oversized file,
each unreadable folder, each link out of the folder and each pair of files that would share an id becomes
an ``InputError`` naming it in the ``LoadReport``, and the other files load. A document's id is its path
relative to the folder without the extension (stable across runs and machines), so re-indexing a folder
updates documents in place; two files that differ only by extension (``notes.md``, ``notes.txt``) would
share one, so neither is loaded and both are reported.

What a failure keeps: ``LoadReport.keep`` holds the ids whose earlier indexed version stays (a file that
could not be read, an id clash, every file under an unreadable folder), so a sync loses nothing indexed.
A ``MetadataError`` (front matter or sidecar that cannot be parsed) keeps nothing: its metadata may be an
ACL being tightened, so the old version leaves the index (fail closed). Links out of the folder keep
nothing either: they are not followed unless asked (``follow_links``); links inside it are not followed
(their targets are indexed under their own paths, and no walk can loop).

Text is UTF-16/32 with a BOM, UTF-8 (with or without BOM), or the encoding charset-normalizer detects;
any but UTF-8 is recorded as ``metadata["encoding"]``. A NUL byte anywhere (and no UTF-16/32 BOM) is binary.
HTML (``.html``, ``.htm``), PDF and reStructuredText (``.rst``) files go to their own loaders
(``html.py``, ``pdf.py``, ``rst.py``), and so do Word (``.docx``, ``word.py``), PowerPoint (``.pptx``,
``slides.py``), Excel and CSV (``.xlsx``, ``.csv``, ``sheets.py``) and e-mail (``.eml``, ``.msg``, ``mail.py``),
which write the same Markdown-like text (headings, tables with their header; ``structured.py``). Other
suffixes are counted in ``LoadReport.unsupported``. A file that loads with a caveat (a PDF with scanned pages
that need OCR) is named in ``LoadReport.warnings``.

Markdown and text files may begin with YAML front matter (``---`` lines, LF or CRLF); its keys become
metadata (``title`` sets the title; ``acl``, ``version``, ``effective_date`` ... are filterable). A file
that opens a front matter block and never closes it is a ``MetadataError``, and so is YAML that repeats a
key or whose aliases would expand past a bound (see ``files.py``). A sidecar ``<file>.meta.json`` does the
same for any file; where it and the file's own metadata give different ``acl`` values, the file is a
``MetadataError`` naming both (fail closed).
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragline.errors import InputError, MetadataError
from ragline.fsutil import stat_signature
from ragline.ingest.files import (
    DEFAULT_MAX_BYTES,
    SIDECAR_SUFFIX,
    decode_text,
    document_id,
    read_capped,
    split_front_matter,
    utf8_name_error,
    with_sidecar,
)
from ragline.ingest.html import load_html
from ragline.ingest.pdf import load_pdf
from ragline.ingest.rst import load_rst
from ragline.types import Document

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
HTML_SUFFIXES = (".html", ".htm")
RST_SUFFIXES = (".rst", ".rest")
OFFICE_SUFFIXES = (".docx", ".pptx", ".xlsx", ".csv", ".eml", ".msg")
DOCUMENT_SUFFIXES = (*TEXT_SUFFIXES, *RST_SUFFIXES, *HTML_SUFFIXES, ".pdf", *OFFICE_SUFFIXES)


class KeptIds(Collection[str]):
    """Document ids whose earlier indexed version a sync keeps: single ids, and every id under a folder."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.folders: set[str] = set()  # relative folder paths ("a/b"): the ids "a/b/..." are kept

    def __contains__(self, doc_id: object) -> bool:
        if not isinstance(doc_id, str):
            return False
        return doc_id in self.ids or any(doc_id.startswith(folder + "/") for folder in self.folders)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


@dataclass
class LoadReport:
    """What a load produced: the documents, each file or record it had to skip (with why), the ids whose
    earlier indexed version stays, and how many files of each unsupported suffix it left out."""

    documents: list[Document] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    keep: KeptIds = field(default_factory=KeptIds)
    unsupported: dict[str, int] = field(default_factory=dict)  # suffix ("" for none) -> files
    # ids of files that are there but fail closed (bad metadata, a link out of the folder): a sync removes
    # their earlier version on purpose, so these never count as a mass deletion
    withdrawn: set[str] = field(default_factory=set)
    # resolved path -> stat signature taken before the file was read, for each file loaded (freshness)
    signatures: dict[str, list[int]] = field(default_factory=dict)
    warnings: list[InputError] = field(default_factory=list)  # loaded, with a caveat (scanned pages: no OCR)


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


def plan_folder(
    root: Path, suffixes: tuple[str, ...] = DOCUMENT_SUFFIXES, follow_links: bool = False
) -> tuple[list[tuple[Path, Path]], LoadReport]:
    """The files of ``root`` to load, as (path, relative path) in path order, and a report of what was skipped.

    Two files whose ids would clash (``notes.md``, ``notes.txt``) are both reported, and their id keeps
    what an earlier run indexed. ``load_folder`` and the Ray ingestion share this plan.
    """
    report = LoadReport()
    by_id: dict[str, list[tuple[Path, Path]]] = defaultdict(list)
    for path, relative in _walk(root, suffixes, follow_links, report):
        by_id[document_id(relative)].append((path, relative))
    files = []
    for doc_id, found in sorted(by_id.items(), key=lambda item: item[1][0][1].parts):
        if len(found) > 1:
            names = ", ".join(relative.as_posix() for _, relative in found)
            for path, _ in found:
                report.errors.append(
                    InputError(
                        str(path),
                        f"files {names} would share the document id {doc_id!r} (ids leave out the extension); "
                        "none of them is indexed (an earlier indexed version stays): rename all but one",
                    )
                )
            report.keep.ids.add(doc_id)
            continue
        files.append(found[0])
    return files, report


def load_folder(
    root: str | Path,
    suffixes: tuple[str, ...] = DOCUMENT_SUFFIXES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    on_file: Callable[[Path], None] | None = None,
    follow_links: bool = False,
) -> LoadReport:
    """Every non-hidden file under ``root`` with one of ``suffixes``, in path order.

    With ``follow_links``, links to files and folders outside ``root`` are followed (each real folder
    once); without, they are reported and skipped.
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError(str(root), "no such directory")
    files, report = plan_folder(root, suffixes, follow_links)
    for path, relative in files:
        if on_file:
            on_file(path)
        try:
            _load_into(report, path, relative, max_bytes)
        except MetadataError as error:
            report.errors.append(error)  # fail closed: not kept, the earlier version is removed
            report.withdrawn.add(document_id(relative))
        except InputError as error:
            report.errors.append(error)
            report.keep.ids.add(document_id(relative))
    return report


def _load_into(report: LoadReport, path: Path, relative: Path, max_bytes: int) -> None:
    """Load one file into ``report``, with its stat signature as it was before the read."""
    try:
        signature = stat_signature(path)
    except OSError:
        signature = None  # load_file reports why it cannot be read
    document = load_file(path, relative, max_bytes)
    report.documents.append(document)
    scanned = document.metadata.get("ocr_pages")
    if scanned:
        pages = ", ".join(str(page) for page in scanned)
        report.warnings.append(
            InputError(
                str(path),
                f"page(s) {pages} are scanned images: their text needs OCR "
                "(not indexed; no OCR model ships with ragline)",
            )
        )
    if signature is not None:
        report.signatures[str(path.resolve())] = signature


def load_path(
    source: str | Path,
    max_bytes: int = DEFAULT_MAX_BYTES,
    follow_links: bool = False,
) -> LoadReport:
    """A folder (:func:`load_folder`) or a single file of a supported kind (its id is its file name's stem).

    A single file that is a symbolic link is reported and skipped unless ``follow_links``.
    """
    source = Path(source)
    if source.is_dir():
        return load_folder(source, max_bytes=max_bytes, follow_links=follow_links)
    if not source.exists():
        raise InputError(str(source), "no such file or directory")
    report = LoadReport()
    bad_name = utf8_name_error(source)
    if bad_name is not None:
        report.errors.append(bad_name)
        return report
    if source.is_symlink() and not follow_links:  # as links in a folder walk: reported, not followed
        report.errors.append(InputError(str(source), f"is a link (to {source.resolve()}); use --follow-links"))
        return report
    relative = Path(source.name)
    if source.suffix.lower() not in DOCUMENT_SUFFIXES:
        raise InputError(str(source), f"unsupported file type {source.suffix or '(none)'!r}; {supported_formats()}")
    try:
        _load_into(report, source, relative, max_bytes)
    except MetadataError as error:
        report.errors.append(error)
        report.withdrawn.add(document_id(relative))
    except InputError as error:
        report.errors.append(error)
        report.keep.ids.add(document_id(relative))
    return report


def supported_formats() -> str:
    """The suffixes a folder load reads, for help texts and messages."""
    return "supported: " + ", ".join(DOCUMENT_SUFFIXES)


def _walk(root: Path, suffixes: tuple[str, ...], follow_links: bool, report: LoadReport) -> list[tuple[Path, Path]]:
    """``(path, relative path)`` of each file to load; folders are walked with a stack, not recursion, so any
    depth works. Reports unreadable folders (and keeps their ids), links and unsupported suffixes."""
    real_root = root.resolve()
    entered = {real_root}  # real folders walked: a followed link reaches each once (no loops, no doubles)
    found: list[tuple[Path, Path]] = []
    unsupported: Counter[str] = Counter()
    stack: list[tuple[Path, Path]] = [(root, Path())]
    while stack:
        folder, relative_folder = stack.pop()
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError as error:
            if not relative_folder.parts:
                raise InputError(str(folder), f"cannot read folder: {error.strerror or error}") from None
            report.errors.append(
                InputError(
                    str(folder),
                    f"cannot read folder ({error.strerror or error}): its files keep what an earlier run indexed; "
                    "fix its permissions to sync them",
                )
            )
            report.keep.folders.add(relative_folder.as_posix())
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path, relative = Path(entry.path), relative_folder / entry.name
            bad_name = utf8_name_error(path, "folder" if entry.is_dir(follow_symlinks=False) else "file")
            if bad_name is not None:  # no id can name it: reported like any bad file (it was never indexed)
                report.errors.append(bad_name)
                continue
            try:
                if entry.is_symlink():
                    target = path.resolve()
                    if target.is_relative_to(real_root):
                        continue  # its target is indexed under its own path
                    if not follow_links:
                        report.errors.append(
                            InputError(str(path), f"links outside the indexed folder (to {target}); use --follow-links")
                        )
                        report.withdrawn.add(document_id(relative))
                        continue
                    if not target.exists():
                        report.errors.append(InputError(str(path), f"broken link (to {target}): nothing to index"))
                        continue
                    if entry.is_dir():
                        if target in entered:
                            continue
                        entered.add(target)
                is_dir, is_file = entry.is_dir(), entry.is_file()
            except OSError as error:
                report.errors.append(InputError(str(path), f"cannot read: {error.strerror or error}"))
                continue
            if is_dir:
                stack.append((path, relative))
            elif is_file:
                suffix = path.suffix.lower()
                if suffix in suffixes:
                    found.append((path, relative))
                elif not entry.name.endswith(SIDECAR_SUFFIX):
                    unsupported[suffix] += 1
    report.unsupported = dict(sorted(unsupported.items()))
    found.sort(key=lambda item: item[1].parts)
    return found


def load_file(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One file as a Document, by its suffix: HTML, PDF, reStructuredText, Office, mail, else text or Markdown."""
    suffix = path.suffix.lower()
    if suffix in HTML_SUFFIXES:
        return load_html(path, relative, max_bytes)
    if suffix == ".pdf":
        return load_pdf(path, relative, max_bytes)
    if suffix in RST_SUFFIXES:
        return load_rst(path, relative, max_bytes)
    if suffix in OFFICE_SUFFIXES:
        try:
            return _office_loader(suffix)(path, relative, max_bytes)
        except ImportError as error:  # the library is imported when the first such file is read
            needs = f"reading {suffix} files needs {error.name}: pip install 'ragline[docs]'"
            raise InputError(str(path), needs) from None
    return load_text_file(path, relative, max_bytes)


def _office_loader(suffix: str) -> Callable[[Path, Path, int], Document]:
    """The loader of an Office or mail suffix, imported when first needed (their libraries are large)."""
    if suffix == ".docx":
        from ragline.ingest.word import load_docx

        return load_docx
    if suffix == ".pptx":
        from ragline.ingest.slides import load_pptx

        return load_pptx
    if suffix in (".xlsx", ".csv"):
        from ragline.ingest.sheets import load_csv, load_xlsx

        return load_xlsx if suffix == ".xlsx" else load_csv
    from ragline.ingest.mail import load_eml, load_msg

    return load_eml if suffix == ".eml" else load_msg


def load_text_file(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One text or Markdown file as a Document; raises ``InputError`` saying what is wrong with it."""
    text, encoding = decode_text(read_capped(path, max_bytes), str(path))  # the bytes are freed right away
    metadata, body = split_front_matter(text, str(path))
    del text  # with front matter, body is a copy: do not hold both
    with_sidecar(metadata, path, "front matter")
    if encoding:
        metadata["encoding"] = encoding
    if not body.strip():
        raise InputError(str(path), "empty: no text to index")
    title = str(metadata.pop("title", "") or _markdown_title(body) or path.stem)
    return Document(document_id(relative), body, title, metadata, source=relative.as_posix())


def _markdown_title(text: str) -> str:
    """The first ``# `` heading in the first 20 lines (read lazily: the text may be large)."""
    start = 0
    for _ in range(20):
        end = text.find("\n", start)
        line = text[start : end if end >= 0 else len(text)]
        if line.startswith("# "):
            return line[2:].strip()
        if end < 0:
            break
        start = end + 1
    return ""
