"""The wire side of the OpenAI-compatible HTTP backend: its errors, capped snippets of bodies for messages, and
one server-sent-events line read as a piece of text (``http.HttpLLM`` uses them)."""

from __future__ import annotations

import json
from typing import Any

from ragline.errors import ModelError

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
SNIPPET_CHARS = 300
# A chat reply is a few KB; cap what is read so that a misbehaving server cannot fill the memory.
MAX_BODY_BYTES = 16 << 20


class LLMHTTPError(ModelError):
    """The server answered an HTTP error status; ``status_code`` and the start of the ``body`` are kept."""

    def __init__(self, message: str, status_code: int, body: bytes = b"") -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = snippet(body)


class LLMContextExceededError(LLMHTTPError):
    """The server refused the request because the prompt does not fit in the model's context."""


# How llama.cpp ("exceeds the available context size"), OpenAI and vLLM ("context_length_exceeded",
# "maximum context length") say that a prompt is too long.
CONTEXT_EXCEEDED = ("context size", "context_length", "context length")


class LLMConnectionError(ModelError):
    """The server could not be reached, or did not answer in time."""


def require_httpx() -> Any:
    try:
        import httpx
    except ImportError:
        raise ModelError("the HTTP LLM backend needs httpx: pip install 'ragline[llm]'") from None
    return httpx


def snippet(text: str | bytes, limit: int = SNIPPET_CHARS) -> str:
    """The start of a response body, on one line, for an error message."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


STREAM_DONE = object()


def sse_event(url: str, line: str) -> Any:
    """The text piece of one SSE line, ``STREAM_DONE`` at the end, None for lines that carry no text."""
    if not line or line.startswith(":"):  # blank separator or comment (keep-alive)
        return None
    field, _, value = line.partition(":")
    value = value.strip()
    if field == "error":  # llama.cpp reports a failure mid-stream this way
        raise ModelError(f"{url}: the server reported an error mid-stream: {snippet(value)}")
    if field != "data":  # event:, id:, retry: carry nothing we need
        return None
    if value == "[DONE]":
        return STREAM_DONE
    try:
        event = json.loads(value)
    except ValueError:
        raise ModelError(f"{url}: malformed JSON in the stream: {snippet(value)!r}") from None
    if not isinstance(event, dict):
        raise ModelError(f"{url}: unexpected stream event: {snippet(value)!r}")
    if event.get("error"):
        raise ModelError(f"{url}: the server reported an error mid-stream: {snippet(json.dumps(event['error']))}")
    choices = event.get("choices") or []
    if not choices:
        return None  # e.g. a final usage-only event
    delta = choices[0].get("delta") if isinstance(choices[0], dict) else None
    return (delta or {}).get("content") or None
