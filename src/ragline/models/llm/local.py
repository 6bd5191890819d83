"""A local GGUF model run by llama.cpp on the CPU, through the ``xllamacpp`` wheel.

How: :class:`LocalLLM` starts an ``xllamacpp.Server`` inside this process. That object loads the model
and serves llama.cpp's OpenAI-compatible API on ``127.0.0.1`` (a free port, chosen by the server), and
:class:`~ragline.models.llm.http.HttpLLM` talks to it. Why a server rather than calling the model
directly: llama.cpp's server already does the chat template, greedy/seeded sampling, stop strings,
streaming, tokenizing and request queueing, and going through HTTP means the local and the remote backend
share one client, one parser and one set of tests; the loopback round trip costs about a millisecond
against seconds of generation. Why in the process rather than as a child process: nothing to spawn, find
or kill; dropping the object (``close()``) stops the server. The port is guarded by a random API key, so
that other processes on the machine can't use the model.

Determinism: one request is decoded at a time (``n_parallel=1``), decoding is greedy at temperature 0,
and llama.cpp's prompt cache is off by default (``prompt_cache=False``). With the cache on, a prompt that
shares a prefix with the previous one skips recomputing it, and the logits then come from another batch
shape, which can flip a near-tie: an answer would depend on which question ran before it.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ragline.errors import ModelError
from ragline.models.embedders import sha256_file
from ragline.models.gguf import verify_file
from ragline.models.llm.base import DEFAULT_MAX_TOKENS, DEFAULT_TOP_LOGPROBS, LLM, Message, TopLogprobs
from ragline.models.llm.http import HttpLLM, require_httpx

DEFAULT_CONTEXT = 8192  # tokens; a RAG prompt with 10 passages needs 2-4 k


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may use (containers, taskset)
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def default_threads() -> int:
    """One core less than the usable ones (at least 1, at most 8).

    Measured here (2 shared cores, other work running, OMP_WAIT_POLICY=PASSIVE), Qwen2.5-0.5B generated
    ~19 tokens/s with 1 thread and with 2, and read prompts at ~45 vs ~50-70 tokens/s; but with 2 threads
    generation swung from 7 to 21 tokens/s, since llama.cpp's threads meet at a barrier after every
    operation and one preempted thread stalls the others. Leaving a core free costs little and keeps the
    rest of the pipeline (retrieval, the server's HTTP threads, other users) responsive. Beyond 8 threads
    a model this size is bound by memory bandwidth.
    """
    return max(1, min(_cpu_count() - 1, 8))


def default_batch_threads() -> int:
    """Threads that read the prompt: every usable core (at most 8).

    Reading a prompt is one large matrix product per layer, not a token-by-token loop, so a preempted
    thread costs it a share of the work rather than a stall at every step; on 2 shared cores a
    1,089-token Orrin prompt took ~11 s before the first token with 1 thread and 7.4-9.9 s with 2.
    Generation keeps :func:`default_threads`.
    """
    return max(1, min(_cpu_count(), 8))


def import_xllamacpp() -> Any:
    """The xllamacpp module, imported with OMP_WAIT_POLICY=PASSIVE unless the environment says otherwise."""
    # The wheel's llama.cpp uses OpenMP, whose threads spin while they wait by default: on 2 shared cores
    # that burnt the time the other thread needed (Qwen fell from ~19 to 3-8 tokens/s). The runtime reads
    # the variable when the library loads, so it is set before the first import.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import xllamacpp
    except ImportError:
        raise ModelError("the local LLM backend needs xllamacpp: pip install 'ragline[llm]'") from None
    return xllamacpp


class LocalLLM(LLM):
    """A GGUF chat model served by an in-process llama.cpp server on loopback.

    ``expected_sha256`` (when given) is checked before loading. ``n_ctx`` is the context in tokens
    (prompt and reply together; 0 = the model's own). ``n_threads`` (generation) defaults to
    :func:`default_threads`, ``n_batch_threads`` (prompt reading) to :func:`default_batch_threads`.
    ``timeout_s`` / ``total_timeout_s`` bound one read / one call, as in :class:`HttpLLM`.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        name: str | None = None,
        expected_sha256: str | None = None,
        n_ctx: int = DEFAULT_CONTEXT,
        n_threads: int | None = None,
        n_batch_threads: int | None = None,
        prompt_cache: bool = False,
        timeout_s: float = 300.0,
        total_timeout_s: float = 900.0,
        startup_timeout_s: float = 120.0,
    ) -> None:
        path = Path(model_path).expanduser().resolve()
        if expected_sha256:
            verify_file(path, expected_sha256)
            self.weights_sha256 = expected_sha256.lower()
        elif path.is_file():
            self.weights_sha256 = sha256_file(path)
        else:
            raise ModelError(f"no GGUF model file at {path}")
        self.path = path
        self.name = name or path.stem
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.n_batch_threads = n_batch_threads or default_batch_threads()

        xllamacpp = import_xllamacpp()
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.model_alias = {self.name}  # what the server reports as the model name
        params.n_ctx = n_ctx
        params.n_parallel = 1  # one sequence at a time: concurrent callers queue, outputs stay reproducible
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_batch_threads
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # a free port, picked by the server
        key = secrets.token_urlsafe(24)
        params.api_keys = [key]
        params.ui = False
        params.verbosity = 0  # llama.cpp logs every request on stderr otherwise
        try:
            self._server: Any = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise ModelError(
                f"llama.cpp could not load {path} ({exc}): is it a GGUF chat model, and does a context of "
                f"{n_ctx} tokens fit in memory?"
            ) from None
        address = self._server.listening_address
        self._wait_ready(address, startup_timeout_s)
        self._http = HttpLLM(
            f"{address}/v1",
            self.name,
            api_key=key,
            timeout_s=timeout_s,
            total_timeout_s=total_timeout_s,
            retries=1,  # a local server that fails twice is broken, not busy
            extra_body={"cache_prompt": prompt_cache},
            model_id=self.id,
            context_tokens=n_ctx or None,  # 0: the model's own, unknown here (the server then says so)
        )

    def _wait_ready(self, address: str, timeout_s: float) -> None:
        # The constructor loads the model before it returns, so this is normally one request; the loop guards
        # against a server that is still warming up (503), bounded in time.
        httpx = require_httpx()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if httpx.get(f"{address}/health", timeout=5.0, trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.close()
                raise ModelError(f"the llama.cpp server for {self.path} was not ready after {timeout_s:g} s")
            time.sleep(0.1)

    @property
    def id(self) -> str:
        return f"{self.name}@sha256:{self.weights_sha256}"

    @property
    def address(self) -> str:
        """The server's ``http://127.0.0.1:PORT`` (requests need the API key, which only this object has)."""
        return self._server.listening_address if self._server is not None else ""

    def chat(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> str:
        return self._client().chat(messages, max_tokens, temperature, seed, stop)

    def stream(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> Iterator[str]:
        return self._client().stream(messages, max_tokens, temperature, seed, stop)

    def top_logprobs(self, messages: Sequence[Message], top: int = DEFAULT_TOP_LOGPROBS, seed: int = 0) -> TopLogprobs:
        return self._client().top_logprobs(messages, top, seed)

    def count_tokens(self, text: str) -> int:
        return self._client().count_tokens(text)

    def _client(self) -> HttpLLM:
        if self._server is None:
            raise ModelError(f"{self.name} was closed; load it again")
        return self._http

    def close(self) -> None:
        """Stop the server and free the model. Safe to call twice."""
        http = getattr(self, "_http", None)
        if http is not None:
            http.close()
        # Dropping the last reference runs the server's destructor: it stops listening and frees the model.
        self._server = None
