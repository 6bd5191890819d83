"""A collection on a Milvus server (Milvus Lite or a cluster), behind the same interface as the embedded index.

Schema: ``id`` (primary key), ``doc`` (the document a chunk belongs to), ``hash`` (content hash, for sync),
``text`` (the indexed text, analyzed by Milvus and fed to its BM25 function into ``sparse``), ``dense``
(FLOAT_VECTOR, when the settings name an embedder), ``acl`` (ARRAY of the acl's text values), ``meta`` (the
filter encoding of ``ragline.store.milvus_filter``) and ``payload`` (the document as JSON). The settings and
the embedder's stamp live in the collection's properties, checked on every open.

Writes are staged and sent at ``commit`` as upserts and deletes by id (idempotent), so an interrupted
commit is repaired by running the same sync again. A commit that changed something raises the collection's
``generation`` (a collection property, like the stamps) once its writes are flushed: readers key what they
cache on it. Milvus shows each write once flushed, so a reader may see part of a commit before its generation
moves (there is no manifest swap as in the embedded index).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ragline.components import register
from ragline.errors import ConfigError, IndexMismatchError, InputError, RaglineError
from ragline.index.filters import FilterLike, parse_filter
from ragline.index.segment import FIELD_TEXT
from ragline.index.store import IndexSettings
from ragline.retrieve.fusion import fuse, rank
from ragline.store.milvus_filter import encode_metadata, to_milvus_expr
from ragline.store.milvus_schema import (
    MAX_ACL,
    MAX_GROUP,
    MAX_TEXT,
    collection_schema,
    import_pymilvus,
    vector_index_params,
)
from ragline.store.staged import StagedWrites, embedder_stamp, stamped_embedder
from ragline.store.uri import StoreURI, parse_store_uri
from ragline.types import Document, document_id_of

FORMAT = 1
SETTINGS_KEY, EMBEDDER_KEY, FORMAT_KEY = "ragline.settings", "ragline.embedder", "ragline.format"
GENERATION_KEY, CREATED_KEY, COMMITTED_KEY = "ragline.generation", "ragline.created_at", "ragline.committed_at"
VERSION_KEY = "ragline.version"
BATCH = 500
MAX_LIMIT = 16384  # Milvus's largest top k


class MilvusCollection(StagedWrites):
    """Documents in one Milvus collection; see the module docstring for the schema."""

    def __init__(self, client: Any, uri: StoreURI, settings: IndexSettings, properties: dict[str, Any]) -> None:
        self.client, self.uri, self.settings = client, uri, settings
        self.name = uri.collection
        self.properties = properties
        self._pending: dict[str, tuple[Document, np.ndarray | None]] = {}
        self._pending_deletes: set[str] = set()
        self._embedder: Any = None
        _, _, self._search_params = vector_index_params(settings.vector_index) if settings.embedder else ("", {}, {})

    # -- opening ----------------------------------------------------------------------------------
    @classmethod
    def connect(cls, uri: StoreURI, settings: IndexSettings | None = None, create: bool = True) -> MilvusCollection:
        """Open ``uri``'s collection, checking its stamps against ``settings``; create it when missing."""
        pymilvus = import_pymilvus()
        try:
            client = pymilvus.MilvusClient(uri=uri.server, token=uri.token, timeout=30)
        except Exception as error:
            raise RaglineError(f"cannot reach Milvus at {uri}: {error}; is the server running?") from None
        if client.has_collection(uri.collection):
            properties = client.describe_collection(uri.collection).get("properties", {})
            if FORMAT_KEY not in properties:
                raise IndexMismatchError(f"Milvus collection {uri} was not made by ragline; name another collection")
            stored = IndexSettings.from_dict(json.loads(properties[SETTINGS_KEY]))
            if settings is not None and settings.to_dict() != stored.to_dict():
                differ = sorted(k for k, v in settings.to_dict().items() if stored.to_dict().get(k) != v)
                raise IndexMismatchError(
                    f"Milvus collection {uri} exists with other settings ({', '.join(differ)} differ: "
                    f"{ {k: stored.to_dict()[k] for k in differ} }); use another collection name or drop this one"
                )
            client.load_collection(uri.collection)
            return cls(client, uri, stored, properties)
        if not create:
            raise RaglineError(f"Milvus collection {uri} does not exist; index into it first (ragline index --store)")
        settings = settings or IndexSettings(vector_index="flat")
        collection = cls(client, uri, settings, {})
        collection._create()
        return collection

    def _create(self) -> None:
        settings = self.settings
        dim = self.embedder.dim if settings.embedder else None
        schema, index_params = collection_schema(self.client, settings, dim)
        self.client.create_collection(self.name, schema=schema, index_params=index_params)
        from ragline import __version__

        self.properties = {
            FORMAT_KEY: str(FORMAT),
            SETTINGS_KEY: json.dumps(settings.to_dict()),
            GENERATION_KEY: "0",
            CREATED_KEY: _now(),
            VERSION_KEY: __version__,
        }
        if settings.embedder:
            self.properties[EMBEDDER_KEY] = json.dumps(self._embedder_stamp())
        self.client.alter_collection_properties(self.name, properties=self.properties)
        self.client.load_collection(self.name)

    # -- embeddings -------------------------------------------------------------------------------
    @property
    def embedder(self) -> Any:
        """The collection's embedder (cached on disk like the embedded index's); its stamp must match."""
        if self._embedder is None:
            stamp = json.loads(self.properties.get(EMBEDDER_KEY, "null"))
            self._embedder = stamped_embedder(self.settings, stamp, f"Milvus collection {self.uri}")
        return self._embedder

    def _embedder_stamp(self) -> dict[str, Any]:
        return embedder_stamp(self.settings, self.embedder)

    def commit(self) -> int:
        """Send staged upserts and deletes, flush, then raise the generation; returns the new generation."""
        if not self.dirty:
            return self.generation
        if self._pending_deletes:
            ids = sorted(self._pending_deletes)
            for start in range(0, len(ids), BATCH):
                self.client.delete(self.name, filter=f"id in {json.dumps(ids[start : start + BATCH])}")
        pending = list(self._pending.values())
        for start in range(0, len(pending), BATCH):
            self.client.upsert(self.name, self._rows(pending[start : start + BATCH]))
        self._pending.clear()
        self._pending_deletes.clear()
        self.client.flush(self.name)
        generation = self.generation + 1
        changed = {GENERATION_KEY: str(generation), COMMITTED_KEY: _now()}
        self.client.alter_collection_properties(self.name, properties=changed)
        self.properties.update(changed)
        return generation

    @property
    def generation(self) -> int:
        """The collection's commit count, read from the server (another process may have committed)."""
        properties = self.client.describe_collection(self.name).get("properties", {})
        self.properties.update(properties)
        return int(properties.get(GENERATION_KEY, 0))

    def refresh(self) -> None:
        """Nothing to adopt: every read goes to the server."""

    def _rows(self, batch: list[tuple[Document, np.ndarray | None]]) -> list[dict[str, Any]]:
        rows = []
        for doc, _ in batch:
            meta, acl = encode_metadata(doc.metadata)
            text, payload = FIELD_TEXT["body"](doc), json.dumps(doc.to_dict(), ensure_ascii=False)
            for what, value in (("indexed text", text), ("stored document", payload)):
                if len(value.encode()) > MAX_TEXT:
                    raise InputError(
                        f"document {doc.id!r}",
                        f"its {what} is {len(value.encode())} bytes, more than Milvus's "
                        f"{MAX_TEXT}; cut it into chunks (--chunker structure:max_words=200)",
                    )
            if len(acl) > MAX_ACL or any(len(g.encode()) > MAX_GROUP for g in acl):
                raise InputError(
                    f"document {doc.id!r}", f"acl holds more than {MAX_ACL} groups or one over {MAX_GROUP} bytes"
                )
            rows.append(
                {
                    "id": doc.id,
                    "doc": document_id_of(doc.id),
                    "hash": doc.hash,
                    "text": text,
                    "acl": acl,
                    "meta": meta,
                    "payload": payload,
                }
            )
        if self.settings.embedder:
            missing = [i for i, (_, v) in enumerate(batch) if v is None]
            if missing:
                embedded = self.embedder.embed_passages([FIELD_TEXT["body"](batch[i][0]) for i in missing])
                vectors = dict(zip(missing, embedded))
            for i, row in enumerate(rows):
                given = batch[i][1]
                row["dense"] = [float(x) for x in (given if given is not None else vectors[i])]
        return rows

    def close(self) -> None:
        self._discard()
        self.client.close()

    # -- reading ----------------------------------------------------------------------------------
    def _live_hashes(self, ids: list[str] | None = None) -> dict[str, str]:
        """id -> content hash of the stored documents (of ``ids`` only, when given)."""
        found: dict[str, str] = {}
        if ids is not None:
            for start in range(0, len(ids), BATCH):
                chunk = ids[start : start + BATCH]
                for row in self.client.query(self.name, filter=f"id in {json.dumps(chunk)}", output_fields=["hash"]):
                    found[row["id"]] = row["hash"]
            return found
        iterator = self.client.query_iterator(self.name, batch_size=1000, filter='id != ""', output_fields=["hash"])
        try:
            while batch := iterator.next():
                found.update((row["id"], row["hash"]) for row in batch)
        finally:
            iterator.close()
        return found

    def __len__(self) -> int:
        rows = self.client.query(self.name, filter='id != ""', output_fields=["count(*)"])
        return int(rows[0]["count(*)"])

    def get(self, doc_id: str) -> Document | None:
        rows = self.client.get(self.name, ids=[doc_id], output_fields=["payload"])
        return Document(**json.loads(rows[0]["payload"])) if rows else None

    def get_many(self, doc_ids: Iterable[str]) -> dict[str, Document]:
        """One ``get`` request per ``BATCH`` ids (a hit list is one), not one per id."""
        ids = list(dict.fromkeys(doc_ids))
        found: dict[str, Document] = {}
        for start in range(0, len(ids), BATCH):
            rows = self.client.get(self.name, ids=ids[start : start + BATCH], output_fields=["payload"])
            found.update((row["id"], Document(**json.loads(row["payload"]))) for row in rows)
        return found

    def documents(self) -> Iterable[Document]:
        return self.filter_documents(None)

    def filter_documents(self, filter: FilterLike) -> Iterator[Document]:
        node = parse_filter(filter)
        expr = 'id != ""' if node is None else f'(id != "") and ({to_milvus_expr(node)})'
        iterator = self.client.query_iterator(self.name, batch_size=500, filter=expr, output_fields=["payload"])
        try:
            while batch := iterator.next():
                for row in batch:
                    yield Document(**json.loads(row["payload"]))
        finally:
            iterator.close()

    def metadata(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Read from each stored document (``meta`` holds the filter encoding, not the values as given)."""
        for doc in self.filter_documents(None):
            yield doc.id, doc.metadata

    def vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        rows = self.client.get(self.name, ids=ids, output_fields=["dense"]) if ids else []
        return {row["id"]: np.asarray(row["dense"], np.float32) for row in rows}

    def stamps(self) -> dict[str, Any]:
        return {
            "format": int(self.properties.get(FORMAT_KEY, FORMAT)),
            "settings": self.settings.to_dict(),
            "embedder": json.loads(self.properties.get(EMBEDDER_KEY, "null")),
        }

    def info(self) -> dict[str, Any]:
        """What ``Index.info`` reports, where Milvus knows it (no deleted rows, segments or size on disk)."""
        generation = self.generation  # reads the properties afresh
        return {
            "store": str(self.uri),
            "path": str(self.uri),
            "documents": len(self),
            "deleted": None,
            "generation": generation,
            "ragline_version": self.properties.get(VERSION_KEY),
            "created_at": self.properties.get(CREATED_KEY),
            "committed_at": self.properties.get(COMMITTED_KEY),
            **self.stamps(),
        }

    stats = info

    # -- search -----------------------------------------------------------------------------------
    def _search(self, data: list[Any], field: str, k: int, filter: FilterLike, params: dict[str, Any]) -> Any:
        if k <= 0:
            return []
        if k > MAX_LIMIT:
            raise ConfigError(f"Milvus returns at most {MAX_LIMIT} results a search; ask for fewer than {k}")
        expr = to_milvus_expr(filter) or ""
        return self.client.search(
            self.name,
            data=data,
            anns_field=field,
            limit=k,
            filter=expr,
            search_params={"params": params},
            output_fields=[],
        )[0]

    def search_sparse(self, query: str, k: int = 10, filter: FilterLike = None) -> list[tuple[str, float]]:
        """BM25 by Milvus (its analyzer, its statistics). Milvus Lite reports BM25 as a negative distance."""
        return [(hit["id"], abs(float(hit["distance"]))) for hit in self._search([query], "sparse", k, filter, {})]

    def search_ids(
        self, query: str, k: int = 10, filter: FilterLike = None, bm25: Any = None
    ) -> list[tuple[str, float]]:
        if bm25 is not None and bm25.to_dict() != self.settings.bm25.to_dict():
            raise ConfigError(
                f"Milvus collection {self.uri} scores BM25 with {self.settings.bm25.to_dict()} set at creation; "
                f"other parameters ({bm25.to_dict()}) need a new collection"
            )
        return self.search_sparse(query, k, filter)

    def search_vector(self, vector: np.ndarray, k: int = 10, filter: FilterLike = None) -> list[tuple[str, float]]:
        data = [[float(x) for x in vector]]
        return [
            (hit["id"], float(hit["distance"])) for hit in self._search(data, "dense", k, filter, self._search_params)
        ]

    def search_dense(self, query: str, k: int = 10, filter: FilterLike = None) -> list[tuple[str, float]]:
        return self.search_vector(self.embedder.embed_queries([query])[0], k, filter)

    def search_hybrid(
        self, query: str, k: int = 10, filter: FilterLike = None, fusion: str = "server", rrf_k: int = 60
    ) -> list[tuple[str, float]]:
        """RRF of BM25 and dense: by the server (``fusion="server"``) or by ragline over two searches ("rrf")."""
        if k <= 0:
            return []
        if fusion == "rrf":
            sparse, dense = dict(self.search_sparse(query, k, filter)), dict(self.search_dense(query, k, filter))
            return rank(fuse("rrf", [sparse, dense], k=rrf_k), k)
        if fusion != "server":
            raise ConfigError(f"hybrid fusion is 'server' (Milvus's RRF) or 'rrf' (ragline's), not {fusion!r}")
        pymilvus = import_pymilvus()
        expr = to_milvus_expr(filter) or ""
        vector = [float(x) for x in self.embedder.embed_queries([query])[0]]
        requests = [
            pymilvus.AnnSearchRequest(data=[query], anns_field="sparse", param={}, limit=k, expr=expr),
            pymilvus.AnnSearchRequest(
                data=[vector], anns_field="dense", param={"params": self._search_params}, limit=k, expr=expr
            ),
        ]
        hits = self.client.hybrid_search(self.name, requests, pymilvus.RRFRanker(rrf_k), limit=k, output_fields=[])
        return [(hit["id"], float(hit["distance"])) for hit in hits[0]]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@register("store", "milvus", aliases=("milvus+tls",))
def open_milvus(uri: str, settings: IndexSettings | None = None, create: bool = True) -> MilvusCollection:
    """A collection on a Milvus server: milvus://[user:password@]HOST:PORT/NAME (milvus+tls:// for TLS)."""
    return MilvusCollection.connect(parse_store_uri(uri), settings, create=create)
