"""A collection in a PostgreSQL database (with the pgvector extension for vectors), behind the same interface.

URI: ``postgresql://[user[:password]@][HOST][:PORT]/DATABASE/COLLECTION`` (``postgres://`` too); libpq's query
parameters pass through, e.g. ``?host=/run/postgresql`` for a Unix socket directory. Each collection is one table:
``id`` (primary key), ``hash`` (content hash, for sync), ``payload`` (the document as JSON), ``metadata`` (JSONB),
``terms`` (JSONB: each term of the indexed text, analyzed by the collection's own ``Analyzer``, with its count;
a GIN index makes it the inverted index), ``length`` (terms in the text) and ``dense`` (pgvector ``vector(dim)``,
when the settings name an embedder). The settings, the embedder's stamp and the generation live in the table
``ragline_collections``, checked on every open.

BM25 is ragline's own (``index.bm25``: the variant and parameters of the settings) over the rows that hold a
query term, with the collection's document frequencies and mean length read at query time; vector search is
exact cosine (``<=>``). Filters keep the embedded index's semantics exactly: each candidate's metadata is judged
by the same evaluator (``store.base.admits``), best first, until ``k`` pass, so the filter applies before the
top ``k``; a very selective filter therefore reads many candidates (there is no compiled SQL filter).
A commit is one transaction: its upserts, deletes and the raised generation show together, or none of them.
"""

from __future__ import annotations

import heapq
import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from ragline.components import register
from ragline.errors import ConfigError, IndexMismatchError, RaglineError
from ragline.index.bm25 import idf, tf_weight
from ragline.index.filters import FilterLike, parse_filter
from ragline.index.segment import FIELD_TEXT
from ragline.index.store import IndexSettings
from ragline.retrieve.fusion import fuse, rank
from ragline.store.base import admits
from ragline.store.staged import StagedWrites, embedder_stamp, stamped_embedder
from ragline.store.uri import redacted_uri
from ragline.types import Document

FORMAT = 1
BATCH = 500
_CURSORS = itertools.count()  # names of server-side cursors, unique in the process
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")  # an unquoted PostgreSQL identifier
CATALOG = """CREATE TABLE IF NOT EXISTS ragline_collections (name text PRIMARY KEY, settings jsonb NOT NULL,
    embedder jsonb, format int NOT NULL, generation bigint NOT NULL, version text, created_at text,
    committed_at text)"""


def parse_postgres_uri(text: str) -> tuple[str, str]:
    """(the libpq connection URI, the collection name) of a store URI; a malformed part is named."""
    parts = urlsplit(text)
    path = parts.path.strip("/").split("/")
    example = "postgresql://[user[:password]@]HOST[:PORT]/DATABASE/COLLECTION"
    if parts.scheme.lower() not in ("postgresql", "postgres") or len(path) != 2 or not all(path):
        raise ConfigError(f"store URI {redacted_uri(text)!r}: write {example}")
    if not _NAME.fullmatch(path[1]):
        raise ConfigError(
            f"store URI {redacted_uri(text)!r}: collection name {path[1]!r} must be letters, digits and _ "
            "(starting with a letter or _, at most 63)"
        )
    return urlunsplit(("postgresql", parts.netloc, f"/{path[0]}", parts.query, "")), path[1].lower()


