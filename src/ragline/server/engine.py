"""What the server serves: one index and one pipeline, built once and shared by every request.

Reads of the index share one lock (an index handle's caches are not built for concurrent use); the
reader has its own lock, because the local LLM answers one request at a time. Indexing writes with a
separate writer handle, commits, and then the reading handle adopts the new commit under the lock, so
a sync never shows a half-written index and queries keep answering from the last commit meanwhile.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragline.answer.context import Context
from ragline.config import PipelineConfig
from ragline.errors import ConfigError, RaglineError
from ragline.index import Index
from ragline.index.filters import FilterLike, parse_filter, restrict
from ragline.principals import Principal
from ragline.store.base import Collection
from ragline.types import Answer, Hit

if TYPE_CHECKING:
    from ragline.answer.conversation import Condensed
    from ragline.answer.pipeline import Prepared

# Stale files (documents changed on disk since the index was synced) come from the freshness module
# when one is installed: a callable (index) -> list of {"path", "reason", "doc_id"} dicts, set by the
# app's maker. ``status`` shows a restricted principal only the entries of documents it may read.
StaleFiles = Callable[[Index], list[dict[str, Any]]]


@dataclass
class Engine:
    """The served index and pipeline; every method takes the caller's principal and applies its ACL."""

    index: Index | Collection  # the embedded index or any store's collection (``ragline.store``)
    config: PipelineConfig
    builtin: bool = False  # serving the built-in Orrin Grid demo index (not writable through the API)
    stale_files: StaleFiles | None = None
    pipeline: Any = field(init=False, repr=False)
    index_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    reader_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    write_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        from ragline.answer.pipeline import RAGPipeline
        from ragline.config import require_safe

        # The server never filters after top-k (restricted text would reach the reader): refused here too,
        # whoever builds the engine.
        self.pipeline = RAGPipeline.from_config(require_safe(self.config, "serve"), self.index)

    # -- filters ----------------------------------------------------------------------------------
    @staticmethod
    def restricted(principal: Principal, user_filter: str | None) -> FilterLike:
        """The request's filter joined to the key's ACL restriction (the request cannot widen it)."""
        parsed = parse_filter(user_filter) if user_filter else None
        restriction = principal.restriction()
        return parsed if restriction is None else restrict(parsed, restriction)

    @property
    def retrieved_by(self) -> str:
        return str(self.pipeline.retriever_obj.config().get("name", self.config.retrieve.retriever))

    # -- reading ----------------------------------------------------------------------------------
    def search(self, principal: Principal, query: str, k: int, user_filter: str | None = None) -> list[Hit]:
        from ragline.retrieve.base import empty_query_reason

        flt = self.restricted(principal, user_filter)
        if empty_query_reason(query, self.index.settings.analyzer):
            return []
        with self.index_lock:
            return self.pipeline.retriever_obj.search(query, k, flt)

    @property
    def agent(self) -> bool:
        return bool(getattr(self.pipeline.reader, "retrieves", False))

    def standalone(self, messages: list[dict[str, Any]]) -> Condensed:
        """The conversation's last user message as a standalone question (``ragline.answer.conversation``):
        the reader's model rewrites it when the reader has one (under the reader lock: the local model answers
        one request at a time), else the rules carry the earlier turns' entities. Retrieval for it then runs
        as the caller, like any question."""
        from ragline.answer.conversation import condense, user_turns

        llm = getattr(self.pipeline.reader, "llm", None)
        if llm is None or len(user_turns(messages)) < 2:
            return condense(messages)
        with self.reader_lock:
            return condense(messages, llm, "llm")

    def prepare(self, principal: Principal, question: str, user_filter: str | None = None) -> Prepared:
        """What the reader reads (``RAGPipeline.prepare``), retrieved under the index lock."""
        flt = self.restricted(principal, user_filter)
        with self.index_lock:
            return self.pipeline.prepare(question, flt)

    def stream_answer(
        self, principal: Principal, question: str, prepared: Prepared | None, user_filter: str | None = None
    ) -> Iterator[str | tuple[Answer, Context]]:
        """Answer pieces (str) as the reader makes them, then ``(answer, context)``: ``RAGPipeline.stream``,
        the answering path of ``ragline ask`` and ``RAGPipeline.answer`` too.

        An agent retrieves hop by hop (``prepared`` None): its answer comes whole, after its hops, under the
        index lock. Closing this generator closes the pipeline's stream (an LLM stops generating).
        """
        if self.pipeline.reader is None:
            raise ConfigError('this pipeline has no reader (reader = "none"): serve one that answers')
        with self.reader_lock:
            if prepared is None:
                flt = self.restricted(principal, user_filter)
                with self.index_lock:
                    items = list(self.pipeline.stream(question, flt))
                yield from items
                return
            with closing(self.pipeline.stream(question, prepared=prepared)) as pieces:
                yield from pieces

    def document(self, principal: Principal, doc_id: str) -> list[Hit] | None:
        """The chunks of document ``doc_id`` in order, as hits; None when there is none the principal may read."""
        with self.index_lock:
            chunks = [d for d in self.index.documents() if d.document_id == doc_id]
        visible = [c for c in chunks if principal.can_read(c.metadata.get("acl"))]
        if not visible:  # not found and not allowed look the same: the reply never says what exists
            return None
        # chunks in reading order: by their offset in the document (``start``), else by id
        visible.sort(key=lambda d: (d.metadata.get("start") if isinstance(d.metadata.get("start"), int) else 0, d.id))
        return [Hit(d.id, 0.0, i + 1, d.title, d.text, d.metadata, d.parent) for i, d in enumerate(visible)]

    # -- status and indexing ----------------------------------------------------------------------
    def status(self, principal: Principal) -> dict[str, Any]:
        """The index as ``principal`` may see it: a principal with groups is told only of the chunks it may
        read (``documents``, ``deleted`` None) and of the stale files of documents it may read; a file new on
        disk (not indexed yet, so no ACL known) or a failed check is shown to an unrestricted principal only."""
        with self.index_lock:
            self.index.refresh()  # a `ragline index` run by another process since: report (and serve) it
            info = self.index.info()
            readable = None if principal.groups is None else self._readable(principal)
        stale = None
        if self.stale_files is not None and isinstance(self.index, Index):  # the embedded index's source files
            try:
                stale = self.stale_files(self.index)
            except RaglineError as error:
                stale = [{"path": None, "reason": str(error)}]
            if readable is not None:
                stale = [s for s in stale if s.get("doc_id") in readable[1]]
            stale = [{"path": s["path"], "reason": s["reason"]} for s in stale]
        return {
            "index": info["path"],
            "builtin": self.builtin,
            "documents": info["documents"] if readable is None else readable[0],
            "deleted": info["deleted"] if readable is None else None,
            "generation": info["generation"],
            "created_at": info["created_at"],
            "committed_at": info["committed_at"],
            "ragline_version": info["ragline_version"],
            "settings": info["settings"],
            # None: no freshness check is installed (this server cannot tell which files changed on disk)
            "stale_files": stale,
            "pipeline": self.pipeline.config(),
        }

    def _readable(self, principal: Principal) -> tuple[int, set[str]]:
        """(live chunks, their document ids) that ``principal`` may read; call under the index lock."""
        chunks, documents = 0, set()
        for d in self.index.documents():
            if principal.can_read(d.metadata.get("acl")):
                chunks += 1
                documents.add(d.document_id)
        return chunks, documents

    def sync_folder(
        self, folder: Path, prune: bool = True, max_bytes: int = 50 * 1024 * 1024, allow_mass_delete: bool = False
    ) -> dict[str, Any]:
        """Index ``folder`` the way `ragline index` does (with the index's stamped chunking), then serve it.

        Like `ragline index`, a sync that would delete more than half of the index's documents (or all), or
        the documents of another folder than the one recorded for the index, is refused (``ConfigError``,
        nothing written) unless ``allow_mass_delete``.
        """
        from ragline.freshness import load_source, recorded_sources
        from ragline.index.changes import check_deletions

        if not isinstance(self.index, Index):
            raise ConfigError(
                f"this server serves the store {self.index.info()['store']}: index into it with "
                "`ragline index DIR --store URI`"
            )
        if self.builtin or self.index.path is None:
            raise ConfigError(
                "this server serves the built-in Orrin Grid demo index, which is not writable: "
                "start it with --index DIR to index your documents"
            )
        settings = self.index.settings
        if settings.context == "late":
            raise ConfigError("this index's context is 'late', which needs vectors per chunk at sync time")
        loaded = load_source(folder, max_bytes)
        units = loaded.documents
        if settings.chunker != "none":
            from ragline.ingest.pipeline import IngestConfig, chunk_documents

            units, _ = chunk_documents(loaded.documents, IngestConfig(settings.chunker, settings.context))
        with self.write_lock, Index.open(self.index.path) as writer:
            report = writer.sync(units, prune=prune, keep=loaded.keep)
            if not allow_mass_delete:  # before the commit: raising drops what the sync staged
                check_deletions(
                    report,
                    folder,
                    self.index.path,
                    recorded_sources(self.index.path),
                    getattr(loaded, "withdrawn", set()),
                    "allow_mass_delete: true",
                )
            writer.commit()
        with self.index_lock:
            self.index.refresh()
            generation, documents = self.index.generation, len(self.index)
        return {
            "added": report.added,
            "updated": report.updated,
            "deleted": report.deleted,
            "unchanged": report.unchanged,
            "skipped": [str(e) for e in loaded.errors],
            "unsupported": loaded.unsupported,
            "documents": documents,
            "generation": generation,
        }

    def sync_files(self, files: list[tuple[str, bytes]]) -> dict[str, Any]:
        """Add or update uploaded files (name, bytes); nothing else in the index is removed."""
        with tempfile.TemporaryDirectory(prefix="ragline-upload-") as tmp:
            for name, data in files:
                (Path(tmp) / name).write_bytes(data)
            return self.sync_folder(Path(tmp), prune=False)
