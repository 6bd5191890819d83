"""Collections the pipeline writes to and retrieves through: the embedded index or a Milvus server.

``open_store(uri, settings)`` opens one: a directory path (or ``None``, in memory) is the embedded
``Index`` behind ``EmbeddedCollection``; ``milvus://[user:password@]HOST:PORT/NAME`` (``milvus+tls://``
for TLS) is a ``MilvusCollection``. Both satisfy ``ragline.store.base.Collection``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragline.index.store import IndexSettings
from ragline.store.base import Collection
from ragline.store.uri import StoreURI, is_milvus_uri, parse_store_uri

__all__ = ["Collection", "StoreURI", "is_milvus_uri", "open_store", "parse_store_uri"]


def open_store(uri: str | Path | None, settings: IndexSettings | None = None, create: bool = True) -> Any:
    """The collection at ``uri`` (created with ``settings`` when missing and ``create``)."""
    if uri is not None and is_milvus_uri(str(uri)):
        from ragline.store.milvus import MilvusCollection

        return MilvusCollection.connect(parse_store_uri(str(uri)), settings, create=create)
    from ragline.index.store import Index
    from ragline.store.embedded import EmbeddedCollection

    if uri is None:
        return EmbeddedCollection(Index.create(None, settings))
    index = Index.open_or_create(uri, settings) if create else Index.open(uri)
    return EmbeddedCollection(index)
