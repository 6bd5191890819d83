"""The HTTP API of ``ragline serve`` (FastAPI): ask (streamed), search, documents, status, indexing, evals.

Every endpoint but ``GET /health`` and the page at ``/`` needs an API key (``Authorization: Bearer KEY``
or ``X-API-Key: KEY``). The key names a principal; its ACL restriction is joined to every retrieval on
the server side, so no request can widen what its key may read. Indexing and eval runs need an admin key.
"""

# No `from __future__ import annotations`: FastAPI reads the dependency annotations (local to the
# app's maker) at definition time.
import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, File, HTTPException, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from ragline import __version__
from ragline.errors import RaglineError
from ragline.server.engine import Engine
from ragline.server.evals import EvalRuns
from ragline.server.keys import ApiKey, KeyRing
from ragline.server.limits import RateLimiter, RequestGuard, retry_after
from ragline.server.logs import log
from ragline.server.openai_api import add_openai_routes
from ragline.server.shapes import (
    MAX_QUESTION,
    ServerSettings,
    answer_json,
    document_json,
    error_json,
    hit_json,
    in_thread,
    sse,
)

STATIC = Path(__file__).parent / "static"
MAX_FILTER = 1000


# -- request and response bodies ------------------------------------------------------------------
MAX_TURNS = 40


class Turn(BaseModel):
    role: Literal["user", "assistant"]
    content: str = Field(max_length=100_000)


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION, description="the question")
    filter: str | None = Field(None, max_length=MAX_FILTER, description='metadata filter, e.g. "year >= 2024"')
    stream: bool = Field(True, description="server-sent events (piece..., answer, done); false: one JSON")
    history: list[Turn] = Field(
        default_factory=list,
        max_length=MAX_TURNS,
        description="the conversation before this question, oldest first: a follow-up is condensed with it into "
        "a standalone question, which is retrieved for and answered",
    )


class SearchRequest(BaseModel):
    query: str = Field(min_length=1, max_length=MAX_QUESTION)
    k: int = Field(10, ge=1, le=100)
    filter: str | None = Field(None, max_length=MAX_FILTER)


class SyncRequest(BaseModel):
    folder: str = Field(min_length=1, max_length=4096, description="a folder on the server's disk")
    prune: bool = Field(True, description="remove indexed documents no longer in the folder")
    allow_mass_delete: bool = Field(
        False,
        description="go on when the sync would delete more than half of the index's documents (or all), "
        "or documents of another folder than the one the index was built from (else 400, nothing written)",
    )


class EvalRequest(BaseModel):
    dataset: str = Field(min_length=1, max_length=200, description="a folder name under the server's --eval-root")
    config: str | None = Field(None, max_length=100, description="a shipped pipeline by name (bm25, extractive, ...)")
    split: str = Field("test", min_length=1, max_length=50)


class ErrorBody(BaseModel):
    error: dict[str, str]


_bearer = HTTPBearer(auto_error=False, description="an API key from `ragline keys add`")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="the same key, as a header")


def _error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status, headers=headers)


