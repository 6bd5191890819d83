"""A response cache on disk, so that an LLM experiment interrupted at question 300 resumes at 301.

Entries are keyed by the sha256 of (:attr:`LLM.id`, messages, generation parameters) in canonical JSON:
the id pins the weights, so an entry is never stale and the cache needs no invalidation. At temperature 0
(the default) the answer is a function of the key. Above 0 the cache returns the first answer sampled
with that seed, which is what a rerun with the same seed should see anyway.

Storage is SQLite in WAL mode, like the embedding cache (``../cache.py``): readers don't block the writer,
concurrent processes queue on a busy timeout, each answer is one transaction. The default file is
``$RAGLINE_CACHE/llm_responses.sqlite``, else ``~/.cache/ragline/llm_responses.sqlite``. The request is
stored beside the answer, so that the file can be read to see what was asked.

Principals: a request may carry a ``scope``, the ACLs of the documents its messages were built from
(``acl_scope``); it is part of the key, so a reply derived from documents under some ACLs is served
only to a request built from documents under the same ACLs, never across principals who see different
documents. A request without a scope keeps the key it always had. (The embedding cache, by contrast,
maps a text to its vector and needs no scope: a hit returns the vector of a text the caller already
holds, and the cache stores hashes and vectors, never text; see ``ragline.models.cache``.)
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragline.models.llm.base import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TOP_LOGPROBS,
    LLM,
    GenerationParams,
    Message,
    ScoredReply,
    TopLogprobs,
    check_messages,
    check_top,
)
from ragline.paths import cache_root
from ragline.sqlite_store import SqliteStore

FILENAME = "llm_responses.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key      TEXT PRIMARY KEY,  -- sha256 of the canonical request
    model    TEXT NOT NULL,     -- LLM.id
    request  TEXT NOT NULL,     -- the canonical request, JSON
    response TEXT NOT NULL,
    created  REAL NOT NULL      -- unix time
)
"""


def default_llm_cache_path() -> Path:
    """``$RAGLINE_CACHE/llm_responses.sqlite``, else ``~/.cache/ragline/llm_responses.sqlite``."""
    return cache_root() / FILENAME


def acl_scope(acls: Iterable[Any]) -> str:
    """The scope of an artifact derived from documents with these ``acl`` values (one per document).

    Canonical (sorted, each ACL as a sorted list; a document without one is ``null``), so the same
    sources in any order give the same scope.
    """
    canonical = {
        json.dumps(sorted(str(g) for g in a) if isinstance(a, (list, tuple)) else (None if a is None else [str(a)]))
        for a in acls
    }
    return "acl:" + ";".join(sorted(canonical))


def request_key(
    model_id: str,
    messages: Sequence[Message],
    params: GenerationParams,
    scope: str | None = None,
    top_logprobs: int | None = None,
    schema: Mapping[str, Any] | None = None,
    token_logprobs: bool = False,
) -> tuple[str, str]:
    """(key, canonical request JSON) of one generation; ``scope`` (see ``acl_scope``) joins the key when given.

    ``top_logprobs`` marks a request for the first token's log probabilities (not a reply's text): a
    different answer to the same messages, so a different key. ``schema`` marks a reply constrained to that
    JSON schema (``LLM.chat_json``), another answer again; ``token_logprobs`` a reply with its tokens' log
    probabilities (``LLM.chat_scored``).
    """
    request: dict[str, Any] = {
        "model": model_id,
        "messages": [dict(message) for message in messages],
        "max_tokens": params.max_tokens,
        "temperature": params.temperature,
        "seed": params.seed,
        "stop": list(params.stop),
    }
    if scope is not None:
        request["scope"] = scope
    if top_logprobs is not None:
        request["top_logprobs"] = top_logprobs
    if schema is not None:
        request["json_schema"] = dict(schema)
    if token_logprobs:
        request["token_logprobs"] = True
    # sort_keys and fixed separators: the same request is the same bytes in every process and version.
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest(), canonical


class LLMResponseCache(SqliteStore):
    """Answers on disk by request key. Safe to share between threads and processes.

    ``path`` is a directory (the cache is ``llm_responses.sqlite`` in it) or a file ending ``.sqlite`` /
    ``.db``; None means :func:`default_llm_cache_path`. The file is created on first use.
    """

    FILENAME = FILENAME
    TABLE = "responses"
    SCHEMA = _SCHEMA

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._connect().execute("SELECT response FROM responses WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    def put(self, key: str, model_id: str, request: str, response: str) -> None:
        with self._lock:
            # OR REPLACE: a concurrent process may have stored the same request meanwhile; keep the newest.
            row = [key, model_id, request, response, time.time()]
            self._connect().execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)", row)


