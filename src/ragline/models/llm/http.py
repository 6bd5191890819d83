"""An LLM behind an OpenAI-compatible HTTP API (``POST {base_url}/chat/completions``), with httpx.

Works with llama.cpp's server (and so xllamacpp's), vLLM, Ollama's ``/v1``, OpenAI itself. Failure
handling, so that an experiment neither crashes on a hiccup nor hangs on a dead server:

* Every call has a deadline (``total_timeout_s``), and every read a timeout (``timeout_s``): a call
  returns or raises within about ``total_timeout_s + timeout_s``, whatever the server does.
* Connection errors, timeouts, HTTP 429 and 5xx are retried ``retries`` times with exponential backoff
  (``backoff_s``, doubling, at most ``backoff_max_s``; a short ``Retry-After`` is honoured). Other 4xx
  are the caller's mistake and fail at once. A stream is retried only until its first piece arrived:
  after that a retry would repeat text.
* Every failure is a :class:`~ragline.errors.ModelError` naming the URL, the status code and the start of
  the body; nothing from httpx or json leaks out.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ragline.errors import ModelError
from ragline.models.llm.base import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TOP_LOGPROBS,
    LLM,
    GenerationParams,
    Message,
    ScoredReply,
    StructuredOutputUnsupported,
    TopLogprobs,
    check_messages,
    check_prompt_fits,
    check_top,
)
from ragline.models.llm.http_wire import (
    CONTEXT_EXCEEDED,
    MAX_BODY_BYTES,
    RETRY_STATUS,
    STREAM_DONE,
    LLMConnectionError,
    LLMContextExceededError,
    LLMHTTPError,
    require_httpx,
    snippet,
    sse_event,
)
from ragline.models.llm.json_schema import tool_call_reply


class HttpLLM(LLM):
    """A chat model served at ``base_url`` (which ends before ``/chat/completions``, e.g. ``…/v1``).

    ``model`` is sent as the request's ``model`` field (None: omitted, which llama.cpp accepts).
    ``api_key`` is sent as a bearer token. ``extra_body`` is merged into every request, for server
    options such as llama.cpp's ``cache_prompt``. ``model_id`` overrides :attr:`id`. ``context_tokens``,
    when known, is the model's context: a prompt that cannot fit fails before any request is sent.
    """

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        *,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        connect_timeout_s: float = 5.0,
        total_timeout_s: float = 600.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        backoff_max_s: float = 8.0,
        extra_body: dict[str, Any] | None = None,
        model_id: str | None = None,
        context_tokens: int | None = None,
    ) -> None:
        httpx = require_httpx()
        if not base_url.startswith(("http://", "https://")):
            raise ModelError(f"LLM server URL {base_url!r} must start with http:// or https://")
        if retries < 0 or timeout_s <= 0 or total_timeout_s <= 0:
            raise ValueError("retries must be >= 0 and the timeouts > 0")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.connect_timeout_s = min(connect_timeout_s, timeout_s)
        self.total_timeout_s = total_timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.extra_body = dict(extra_body or {})
        self._model_id = model_id
        self.context_tokens = context_tokens
        self._tokenize_exact: bool | None = None  # unknown until count_tokens first asks the server
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # trust_env=False: a loopback server must not be reached through a proxy from the environment.
        local = self.base_url.split("//", 1)[1].startswith(("127.", "localhost", "[::1]"))
        self._client = httpx.Client(headers=headers, trust_env=not local)

    @property
    def id(self) -> str:
        if self._model_id:
            return self._model_id
        return f"openai:{self.base_url}?model={self.model}" if self.model else f"openai:{self.base_url}"

    # -- the API --------------------------------------------------------------------------------------------

    def chat(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> str:
        params = GenerationParams.of(max_tokens, temperature, seed, stop)
        body = self._body(messages, params, stream=False)
        check_prompt_fits(self, body["messages"], params.max_tokens, self.context_tokens)
        return self._content(self._post_json("/chat/completions", body))

    def _content(self, reply: Any) -> str:
        try:
            content = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            url = f"{self.base_url}/chat/completions"
            found = snippet(json.dumps(reply))
            raise ModelError(f"{url} answered without choices[0].message.content: {found}") from None
        return content or ""  # some servers send null content for an empty reply

    def stream(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> Iterator[str]:
        # Validate now, not at the first next(): a bad argument should fail where the call is.
        params = GenerationParams.of(max_tokens, temperature, seed, stop)
        body = self._body(messages, params, stream=True)
        check_prompt_fits(self, body["messages"], params.max_tokens, self.context_tokens)
        return self._stream(body)

    def chat_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
    ) -> str:
        """The reply constrained to ``schema`` through OpenAI's ``response_format`` (type ``json_schema``).

        llama.cpp's server turns the schema into a grammar that decoding must follow; OpenAI and vLLM take the
        same field. A server that refuses the field (HTTP 400 naming it) raises
        :class:`StructuredOutputUnsupported`, so the caller can fall back to a plain-text prompt.
        """
        body = self._json_body(messages, schema, max_tokens, seed, stream=False)
        with self._schema_refused():
            return self._content(self._post_json("/chat/completions", body))

    def stream_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
    ) -> Iterator[str]:
        """:meth:`chat_json` streamed (the same ``response_format``, server-sent events)."""
        body = self._json_body(messages, schema, max_tokens, seed, stream=True)
        return self._refusing(self._stream(body))

    def chat_tools(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
    ) -> str:
        """OpenAI function calling: ``tools`` and ``tool_choice: "required"`` sent, the first ``tool_calls`` back (see
        :meth:`LLM.chat_tools`); a server refusing them (HTTP 400) raises :class:`StructuredOutputUnsupported`."""
        params = GenerationParams.of(max_tokens, 0.0, seed, None)
        body = {
            **self._body(messages, params, stream=False),
            "tools": [dict(t) for t in tools],
            "tool_choice": "required",
        }
        check_prompt_fits(self, body["messages"], params.max_tokens, self.context_tokens)
        try:
            reply = self._post_json("/chat/completions", body)
        except LLMHTTPError as exc:
            if exc.status_code == 400 and any(word in exc.body.lower() for word in ("tool", "function")):
                raise StructuredOutputUnsupported(f"{self.base_url} does not take tools: {exc.body}") from None
            raise
        return tool_call_reply(reply, f"{self.base_url}/chat/completions")

    def _json_body(
        self, messages: Sequence[Message], schema: Mapping[str, Any], max_tokens: int, seed: int, stream: bool
    ) -> dict[str, Any]:
        params = GenerationParams.of(max_tokens, 0.0, seed, None)
        body = self._body(messages, params, stream=stream)
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "reply", "schema": dict(schema)}}
        check_prompt_fits(self, body["messages"], params.max_tokens, self.context_tokens)
        return body

    def _refusing(self, pieces: Iterator[str]) -> Iterator[str]:
        with self._schema_refused():
            yield from pieces

    @contextmanager
    def _schema_refused(self) -> Iterator[None]:
        """An HTTP 400 that names the schema field becomes :class:`StructuredOutputUnsupported`."""
        try:
            yield
        except LLMHTTPError as exc:
            said = exc.body.lower()
            if exc.status_code == 400 and any(word in said for word in ("response_format", "json_schema", "grammar")):
                raise StructuredOutputUnsupported(
                    f"{self.base_url} does not take a JSON schema (response_format): {exc.body}"
                ) from None
            raise

    def top_logprobs(self, messages: Sequence[Message], top: int = DEFAULT_TOP_LOGPROBS, seed: int = 0) -> TopLogprobs:
        """The first reply token's ``top`` alternatives, from the OpenAI fields ``logprobs`` and ``top_logprobs``.

        One token is generated, greedily. llama.cpp's server answers these fields (``choices[0].logprobs.
        content[0].top_logprobs``, each ``{"token", "logprob"}``), as do OpenAI and vLLM.
        """
        params = GenerationParams.of(1, 0.0, seed, None)
        body = {**self._body(messages, params, stream=False), "logprobs": True, "top_logprobs": check_top(top)}
        check_prompt_fits(self, body["messages"], params.max_tokens, self.context_tokens)
        reply = self._post_json("/chat/completions", body)
        try:
            alternatives = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            found = [(str(item["token"]), float(item["logprob"])) for item in alternatives]
        except (KeyError, IndexError, TypeError, ValueError):
            url = f"{self.base_url}/chat/completions"
            raise ModelError(
                f"{url} answered without choices[0].logprobs.content[0].top_logprobs (does the server support "
                f"logprobs?): {snippet(json.dumps(reply))}"
            ) from None
        return sorted(found, key=lambda pair: -pair[1])

    def chat_scored(
        self, messages: Sequence[Message], max_tokens: int = DEFAULT_MAX_TOKENS, seed: int = 0, stop: Any = None
    ) -> ScoredReply:
        """The greedy reply with each generated token's log probability (``choices[0].logprobs.content[i].
        logprob``, which llama.cpp's server, OpenAI and vLLM fill when asked for ``logprobs``)."""
        params = GenerationParams.of(max_tokens, 0.0, seed, stop)
        body = {**self._body(messages, params, stream=False), "logprobs": True}
        check_prompt_fits(self, body["messages"], params.max_tokens, self.context_tokens)
        reply = self._post_json("/chat/completions", body)
        text = self._content(reply)
        try:
            logprobs = tuple(float(item["logprob"]) for item in reply["choices"][0]["logprobs"]["content"] or [])
        except (KeyError, IndexError, TypeError, ValueError):
            logprobs = ()
        if text and not logprobs:
            url = f"{self.base_url}/chat/completions"
            raise ModelError(f"{url} gave no choices[0].logprobs.content[].logprob: {snippet(json.dumps(reply))}")
        return ScoredReply(text, logprobs)

    def count_tokens(self, text: str) -> int:
        """Exact where the server tokenizes (llama.cpp's ``/tokenize``), else about one token per 4 bytes."""
        if self._tokenize_exact is not False:
            root = self.base_url.removesuffix("/v1")
            try:
                reply = self._post_json("/tokenize", {"content": text, "add_special": False}, base=root)
                tokens = reply["tokens"]
                self._tokenize_exact = True
                return len(tokens)
            except LLMConnectionError:
                raise  # the server is down: an estimate would hide it
            except (ModelError, KeyError, TypeError):
                if self._tokenize_exact:
                    raise  # it worked before: this is a real failure, not a missing endpoint
                self._tokenize_exact = False  # no such endpoint (404) or another shape: estimate from now on
        return math.ceil(len(text.encode("utf-8")) / 4)

    def close(self) -> None:
        self._client.close()

    # -- requests -------------------------------------------------------------------------------------------

    def _body(self, messages: Sequence[Message], params: GenerationParams, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"messages": check_messages(messages), **params.to_body(), "stream": stream}
        if self.model:
            body["model"] = self.model
        return {**self.extra_body, **body}

    def _timeout(self, deadline: float) -> Any:
        # Each read waits at most timeout_s, and never past the call's deadline.
        read = max(0.001, min(self.timeout_s, deadline - time.monotonic()))
        return require_httpx().Timeout(read, connect=min(self.connect_timeout_s, read))

    def _backoff(self, attempt: int, deadline: float, retry_after: str | None = None) -> bool:
        """Sleep before retry number ``attempt + 1``; False when the deadline would pass first."""
        delay = min(self.backoff_s * 2**attempt, self.backoff_max_s)
        if retry_after and retry_after.strip().isdigit():  # seconds; the HTTP-date form is ignored
            delay = min(max(delay, float(retry_after)), self.backoff_max_s)
        if time.monotonic() + delay >= deadline:
            return False
        time.sleep(delay)
        return True

    def _send(self, url: str, body: dict[str, Any], deadline: float, retries: int) -> Any:
        """An open streaming response with status 200 (the caller closes it), after up to ``retries`` retries.

        Raises :class:`LLMConnectionError` or :class:`LLMHTTPError` when the last attempt failed too, and
        LLMHTTPError at once on a status that a retry can't fix (400, 401, 404, ...).
        """
        httpx = require_httpx()
        for attempt in range(retries + 1):
            retry_after, status, text = None, None, b""
            try:
                request = self._client.build_request("POST", url, json=body, timeout=self._timeout(deadline))
                response = self._client.send(request, stream=True)
            except httpx.TimeoutException as exc:
                failure = f"timed out ({type(exc).__name__} after {self.timeout_s:g} s)"
            except httpx.TransportError as exc:
                failure = f"connection failed ({type(exc).__name__}: {exc})"
            else:
                if response.status_code == 200:
                    return response
                status = response.status_code
                text = self._read_capped(response, deadline, quiet=True)
                response.close()
                failure = f"HTTP {status}: {snippet(text)}"
                if status == 400 and any(marker in snippet(text).lower() for marker in CONTEXT_EXCEEDED):
                    raise LLMContextExceededError(
                        f"{url}: the prompt is longer than the model's context: shorten the question or give "
                        f"fewer sources (the server answered {failure})",
                        status,
                        text,
                    )
                if status not in RETRY_STATUS:
                    raise LLMHTTPError(f"{url} answered {failure}", status, text)
                retry_after = response.headers.get("retry-after")
            if attempt == retries or not self._backoff(attempt, deadline, retry_after):
                break
        message = f"{url} failed after {attempt + 1} attempt(s), the last one {failure}"
        if status is None:
            raise LLMConnectionError(message)
        raise LLMHTTPError(message, status, text)

    def _read_capped(self, response: Any, deadline: float, quiet: bool = False) -> bytes:
        """The body, read chunk by chunk so that the deadline and the size cap hold."""
        chunks, size = [], 0
        try:
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise ModelError(f"{response.url} sent more than {MAX_BODY_BYTES >> 20} MiB")
                if time.monotonic() > deadline:
                    raise ModelError(f"{response.url} is still sending after {self.total_timeout_s:g} s (timeout)")
        except require_httpx().HTTPError as exc:
            if not quiet:  # for an error body, what arrived is enough to report
                raise ModelError(f"{response.url}: reading the response failed ({type(exc).__name__})") from None
        return b"".join(chunks)

    def _post_json(self, path: str, body: dict[str, Any], base: str | None = None, retries: int | None = None) -> Any:
        url = (base or self.base_url) + path
        deadline = time.monotonic() + self.total_timeout_s
        response = self._send(url, body, deadline, self.retries if retries is None else retries)
        try:
            data = self._read_capped(response, deadline)
        finally:
            response.close()
        try:
            reply = json.loads(data)
        except ValueError:
            raise ModelError(f"{url} answered HTTP 200 with malformed JSON: {snippet(data)!r}") from None
        if isinstance(reply, dict) and reply.get("error"):
            raise ModelError(f"{url} answered an error: {snippet(json.dumps(reply['error']))}")
        return reply

    def _stream(self, body: dict[str, Any]) -> Iterator[str]:
        """The pieces of a server-sent-events reply (``data: {json}`` lines, ended by ``data: [DONE]``)."""
        url = self.base_url + "/chat/completions"
        deadline = time.monotonic() + self.total_timeout_s
        response = self._send(url, body, deadline, self.retries)
        httpx = require_httpx()
        try:
            buffer, last = "", ""
            for text in response.iter_text():
                if time.monotonic() > deadline:
                    raise ModelError(f"{url}: the stream ran past the deadline of {self.total_timeout_s:g} s (timeout)")
                buffer += text
                if len(buffer) > MAX_BODY_BYTES:  # no line break in 16 MiB: not an event stream
                    raise ModelError(f"{url}: a stream line longer than {MAX_BODY_BYTES >> 20} MiB")
                *lines, buffer = buffer.split("\n")
                for line in lines:
                    event = sse_event(url, line.rstrip("\r"))
                    if event is STREAM_DONE:
                        return
                    if event:
                        yield event
                    last = line.strip() or last
            if buffer.strip() and sse_event(url, buffer.strip()) is STREAM_DONE:
                return
            last = buffer.strip() or last
            raise ModelError(
                f"{url}: the stream ended without 'data: [DONE]' (closed early or not an event stream); "
                f"last line: {snippet(last)!r}"
            )
        except httpx.TimeoutException:
            raise ModelError(f"{url}: the stream stalled for more than {self.timeout_s:g} s (timeout)") from None
        except httpx.HTTPError as exc:
            raise ModelError(f"{url}: the stream broke ({type(exc).__name__}: {exc})") from None
        finally:
            response.close()
