"""The values that flow through a pipeline: documents in, queries and hits out.

Plain dataclasses: cheap to build, easy to print, and serializable with ``to_dict``.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

Metadata = dict[str, Any]


def content_hash(text: str) -> str:
    """SHA-256 of a text, the key of change detection and of every cache."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class Document:
    """A unit of indexing: an id unique in its collection, its text and filterable metadata.

    ``metadata`` values are strings, numbers, booleans or lists of those (a list matches a
    filter when any element does, as an ACL group list should).
    """

    id: str
    text: str
    title: str = ""
    metadata: Metadata = field(default_factory=dict)
    source: str | None = None

    @property
    def hash(self) -> str:
        return content_hash(f"{self.title}\x00{self.text}\x00{sorted(self.metadata.items())!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Query:
    id: str
    text: str


@dataclass(slots=True)
class Hit:
    """One ranked result. ``rank`` starts at 1."""

    doc_id: str
    score: float
    rank: int
    title: str = ""
    text: str = ""
    metadata: Metadata = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
