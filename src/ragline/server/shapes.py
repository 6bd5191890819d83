"""What the API's endpoints share: the server's limits, the JSON of hits and answers, SSE, streaming a reader."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragline.anchors import anchor_of
from ragline.errors import FilterSyntaxError, InputError, RaglineError
from ragline.principals import Principal
from ragline.server.engine import Engine
from ragline.server.logs import log
from ragline.types import section_below_title

MAX_QUESTION = 2000


@dataclass
class ServerSettings:
    """Limits of one server (all on by default; ``rate_per_minute=0`` turns the rate limit off)."""

    max_body_bytes: int = 10 * 1024 * 1024
    timeout_s: float = 120.0
    rate_per_minute: float = 120.0
    cors_origins: tuple[str, ...] = ()
    eval_root: Path | None = None
    max_upload_files: int = 100
    extra: dict[str, Any] = field(default_factory=dict)


# -- shapes -----------------------------------------------------------------------------------------
def section_of(hit: Any) -> str:
    """The heading path under the hit's title ("" for a chunk under the title alone)."""
    return " > ".join(section_below_title(hit.title, hit.metadata.get("section")))


def hit_json(hit: Any, retriever: str) -> dict[str, Any]:
    from ragline.answer.context import document_id

    return {
        "rank": hit.rank,
        "doc_id": document_id(hit),
        "chunk_id": hit.doc_id,
        "score": hit.score,
        "title": hit.title,
        "section": section_of(hit),
        "retriever": retriever,
        "text": hit.text,
        **anchor_of(hit.metadata),
    }


def document_json(engine: Engine, principal: Principal, doc_id: str) -> dict[str, Any] | None:
    """A document's chunks in order (the shape of ``GET /v1/documents``), None when hidden or absent."""
    chunks = engine.document(principal, doc_id)
    if chunks is None:
        return None
    return {
        "doc_id": doc_id,
        "title": chunks[0].title,
        "chunks": [
            {"chunk_id": c.doc_id, "text": c.text, "section": section_of(c), **anchor_of(c.metadata)} for c in chunks
        ],
    }


def answer_json(engine: Engine, answer: Any, context: Any) -> dict[str, Any]:
    """An answer as the API returns it: text, citations (with the chunk to open), sources, trace."""
    from ragline.answer.citations import citations_json

    trace = answer.details.get("trace")
    out = {
        "answer": answer.text,
        "abstained": answer.abstained,
        "citations": citations_json(answer.citations, context),
        "attributed": bool(answer.details.get("attributed")),
        "conflicts": answer.details.get("conflicts", []),
        **({"stage": answer.details["stage"]} if "stage" in answer.details else {}),
        "sources": [{**hit_json(s.hit, engine.retrieved_by), "n": s.n} for s in context.sources],
    }
    if trace is not None:
        from ragline.agent.trace import render

        out["trace"], out["trace_text"] = trace, render(trace)
    return out


def error_json(error: BaseException) -> dict[str, str]:
    if isinstance(error, TimeoutError):
        return {"type": "timeout", "message": str(error) or "the answer took too long"}
    if isinstance(error, RaglineError | FilterSyntaxError | InputError):
        return {"type": type(error).__name__, "message": str(error)}
    log("unexpected error while streaming", level=40, error_type=type(error).__name__)
    return {"type": "internal", "message": "the server failed on this request; its log has the error type"}


def sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


async def in_thread(make: Callable[[], Iterator[Any]], timeout_s: float) -> AsyncIterator[tuple[str, Any]]:
    """Run a blocking generator in a worker thread: ("item", x) as each comes, ("error", e) if it fails.

    The deadline covers the whole stream; past it the stream ends with a timeout. When the consumer
    stops (a client that disconnects cancels the response, which closes this generator) or the deadline
    passes, the worker stops at its next item and closes the generator it runs, so a reader stops
    generating (a thread cannot be stopped mid-piece: the piece in progress is finished first).
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    stopped = threading.Event()

    def post(kind: str, item: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed (server stopping): nobody is listening
            loop.call_soon_threadsafe(queue.put_nowait, (kind, item))

    def work() -> None:
        items: Iterator[Any] | None = None
        try:
            items = make()
            for item in items:
                if stopped.is_set():
                    break
                post("item", item)
        except BaseException as error:  # reported to the client as an error event
            post("error", error)
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()
            post("end", None)

    threading.Thread(target=work, daemon=True, name="ragline-answer").start()
    deadline = loop.time() + timeout_s
    try:
        while True:
            try:
                kind, item = await asyncio.wait_for(queue.get(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                yield "error", TimeoutError(f"no complete answer within {timeout_s:g} s")
                return
            if kind == "end":
                return
            yield kind, item
    finally:
        stopped.set()
