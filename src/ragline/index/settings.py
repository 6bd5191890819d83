"""What an index is built with (``IndexSettings``, stamped in the manifest), and the default-acl stamp."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragline.index.bm25 import BM25Params
from ragline.index.segment import check_fields
from ragline.text import Analyzer, get_analyzer
from ragline.types import Document


@dataclass(frozen=True)
class IndexSettings:
    """What an index is built with; stamped in the manifest and checked on open."""

    analyzer: Analyzer = field(default_factory=lambda: get_analyzer("english"))
    fields: dict[str, float] = field(default_factory=lambda: {"body": 1.0})
    bm25: BM25Params = field(default_factory=BM25Params)
    max_segments: int = 8
    embedder: str | None = None  # a model name or folder (see ragline.models); None: BM25 only
    vector_index: str = "hnsw"  # VectorIndexConfig spec, e.g. "hnsw:m=32,ef_search=128" or "flat"
    chunker: str = "none"  # how `ragline index` cuts documents (ragline.ingest.chunkers spec)
    context: str = "none"  # and contextualizes the chunks (none | breadcrumb | llm)
    # Documents without an ``acl`` get this acl when added; None: they keep none and are hidden from
    # every caller who gives groups (an acl filter matches no document without the field).
    default_acl: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "analyzer": self.analyzer.to_dict(),
            "fields": self.fields,
            "bm25": self.bm25.to_dict(),
            "max_segments": self.max_segments,
            "embedder": self.embedder,
            "vector_index": self.vector_index,
            "chunker": self.chunker,
            "context": self.context,
            "default_acl": None if self.default_acl is None else list(self.default_acl),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IndexSettings:
        return cls(
            analyzer=Analyzer.from_dict(data["analyzer"]),
            fields=check_fields(data["fields"]),
            bm25=BM25Params(**data["bm25"]),
            max_segments=data.get("max_segments", 8),
            embedder=data.get("embedder"),
            vector_index=data.get("vector_index", "hnsw"),
            chunker=data.get("chunker", "none"),
            context=data.get("context", "none"),
            default_acl=None if data.get("default_acl") is None else tuple(data["default_acl"]),
        )


@dataclass(slots=True)
class DefaultAclDocument(Document):
    """A copy of a document given the index's default acl, keeping the hash of the document as given.

    ``sync`` compares a source's hash with the stored one; the stamp is the index's doing, not a
    change of the source, so it must not make every unchanged source look updated.
    """

    source_hash: str = ""

    @classmethod
    def stamp(cls, doc: Document, acl: tuple[str, ...]) -> Document:
        metadata = {**doc.metadata, "acl": list(acl)}
        return cls(doc.id, doc.text, doc.title, metadata, doc.source, doc.index_text, source_hash=doc.hash)

    @property
    def hash(self) -> str:
        return self.source_hash

    def to_dict(self) -> dict[str, Any]:
        return Document(self.id, self.text, self.title, self.metadata, self.source, self.index_text).to_dict()
