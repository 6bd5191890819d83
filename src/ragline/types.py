"""The values that flow through a pipeline: documents in, queries and hits out.

Plain dataclasses: cheap to build, easy to print, and serializable with ``to_dict``.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

Metadata = dict[str, Any]


def document_id_of(unit_id: str, metadata: Metadata | None = None) -> str:
    """The document an indexed unit belongs to, when only its id (and metadata) are at hand.

    A chunk's metadata names its document (``doc_id``); without metadata a chunk id ``<document>#<n>``
    gives it; any other id is a whole document's own.
    """
    if metadata and metadata.get("doc_id"):
        return str(metadata["doc_id"])
    head, sep, tail = unit_id.rpartition("#")
    return head if sep and tail.isdigit() else unit_id


def section_below_title(title: str, section: list[str] | None) -> list[str]:
    """A chunk's heading path without its first heading when that repeats the document's title.

    A Markdown document's ``# Title`` heads every section path, so "Title > Title > Limits" would say the
    title twice wherever the title and the path are shown together (breadcrumbs, sources).
    """
    path = [str(p) for p in section or []]
    if path and title and path[0].strip().casefold() == title.strip().casefold():
        return path[1:]
    return path


def content_hash(text: str) -> str:
    """SHA-256 of a text, the key of change detection and of every cache."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class Document:
    """A unit of indexing: an id unique in its collection, its text and filterable metadata.

    ``metadata`` values are strings, numbers, booleans or lists of those (a list matches a
    filter when any element does, as an ACL group list should).

    A chunk is a Document too: its id is ``<document id>#<n>``, ``parent`` names the document it was
    cut from (None for a whole document), and its metadata carries ``doc_id`` (the same, filterable),
    ``parent_id`` (its section), ``start``/``end`` (character span in the document) and ``section``.
    ``document_id`` is the one rule for "which document is this": every module uses it.
    ``index_text``, when set, is what is indexed and embedded (a chunk with its context prefix);
    ``text`` is what a reader sees. Keeping the two apart lets context help retrieval without
    putting words in a source's mouth.
    """

    id: str
    text: str
    title: str = ""
    metadata: Metadata = field(default_factory=dict)
    source: str | None = None
    index_text: str | None = None
    parent: str | None = None  # the document a chunk was cut from; None: a whole document

    @property
    def document_id(self) -> str:
        return self.parent or document_id_of(self.id, self.metadata)

    @property
    def hash(self) -> str:
        parts = (self.title, self.text, repr(sorted(self.metadata.items())), self.index_text or "")
        return content_hash("\x00".join(parts))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Query:
    id: str
    text: str


@dataclass(slots=True)
class Citation:
    """Source ``[n]`` of an answer: the chunk it points to and that chunk's text."""

    n: int
    doc_id: str
    chunk_id: str
    title: str = ""
    text: str = ""
    supported: bool | None = None  # does the cited text answer the question with this answer? (answer/support.py)
    judged: bool | None = None  # an LLM judge's verdict on the same question (answer/judge.py); None: not asked

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Answer:
    """What a reader returns: the answer text (empty when it abstains) and the sources it cites."""

    text: str
    abstained: bool
    citations: list[Citation] = field(default_factory=list)
    reader: str = ""
    details: dict[str, Any] = field(default_factory=dict)  # reader-specific: scores, prompt, raw output

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Hit:
    """One ranked result. ``rank`` starts at 1."""

    doc_id: str  # the id of what was ranked: a chunk's id in a chunked index
    score: float
    rank: int
    title: str = ""
    text: str = ""
    metadata: Metadata = field(default_factory=dict)
    parent: str | None = None  # the document of a chunk (``Document.parent``)

    @property
    def document_id(self) -> str:
        """The document this hit belongs to (the chunk's parent, else the hit's own id)."""
        return self.parent or document_id_of(self.doc_id, self.metadata)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