def create_app(engine: Engine, keys: KeyRing, settings: ServerSettings | None = None) -> FastAPI:
    """The app serving ``engine`` to the holders of ``keys``."""
    settings = settings or ServerSettings()
    limiter = RateLimiter(settings.rate_per_minute)
    evals = EvalRuns(settings.eval_root, timeout_s=max(settings.timeout_s, 600.0))
    app = FastAPI(
        title="ragline",
        version=__version__,
        description="Answers with citations from an indexed collection, as the principal of the API key.",
        responses={
            401: {"model": ErrorBody, "description": "missing or wrong key"},
            429: {"model": ErrorBody, "description": "rate limit of the key"},
        },
    )
    app.state.engine, app.state.keys, app.state.settings = engine, keys, settings
    app.state.limiter = limiter  # every key's requests are counted here, whichever endpoint they reach
    if settings.cors_origins:  # off unless origins are given: the page is served by this same app
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type"],
        )
    app.add_middleware(RequestGuard, max_body_bytes=settings.max_body_bytes)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        return _error(422, "invalid_request", f"{where}: {first.get('msg', 'invalid')}")

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        kind = {
            401: "unauthorized",
            403: "forbidden",
            404: "not_found",
            409: "conflict",
            429: "rate_limited",
            504: "timeout",
        }.get(exc.status_code, "error")
        return _error(exc.status_code, kind, str(exc.detail), dict(exc.headers or {}))

    @app.exception_handler(RaglineError)
    async def ragline_error(request: Request, exc: RaglineError) -> JSONResponse:
        return _error(400, type(exc).__name__, str(exc))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log("unexpected error", level=40, exc_info=True)
        return _error(500, "internal", "the server failed on this request; its log has the error type")

    def principal_key(
        request: Request,
        bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        header: Annotated[str | None, Depends(_header)],
    ) -> ApiKey:
        given = bearer.credentials if bearer is not None else header
        entry = keys.authenticate(given)
        if entry is None:
            raise HTTPException(
                401,
                "missing or wrong API key: send Authorization: Bearer KEY "
                "(make one with `ragline keys add NAME --groups ... --keys FILE`)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        request.scope.setdefault("state", {})["key_name"] = entry.name
        wait = request.app.state.limiter.take(entry.name)
        if wait is not None:
            raise HTTPException(
                429,
                f"rate limit of {settings.rate_per_minute:g} requests a minute for this key",
                headers={"Retry-After": retry_after(wait)},
            )
        return entry

    def admin_key(entry: Annotated[ApiKey, Depends(principal_key)]) -> ApiKey:
        if not entry.admin:
            raise HTTPException(
                403,
                f"key {entry.name!r} may not index or run evals: make an admin key "
                "with `ragline keys add NAME --admin`",
            )
        return entry

    Key = Annotated[ApiKey, Depends(principal_key)]
    Admin = Annotated[ApiKey, Depends(admin_key)]
    app.state.principal_key = principal_key

    async def bounded(fn: Callable[[], Any]) -> Any:
        try:
            return await asyncio.wait_for(asyncio.to_thread(fn), settings.timeout_s)
        except TimeoutError:
            raise HTTPException(504, f"no result within {settings.timeout_s:g} s") from None

    # -- open endpoints ---------------------------------------------------------------------------
    @app.get("/health", tags=["open"])
    def health() -> dict[str, Any]:
        """Liveness: answers without a key and says nothing about the collection."""
        return {"status": "ok", "version": __version__}

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # -- reading ----------------------------------------------------------------------------------
    @app.post("/v1/search", tags=["read"])
    async def search(body: SearchRequest, key: Key) -> dict[str, Any]:
        """The ``k`` best chunks for ``query`` that the key's principal may read."""
        hits = await bounded(lambda: engine.search(key.principal, body.query, body.k, body.filter))
        return {
            "query": body.query,
            "retriever": engine.retrieved_by,
            "hits": [hit_json(h, engine.retrieved_by) for h in hits],
            "generation": engine.index.generation,
        }

    @app.post("/v1/ask", tags=["read"], responses={200: {"content": {"text/event-stream": {}}}})
    async def ask(body: AskRequest, key: Key) -> Any:
        """An answer with numbered citations; ``stream`` (the default) sends server-sent events:
        ``piece`` (answer text as it comes), then ``answer`` (citations, sources, trace), then ``done``.
        With ``history``, the question is condensed with the earlier turns into a standalone question first
        (the answer's ``conversation`` says which)."""
        condensed = None
        question = body.question
        if body.history:
            turns = [t.model_dump() for t in body.history] + [{"role": "user", "content": body.question}]
            condensed = await bounded(lambda: engine.standalone(turns))
            question = condensed.question
        prepared = None if engine.agent else await bounded(lambda: engine.prepare(key.principal, question, body.filter))

        def pieces() -> Iterator[Any]:
            return engine.stream_answer(key.principal, question, prepared, body.filter)

        def result(item: Any) -> dict[str, Any]:
            out = answer_json(engine, *item)
            if condensed is not None:
                out["conversation"] = condensed.to_dict()
            return out

        if not body.stream:
            items = await bounded(lambda: list(pieces()))
            return result(items[-1])

        async def events() -> AsyncIterator[str]:
            async for kind, item in in_thread(pieces, settings.timeout_s):
                if kind == "item" and isinstance(item, str):
                    if item:
                        yield sse("piece", {"text": item})
                elif kind == "item":
                    yield sse("answer", result(item))
                else:
                    yield sse("error", error_json(item))
            yield sse("done", {})

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    @app.get("/v1/documents/{doc_id:path}", tags=["read"])
    async def document(doc_id: str, key: Key) -> dict[str, Any]:
        """The chunks of a document, in order, for opening a citation (404 when the key may not read it)."""
        found = await bounded(lambda: document_json(engine, key.principal, doc_id))
        if found is None:
            raise HTTPException(404, f"no document {doc_id!r} that this key may read")
        return found

    @app.get("/v1/status", tags=["read"])
    async def status(key: Key) -> dict[str, Any]:
        """Documents, generation, stamps and (when a freshness check is installed) stale files, as far as the
        key's principal may read them: a key with groups is counted and told only what it may read."""
        return {
            **(await bounded(lambda: engine.status(key.principal))),
            "principal": key.principal.to_dict(),
            "admin": key.admin,
        }

    # -- writing (admin keys) ---------------------------------------------------------------------
    @app.post("/v1/index/sync", tags=["index"])
    async def sync(body: SyncRequest, key: Admin) -> dict[str, Any]:
        """Index a folder on the server's disk as `ragline index FOLDER` does (a re-sync applies changes)."""
        folder = Path(body.folder)
        if not folder.is_absolute() or not folder.is_dir():
            raise HTTPException(404, f"{body.folder}: not an absolute path to a folder on the server")
        return await bounded(lambda: engine.sync_folder(folder, body.prune, allow_mass_delete=body.allow_mass_delete))

    @app.post("/v1/index/upload", tags=["index"])
    async def upload(key: Admin, files: Annotated[list[UploadFile], File(description="documents")]) -> dict[str, Any]:
        """Add or update the uploaded documents (nothing else is removed)."""
        if len(files) > settings.max_upload_files:
            raise HTTPException(413, f"at most {settings.max_upload_files} files a request")
        named = []
        for f in files:
            name = Path(f.filename or "").name
            if not name or name.startswith("."):
                raise HTTPException(422, f"upload {f.filename!r}: give each file a plain name, e.g. policy.md")
            named.append((name, await f.read()))
        return await bounded(lambda: engine.sync_files(named))

    # -- evaluation -------------------------------------------------------------------------------
    @app.get("/v1/evals", tags=["eval"])
    def eval_list(key: Key) -> dict[str, Any]:
        """Eval runs of this server (newest first) and the datasets it may run on."""
        return {"datasets": evals.datasets(), "runs": [r.summary() for r in evals.runs()]}

    @app.post("/v1/evals", tags=["eval"], status_code=202)
    def eval_start(body: EvalRequest, key: Admin) -> dict[str, Any]:
        """Start `ragline eval` on a dataset under --eval-root; poll ``GET /v1/evals/{id}`` for the report."""
        return evals.start(body.dataset, body.config, body.split).summary()

    @app.get("/v1/evals/{run_id}", tags=["eval"])
    def eval_report(run_id: str, key: Key) -> dict[str, Any]:
        """One eval run: its status and, once finished, its report (metrics per retriever, comparisons)."""
        run = evals.get(run_id)
        if run is None:
            raise HTTPException(404, f"no eval run {run_id!r}")
        return run.report()

    add_openai_routes(app, engine, Key, settings)
    return app