class CachedLLM(LLM):
    """An :class:`LLM` that answers repeated requests from an :class:`LLMResponseCache`.

    Same interface as the model it wraps. ``hits`` and ``misses`` count the calls answered by the cache
    and by the model. A cached answer is streamed as one piece; a stream is stored only once it finished
    (an interrupted stream leaves nothing behind).
    """

    def __init__(self, llm: LLM, cache: LLMResponseCache | None = None) -> None:
        self.llm = llm
        self.cache = cache if cache is not None else LLMResponseCache()
        self.hits = 0
        self.misses = 0

    @classmethod
    def wrap(cls, llm: LLM) -> CachedLLM:
        """``llm`` with a response cache: itself when it already has one (two caches would count twice)."""
        return llm if isinstance(llm, CachedLLM) else cls(llm)

    @property
    def id(self) -> str:
        return self.llm.id

    def _key(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        scope: str | None,
        schema: Mapping[str, Any] | None = None,
    ) -> tuple[str, str]:
        return request_key(self.llm.id, check_messages(messages), params, scope, schema=schema)

    def _cached(self, key: str, request: str, compute: Callable[[], str]) -> str:
        """The stored reply of ``key``, else ``compute()``'s, stored."""
        cached = self.cache.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        response = compute()
        self.cache.put(key, self.llm.id, request, response)
        return response

    def chat(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
        scope: str | None = None,
    ) -> str:
        """The model's reply, from the cache when this request (and ``scope``: see ``acl_scope``) was seen."""
        params = GenerationParams.of(max_tokens, temperature, seed, stop)
        key, request = self._key(messages, params, scope)
        return self._cached(
            key,
            request,
            lambda: self.llm.chat(messages, params.max_tokens, params.temperature, params.seed, list(params.stop)),
        )

    def stream(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
        scope: str | None = None,
    ) -> Iterator[str]:
        params = GenerationParams.of(max_tokens, temperature, seed, stop)
        key, request = self._key(messages, params, scope)
        return self._stream(messages, params, key, request)

    def _stream(self, messages: Sequence[Message], params: GenerationParams, key: str, request: str) -> Iterator[str]:
        def generate() -> Iterator[str]:
            return self.llm.stream(messages, params.max_tokens, params.temperature, params.seed, list(params.stop))

        return self._stream_cached(key, request, generate)

    def _stream_cached(self, key: str, request: str, generate: Callable[[], Iterator[str]]) -> Iterator[str]:
        cached = self.cache.get(key)
        if cached is not None:
            self.hits += 1
            if cached:
                yield cached
            return
        self.misses += 1
        pieces = []
        for piece in generate():
            pieces.append(piece)
            yield piece
        self.cache.put(key, self.llm.id, request, "".join(pieces))

    def top_logprobs(
        self, messages: Sequence[Message], top: int = DEFAULT_TOP_LOGPROBS, seed: int = 0, scope: str | None = None
    ) -> TopLogprobs:
        """The wrapped model's first-token log probabilities, from the cache when this request was seen.

        Stored as JSON pairs; a request built from documents passes their ``scope`` (``acl_scope``).
        """
        params = GenerationParams.of(1, 0.0, seed, None)
        key, request = request_key(self.llm.id, check_messages(messages), params, scope, check_top(top))
        cached = self.cache.get(key)
        if cached is not None:
            self.hits += 1
            return [(str(token), float(logprob)) for token, logprob in json.loads(cached)]
        self.misses += 1
        found = self.llm.top_logprobs(messages, top, seed)
        self.cache.put(key, self.llm.id, request, json.dumps(found, ensure_ascii=False))
        return found

    def chat_scored(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
        scope: str | None = None,
    ) -> ScoredReply:
        """The wrapped model's reply with its tokens' log probabilities, from the cache when this request was
        seen (stored as JSON ``{"text", "token_logprobs"}``)."""
        params = GenerationParams.of(max_tokens, 0.0, seed, stop)
        key, request = request_key(self.llm.id, check_messages(messages), params, scope, token_logprobs=True)

        def compute() -> str:
            scored = self.llm.chat_scored(messages, params.max_tokens, params.seed, list(params.stop))
            return json.dumps({"text": scored.text, "token_logprobs": list(scored.token_logprobs)}, ensure_ascii=False)

        stored = json.loads(self._cached(key, request, compute))
        return ScoredReply(str(stored["text"]), tuple(float(v) for v in stored["token_logprobs"]))

    def chat_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
        scope: str | None = None,
    ) -> str:
        """The wrapped model's schema-constrained reply, from the cache when this request (and schema) was seen."""
        key, request = self._key(messages, GenerationParams.of(max_tokens, 0.0, seed, None), scope, schema)
        return self._cached(key, request, lambda: self.llm.chat_json(messages, schema, max_tokens, seed))

    def stream_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
        scope: str | None = None,
    ) -> Iterator[str]:
        """:meth:`chat_json` in pieces; a cached reply comes as one piece, a finished stream is stored."""
        key, request = self._key(messages, GenerationParams.of(max_tokens, 0.0, seed, None), scope, schema)
        return self._stream_cached(key, request, lambda: self.llm.stream_json(messages, schema, max_tokens, seed))

    def chat_tools(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
    ) -> str:
        """The wrapped model's function call, from the cache when this request (and these tools) was seen."""
        marker = {"tools": [dict(tool) for tool in tools]}
        key, request = self._key(messages, GenerationParams.of(max_tokens, 0.0, seed, None), None, marker)
        return self._cached(key, request, lambda: self.llm.chat_tools(messages, tools, max_tokens, seed))

    def generate_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
        scope: str | None = None,
    ) -> Any:
        from ragline.models.llm.json_schema import parse_reply

        return parse_reply(self.chat_json(messages, schema, max_tokens, seed, scope), schema, self.id)

    def count_tokens(self, text: str) -> int:
        return self.llm.count_tokens(text)

    def close(self) -> None:
        """Close the cache and the wrapped model."""
        self.cache.close()
        self.llm.close()

    def __repr__(self) -> str:
        return f"CachedLLM({self.llm!r}, {self.cache!r})"
