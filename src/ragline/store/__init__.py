"""Collections the pipeline writes to and retrieves through: the embedded index, a Milvus or a PostgreSQL server.

``open_store(uri, settings)`` opens one by the URI's scheme, the name of a ``store`` component in the one
registry (``ragline.components``): a directory path, ``file://PATH`` (or ``None``, in memory) is the
embedded ``Index`` behind ``EmbeddedCollection``; ``milvus://[user:password@]HOST:PORT/NAME``
(``milvus+tls://`` for TLS) is a ``MilvusCollection``;
``postgresql://[user[:password]@]HOST[:PORT]/DATABASE/COLLECTION`` is a ``PostgresCollection``. Each
satisfies ``ragline.store.base.Collection``; a new store is one module here with ``@register("store", SCHEME)``
on its opener, and passes ``tests/store/store_contract.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragline.index.store import IndexSettings
from ragline.store.base import Collection, as_collection, is_embedded
from ragline.store.uri import StoreURI, is_milvus_uri, parse_store_uri, store_scheme

__all__ = [
    "Collection",
    "StoreURI",
    "as_collection",
    "is_embedded",
    "is_milvus_uri",
    "open_store",
    "parse_store_uri",
    "store_scheme",
]


def open_store(uri: str | Path | None, settings: IndexSettings | None = None, create: bool = True) -> Any:
    """The collection at ``uri`` (created with ``settings`` when missing and ``create``), by its scheme."""
    from ragline.components import component

    text = None if uri is None else str(uri)
    opener = component("store", store_scheme(text)).factory
    return opener(text, settings, create)