class PostgresCollection(StagedWrites):
    """Documents in one PostgreSQL table; see the module docstring."""

    def __init__(self, connection: Any, uri: str, name: str, settings: IndexSettings, row: dict[str, Any]) -> None:
        self.connection, self.uri, self.name, self.settings = connection, uri, name, settings
        self.row = row  # this collection's row of ragline_collections
        self._pending: dict[str, tuple[Document, np.ndarray | None]] = {}
        self._pending_deletes: set[str] = set()
        self._embedder: Any = None

    @classmethod
    def connect(cls, text: str, settings: IndexSettings | None = None, create: bool = True) -> PostgresCollection:
        try:
            import psycopg
        except ImportError:
            raise ConfigError("a postgresql:// store needs psycopg: pip install 'ragline[postgres]'") from None
        conninfo, name = parse_postgres_uri(text)
        shown = redacted_uri(text)
        try:
            connection = psycopg.connect(conninfo, autocommit=True)
        except psycopg.Error as error:
            raise RaglineError(f"cannot reach PostgreSQL at {shown}: {error}") from None
        connection.execute(CATALOG)
        row = _catalog_row(connection, name)
        if row is not None:
            stored = IndexSettings.from_dict(row["settings"])
            if settings is not None and settings.to_dict() != stored.to_dict():
                differ = sorted(k for k, v in settings.to_dict().items() if stored.to_dict().get(k) != v)
                raise IndexMismatchError(
                    f"PostgreSQL collection {shown} exists with other settings ({', '.join(differ)} differ); "
                    "use another collection name or drop this one"
                )
            return cls(connection, shown, name, stored, row)
        if not create:
            raise RaglineError(f"PostgreSQL collection {shown} does not exist; index into it first")
        collection = cls(connection, shown, name, settings or IndexSettings(vector_index="flat"), {})
        collection._create()
        return collection

    def _create(self) -> None:
        from ragline import __version__

        dim = self.embedder.dim if self.settings.embedder else None
        with self.connection.transaction():
            if dim:
                self.connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
            dense = f", dense vector({int(dim)})" if dim else ""
            self.connection.execute(
                f"CREATE TABLE {self.name} (id text PRIMARY KEY, hash text NOT NULL, payload jsonb NOT NULL, "
                f"metadata jsonb NOT NULL, terms jsonb NOT NULL, length int NOT NULL{dense})"
            )
            self.connection.execute(f"CREATE INDEX ON {self.name} USING gin (terms)")
            stamp = json.dumps(embedder_stamp(self.settings, self.embedder)) if dim else None
            self.connection.execute(
                "INSERT INTO ragline_collections VALUES (%s, %s, %s, %s, 0, %s, %s, NULL)",
                (self.name, json.dumps(self.settings.to_dict()), stamp, FORMAT, __version__, _now()),
            )
        self.row = _catalog_row(self.connection, self.name) or {}

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            where = f"PostgreSQL collection {self.uri}"
            self._embedder = stamped_embedder(self.settings, self.row.get("embedder"), where)
        return self._embedder

    # -- writing ----------------------------------------------------------------------------------
    def commit(self) -> int:
        """Apply the staged deletes and upserts and raise the generation, in one transaction."""
        if not self.dirty:
            return self.generation
        pending = list(self._pending.values())
        with self.connection.transaction():
            if self._pending_deletes:
                self.connection.execute(f"DELETE FROM {self.name} WHERE id = ANY(%s)", (sorted(self._pending_deletes),))
            for start in range(0, len(pending), BATCH):
                self._upsert(pending[start : start + BATCH])
            self.connection.execute(
                "UPDATE ragline_collections SET generation = generation + 1, committed_at = %s WHERE name = %s",
                (_now(), self.name),
            )
        self._pending.clear()
        self._pending_deletes.clear()
        return self.generation

    def _upsert(self, batch: list[tuple[Document, np.ndarray | None]]) -> None:
        texts = [FIELD_TEXT["body"](doc) for doc, _ in batch]
        vectors: list[Any] = [None] * len(batch)
        if self.settings.embedder:
            missing = [i for i, (_, v) in enumerate(batch) if v is None]
            computed = dict(zip(missing, self.embedder.embed_passages([texts[i] for i in missing]))) if missing else {}
            vectors = [_vector(v if v is not None else computed[i]) for i, (_, v) in enumerate(batch)]
        rows = []
        for (doc, _), text, vector in zip(batch, texts, vectors):
            terms = self.settings.analyzer(text)
            payload = json.dumps(doc.to_dict(), ensure_ascii=False)
            rows.append((doc.id, doc.hash, payload, json.dumps(doc.metadata, ensure_ascii=False),
                         json.dumps(Counter(terms)), len(terms), vector))  # fmt: skip
        dense = ", dense" if self.settings.embedder else ""
        values = "%s, %s, %s, %s, %s, %s" + (", %s::vector" if dense else "")
        update = ", ".join(f"{c} = EXCLUDED.{c}" for c in ("hash", "payload", "metadata", "terms", "length"))
        with self.connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {self.name} (id, hash, payload, metadata, terms, length{dense}) VALUES ({values}) "
                f"ON CONFLICT (id) DO UPDATE SET {update}{', dense = EXCLUDED.dense' if dense else ''}",
                [row if dense else row[:-1] for row in rows],
            )

    @property
    def generation(self) -> int:
        """The collection's commit count, read from the database (another process may have committed)."""
        self.row = _catalog_row(self.connection, self.name) or self.row
        return int(self.row.get("generation", 0))

    def refresh(self) -> None:
        """Nothing to adopt: every read goes to the database."""

    def close(self) -> None:
        self._discard()
        self.connection.close()

    # -- reading ----------------------------------------------------------------------------------
    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        """The rows of ``sql``, streamed from a server-side cursor (memory bounded by its batch)."""
        with self.connection.transaction(), self.connection.cursor(name=f"ragline_{next(_CURSORS)}") as cursor:
            cursor.itersize = BATCH
            cursor.execute(sql, params)
            yield from cursor

    def _live_hashes(self, ids: list[str] | None = None) -> dict[str, str]:
        if ids is not None:
            sql, params = f"SELECT id, hash FROM {self.name} WHERE id = ANY(%s)", (ids,)
            return dict(self.connection.execute(sql, params).fetchall())
        return dict(self._rows(f"SELECT id, hash FROM {self.name}"))

    def __len__(self) -> int:
        return int(self.connection.execute(f"SELECT count(*) FROM {self.name}").fetchone()[0])

    def get(self, doc_id: str) -> Document | None:
        return self.get_many([doc_id]).get(doc_id)

    def get_many(self, doc_ids: Iterable[str]) -> dict[str, Document]:
        """One query for the whole list."""
        ids = list(dict.fromkeys(doc_ids))
        rows = self.connection.execute(f"SELECT id, payload FROM {self.name} WHERE id = ANY(%s)", (ids,)).fetchall()
        return {doc_id: Document(**payload) for doc_id, payload in rows} if ids else {}

    def documents(self) -> Iterable[Document]:
        return self.filter_documents(None)

    def filter_documents(self, filter: FilterLike) -> Iterator[Document]:
        node = parse_filter(filter)
        for _, payload, metadata in self._rows(f"SELECT id, payload, metadata FROM {self.name} ORDER BY id"):
            if admits(node, metadata):
                yield Document(**payload)

    def metadata(self) -> Iterator[tuple[str, dict[str, Any]]]:
        yield from self._rows(f"SELECT id, metadata FROM {self.name} ORDER BY id")

    def stamps(self) -> dict[str, Any]:
        return {"format": FORMAT, "settings": self.settings.to_dict(), "embedder": self.row.get("embedder")}

    def info(self) -> dict[str, Any]:
        generation = self.generation  # reads the catalog row afresh
        return {
            "store": self.uri,
            "path": self.uri,
            "documents": len(self),
            "deleted": None,
            "generation": generation,
            "ragline_version": self.row.get("version"),
            "created_at": self.row.get("created_at"),
            "committed_at": self.row.get("committed_at"),
            **self.stamps(),
        }

    stats = info

    # -- search -----------------------------------------------------------------------------------
    def search_sparse(self, query: str, k: int = 10, filter: FilterLike = None) -> list[tuple[str, float]]:
        """ragline's BM25 (the settings' variant and parameters) over the rows holding a query term."""
        repeats = Counter(self.settings.analyzer(query))  # a term said twice counts twice, as in the embedded index
        terms = list(repeats)
        if k <= 0 or not terms:
            return []
        n, mean = self.connection.execute(f"SELECT count(*), coalesce(avg(length), 0) FROM {self.name}").fetchone()
        df = [self.connection.execute(f"SELECT count(*) FROM {self.name} WHERE terms ? %s", (t,)).fetchone()[0]
              for t in terms]  # fmt: skip
        weights = idf(self.settings.bm25, np.array(df), int(n)) * np.array([repeats[t] for t in terms])
        node = parse_filter(filter)
        best: list[tuple[float, str]] = []  # a heap of the best k admitted (score, id)
        sql = f"SELECT id, metadata, terms, length FROM {self.name} WHERE terms ?| %s"
        for doc_id, metadata, counts, length in self._rows(sql, (terms,)):
            tf = np.array([counts.get(t, 0) for t in terms], dtype=np.float64)
            present = tf > 0
            score = float(np.sum(weights[present] * tf_weight(self.settings.bm25, tf[present], length, float(mean))))
            if (len(best) < k or (score, doc_id) > best[0]) and admits(node, metadata):
                heapq.heappush(best, (score, doc_id)) if len(best) < k else heapq.heapreplace(best, (score, doc_id))
        return [(doc_id, score) for score, doc_id in sorted(best, key=lambda h: (-h[0], h[1]))]

    def search_vector(self, vector: np.ndarray, k: int = 10, filter: FilterLike = None) -> list[tuple[str, float]]:
        """Exact cosine similarity (pgvector's ``<=>``), best first, the filter judged before the top ``k``."""
        if k <= 0 or not self.settings.embedder:
            return []
        node, out = parse_filter(filter), []
        sql = f"SELECT id, metadata, 1 - (dense <=> %s::vector) FROM {self.name} ORDER BY dense <=> %s::vector, id"
        for doc_id, metadata, score in self._rows(sql, (_vector(vector), _vector(vector))):
            if admits(node, metadata):
                out.append((doc_id, float(score)))
                if len(out) == k:
                    break
        return out

    def search_dense(self, query: str, k: int = 10, filter: FilterLike = None) -> list[tuple[str, float]]:
        return self.search_vector(self.embedder.embed_queries([query])[0], k, filter)

    def search_hybrid(
        self, query: str, k: int = 10, filter: FilterLike = None, fusion: str = "server", rrf_k: int = 60
    ) -> list[tuple[str, float]]:
        """RRF of BM25 and dense, fused by ragline (``server`` and ``rrf`` are the same here)."""
        if fusion not in ("server", "rrf"):
            raise ConfigError(f"hybrid fusion is 'server' or 'rrf', not {fusion!r}")
        if k <= 0:
            return []
        sparse, dense = dict(self.search_sparse(query, k, filter)), dict(self.search_dense(query, k, filter))
        return rank(fuse("rrf", [sparse, dense], k=rrf_k), k)


def _vector(values: Any) -> str:
    return "[" + ",".join(repr(float(x)) for x in np.asarray(values, dtype=np.float32)) + "]"


def _catalog_row(connection: Any, name: str) -> dict[str, Any] | None:
    cursor = connection.execute("SELECT * FROM ragline_collections WHERE name = %s", (name,))
    row = cursor.fetchone()
    return None if row is None else dict(zip([c.name for c in cursor.description], row))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@register("store", "postgresql", aliases=("postgres",))
def open_postgres(uri: str, settings: IndexSettings | None = None, create: bool = True) -> PostgresCollection:
    """A collection in a PostgreSQL database: postgresql://[user[:password]@]HOST[:PORT]/DATABASE/COLLECTION."""
    return PostgresCollection.connect(uri, settings, create=create)
